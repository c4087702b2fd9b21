import Dispatch
import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore

/// `GET /v1/stats/summary`, `/v1/stats/breakdown` and `/v1/stats/timeseries`, behind the read
/// key. Every answer is computed from the rollups (see `AppDatabase.statsCounts`) and is JSON,
/// gzip-compressed when the client accepts it.
struct StatsController: Sendable {
    let stats: StatsService
    let readKey: String

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("v1/stats/summary") { request, _ in
            await answer(request) { parameters, query in
                let metrics = try await stats.summary(query)
                return SummaryResponse(range: RangeEcho(query), metrics: metrics)
            }
        }
        router.get("v1/stats/breakdown") { request, _ in
            await answer(request) { parameters, query in
                try await stats.breakdown(try BreakdownQuery.parse(parameters, stats: query))
            }
        }
        router.get("v1/stats/timeseries") { request, _ in
            await answer(request) { parameters, query in
                try await stats.timeseries(query, interval: try SeriesInterval.parse(parameters, stats: query))
            }
        }
    }

    /// Checks the key, reads the common parameters, runs `body`, and encodes its answer or error.
    func answer(
        _ request: Request, _ body: ([String: String], StatsQuery) async throws -> some Encodable
    ) async -> Response {
        guard AccessKey.check(request, expected: readKey) else { return .unauthorizedRead }
        let parameters = Self.parameters(of: request)
        do {
            let query = try StatsQuery.parse(parameters, defaultZone: stats.defaultZone, nowMs: stats.now())
            return .json(try await body(parameters, query), status: .ok, compressingFor: request)
        } catch let error as ParameterError {
            return .error(.badRequest, code: "invalid_parameter", message: error.message, parameter: error.parameter)
        } catch {
            return .error(.serviceUnavailable, code: "database_unavailable", message: "The database does not answer; try again shortly.", headers: [.retryAfter: "5"])
        }
    }

    /// The query parameters, the last value winning; `key` is not one of them.
    static func parameters(of request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters where name != "key" {
            parameters[String(name)] = String(value)
        }
        return parameters
    }
}

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
    var range: RangeEcho
    var metrics: ConversionMetrics

    enum CodingKeys: String, CodingKey { case from, to, tz, metrics }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(range.from, forKey: .from)
        try c.encode(range.to, forKey: .to)
        try c.encode(range.tz, forKey: .tz)
        try c.encode(metrics, forKey: .metrics)
    }
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
    let database: AppDatabase
    /// The zone used when a request names none (`--timezone`).
    public let defaultZone: String
    public let now: @Sendable () -> Int64

    public init(database: AppDatabase, defaultZone: String, now: @escaping @Sendable () -> Int64) {
        self.database = database
        self.defaultZone = defaultZone
        self.now = now
    }

    /// The metrics of the whole range.
    public func summary(_ query: StatsQuery) async throws -> ConversionMetrics {
        let groups = try await database.statsCounts(query, grouping: .none, withVisitors: true)
        return (groups[.all] ?? CountsByAudience()).metrics(includeBots: query.includeBots)
    }

    /// Every value of the dimension with events in range, sorted and paged. Unique clicks are
    /// computed for the page only, unless they are what the rows are sorted by.
    public func breakdown(_ q: BreakdownQuery) async throws -> BreakdownResponse {
        let sortsByVisitors = q.sort == .uniqueClicks
        let groups = try await database.statsCounts(q.stats, grouping: .dimension(q.by), withVisitors: sortsByVisitors)
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
        if !sortsByVisitors && !page.isEmpty {
            let keys = page.map(\.key)
            let exact = try await database.statsCounts(
                q.stats, grouping: .dimension(q.by), withVisitors: true, onlyKeys: keys, visitorsOnly: true)
            for i in page.indices {
                let visitors = exact[.value(page[i].key)]?.clickVisitors(includeBots: q.stats.includeBots) ?? 0
                page[i].metrics.uniqueClicks = min(visitors, page[i].metrics.clicks)
            }
        }
        let range = RangeEcho(q.stats)
        return BreakdownResponse(from: range.from, to: range.to, tz: range.tz, by: q.by.rawValue, rows: page, totalRows: total)
    }

    /// One point per local hour or day of the range, zero-filled.
    public func timeseries(_ query: StatsQuery, interval: SeriesInterval) async throws -> TimeseriesResponse {
        let clock = ZoneClock(identifier: query.zone)!
        let starts = Self.bucketStarts(query, interval: interval, clock: clock)
        let groups = try await database.statsCounts(query, grouping: .buckets(starts), withVisitors: true)
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

extension Response {
    /// JSON, gzip-compressed when the request accepts gzip and the body is worth it.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, compressingFor request: Request) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = Array((try? encoder.encode(value)) ?? Data("{}".utf8))
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .vary: "Accept-Encoding"]
        if bytes.count > 512, request.headers[.acceptEncoding]?.lowercased().contains("gzip") == true {
            bytes = Zlib.gzip(bytes)
            headers[.contentEncoding] = "gzip"
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
