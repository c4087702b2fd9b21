import LinkpulseDomain
import Logging
import PostgresNIO

/// Stats on PostgreSQL, counted from the raw events and their attribution: exact, and the same
/// counts as the SQLite store's for the same events (each row goes through the same
/// `CountedEvent` and `StatsPlan.addRaw` as the SQLite store's edges do). Counts what the
/// derived work has attributed (seq up to its watermark), as SQLite counts what its rollups
/// have. No rollup tables yet: a query reads every event of its range, which is fine for
/// ranges of up to a few million events and slow beyond (see `docs/PERFORMANCE.md`).
public final class PostgresStatsReader: StatsSource {
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger

    init(client: PostgresClient, queries: PostgresQueries, logger: Logger) {
        self.client = client
        self.queries = queries
        self.logger = logger
    }

    /// Every row is read whatever is asked: visitors come with the counts.
    public var countsVisitorsWithCounts: Bool { true }

    public func statsCounts(
        _ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool, onlyKeys: [String?]?, visitorsOnly: Bool
    ) async throws -> [StatsGroupKey: CountsByAudience] {
        let plan = StatsPlan(query: query, grouping: grouping)
        let wanted = onlyKeys.map(Set.init)
        var groups: [StatsGroupKey: CountsByAudience] = [:]
        let rows = try await client.query(PostgresStore.query(queries.stats.rawEvents, query.fromMs, query.toMs), logger: logger)
        for try await row in rows {
            let c = row.makeRandomAccess()
            let match = try c[10].decode(String?.self).flatMap(MatchType.init(rawValue:))
            let own = LinkDimensions(
                ref: try c[6].decode(String?.self), campaign: try c[7].decode(String?.self), source: try c[8].decode(String?.self),
                medium: try c[9].decode(String?.self))
            // Attribution's counted dimensions stand in for the click's: `countedDimensions`
            // gives them back unchanged for every match type.
            let counted = match == nil ? nil : LinkDimensions(
                ref: try c[11].decode(String?.self), campaign: try c[12].decode(String?.self), source: try c[13].decode(String?.self),
                medium: try c[14].decode(String?.self))
            let resolved = CountedEvent(
                kind: CompactEvent.kind(code: Int64(try c[1].decode(Int16.self))),
                platform: Platform.fromCode(UInt8(truncatingIfNeeded: try c[2].decode(Int16.self))), isBot: try c[3].decode(Bool.self),
                deferred: try c[4].decode(Bool?.self) == true, visitorHash: VisitorSketch.hash(try c[5].decode(String.self)),
                own: own, match: match, click: counted)
            plan.addRaw(resolved, occurredAtMs: try c[0].decode(Int64.self), wanted: wanted, into: &groups)
        }
        return groups
    }
}

extension PostgresStatsReader: RawEventSource {
    /// Starts a raw-event export at the newest event stored so far (no retention on
    /// PostgreSQL yet: every range can be read).
    public func rawEventCursor(for query: RawEventQuery) async throws -> RawEventCursor {
        for try await seq in try await client.query(PostgresQuery(unsafeSQL: queries.export.newestSeq), logger: logger).decode(Int64.self) {
            return RawEventCursor(snapshotSeq: seq)
        }
        return RawEventCursor(snapshotSeq: 0)
    }

    /// Reads the next page, as `StatsReader.rawEventsPage` does: the events of the snapshot in
    /// time order, then those stored since in seq order.
    public func rawEventsPage(_ query: RawEventQuery, cursor: RawEventCursor, limit: Int) async throws -> (page: RawEventPage, next: RawEventCursor?) {
        var page = RawEventPage(capacity: limit)
        var cursor = cursor
        let f = query.filters
        /// `sql` with four bounds, the filters and the page size bound.
        func filtered(_ sql: String, _ bounds: [Int64], size: Int) -> PostgresQuery {
            var bindings = PostgresBindings(capacity: 11)
            for value in bounds { bindings.append(value) }
            for text in [f.ref, f.campaign, f.source, f.medium] { bindings.append(text) }
            bindings.append(f.platform.map { Int16($0.code) })
            bindings.append(query.includeBots)
            bindings.append(Int64(size))
            return PostgresQuery(unsafeSQL: sql, binds: bindings)
        }
        if !cursor.inTail {
            let q = filtered(
                queries.export.eventsInTime,
                [max(query.fromMs, cursor.afterMs ?? query.fromMs), query.toMs, cursor.snapshotSeq, cursor.afterMs == nil ? -1 : cursor.afterSeq],
                size: limit)
            for try await row in try await client.query(q, logger: logger) {
                let (seq, ms) = try Self.append(row, to: &page)
                cursor.afterMs = ms
                cursor.afterSeq = seq
            }
            if page.count == limit { return (page, cursor) }
            cursor.inTail = true
            cursor.afterSeq = -1
        }
        let q = filtered(queries.export.eventsTail, [query.fromMs, query.toMs, cursor.snapshotSeq, cursor.afterSeq], size: limit - page.count)
        for try await row in try await client.query(q, logger: logger) {
            cursor.afterSeq = try Self.append(row, to: &page).seq
        }
        return (page, page.count == limit ? cursor : nil)
    }

    /// Appends one row of `export/events_in_time.sql` or `events_tail.sql` (columns in
    /// `RawEventColumn` order); returns its seq and time.
    static func append(_ row: PostgresRow, to page: inout RawEventPage) throws -> (seq: Int64, occurredAtMs: Int64) {
        let c = row.makeRandomAccess()
        try page.append(
            integer: { column in
                let cell = c[Int(column.rawValue)]
                switch column {
                case .deferred, .bot: return try cell.decode(Bool?.self).map { $0 ? 1 : 0 }
                default: return try cell.decode(Int64?.self)
                }
            },
            text: { column in
                let cell = c[Int(column.rawValue)]
                switch column {
                case .type: return CompactEvent.kind(code: Int64(try cell.decode(Int16.self))).rawValue
                case .platform: return Platform.fromCode(UInt8(truncatingIfNeeded: try cell.decode(Int16.self))).rawValue
                default: return try cell.decode(String?.self)
                }
            })
        return (try c[Int(RawEventColumn.seq.rawValue)].decode(Int64.self), try c[Int(RawEventColumn.occurredAt.rawValue)].decode(Int64.self))
    }
}
