/// A query parameter the stats API could not take: which one, and what to send instead.
public struct ParameterError: Error, Sendable, Equatable {
    public var parameter: String
    public var message: String

    public init(_ parameter: String, _ message: String) {
        self.parameter = parameter
        self.message = message
    }

    /// A stats edge finer than the rollups' 15 minutes before the raw-event horizon
    /// (`horizonMs`, UTC ms), where retention has deleted the raw events that would answer it.
    public static func finerThanKept(_ parameter: String, horizonMs: Int64) -> ParameterError {
        ParameterError(
            parameter,
            "`\(parameter)` is not on a 15-minute boundary and falls before \(Timestamp.formatUTC(horizonMs)), before which "
                + "raw events are deleted (--retention-days) and only rollups are kept; their finest grain is 15 minutes "
                + "(UTC :00, :15, :30 and :45). Move `\(parameter)` to a quarter hour.")
    }

    /// A question counted from the raw events of its whole range (several dimensions at once)
    /// that starts before the raw-event horizon; `what` names the question.
    public static func countedFromRawEvents(horizonMs: Int64, what: String) -> ParameterError {
        ParameterError(
            "from",
            "\(what) is counted from raw events, and raw events before \(Timestamp.formatUTC(horizonMs)) are deleted "
                + "(--retention-days). Start `from` at that instant or later.")
    }

    /// A question by audience on SQLite, whose rows are by UTC day, with an edge inside a day
    /// before the raw-event horizon.
    public static func finerThanKeptByDay(_ parameter: String, horizonMs: Int64) -> ParameterError {
        ParameterError(
            parameter,
            "`\(parameter)` is not at the start of a UTC day and falls before \(Timestamp.formatUTC(horizonMs)), before which "
                + "raw events are deleted (--retention-days); counts by audience are kept by UTC day. Move `\(parameter)` to a "
                + "UTC midnight, or ask in UTC.")
    }

    /// A raw-event export (`events.csv`) that starts before the raw-event horizon.
    public static func rawEventsExpired(_ parameter: String, horizonMs: Int64) -> ParameterError {
        ParameterError(
            parameter,
            "`\(parameter)` is before \(Timestamp.formatUTC(horizonMs)): raw events that happened earlier are deleted "
                + "(--retention-days). events.csv can return events from that instant on; the stats and their CSV "
                + "exports still cover earlier ranges from the rollups.")
    }
}

/// The dimensions a breakdown can group by (an allow-list: names never reach SQL): the link's
/// (campaign, ref, source, medium), the platform, and the audience's (derived at ingest: see
/// `CountedAudience`).
public enum StatsDimension: String, Sendable, CaseIterable {
    case campaign, ref, source, medium, platform
    case country, device, os, browser, referrerHost = "referrer_host", language

    /// The link dimensions and the platform: what the SQLite cubes and day blocks are keyed by.
    public static let linkAndPlatform: [StatsDimension] = [.campaign, .ref, .source, .medium, .platform]
    /// The audience dimensions, in `CountedAudience`'s order.
    public static let audience: [StatsDimension] = [.country, .device, .os, .browser, .referrerHost, .language]

    /// Whether this is one of the audience dimensions.
    public var isAudience: Bool {
        switch self {
        case .campaign, .ref, .source, .medium, .platform: false
        case .country, .device, .os, .browser, .referrerHost, .language: true
        }
    }
}

/// Exact-match filters; nil means "any". They apply to the dimensions attribution gave each
/// event (an attributed install or open counts under its click's link and audience), and to
/// every metric, `bot_events` included.
public struct StatsFilters: Sendable, Equatable {
    public var campaign: String?
    public var ref: String?
    public var source: String?
    public var medium: String?
    public var platform: Platform?
    /// One value per audience dimension filtered by (`StatsDimension.audience` members only).
    public var audience: [StatsDimension: String] = [:]

    public init(
        campaign: String? = nil, ref: String? = nil, source: String? = nil, medium: String? = nil, platform: Platform? = nil,
        audience: [StatsDimension: String] = [:]
    ) {
        self.campaign = campaign; self.ref = ref; self.source = source; self.medium = medium; self.platform = platform
        self.audience = audience
    }

    /// Whether only the platform may be filtered (so rollups without link dimensions answer).
    public var onlyPlatform: Bool { campaign == nil && ref == nil && source == nil && medium == nil && audience.isEmpty }

    /// Every filter but the platform's, by dimension (link dimensions first, then audience ones
    /// in `StatsDimension.audience` order).
    public var valueFilters: [(StatsDimension, String)] {
        [(StatsDimension.ref, ref), (.campaign, campaign), (.source, source), (.medium, medium)].compactMap { d, v in v.map { (d, $0) } }
            + StatsDimension.audience.compactMap { d in audience[d].map { (d, $0) } }
    }

    /// Whether an event counted under these values passes every filter.
    public func admits(_ d: LinkDimensions, platform p: Platform, audience counted: CountedAudience) -> Bool {
        admitsLinks(d) && (platform == nil || p == platform) && audience.allSatisfy { counted.value($0.key) == $0.value }
    }

