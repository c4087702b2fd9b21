import Foundation
import LinkpulseDomain
import LinkpulseStore

/// The range an answer covers, echoed as RFC 3339 with the zone's offset.
struct RangeEcho: Encodable {
    var from: String
    var to: String
    var tz: String

    init(_ query: StatsQuery) {
        let clock = ZoneClock(identifier: query.zone)!
        from = clock.format(query.fromMs)
        to = clock.format(query.toMs)
        tz = query.zone
    }
}

struct SummaryResponse: Encodable {
    var from, to, tz: String
    var metrics: ConversionMetrics
}

/// One row of a breakdown: the dimension's value (null for organic or missing) and its metrics.
public struct BreakdownRow: Encodable, Sendable {
    public var key: String?
    public var metrics: ConversionMetrics

    enum CodingKeys: String, CodingKey { case key, metrics }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(key, forKey: .key)  // null, not absent
        try c.encode(metrics, forKey: .metrics)
    }
}

public struct BreakdownResponse: Encodable, Sendable {
    public var from, to, tz: String
    public var by: String
    public var rows: [BreakdownRow]
    public var totalRows: Int

    enum CodingKeys: String, CodingKey { case from, to, tz, by, rows, totalRows = "total_rows" }
}

public struct TimeseriesPoint: Encodable, Sendable {
    /// The bucket's local start, RFC 3339 with offset.
    public var t: String
    public var metrics: ConversionMetrics
}

public struct TimeseriesResponse: Encodable, Sendable {
    public var from, to, tz: String
    public var interval: String
    public var points: [TimeseriesPoint]
}

/// The stats answers, shared by the JSON API and (later) the CSV exports.
public struct StatsService: Sendable {
    let reader: any StatsSource
    /// The zone used when a request names none (`--timezone`).
    public let defaultZone: String
    public let now: @Sendable () -> Int64
    /// How fresh the rollups are now (nil when it cannot be read), read before an answer is
    /// counted so that what it says holds for the answer; nil where nobody counts beside the
    /// reader (`linkpulse export`).
    let freshness: (@Sendable () async -> Freshness?)?

    public init(reader: any StatsSource, defaultZone: String, now: @escaping @Sendable () -> Int64) {
        self.init(reader: reader, defaultZone: defaultZone, now: now, freshness: nil)
    }

    init(reader: any StatsSource, defaultZone: String, now: @escaping @Sendable () -> Int64, freshness: (@Sendable () async -> Freshness?)?) {
        self.reader = reader
        self.defaultZone = defaultZone
        self.now = now
        self.freshness = freshness
    }

    /// The rollups' freshness now, nil when unknown.
    func currentFreshness() async -> Freshness? { await freshness?() }

    /// The metrics of the whole range.
    public func summary(_ query: StatsQuery) async throws -> ConversionMetrics {
        let groups = try await reader.statsCounts(query, grouping: .none, withVisitors: true)
        return (groups[.all] ?? CountsByAudience()).metrics(includeBots: query.includeBots)
    }

