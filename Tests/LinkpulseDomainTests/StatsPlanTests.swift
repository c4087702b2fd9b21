import LinkpulseDomain
import Testing

/// The plan both stores read a stats answer by: which rollup grain or raw range answers each
/// part of a range, checked without a store.
@Suite struct StatsPlanTests {
    static let day = TimeGrain.dayMs
    static let hour = TimeGrain.hourMs
    static let quarter = TimeGrain.quarterHourMs
    /// 2026-11-20T00:00:00Z.
    static let midnight: Int64 = 1_795_132_800_000

    static func plan(_ from: Int64, _ to: Int64, filters: StatsFilters = StatsFilters(), grouping: StatsGrouping = .none) -> [StatsPlan.Piece] {
        StatsPlan(query: StatsQuery(fromMs: from, toMs: to, filters: filters), grouping: grouping).pieces
    }

    /// The pieces cover the range exactly once, in order, without gaps or overlaps.
    static func covers(_ pieces: [StatsPlan.Piece], from: Int64, to: Int64) -> Bool {
        var at = from
        for piece in pieces {
            let (a, b): (Int64, Int64) = switch piece {
            case .rollup(_, let a, let b), .raw(let a, let b): (a, b)
            case .dimensionDays(_, let a, let b): (a * day, b * day)
            }
            guard a == at, a < b else { return false }
            at = b
        }
        return at == to
    }

    @Test func aRangeIsCutIntoTheCoarsestRollupsThatFitWithRawEdges() {
        let m = Self.midnight
        // 23:45 the day before to two days later at 01:20 and 5 s.
        let from = m - 15 * 60_000
        let to = m + 2 * Self.day + Self.hour + 20 * 60_000 + 5_000
        let pieces = Self.plan(from, to, filters: StatsFilters(campaign: "spring"))
        #expect(pieces == [
            .rollup(.quarterHour, from: from, to: m),
            .rollup(.day, from: m, to: m + 2 * Self.day),
            .rollup(.hour, from: m + 2 * Self.day, to: m + 2 * Self.day + Self.hour),
            .rollup(.quarterHour, from: m + 2 * Self.day + Self.hour, to: m + 2 * Self.day + Self.hour + 15 * 60_000),
            .raw(from: m + 2 * Self.day + Self.hour + 15 * 60_000, to: to),
        ])
        #expect(Self.covers(pieces, from: from, to: to))
    }

    @Test func edgesFinerThanFifteenMinutesAreReadFromRawEvents() {
        let m = Self.midnight
        let pieces = Self.plan(m + 7 * 60_000, m + Self.hour + 3 * 60_000, filters: StatsFilters(ref: "r1"))
        #expect(pieces == [
            .raw(from: m + 7 * 60_000, to: m + Self.quarter),
            .rollup(.quarterHour, from: m + Self.quarter, to: m + Self.hour),
            .raw(from: m + Self.hour, to: m + Self.hour + 3 * 60_000),
        ])
        // Inside one quarter hour: raw events alone.
        #expect(Self.plan(m + 60_000, m + 120_000) == [.raw(from: m + 60_000, to: m + 120_000)])
    }

    @Test func withoutLinkFiltersThePlatformRollupsAnswer() {
        let m = Self.midnight
        let pieces = Self.plan(m - Self.hour, m + Self.day, filters: StatsFilters(platform: .ios))
        #expect(pieces == [.rollup(.hourByPlatform, from: m - Self.hour, to: m), .rollup(.dayByPlatform, from: m, to: m + Self.day)])
        // A breakdown by a link dimension needs the link dimensions.
        let byCampaign = Self.plan(m, m + Self.day, filters: StatsFilters(platform: .ios), grouping: .dimension(.campaign))
        #expect(byCampaign == [.rollup(.day, from: m, to: m + Self.day)])
        #expect(Self.plan(m, m + Self.day, grouping: .dimension(.platform)) == [.rollup(.dayByPlatform, from: m, to: m + Self.day)])
    }

    @Test func anUnfilteredBreakdownReadsWholeDaysFromItsDimensionsBlocks() {
        let m = Self.midnight
        let pieces = Self.plan(m - Self.hour, m + 3 * Self.day, grouping: .dimension(.ref))
        let firstDay = m / Self.day
        #expect(pieces == [.rollup(.hour, from: m - Self.hour, to: m), .dimensionDays(.ref, fromDay: firstDay, toDay: firstDay + 3)])
        // With a filter, the days come from the cube like any other grain.
        #expect(Self.plan(m, m + Self.day, filters: StatsFilters(source: "mail"), grouping: .dimension(.ref)) == [.rollup(.day, from: m, to: m + Self.day)])
    }

    @Test func aTimeSeriesIsCutBucketByBucketSoNoRowStraddlesTwo() {
        let m = Self.midnight
        // Local days of a zone 5 h 30 min east of UTC: buckets start at 18:30 UTC.
        let starts = [m - 5 * Self.hour - 30 * 60_000, m + Self.day - 5 * Self.hour - 30 * 60_000]
        let to = m + 2 * Self.day - 5 * Self.hour - 30 * 60_000
        let pieces = Self.plan(starts[0], to, filters: StatsFilters(campaign: "c"), grouping: .buckets(starts))
        #expect(Self.covers(pieces, from: starts[0], to: to))
        // A read may run on past a bucket's start (neighbours merge), but its rows never do:
        // the start falls on a boundary of the grain's cells.
        for case .rollup(let grain, let a, let b) in pieces where a < starts[1] && starts[1] < b {
            #expect((starts[1] - a) % grain.length == 0, "\(grain) from \(a) to \(b)")
        }
        #expect(pieces.first == .rollup(.quarterHour, from: starts[0], to: starts[0] + 2 * Self.quarter))
        // Neighbouring reads of one grain are one read.
        let grains = pieces.compactMap { piece -> RollupGrain? in if case .rollup(let g, _, _) = piece { g } else { nil } }
        #expect(zip(grains, grains.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test func anInstantCountsInTheLastBucketStartingAtOrBeforeIt() {
        let starts: [Int64] = [100, 200, 300]
        let plan = StatsPlan(query: StatsQuery(fromMs: 100, toMs: 400), grouping: .buckets(starts))
        #expect(plan.bucket(containing: 100) == .bucket(100))
        #expect(plan.bucket(containing: 199) == .bucket(100))
        #expect(plan.bucket(containing: 200) == .bucket(200))
        #expect(plan.bucket(containing: 399) == .bucket(300))
        #expect(StatsPlan(query: StatsQuery(fromMs: 0, toMs: 1), grouping: .none).bucket(containing: 5) == .all)
    }

    @Test func rawEdgesBeforeTheRetentionHorizonAreRefusedNamingTheEdge() throws {
        let m = Self.midnight
        let plan = StatsPlan(query: StatsQuery(fromMs: m + 60_000, toMs: m + Self.day + 60_000), grouping: .none)
        #expect(throws: ParameterError.self) { try plan.refuseRawEdges(before: m + Self.hour) }
        do {
            try plan.refuseRawEdges(before: m + Self.hour)
        } catch {
            #expect(error.parameter == "from")
        }
        // Whole rollup periods before the horizon are still answered; so is an edge after it.
        try plan.refuseRawEdges(before: m)
        let wholeDays = StatsPlan(query: StatsQuery(fromMs: m, toMs: m + Self.day), grouping: .none)
        try wholeDays.refuseRawEdges(before: m + Self.day)
    }
}
