import Foundation
import GRDB

/// Online backups of an installation and their restore.
///
/// A backup is one SQLite file: a compacted copy of the events database (events, quarantine,
/// export ledger, the text dictionary), taken from one read snapshot while the daemon keeps
/// writing, plus a `linkpulse_backup` table with the installation's secrets file (keys and
/// hashing secret). The derived files (id index, attribution, rollups) are not in it: a
/// restored installation rebuilds them from the events at its first start, under a new
/// database id, so no derived state of another moment is ever counted against it.
///
/// Once retention has deleted raw events, the rollups hold the only complete counts, so the
/// backup carries the derived files too, as files beside it (`FILE.rollups`,
/// `FILE.attribution`, `FILE.ids`), copied before the events (see
/// `queries/backup/derived_watermark.sql`); the restore keeps the database id and puts them back.
public enum StoreBackup {
    /// The derived files a backup may carry: the suffix of the file beside the backup, the
    /// schema the copy attaches it as, and its name in a data directory. In copy order.
    static let derivedFiles: [(suffix: String, schema: String, fileName: String)] = [
        ("rollups", "agg", AppDatabase.rollupFileName),
        ("attribution", "attr", AppDatabase.attributionFileName),
        ("ids", "ids", AppDatabase.idIndexFileName),
    ]

    /// Where the derived file of `suffix` of the backup `file` is.
    public static func derivedFile(_ file: URL, suffix: String) -> URL {
        file.deletingLastPathComponent().appending(path: "\(file.lastPathComponent).\(suffix)")
    }

    /// How long a backup's hold on retention lasts if the backup dies without lifting it.
    static let retentionHoldMs: Int64 = 24 * 3_600_000

    /// The backup format this build writes and reads.
    public static let format = 1

    /// What a backup holds.
    public struct Summary: Sendable, Equatable {
        public var events: Int64
        public var quarantined: Int64
        /// The highest event seq in the copy: every event stored before the copy began is at
        /// or below it.
        public var maxSeq: Int64
        public var bytes: Int64
        public var createdAtMs: Int64
    }

    /// Why a backup or a restore did not happen.
    public enum Failure: Error, CustomStringConvertible {
        case noInstallation(String)
        case notABackup(String)
        case unsupportedFormat(String)
        case damaged(String, String)
        case notEmpty(String)
        case missingPart(String)

        public var description: String {
            switch self {
            case .noInstallation(let path): "no Linkpulse events database at \(path)"
            case .notABackup(let path): "\(path) is not a Linkpulse backup (made by `linkpulse backup`)"
            case .unsupportedFormat(let found): "backup format \(found) is not one this build reads (it reads \(StoreBackup.format))"
            case .damaged(let path, let report): "\(path) failed SQLite's integrity check: \(report)"
            case .notEmpty(let path): "\(path) is not empty; restore into an empty directory, or pass --force to replace the installation in it"
            case .missingPart(let path): "\(path) is missing or unreadable: this backup carries its derived files beside it (retention has deleted raw events), and needs them all"
            }
        }
    }

