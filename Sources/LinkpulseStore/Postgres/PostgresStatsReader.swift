import LinkpulseDomain
import Logging
import PostgresNIO

/// Stats on PostgreSQL: exact, and the same counts as the SQLite store's for the same events.
///
/// Whole UTC months, days and hours of a range come from the rollup rows (`lp_rollups`, see
/// `RollupCells`, `RollupRows`), the edges finer than an hour from the raw events, each row
/// through the same `CountedEvent` and `StatsPlan.addRaw` as the SQLite store's edges. The rows
/// are kept by one link or audience dimension at a time (or by platform), so a query filtered by more than one dimension, or grouped by one
/// and filtered by another, is counted from the raw events of its whole range (slower; see
/// `docs/performance.md`, PostgreSQL). Counts what the rollups have counted (seq up to their
/// watermark), as SQLite does, read in one snapshot.
public struct PostgresStatsReader: StatsSource {
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger

    public func statsCounts(
        _ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool, onlyKeys: [String?]?, visitorsOnly: Bool
    ) async throws -> [StatsGroupKey: CountsByAudience] {
        let plan = StatsPlan(query: query, grouping: grouping)
        let wanted = onlyKeys.map(Set.init)
        let rows = RollupRows(plan: plan)
        let (reads, dropsNetted) = rows?.reads(withVisitors: withVisitors, asksKeys: onlyKeys != nil, visitorsOnly: visitorsOnly)
            ?? ([.raw(from: query.fromMs, to: query.toMs)], false)
        return try await client.withConnection { connection in
            try await connection.query(self.queries.stats.snapshot.query(), logger: self.logger)
            do {
                if let horizon = try await self.horizon(on: connection) { try RollupRows.refuseRawReads(rows, of: query, before: horizon) }
                if rows != nil { try await connection.query(self.queries.stats.workMemory.query(), logger: self.logger) }
                var groups: [StatsGroupKey: CountsByAudience] = [:]
                for read in reads {
                    switch read {
                    case .raw(let from, let to):
                        try await self.addRaw(from: from, to: to, plan: plan, wanted: wanted, on: connection, into: &groups)
                    case .rows(let grain, let from, let to, let counting, let visitors, let onlyAskedKeys):
                        try await self.addRollups(
                            rows!, grain, from: from, to: to, counting, visitors: visitors, of: onlyAskedKeys ? onlyKeys : nil,
                            on: connection, into: &groups)
                    }
                }
                try await connection.query("COMMIT", logger: self.logger)
                return dropsNetted ? RollupRows.droppingNetted(groups) : groups
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: self.logger)
                throw error
            }
        }
    }

    /// The raw-event horizon (retention has deleted raw events before it), or nil.
    func horizon(on connection: PostgresConnection) async throws -> Int64? {
        for try await ms in try await connection.query(queries.retention.horizon.query(), logger: logger).decode(Int64.self) {
            return ms
        }
        return nil
    }

    /// The counted raw events of [from, to).
    func addRaw(
        from: Int64, to: Int64, plan: StatsPlan, wanted: Set<String?>?, on connection: PostgresConnection,
        into groups: inout [StatsGroupKey: CountsByAudience]
    ) async throws {
        let rows = try await connection.query(queries.stats.rawEvents.query(["from_ms": from, "to_ms": to]), logger: logger)
        for try await row in rows {
            let (event, occurredAtMs) = try Self.countedEvent(row.makeRandomAccess())
            plan.addRaw(event, occurredAtMs: occurredAtMs, wanted: wanted, into: &groups)
        }
    }

    /// The rollup rows of one grain in [from, to): their counts summed by the server, added or
    /// taken away (`counting`; see `RollupRows.reads`), and with `visitors` their
    /// click-visitor sketches merged here (of the groups `keys` when given).
    func addRollups(
        _ rows: RollupRows, _ grain: RollupCells.Grain, from: Int64, to: Int64, _ counting: RollupRowCounting, visitors: Bool, of keys: [String?]?,
        on connection: PostgresConnection, into groups: inout [StatsGroupKey: CountsByAudience]
    ) async throws {
        /// `statement` with the rows' selection bound (and `keys`, when given).
        func selecting(_ statement: PostgresStatement, keys: [String]?? = .none) throws -> PostgresQuery {
            var values: [(name: String, value: PostgresStatement.Value)] = [
                ("dimension", rows.dimension.rawValue), ("grain", grain.rawValue), ("from_ms", from), ("to_ms", to),
                ("value", rows.value), ("platform", rows.platform), ("key", rows.key),
            ]
            if case .some(let keys) = keys { values.append(("keys", keys)) }
            return try statement.query(binding: values)
        }
        if counting != .none {
            let sign = counting == .subtract ? -1 : 1
            for try await row in try await connection.query(try selecting(queries.stats.rollupCounts), logger: logger) {
                let c = row.makeRandomAccess()
                typealias R = PostgresRollupCountsColumn
                let n = ConversionCounts(row: try R.counts.map { try c[$0].decode(Int64.self) }, sign: sign)
                groups[rows.group(try c[R.key].decode(String.self)), default: CountsByAudience()].add(n, isBot: try c[R.bot].decode(Bool.self))
            }
        }
        guard visitors else { return }
        let values: [String]? = rows.key == "value" ? keys.map { $0.map { $0 ?? "" } } : nil
        let sketches = try await connection.query(try selecting(queries.stats.rollupVisitors, keys: .some(values)), logger: logger)
        typealias V = PostgresRollupVisitorsColumn
        for try await c in sketches.byName() {
            let (key, bot, sketch) = (try c.decode(V.key, as: String.self), try c.decode(V.bot, as: Bool.self), try c.decode(V.visitors, as: ByteBuffer.self))
            sketch.withUnsafeReadableBytes { groups[rows.group(key), default: CountsByAudience()].mergeVisitors(serialized: $0, isBot: bot) }
        }
    }

    /// A row of `stats/raw_events.sql` (or `rollups/events.sql`) as the rollups count it, and
    /// when it happened.
    static func countedEvent(_ c: PostgresRandomAccessRow) throws -> (CountedEvent, occurredAtMs: Int64) {
        typealias C = PostgresCountedEventColumn
        let match = try c[C.matchType].decode(String?.self).flatMap(MatchType.init(rawValue:))
        let own = LinkDimensions(
            ref: try c[C.ref].decode(String?.self), campaign: try c[C.campaign].decode(String?.self),
            source: try c[C.source].decode(String?.self), medium: try c[C.medium].decode(String?.self))
        // Attribution's counted dimensions stand in for the click's: `countedDimensions`
        // gives them back unchanged for every match type.
        let counted = match == nil ? nil : LinkDimensions(
            ref: try c[C.countedRef].decode(String?.self), campaign: try c[C.countedCampaign].decode(String?.self),
            source: try c[C.countedSource].decode(String?.self), medium: try c[C.countedMedium].decode(String?.self))
        let event = CountedEvent(
            kind: CompactEvent.kind(code: Int64(try c[C.type].decode(Int16.self))),
            platform: Platform.fromCode(UInt8(truncatingIfNeeded: try c[C.platform].decode(Int16.self))), isBot: try c[C.bot].decode(Bool.self),
            deferred: try c[C.deferred].decode(Bool?.self) == true, visitorHash: VisitorSketch.hash(try c[C.visitorId].decode(String.self)),
            own: own, match: match, click: counted,
            ownAudience: CountedAudience(stored: try c[C.audience].decode(String?.self), referrer: try c[C.referrer].decode(String?.self)),
            clickAudience: try c[C.clickAudience].decode(String?.self).map {
                CountedAudience(stored: $0, referrer: try c[C.clickReferrer].decode(String?.self))
            })
        return (event, try c[C.occurredAtMs].decode(Int64.self))
    }
}

