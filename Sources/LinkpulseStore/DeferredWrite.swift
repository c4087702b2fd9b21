import GRDB

extension DatabasePool {
    /// One write transaction on the events database that locks only what it writes (BEGIN
    /// DEFERRED). GRDB's `write` begins IMMEDIATE, which on these connections takes the write
    /// lock of every attached file too (id index, attribution, rollups), and so waits out, and
    /// after the busy timeout fails beside, a long attribution round or rollup pass.
    func writeDeferred<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try Database.deferred(db, body) }
    }

    /// `writeDeferred`, awaited off the cooperative pool (GRDB's writer queue runs it).
    func writeDeferred<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in try Database.deferred(db, body) }
    }
}

extension Database {
    /// Runs `body` in a BEGIN DEFERRED transaction of `db` and commits it.
    static func deferred<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        var result: T?
        try db.inTransaction(.deferred) {
            result = try body(db)
            return .commit
        }
        return result!
    }
}
