import Foundation
import GRDB
import LinkpulseDomain

/// The access keys in whichever store the daemon runs on (`AccessKeyLedger` in SQLite,
/// `PostgresAccessKeyLedger`): records with a keyed hash of each secret, never the secret.
/// Written by the keys API and `linkpulse keys`, read by every daemon when `version` moves.
public protocol AccessKeyRecords: Sendable {
    /// Every stored key, revoked ones included, oldest first.
    func accessKeys() async throws -> [AccessKeyRecord]
    /// A number that changes whenever a key is created or revoked (not when a use is recorded).
    func accessKeysVersion() async throws -> Int64
    /// Stores `key`; false when a key with its id or digest is stored already (nothing changes).
    func insertAccessKey(_ key: AccessKeyRecord) async throws -> Bool
    /// Revokes the key `id` at `atMs` (a key revoked already keeps its first time) and returns
    /// it as now stored; nil when no key has that id.
    func revokeAccessKey(id: String, atMs: Int64) async throws -> AccessKeyRecord?
    /// Records when keys were last used (key id → UTC ms); a time never moves backwards.
    func recordAccessKeyUses(_ uses: [String: Int64]) async throws
}

/// The access keys of a SQLite installation: the `access_keys` table of the events database
/// (so a backup carries them). Written in short deferred transactions beside the ingest
/// writer, like the export ledger.
public final class AccessKeyLedger: AccessKeyRecords {
    let pool: DatabasePool
    let queries: KeyQueries

    init(pool: DatabasePool, queries: KeyQueries) {
        self.pool = pool
        self.queries = queries
    }

    /// The access keys of the installation under `directory` on connections of their own, for
    /// `linkpulse keys` beside a running daemon: only the events database is opened, nothing is
    /// attached or migrated, and a change is one short deferred transaction, so the daemon's
    /// commits go on beside it. Nil when the events database does not exist or has no keys
    /// table yet (a new installation, or one no version with keys has opened: open it with
    /// `AppDatabase` first, which migrates it).
    public static func beside(directory: URL) throws -> AccessKeyLedger? {
        guard let pool = try AppDatabase.eventsBeside(directory: directory, holding: "access_keys") else { return nil }
        return AccessKeyLedger(pool: pool, queries: try SQLQueries.load().keys)
    }

    /// Closes the connections `beside` opened (those of an `AppDatabase` close with it).
    public func close() throws {
        try pool.close()
    }

    public func accessKeys() async throws -> [AccessKeyRecord] {
        let sql = queries.list
        return try await pool.read { db in try Row.fetchAll(db, sql: sql).compactMap(Self.record) }
    }

    public func accessKeysVersion() async throws -> Int64 {
        let sql = queries.version
        return try await pool.read { db in try Int64.fetchOne(db, sql: sql) ?? 0 }
    }

    public func insertAccessKey(_ key: AccessKeyRecord) async throws -> Bool {
        let sql = queries.insert
        return try await pool.writeDeferred { db in
            try db.execute(sql: sql, arguments: [
                "id": key.id, "name": key.name, "kind": key.kind.rawValue, "digest": key.digest, "created_at_ms": key.createdAtMs,
            ])
            return db.changesCount > 0
        }
    }

    public func revokeAccessKey(id: String, atMs: Int64) async throws -> AccessKeyRecord? {
        let (revoke, byId) = (queries.revoke, queries.byId)
        return try await pool.writeDeferred { db in
            try db.execute(sql: revoke, arguments: ["id": id, "revoked_at_ms": atMs])
            return try Row.fetchOne(db, sql: byId, arguments: ["id": id]).flatMap(Self.record)
        }
    }

    public func recordAccessKeyUses(_ uses: [String: Int64]) async throws {
        guard !uses.isEmpty else { return }
        let sql = queries.recordUse
        try await pool.writeDeferred { db in
            for (id, at) in uses { try db.execute(sql: sql, arguments: ["id": id, "used_at_ms": at]) }
        }
    }

    /// A row of `keys/list.sql` or `keys/by_id.sql`, read by column name; nil for a kind this
    /// build does not know (a newer version's), which it then neither lists nor accepts.
    static func record(_ row: Row) -> AccessKeyRecord? {
        guard let kind = AccessKind(rawValue: row["kind"]) else { return nil }
        return AccessKeyRecord(
            id: row["id"], name: row["name"], kind: kind, digest: row["digest"], createdAtMs: row["created_at_ms"],
            lastUsedAtMs: row["last_used_at_ms"], revokedAtMs: row["revoked_at_ms"])
    }
}

extension AppDatabase {
    /// Connections of their own to the events database under `directory`, for a command
    /// beside a running daemon (`linkpulse keys`, `linkpulse links`): nothing attached or
    /// migrated, one reader, and the daemon's checkpoint job left to own the WAL (a write here
    /// never checkpoints it, and the WAL keeps the daemon's size limit). Nil when there is no
    /// events database, or it has no `table` yet (a version without it made it: open it with
    /// `AppDatabase` first, which migrates it).
    static func eventsBeside(directory: URL, holding table: String) throws -> DatabasePool? {
        let file = directory.appending(path: eventsFileName)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let connection = try ConnectionQueries.load()
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.maximumReaderCount = 1
        configuration.prepareDatabase { db in
            try db.execute(sql: connection.noAutocheckpoint)
            try db.execute(sql: connection.journalSizeLimit)
        }
        let pool = try DatabasePool(path: file.path, configuration: configuration)
        guard try pool.read({ try $0.tableExists(table) }) else {
            try pool.close()
            return nil
        }
        return pool
    }
}