    /// Whether these link values pass the link filters (campaign, ref, source, medium), the
    /// others not asked: the answer `LinkTuples.Known.admitted(by:wanted:)` gives for every
    /// tuple of the cubes at once (`LinkTuplesTests` compares the two).
    public func admitsLinks(_ d: LinkDimensions) -> Bool {
        (campaign == nil || d.campaign == campaign) && (ref == nil || d.ref == ref)
            && (source == nil || d.source == source) && (medium == nil || d.medium == medium)
    }
}

/// What every stats endpoint asks: a half-open range of UTC instants, the zone it is read in,
/// filters, and whether bots count.
public struct StatsQuery: Sendable {
    /// Start of the range, UTC milliseconds (inclusive).
    public var fromMs: Int64
    /// End of the range, UTC milliseconds (exclusive).
    public var toMs: Int64
    public var zone: String
    public var filters: StatsFilters
    public var includeBots: Bool

    public init(fromMs: Int64, toMs: Int64, zone: String = "UTC", filters: StatsFilters = StatsFilters(), includeBots: Bool = false) {
        self.fromMs = fromMs; self.toMs = toMs; self.zone = zone; self.filters = filters; self.includeBots = includeBots
    }

    /// Longest range an answer may cover.
    public static let maxRangeDays: Int64 = 400

    /// Reads the common parameters: `from`, `to` (RFC 3339, or `YYYY-MM-DD` local dates with
    /// `to` inclusive), `tz`, the filters and `include_bots`. Default range: the last 7 days up
    /// to `nowMs`.
    public static func parse(_ parameters: [String: String], defaultZone: String, nowMs: Int64) throws(ParameterError) -> StatsQuery {
        let zoneName = parameters["tz"] ?? defaultZone
        guard let clock = ZoneClock(identifier: zoneName) else {
            throw ParameterError("tz", "`tz` must be an IANA time zone name such as `UTC`, `Europe/Berlin` or `Asia/Kolkata`, not \"\(zoneName)\".")
        }
        let to = try parameters["to"].map { text throws(ParameterError) in try instant(text, parameter: "to", clock: clock, endOfDay: true) } ?? nowMs
        let from = try parameters["from"].map { text throws(ParameterError) in try instant(text, parameter: "from", clock: clock, endOfDay: false) }
            ?? to - 7 * TimeGrain.dayMs
        guard from < to else {
            throw ParameterError("from", "`from` must be before `to` (the range is [from, to)).")
        }
        guard to - from <= maxRangeDays * TimeGrain.dayMs else {
            throw ParameterError("to", "The range from `from` to `to` may cover at most \(maxRangeDays) days; ask for a shorter one.")
        }
        var filters = StatsFilters()
        filters.campaign = try dimension(parameters, "campaign")
        filters.ref = try dimension(parameters, "ref")
        filters.source = try dimension(parameters, "source")
        filters.medium = try dimension(parameters, "medium")
        for name in StatsDimension.audience {
            filters.audience[name] = try audienceValue(parameters, name)
        }
        if let platform = parameters["platform"] {
            guard let value = Platform(rawValue: platform.lowercased()) else {
                throw ParameterError("platform", "`platform` must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            filters.platform = value
        }
        let includeBots = try flag(parameters, "include_bots") ?? false
        return StatsQuery(fromMs: from, toMs: to, zone: zoneName, filters: filters, includeBots: includeBots)
    }

    static func dimension(_ parameters: [String: String], _ name: String) throws(ParameterError) -> String? {
        guard let value = parameters[name] else { return nil }
        guard !value.isEmpty, value.utf8.count <= IngestLimits.maxDimensionLength else {
            throw ParameterError(name, "`\(name)` must be 1 to \(IngestLimits.maxDimensionLength) bytes long.")
        }
        return value
    }

    /// An audience filter's value, written as the stats write it: a country in upper case
    /// (`DE`), a language in lower case (`de`), a device one of its classes.
    static func audienceValue(_ parameters: [String: String], _ dimension: StatsDimension) throws(ParameterError) -> String? {
        let name = dimension.rawValue
        guard let value = try Self.dimension(parameters, name) else { return nil }
        switch dimension {
        case .country:
            guard value.utf8.count == 2, value.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw ParameterError(name, "`country` must be an ISO 3166-1 alpha-2 code such as `DE` or `US`, not \"\(value)\".")
            }
            return value.uppercased()
        case .device:
            guard AudienceDimensions.DeviceClass(rawValue: value.lowercased()) != nil else {
                throw ParameterError(
                    name, "`device` must be one of \(AudienceDimensions.DeviceClass.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(value)\".")
            }
            return value.lowercased()
        case .language, .referrerHost: return value.lowercased()
        default: return value
        }
    }

    /// A `true`/`false` (or `1`/`0`) parameter; nil when absent.
    public static func flag(_ parameters: [String: String], _ name: String) throws(ParameterError) -> Bool? {
        switch parameters[name]?.lowercased() {
        case nil: return nil
        case "true", "1": return true
        case "false", "0": return false
        default: throw ParameterError(name, "`\(name)` must be true or false.")
        }
    }

    /// An RFC 3339 instant, or a local date: its start, or the start of the next day for `to`.
    static func instant(_ text: String, parameter: String, clock: ZoneClock, endOfDay: Bool) throws(ParameterError) -> Int64 {
        let bytes = Array(text.utf8)
        if bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
           let y = Int(text.prefix(4)), let m = Int(text.dropFirst(5).prefix(2)), let d = Int(text.suffix(2)),
           (1...12).contains(m), (1...Timestamp.daysIn(month: m, year: y)).contains(d), y >= 1970 {
            let start = clock.startOfDay(year: y, month: m, day: d)
            guard endOfDay else { return start }
            let next = Timestamp.civilFromDays(Timestamp.daysFromCivil(year: y, month: m, day: d) + 1)
            return clock.startOfDay(year: next.year, month: next.month, day: next.day)
        }
        guard let ms = Timestamp.parseRFC3339(text) else {
            throw ParameterError(
                parameter,
                "`\(parameter)` must be an RFC 3339 timestamp (2026-11-01T10:00:00Z) or a date (2026-11-01) in `tz`, not \"\(text)\".")
        }
        return ms
    }
}

/// A breakdown request: the common query, the dimension, sorting and paging.
public struct BreakdownQuery: Sendable {
    public var stats: StatsQuery
    public var by: StatsDimension
    public var sort: StatsMetric
    public var descending: Bool
    public var limit: Int
    public var offset: Int