    /// Every value of the dimension with events in range, sorted and paged. Unique clicks are
    /// computed for the page only, unless they are what the rows are sorted by.
    public func breakdown(_ q: BreakdownQuery) async throws -> BreakdownResponse {
        // Unique clicks in the same pass as the counts when sorting by them, or when a campaign or
        // ref filter narrows the rows to one value's (read through its index): merging their
        // sketches costs less than reading the rows again for the page.
        // Also when the store would read the same raw events twice.
        let visitorsInFirstPass = reader.countsVisitorsWithCounts(q.stats, by: q.by) || q.sort == .uniqueClicks
            || q.stats.filters.campaign != nil || q.stats.filters.ref != nil
        let groups = try await reader.statsCounts(q.stats, grouping: .dimension(q.by), withVisitors: visitorsInFirstPass)
        // Sort small (value, index) pairs, not whole rows; build rows for the page only.
        let entries = groups.map { key, counts -> (key: String?, counts: CountsByAudience) in
            if case .value(let value) = key { return (value, counts) }
            return (nil, counts)
        }
        let values = entries.map { $0.counts.metrics(includeBots: q.stats.includeBots).value(of: q.sort) }
        let keys = entries.map(\.key)
        var order = Array(entries.indices)
        order.sort { i, j in
            let (x, y) = (values[i], values[j])
            if x != y { return q.descending ? x > y : x < y }
            // Ties in a fixed order: by key, organic/missing last.
            switch (keys[i], keys[j]) {
            case (let l?, let r?): return l < r
            case (_?, nil): return true
            default: return false
            }
        }
        let rows = order.dropFirst(q.offset).prefix(q.limit).map { i in
            BreakdownRow(key: entries[i].key, metrics: entries[i].counts.metrics(includeBots: q.stats.includeBots))
        }
        let total = entries.count
        var page = Array(rows)
        if !visitorsInFirstPass && !page.isEmpty {
            let keys = page.map(\.key)
            let exact = try await reader.statsCounts(
                q.stats, grouping: .dimension(q.by), withVisitors: true, onlyKeys: keys, visitorsOnly: true)
            for i in page.indices {
                let visitors = exact[.value(page[i].key)]?.clickVisitors(includeBots: q.stats.includeBots) ?? 0
                page[i].metrics.uniqueClicks = min(visitors, page[i].metrics.clicks)
            }
        }
        let range = RangeEcho(q.stats)
        return BreakdownResponse(from: range.from, to: range.to, tz: range.tz, by: q.by.rawValue, rows: page, totalRows: total)
    }

    /// The metrics of some values of a dimension (a page of links' refs) over the range and
    /// filters of `query`, exact as a breakdown's rows, unique clicks included; zeros for a value
    /// without events in range.
    public func metrics(of values: [String], by dimension: StatsDimension, _ query: StatsQuery) async throws -> [String: ConversionMetrics] {
        guard !values.isEmpty else { return [:] }
        let groups = try await reader.statsCounts(
            query, grouping: .dimension(dimension), withVisitors: true, onlyKeys: values, visitorsOnly: false)
        var metrics: [String: ConversionMetrics] = [:]
        for value in values {
            metrics[value] = (groups[.value(value)] ?? CountsByAudience()).metrics(includeBots: query.includeBots)
        }
        return metrics
    }

    /// One point per local hour or day of the range, zero-filled.
    public func timeseries(_ query: StatsQuery, interval: SeriesInterval) async throws -> TimeseriesResponse {
        let clock = ZoneClock(identifier: query.zone)!
        let starts = Self.bucketStarts(query, interval: interval, clock: clock)
        let groups = try await reader.statsCounts(query, grouping: .buckets(starts), withVisitors: true)
        let points = starts.map { start in
            TimeseriesPoint(t: clock.format(start), metrics: (groups[.bucket(start)] ?? CountsByAudience()).metrics(includeBots: query.includeBots))
        }
        let range = RangeEcho(query)
        return TimeseriesResponse(from: range.from, to: range.to, tz: range.tz, interval: interval.rawValue, points: points)
    }

    /// The local start of every hour or day bucket that overlaps [from, to).
    static func bucketStarts(_ query: StatsQuery, interval: SeriesInterval, clock: ZoneClock) -> [Int64] {
        var starts = [clock.startOfUnit(interval, containing: query.fromMs)]
        var t = TimeGrain.floor(query.fromMs, TimeGrain.quarterHourMs) + TimeGrain.quarterHourMs
        var unit = clock.unit(interval, starts[0])
        while t < query.toMs {
            let u = clock.unit(interval, t)
            if u != unit {
                starts.append(t)
                unit = u
            }
            t += TimeGrain.quarterHourMs
        }
        return starts
    }
}
