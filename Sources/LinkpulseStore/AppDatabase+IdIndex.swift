import Foundation
import GRDB

/// The id index: deduplication that stays fast when random client ids outgrow the page cache.
///
/// A plain unique index on random ids makes every insert touch a random B-tree page, which
/// slows SQLite about ten-fold once the index no longer fits in memory. Instead, new ids live
/// in the writer's in-memory tail (`IdTail`), and a background job merges them into the
/// on-disk index in large sorted runs, in a separate file so a merge never holds the events
/// database's write lock. Lookups read both; reads of a big index are cheap, writes are not.
extension AppDatabase {
    /// How many stored ids are not yet in the on-disk index (held in memory by the writer).
    public var idTailCount: Int { tail.withLock { $0.count } }

    /// Merges the ids of up to `maxCount` committed events past the watermark into the on-disk
    /// index and advances the watermark in the same transaction. Returns how many it merged.
    ///
    /// Synchronous and idempotent; call it from one place at a time (the id index job, or
    /// start-up). Safe beside the writer: the writer drops merged ids from memory only at the
    /// start of its next transaction.
    @discardableResult
    public func mergeIdIndex(maxCount: Int = 1_000_000) throws -> Int {
        let from = indexedThrough.withLock { $0 }
        let newest = try maxSeq()
        guard newest > from else { return 0 }
        let upTo = min(newest, from + Int64(maxCount))
        var pairs = try pool.read { db in
            var pairs: [(key: Int64, seq: Int64)] = []
            let rows = try Row.fetchCursor(db.cachedStatement(sql: queries.idKeysInRange), arguments: [from, upTo])
            while let row = try rows.next() { pairs.append((row[0], row[1])) }
            return pairs
        }
        // Sorted by key, the inserts walk the B-tree once from left to right.
        pairs.sort { $0.key != $1.key ? $0.key < $1.key : $0.seq < $1.seq }
        try idIndex.write { db in
            let insert = try db.cachedStatement(sql: queries.insertEventId)
            for pair in pairs { try insert.execute(arguments: [pair.key, pair.seq]) }
            try db.execute(sql: "UPDATE index_state SET indexed_through_seq = ?", arguments: [upTo])
        }
        // The filter learns the keys before the writer may forget them: no moment without either.
        if filter.withLock({ $0.count + pairs.count > $0.capacity }) {
            try rebuildFilter(capacity: 2 * (filter.withLock { $0.count } + pairs.count))
        } else {
            for chunk in stride(from: 0, to: pairs.count, by: 8192) {
                filter.withLock { filter in
                    for pair in pairs[chunk..<min(chunk + 8192, pairs.count)] { filter.insert(pair.key) }
                }
            }
        }
        indexedThrough.withLock { $0 = upTo }
        tail.withLock { $0.requestPrune(through: upTo) }
        // Keep the index file's WAL short; readers only ever hold it for one lookup.
        _ = try? idIndex.inDatabase { db in try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return pairs.count
    }

    /// Builds a filter of every key in the on-disk index, sized for `capacity` keys, and swaps
    /// it in. Called at open and by merges when the filter is full.
    func rebuildFilter(capacity: Int) throws {
        var fresh = IdFilter(capacity: capacity)
        try idIndex.read { db in
            let keys = try Int64.fetchCursor(db, sql: "SELECT id_key FROM event_ids")
            while let key = try keys.next() { fresh.insert(key) }
        }
        filter.withLock { $0 = fresh }
    }

    /// At open: ties the id index to this database, rebuilds it when it belongs elsewhere or
    /// claims events that do not exist, merges until at most `tailLimit` ids are left over,
    /// then loads those into the writer's tail.
    func prepareIdIndex(tailLimit: Int) throws {
        let (databaseId, newest) = try pool.write { db -> (String, Int64) in
            if let id = try String.fetchOne(db, sql: "SELECT value FROM installation WHERE name = 'database_id'") {
                return (id, try Int64.fetchOne(db, sql: "SELECT max(seq) FROM events") ?? 0)
            }
            let id = UUID().uuidString.lowercased()
            try db.execute(sql: "INSERT INTO installation (name, value) VALUES ('database_id', ?)", arguments: [id])
            return (id, try Int64.fetchOne(db, sql: "SELECT max(seq) FROM events") ?? 0)
        }
        let through = try idIndex.write { db -> Int64 in
            let state = try Row.fetchOne(db, sql: "SELECT database_id, indexed_through_seq FROM index_state")
            if let state, state["database_id"] as String == databaseId, (state["indexed_through_seq"] as Int64) <= newest {
                return state["indexed_through_seq"]
            }
            if state != nil {
                logger.warning("id index belongs to another database state; rebuilding it", metadata: ["events": "\(newest)"])
            }
            try db.execute(sql: "DELETE FROM event_ids")
            try db.execute(
                sql: "INSERT OR REPLACE INTO index_state (singleton, database_id, indexed_through_seq) VALUES (1, ?, 0)",
                arguments: [databaseId])
            return 0
        }
        indexedThrough.withLock { $0 = through }
        let indexedCount = try idIndex.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM event_ids") ?? 0 }
        try rebuildFilter(capacity: max(1 << 20, 2 * indexedCount))
        while try maxSeq() - indexedThrough.withLock({ $0 }) > Int64(tailLimit) {
            let merged = try mergeIdIndex()
            logger.info("id index caught up", metadata: ["merged": "\(merged)"])
        }
        let start = indexedThrough.withLock { $0 }
        try pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: queries.idKeysInRange), arguments: [start, Int64.max])
            var loaded = IdTail()
            while let row = try rows.next() { loaded.add(key: row[0], seq: row[1]) }
            tail.withLock { $0 = loaded }
        }
    }
}
