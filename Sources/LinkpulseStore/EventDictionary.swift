import GRDB
import Synchronization
import LinkpulseDomain

/// The ingest writer's cache of the events' two dictionaries (`event_texts` for user agents,
/// URLs, referrers, versions and bot reasons; `event_links` for ref, campaign, source and
/// medium together): the id of a value seen before costs a hash lookup, not a query. Entries
/// only grow and are never changed, so the cache can only miss, never be wrong; it is emptied
/// when it holds `limit` values (memory stays bounded whatever the traffic) and when a
/// transaction that may have added entries rolls back.
struct EventDictionary {
    /// The most values each cache holds before it starts over.
    static let limit = 50_000

    var texts: [String: Int64] = [:]
    var links: [LinkDimensions: Int64] = [:]

    /// The four statements of the dictionaries, prepared once per commit.
    struct Statements {
        let textId, insertText, linkId, insertLink: HotStatement

        init(_ db: Database, _ queries: SQLQueries) throws {
            textId = HotStatement(try db.cachedStatement(sql: queries.textId), in: db)
            insertText = HotStatement(try db.cachedStatement(sql: queries.insertText), in: db)
            linkId = HotStatement(try db.cachedStatement(sql: queries.linkId), in: db)
            insertLink = HotStatement(try db.cachedStatement(sql: queries.insertLink), in: db)
        }
    }

    /// The id of `value` in `event_texts`, added when new; nil for nil.
    mutating func textId(_ value: String?, _ db: Database, _ statements: Statements) throws -> Int64? {
        guard let value else { return nil }
        if let id = texts[value] { return id }
        let id: Int64
        try statements.textId.bind(1, value)
        if let found = try statements.textId.firstInt64() {
            id = found
        } else {
            try statements.insertText.bind(1, value)
            try statements.insertText.run()
            id = db.lastInsertedRowID
        }
        if texts.count >= Self.limit { texts.removeAll(keepingCapacity: true) }
        texts[value] = id
        return id
    }

    /// The id of the link dimensions in `event_links`, added when new; nil when all are nil.
    mutating func linkId(_ link: LinkDimensions, _ db: Database, _ statements: Statements) throws -> Int64? {
        if link.ref == nil && link.campaign == nil && link.source == nil && link.medium == nil { return nil }
        if let id = links[link] { return id }
        let id: Int64
        let lookup = statements.linkId
        try lookup.bind(1, link.ref); try lookup.bind(2, link.campaign)
        try lookup.bind(3, link.source); try lookup.bind(4, link.medium)
        if let found = try lookup.firstInt64() {
            id = found
        } else {
            let insert = statements.insertLink
            try insert.bind(1, link.ref); try insert.bind(2, link.campaign)
            try insert.bind(3, link.source); try insert.bind(4, link.medium)
            try insert.run()
            id = db.lastInsertedRowID
        }
        if links.count >= Self.limit { links.removeAll(keepingCapacity: true) }
        links[link] = id
        return id
    }

    /// Forgets everything (after a rollback: ids added in it no longer exist).
    mutating func clear() {
        texts.removeAll()
        links.removeAll()
    }
}

/// The readers' copy of `event_links` (ids only grow and rows never change, so a copy is never
/// wrong, only short): the rollup pass turns an event's link id into its dimensions with an
/// array lookup. Shared by every pass of the process.
final class EventLinks: Sendable {
    /// `all[id]`: the dimensions of link `id` (index 0, "no link", is all nil).
    struct Known: Sendable {
        var all: [LinkDimensions] = [LinkDimensions()]
    }

    private let known = Mutex(Known())

    /// Every link visible in `db`'s snapshot: reads only the rows added since the last call.
    /// `sql` is `queries/ingest/links_after.sql`.
    func current(_ db: Database, sql: String) throws -> Known {
        let after = known.withLock { Int64($0.all.count - 1) }
        let added = try linkRows(db, sql: sql, after: after, emptyIsNil: false)
        return known.withLock { state in
            for (id, link) in added where Int(id) == state.all.count { state.all.append(link) }
            return state
        }
    }
}
