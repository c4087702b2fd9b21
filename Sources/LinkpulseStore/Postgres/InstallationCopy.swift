import Foundation
import GRDB
import LinkpulseDomain
import Logging

/// `linkpulse copy`: a SQLite installation's raw events, quarantine and export history copied
/// into a PostgreSQL store, in seq order, resumably.
///
/// The events go through the same group commit as ingest (`PostgresEventStore.store`), so an
/// id already in PostgreSQL stays a duplicate, and they keep their order: PostgreSQL's seqs
/// follow SQLite's, so attribution on PostgreSQL replays them in the same order and reaches the
/// same answers. Each batch commits with a mark of how far the copy has come
/// (`copy:<database id>:events` in `lp_installation`), so a copy that stopped goes on where it
/// stopped; the quarantine likewise. The export history (the periods each scheduled job
/// finished, the files it keeps) is copied last, in one transaction, and again by each run (it
/// only moves forward), then the access keys (their keyed hashes) and the hosted links. The SQLite files are only read (a daemon may keep running
/// on them; what it stores after the copy started is copied by running the copy again).
public enum InstallationCopy {
    /// What a copy did.
    public struct Summary: Sendable, Equatable {
        /// Events committed by this run, and those PostgreSQL already had under their ids.
        public var events = 0
        public var duplicates = 0
        public var quarantined = 0
        /// Scheduled export jobs and files whose records were copied.
        public var exportJobs = 0
        public var exportFiles = 0
        /// Stored access keys copied (revoked ones included).
        public var accessKeys = 0
        /// Hosted links copied (deleted ones included).
        public var links = 0
        /// The SQLite seq the events are copied through, after this run.
        public var throughSeq: Int64 = 0
    }

    /// Copies what is not copied yet from the SQLite installation in `directory` into `store`,
    /// `batch` events per commit. `maxBatches` stops early (for tests of resuming).
    public static func copy(
        from directory: URL, to store: PostgresStore, batch: Int = 5_000, maxBatches: Int? = nil, logger: Logger
    ) async throws -> Summary {
        let file = directory.appending(path: "linkpulse.sqlite")
        guard FileManager.default.fileExists(atPath: file.path) else { throw CopyError.noInstallation(directory.path) }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let source = try DatabasePool(path: file.path, configuration: configuration)
        defer { try? source.close() }
        let sqlite = try SQLQueries.load()
        guard let databaseId = try await source.read({ try String.fetchOne($0, sql: sqlite.installation.databaseId) }) else {
            throw CopyError.noInstallation(directory.path)
        }
        let eventsMark = "copy:\(databaseId):events"
        let quarantineMark = "copy:\(databaseId):quarantine"
        let marks = try await store.installationValues(matching: [eventsMark, quarantineMark])
        var summary = Summary(throughSeq: marks[eventsMark].flatMap(Int64.init) ?? 0)
        var quarantineThrough = marks[quarantineMark].flatMap(Int64.init) ?? 0
        var batches = 0

        while maxBatches.map({ batches < $0 }) ?? true {
            let after = summary.throughSeq
            let page = try await source.read { db in try readEvents(db, sql: try SQLQueries.text("copy/events_after.sql"), after: after, limit: batch) }
            guard let last = page.last?.seq else { break }
            let outcomes = try await store.events.store(
                [IngestWork(events: page.map(\.event), quarantine: [])], progress: (eventsMark, String(last)))
            let duplicates = outcomes[0].filter { $0 == .duplicate }.count
            summary.events += page.count - duplicates
            summary.duplicates += duplicates
            summary.throughSeq = last
            batches += 1
            logger.info("copied events", metadata: ["through_seq": "\(last)", "events": "\(summary.events)"])
        }
        while maxBatches.map({ batches < $0 }) ?? true {
            let after = quarantineThrough
            let page = try await source.read { db in
                try readQuarantine(db, sql: try SQLQueries.text("copy/quarantine_after.sql"), after: after, limit: batch)
            }
            guard let last = page.last?.id else { break }
            _ = try await store.events.store([IngestWork(events: [], quarantine: page.map(\.event))], progress: (quarantineMark, String(last)))
            summary.quarantined += page.count
            quarantineThrough = last
            batches += 1
        }
        guard maxBatches.map({ batches < $0 }) ?? true else { return summary }
        let ledger = ExportLedger(pool: source, queries: sqlite.export)
        let files = try await ledger.exportFiles()
        let jobs = try await source.read { db in
            try Row.fetchAll(db, sql: try SQLQueries.text("copy/export_jobs.sql")).map { (name: $0[0] as String, startMs: $0[1] as Int64, endMs: $0[2] as Int64) }
        }
        try await store.exportLedger.restore(jobs: jobs, files: files)
        summary.exportJobs = jobs.count
        summary.exportFiles = files.count
        // The access keys, as they stand: a revoked key stays revoked, last uses move forward.
        if try await source.read({ try $0.tableExists("access_keys") }) {
            for key in try await AccessKeyLedger(pool: source, queries: sqlite.keys).accessKeys() {
                _ = try await store.accessKeys.insertAccessKey(key)
                if let revoked = key.revokedAtMs { _ = try await store.accessKeys.revokeAccessKey(id: key.id, atMs: revoked) }
                if let used = key.lastUsedAtMs { try await store.accessKeys.recordAccessKeyUses([key.id: used]) }
                summary.accessKeys += 1
            }
        }
        // The hosted links, as they stand: a link copied before takes its fields again, a
        // deleted one stays deleted (its ref never given out again).
        if try await source.read({ try $0.tableExists("links") }) {
            for stored in try await LinkLedger(pool: source, queries: sqlite.links).everyLink() {
                if try await store.links.insertLinks([stored.link]).isEmpty == false {
                    _ = try await store.links.updateLink(stored.link)
                }
                if let deleted = stored.deletedAtMs { _ = try await store.links.deleteLink(ref: stored.link.ref, atMs: deleted) }
                summary.links += 1
            }
        }
        return summary
    }