    /// Copies the installation under `directory` into `file`, online: the daemon may keep
    /// ingesting meanwhile. The copy is written beside `file` under a temporary name, checked
    /// with `PRAGMA integrity_check`, flushed, and only then renamed to `file` (mode 0600: it
    /// holds the keys); a failed backup leaves no file at `file`.
    /// - Parameter secrets: the installation's secrets file, kept inside the backup.
    public static func backup(directory: URL, secrets: Data, to file: URL, nowMs: Int64) throws -> Summary {
        let queries = try BackupQueries.load()
        let events = directory.appending(path: AppDatabase.eventsFileName)
        guard FileManager.default.fileExists(atPath: events.path) else { throw Failure.noInstallation(events.path) }
        let partial = file.deletingLastPathComponent().appending(path: ".\(file.lastPathComponent).partial-\(getpid())")
        try? FileManager.default.removeItem(at: partial)
        var done = false
        defer { if !done { try? FileManager.default.removeItem(at: partial) } }

        // A connection of its own (WAL: it never blocks the daemon's writer, nor waits for it).
        var config = Configuration()
        config.busyMode = .timeout(30)
        let source = try DatabaseQueue(path: events.path, configuration: config)
        defer { try? source.close() }
        let carriesDerived = try source.inDatabase { db in try Int64.fetchOne(db, sql: queries.rawHorizon) } != nil
        var sidecars: [(suffix: String, partial: URL, final: URL)] = []
        defer { if !done { for side in sidecars { try? FileManager.default.removeItem(at: side.partial) } } }
        if carriesDerived {
            try source.inDatabase { db in
                for derived in derivedFiles {
                    try db.execute(sql: queries.attach, arguments: ["path": directory.appending(path: derived.fileName).path, "schema": derived.schema])
                }
                let hold = try Int64.fetchOne(db, sql: queries.derivedWatermark) ?? 0
                try db.execute(sql: queries.holdRetention, arguments: ["seq": hold, "until_ms": nowMs + retentionHoldMs])
            }
            defer { _ = try? source.inDatabase { db in try db.execute(sql: queries.releaseRetention) } }
            for derived in derivedFiles {
                let final = derivedFile(file, suffix: derived.suffix)
                let side = final.deletingLastPathComponent().appending(path: ".\(final.lastPathComponent).partial-\(getpid())")
                try? FileManager.default.removeItem(at: side)
                sidecars.append((derived.suffix, side, final))
                let sql = queries.copySchemaInto.replacingOccurrences(of: "SCHEMA", with: derived.schema)
                try source.inDatabase { db in try db.execute(sql: sql, arguments: ["path": side.path]) }
            }
            try source.inDatabase { db in try db.execute(sql: queries.copyInto, arguments: ["path": partial.path]) }
        } else {
            try source.inDatabase { db in try db.execute(sql: queries.copyInto, arguments: ["path": partial.path]) }
        }

        let copy = try DatabaseQueue(path: partial.path)
        let summary = try copy.writeWithoutTransaction { db -> Summary in
            let counts = try Row.fetchOne(db, sql: queries.counts)!
            let summary = Summary(
                events: counts[0], quarantined: counts[1], maxSeq: counts[2], bytes: 0, createdAtMs: nowMs)
            try db.inTransaction {
                try db.execute(sql: queries.createManifest)
                let facts: [(String, String)] = [
                    ("format", "\(format)"), ("created_at_ms", "\(nowMs)"), ("events", "\(summary.events)"),
                    ("quarantined", "\(summary.quarantined)"), ("max_seq", "\(summary.maxSeq)"),
                    ("secrets", String(decoding: secrets, as: UTF8.self)),
                ] + (carriesDerived ? [("derived", sidecars.map(\.suffix).joined(separator: ","))] : [])
                for (name, value) in facts { try db.execute(sql: queries.insertManifest, arguments: ["name": name, "value": value]) }
                return .commit
            }
            try checkIntegrity(db, queries, path: partial.path)
            return summary
        }
        try copy.close()
        for side in sidecars {
            let derived = try DatabaseQueue(path: side.partial.path)
            try derived.inDatabase { db in try checkIntegrity(db, queries, path: side.partial.path) }
            try derived.close()
        }

        // The derived files first: the backup file names them, and is the last to appear.
        for (path, final) in sidecars.map({ ($0.partial, $0.final) }) + [(partial, file)] {
            try Durably.flush(path)
            guard chmod(path.path, 0o600) == 0, rename(path.path, final.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        done = true
        try Durably.flush(file.deletingLastPathComponent())
        var result = summary
        result.bytes = DiskUsage.size(file)
        return result
    }

    /// A backup's facts and secrets, after checking that it is a sound backup this build reads.
    public struct Contents: Sendable {
        public var summary: Summary
        /// The secrets file it carries, byte for byte.
        public var secrets: Data
        /// The derived files beside it (suffixes of `derivedFiles`), when it carries them.
        public var derived: [String] = []
    }

    /// Reads and checks a backup file without changing it.
    public static func inspect(_ file: URL) throws -> Contents {
        let queries = try BackupQueries.load()
        guard FileManager.default.fileExists(atPath: file.path) else { throw Failure.notABackup(file.path) }
        var config = Configuration()
        config.readonly = true
        let backup: DatabaseQueue
        do {
            backup = try DatabaseQueue(path: file.path, configuration: config)
        } catch {
            throw Failure.notABackup(file.path)
        }
        defer { try? backup.close() }
        return try backup.read { db in
            guard let rows = try? Row.fetchAll(db, sql: queries.manifest) else { throw Failure.notABackup(file.path) }
            var facts: [String: String] = [:]
            for row in rows { facts[row["name"]] = row["value"] }
            guard facts["format"] == "\(format)" else { throw Failure.unsupportedFormat(facts["format"] ?? "(none)") }
            try checkIntegrity(db, queries, path: file.path)
            let derived = facts["derived"].map { $0.split(separator: ",").map(String.init) } ?? []
            for suffix in derived {
                guard derivedFiles.contains(where: { $0.suffix == suffix }) else { throw Failure.unsupportedFormat("with derived file \(suffix)") }
                let side = derivedFile(file, suffix: suffix)
                guard let queue = try? DatabaseQueue(path: side.path, configuration: config) else { throw Failure.missingPart(side.path) }
                try queue.read { db in try checkIntegrity(db, queries, path: side.path) }
                try queue.close()
            }
            let summary = Summary(
                events: Int64(facts["events"] ?? "") ?? 0, quarantined: Int64(facts["quarantined"] ?? "") ?? 0,
                maxSeq: Int64(facts["max_seq"] ?? "") ?? 0, bytes: DiskUsage.size(file),
                createdAtMs: Int64(facts["created_at_ms"] ?? "") ?? 0)
            return Contents(summary: summary, secrets: Data((facts["secrets"] ?? "").utf8), derived: derived)
        }
    }

    /// Brings the installation of `file` back into `directory`: its events database, restored
    /// under a temporary name and renamed into place, and returns the backup's contents (the
    /// caller writes the secrets file). An existing installation is refused unless `replace`,
    /// which removes its databases (every file SQLite keeps for them) first; other files of
    /// the directory (the export folder) are left alone. Refused while a daemon serves the
    /// directory (`DataDirectoryLock`).
    public static func restore(_ file: URL, into directory: URL, replace: Bool, otherFiles: [String]) throws -> Contents {
        let contents = try inspect(file)
        let queries = try BackupQueries.load()
        let manager = FileManager.default
        if DataDirectoryLock.isHeld(in: directory) { throw StoreError.directoryInUse(directory.path, holder: nil) }
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        let present = try manager.contentsOfDirectory(atPath: directory.path)
        if !present.isEmpty {
            guard replace else { throw Failure.notEmpty(directory.path) }
            for path in StoreFiles.paths(in: directory) + otherFiles.map({ directory.appending(path: $0) }) {
                try? manager.removeItem(at: path)
            }
        }
        // The derived files first, the events database last: a directory with an events
        // database is a complete installation.
        for derived in derivedFiles where contents.derived.contains(derived.suffix) {
            try place(derivedFile(file, suffix: derived.suffix), as: derived.fileName, in: directory)
        }
        let makeRestored = contents.derived.isEmpty ? queries.makeRestored : queries.makeRestoredWithDerived
        try place(file, as: AppDatabase.eventsFileName, in: directory) { restored in
            try restored.writeWithoutTransaction { db in
                try db.inTransaction {
                    try db.execute(sql: makeRestored)
                    return .commit
                }
            }
        }
        try Durably.flush(directory)
        return contents
    }

    /// Copies `source` into `directory` as `name` under a temporary name, lets `adjust` change
    /// the copy, flushes it and renames it into place.
    static func place(_ source: URL, as name: String, in directory: URL, adjust: (DatabaseQueue) throws -> Void = { _ in }) throws {
        let partial = directory.appending(path: ".\(name).restoring")
        try? FileManager.default.removeItem(at: partial)
        try FileManager.default.copyItem(at: source, to: partial)
        let restored = try DatabaseQueue(path: partial.path)
        try adjust(restored)
        try restored.close()
        try Durably.flush(partial)
        guard rename(partial.path, directory.appending(path: name).path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    static func checkIntegrity(_ db: Database, _ queries: BackupQueries, path: String) throws {
        let report = try String.fetchAll(db, sql: queries.integrityCheck)
        guard report == ["ok"] else { throw Failure.damaged(path, report.prefix(5).joined(separator: "; ")) }
    }
}

/// The backup statements (`queries/backup/`).
struct BackupQueries {
    let copyInto, createManifest, insertManifest, manifest, counts, integrityCheck, makeRestored: String
    let rawHorizon, derivedWatermark, holdRetention, releaseRetention, copySchemaInto, makeRestoredWithDerived, attach: String

    static func load() throws -> BackupQueries {
        BackupQueries(
            copyInto: try SQLQueries.text("backup/copy_into.sql"),
            createManifest: try SQLQueries.text("backup/create_manifest.sql"),
            insertManifest: try SQLQueries.text("backup/insert_manifest.sql"),
            manifest: try SQLQueries.text("backup/manifest.sql"),
            counts: try SQLQueries.text("backup/counts.sql"),
            integrityCheck: try SQLQueries.text("backup/integrity_check.sql"),
            makeRestored: try SQLQueries.text("backup/make_restored.sql"),
            rawHorizon: try SQLQueries.text("retention/raw_horizon.sql"),
            derivedWatermark: try SQLQueries.text("backup/derived_watermark.sql"),
            holdRetention: try SQLQueries.text("backup/hold_retention.sql"),
            releaseRetention: try SQLQueries.text("backup/release_retention.sql"),
            copySchemaInto: try SQLQueries.text("backup/copy_schema_into.sql"),
            makeRestoredWithDerived: try SQLQueries.text("backup/make_restored_with_derived.sql"),
            attach: try SQLQueries.text("connection/attach.sql"))
    }
}

/// `fsync` of a file or a directory (a rename is durable once its directory is flushed).
enum Durably {
    static func flush(_ path: URL) throws {
        let descriptor = open(path.path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