    public init(stats: StatsQuery, by: StatsDimension, sort: StatsMetric = .clicks, descending: Bool = true, limit: Int = 50, offset: Int = 0) {
        self.stats = stats; self.by = by; self.sort = sort; self.descending = descending; self.limit = limit; self.offset = offset
    }

    /// Reads `by` (required), `sort` (default `clicks`), `order` (default `desc`), `limit`
    /// (1…`maxLimit`, default `defaultLimit`) and `offset` (≥ 0), on top of the common parameters.
    /// The JSON API pages by 50 up to 1,000 rows; a CSV export has every row unless told otherwise.
    public static func parse(
        _ parameters: [String: String], stats: StatsQuery, defaultLimit: Int = 50, maxLimit: Int = 1000
    ) throws(ParameterError) -> BreakdownQuery {
        guard let byText = parameters["by"], let by = StatsDimension(rawValue: byText) else {
            throw ParameterError("by", "`by` must be one of \(StatsDimension.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let page = try Page.parse(parameters, defaultLimit: defaultLimit, maxLimit: maxLimit)
        return BreakdownQuery(stats: stats, by: by, sort: page.sort, descending: page.descending, limit: page.limit, offset: page.offset)
    }

    /// How a breakdown's rows are ordered and paged: `sort`, `order`, `limit`, `offset`.
    public struct Page: Sendable {
        public var sort: StatsMetric
        public var descending: Bool
        public var limit: Int
        public var offset: Int

        /// Reads the four parameters (see `BreakdownQuery.parse`). A CSV time series, which has
        /// no rows to page, still refuses values that are wrong for them.
        public static func parse(_ parameters: [String: String], defaultLimit: Int, maxLimit: Int) throws(ParameterError) -> Page {
            let sortText = parameters["sort"] ?? "clicks"
            guard let sort = StatsMetric(rawValue: sortText) else {
                throw ParameterError("sort", "`sort` must be one of \(StatsMetric.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            let order = parameters["order"] ?? "desc"
            guard order == "desc" || order == "asc" else { throw ParameterError("order", "`order` must be desc or asc.") }
            guard let limit = parameters["limit"].map({ Int($0) }) ?? defaultLimit, (1...maxLimit).contains(limit) else {
                throw ParameterError("limit", "`limit` must be a whole number from 1 to \(maxLimit).")
            }
            guard let offset = Int(parameters["offset"] ?? "0"), offset >= 0 else {
                throw ParameterError("offset", "`offset` must be a whole number, 0 or more.")
            }
            return Page(sort: sort, descending: order == "desc", limit: limit, offset: offset)
        }
    }
}

extension SeriesInterval {
    /// Reads `interval` (default: `hour` for ranges up to 2 days, else `day`).
    public static func parse(_ parameters: [String: String], stats: StatsQuery) throws(ParameterError) -> SeriesInterval {
        guard let text = parameters["interval"] else {
            return stats.toMs - stats.fromMs <= 2 * TimeGrain.dayMs ? .hour : .day
        }
        guard let interval = SeriesInterval(rawValue: text) else {
            throw ParameterError("interval", "`interval` must be hour or day.")
        }
        if interval == .hour && stats.toMs - stats.fromMs > 93 * TimeGrain.dayMs {
            throw ParameterError("interval", "Hourly series cover at most 93 days; use interval=day for longer ranges.")
        }
        return interval
    }
}
