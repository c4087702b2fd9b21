import GRDB
import LinkpulseDomain

/// The ingest writer's cache of the events' dictionary (`event_texts`: user agents, OS and app
/// versions, bot reasons): the id of a value seen before costs a hash lookup, not a query. Entries
/// only grow and are never changed, so the cache can only miss, never be wrong; it is emptied
/// when it holds `limit` values (memory stays bounded whatever the traffic) and when a
/// transaction that may have added entries rolls back.
struct EventDictionary {
    /// The most values the cache holds before it starts over.
    static let limit = 50_000

    var texts: [String: Int64] = [:]

    /// The two statements of the dictionary, prepared once per commit.
    struct Statements {
        let textId, insertText: HotStatement

        init(_ db: Database, _ queries: SQLQueries) throws {
            textId = HotStatement(try db.cachedStatement(sql: queries.textId), in: db)
            insertText = HotStatement(try db.cachedStatement(sql: queries.insertText), in: db)
        }
    }

    /// The id of `value` in `event_texts`, added when new; nil for nil.
    mutating func textId(_ value: String?, _ db: Database, _ statements: Statements) throws -> Int64? {
        guard let value else { return nil }
        if let id = texts[value] { return id }
        let id: Int64
        try statements.textId.bind(":value", value)
        if let found = try statements.textId.firstInt64() {
            id = found
        } else {
            try statements.insertText.bind(":value", value)
            try statements.insertText.run()
            id = db.lastInsertedRowID
        }
        if texts.count >= Self.limit { texts.removeAll(keepingCapacity: true) }
        texts[value] = id
        return id
    }

    /// Forgets everything (after a rollback: ids added in it no longer exist).
    mutating func clear() {
        texts.removeAll()
    }
}
