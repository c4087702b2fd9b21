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