    static func readEvents(_ db: Database, sql: String, after: Int64, limit: Int) throws -> [(seq: Int64, event: IngestEvent)] {
        try Row.fetchAll(db, sql: sql, arguments: ["after_seq": after, "limit": limit]).map { r in
            var event = IngestEvent(
                id: r["event_id"], kind: EventKind(rawValue: r["type"]) ?? .open, occurredAtMs: r["occurred_at_ms"],
                receivedAtMs: r["received_at_ms"], sentAtMs: r["sent_at_ms"], ref: r["ref"], campaign: r["campaign"],
                source: r["source"], medium: r["medium"], platform: Platform(rawValue: r["platform"]) ?? .other,
                deviceId: r["device_id"], clickId: r["click_id"],
                clickIdSource: (r["click_id_source"] as String?).flatMap(ClickIdSource.init(rawValue:)),
                deferred: (r["deferred"] as Int64?).map { $0 != 0 }, url: r["url"], referrer: r["referrer"],
                userAgent: r["user_agent"], ipHash: r["ip_hash"], visitorId: r["visitor_id"], osVersion: r["os_version"],
                appVersion: r["app_version"], propertiesJSON: r["properties"], botReason: r["bot_reason"],
                installReferrer: r["install_referrer"])
            event.isResolve = (r["resolve"] as Int64?) == 1
            event.audienceText = r["audience"]
            return (r["seq"], event)
        }
    }

    static func readQuarantine(_ db: Database, sql: String, after: Int64, limit: Int) throws -> [(id: Int64, event: QuarantinedEvent)] {
        try Row.fetchAll(db, sql: sql, arguments: ["after_id": after, "limit": limit]).map { r in
            (r["id"], QuarantinedEvent(
                receivedAtMs: r["received_at_ms"], index: r["event_index"],
                error: EventError(code: r["code"], field: r["field"], message: r["message"]),
                rawText: r["raw_text"], truncated: (r["raw_truncated"] as Int64? ?? 0) != 0, userAgent: r["user_agent"]))
        }
    }

    public enum CopyError: Error, CustomStringConvertible {
        case noInstallation(String)

        public var description: String {
            switch self {
            case .noInstallation(let path): "no Linkpulse installation in \(path) (no linkpulse.sqlite with a database id): is --from its data directory?"
            }
        }
    }
}