extension PostgresStatsReader: RawEventSource {
    /// Starts a raw-event export at the newest event stored so far; throws `ParameterError`
    /// (naming `from`) when it starts before the raw-event horizon.
    public func rawEventCursor(for query: RawEventQuery) async throws -> RawEventCursor {
        let horizon = try await client.withConnection { try await self.horizon(on: $0) }
        if let horizon, query.fromMs < horizon { throw ParameterError.rawEventsExpired("from", horizonMs: horizon) }
        for try await seq in try await client.query(queries.export.newestSeq.query(), logger: logger).decode(Int64.self) {
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
        /// `statement` with its four bounds, the filters and the page size bound.
        func filtered(_ statement: PostgresStatement, _ bounds: KeyValuePairs<String, Int64>, size: Int) throws -> PostgresQuery {
            try statement.query(binding: bounds.map { ($0.key, $0.value) } + [
                ("ref", f.ref), ("campaign", f.campaign), ("source", f.source), ("medium", f.medium),
                ("platform", f.platform.map { Int16($0.code) }), ("include_bots", query.includeBots), ("limit", Int64(size)),
            ])
        }
        if !cursor.inTail {
            let q = try filtered(
                queries.export.eventsInTime,
                [
                    "after_ms": max(query.fromMs, cursor.afterMs ?? query.fromMs), "to_ms": query.toMs, "snapshot_seq": cursor.snapshotSeq,
                    "after_seq": cursor.afterMs == nil ? -1 : cursor.afterSeq,
                ],
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
        let q = try filtered(
            queries.export.eventsTail,
            ["from_ms": query.fromMs, "to_ms": query.toMs, "snapshot_seq": cursor.snapshotSeq, "after_seq": cursor.afterSeq],
            size: limit - page.count)
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
                case .clickIdSource: return try cell.decode(Int16?.self).flatMap { ClickIdSource(code: Int($0)) }?.rawValue
                default: return try cell.decode(String?.self)
                }
            })
        return (try c[Int(RawEventColumn.seq.rawValue)].decode(Int64.self), try c[Int(RawEventColumn.occurredAt.rawValue)].decode(Int64.self))
    }
}
