import LinkpulseDomain
import Logging
import PostgresNIO

/// The access keys in PostgreSQL (`lp_access_keys`): the same records as the SQLite store's
/// `AccessKeyLedger`, shared by every daemon on the database.
public struct PostgresAccessKeyLedger: AccessKeyRecords {
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger

    public func accessKeys() async throws -> [AccessKeyRecord] {
        try await records(client.query(queries.keys.list.query(), logger: logger))
    }

    public func accessKeysVersion() async throws -> Int64 {
        for try await version in try await client.query(queries.keys.version.query(), logger: logger).decode(Int64.self) {
            return version
        }
        return 0
    }

    public func insertAccessKey(_ key: AccessKeyRecord) async throws -> Bool {
        let rows = try await client.query(
            queries.keys.insert.query(["id": key.id, "name": key.name, "kind": key.kind.rawValue, "digest": key.digest, "created_at_ms": key.createdAtMs]), logger: logger)
        for try await _ in rows.decode(String.self) { return true }
        return false
    }

    public func revokeAccessKey(id: String, atMs: Int64) async throws -> AccessKeyRecord? {
        try await records(client.query(queries.keys.revoke.query(["id": id, "revoked_at_ms": atMs]), logger: logger)).first
    }

    public func recordAccessKeyUses(_ uses: [String: Int64]) async throws {
        for (id, at) in uses.sorted(by: { $0.key < $1.key }) {
            try await client.query(queries.keys.recordUse.query(["id": id, "used_at_ms": at]), logger: logger)
        }
    }

    /// The rows of `keys/list.sql` or `keys/revoke.sql` (their columns in that order); a kind
    /// this build does not know (a newer version's) is left out.
    private func records(_ rows: PostgresRowSequence) async throws -> [AccessKeyRecord] {
        var records: [AccessKeyRecord] = []
        typealias C = PostgresAccessKeyColumn
        for try await c in rows.byName() {
            guard let kind = AccessKind(rawValue: try c.decode(C.kind)) else { continue }
            records.append(AccessKeyRecord(
                id: try c.decode(C.id), name: try c.decode(C.name), kind: kind, digest: try c.decode(C.digest),
                createdAtMs: try c.decode(C.createdAtMs), lastUsedAtMs: try c.decode(C.lastUsedAtMs), revokedAtMs: try c.decode(C.revokedAtMs)))
        }
        return records
    }
}
