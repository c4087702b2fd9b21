/// The rollup cells one round of counted events adds to, by dimension and grain: pure, so what a
/// round writes is what the events say (tested without a database). PostgreSQL keeps them as
/// the rows of `lp_rollups`; SQLite's cubes count the same events faster and are checked
/// against the same oracle (`StatsOracleTests`).
///
/// Every event counts in its UTC hour, day and month, in eleven rows of each: once in all by its
/// platform (dimension 0), once under each link dimension's value (ref, campaign, source,
/// medium) and once under each audience dimension's (country, device, os, browser, referrer
/// host, language; '' when it has none), people and bots apart: rows per dimension, never a
/// cross product of them. Months keep a breakdown over a quarter to a few thousand rows a
/// value-month instead of one a value-day.
public struct RollupCells: Sendable {
    /// One row's key, in `lp_rollups`' primary key order.
    public struct Key: Hashable, Sendable {
        public var dimension: Int16
        public var grain: Int16
        public var bucketMs: Int64
        public var value: String
        /// The platform's code in dimension 0, -1 in the others.
        public var platform: Int16
        public var bot: Bool

        public init(dimension: Int16, grain: Int16, bucketMs: Int64, value: String, platform: Int16, bot: Bool) {
            (self.dimension, self.grain, self.bucketMs, self.value, self.platform, self.bot) = (dimension, grain, bucketMs, value, platform, bot)
        }
    }

    /// The rows' dimensions (`lp_rollups.dimension`).
    public enum Dimension: Int16, CaseIterable, Sendable {
        case all = 0, ref, campaign, source, medium
        case country, device, os, browser, referrerHost, language

        /// The rows that answer a grouping or filter by this stats dimension (platform is a
        /// column of the rows in all).
        public init(_ dimension: StatsDimension) {
            switch dimension {
            case .ref: self = .ref
            case .campaign: self = .campaign
            case .source: self = .source
            case .medium: self = .medium
            case .platform: self = .all
            case .country: self = .country
            case .device: self = .device
            case .os: self = .os
            case .browser: self = .browser
            case .referrerHost: self = .referrerHost
            case .language: self = .language
            }
        }

        /// The dimensions of the audience, whose rows SQLite keeps apart from its cubes
        /// (`audience_rollups`).
        public static let audience: [Dimension] = [.country, .device, .os, .browser, .referrerHost, .language]

        /// The value `event` counts under in this dimension (`''` when it has none).
        public func value(of event: CountedEvent) -> String {
            let d = event.dimensions
            switch self {
            case .all: return ""
            case .ref: return d.ref ?? ""
            case .campaign: return d.campaign ?? ""
            case .source: return d.source ?? ""
            case .medium: return d.medium ?? ""
            case .country: return event.audience.country
            case .device: return event.audience.device
            case .os: return event.audience.os
            case .browser: return event.audience.browser
            case .referrerHost: return event.audience.referrerHost
            case .language: return event.audience.language
            }
        }
    }

    /// The grains rows are kept at (`lp_rollups.grain`: `RollupGrain`'s codes for hours and days).
    public enum Grain: Int16, CaseIterable, Sendable {
        case hour = 6, day = 2, month = 7

        /// The start of the bucket of this grain holding `ms` (UTC).
        public func bucket(_ ms: Int64) -> Int64 {
            switch self {
            case .hour: TimeGrain.floor(ms, TimeGrain.hourMs)
            case .day: TimeGrain.floor(ms, TimeGrain.dayMs)
            case .month: Self.monthStart(ms)
            }
        }

        /// The first instant of the UTC month holding `ms`.
        public static func monthStart(_ ms: Int64) -> Int64 {
            let date = Timestamp.civilFromDays(Int(TimeGrain.floor(ms, TimeGrain.dayMs) / TimeGrain.dayMs))
            return Int64(Timestamp.daysFromCivil(year: date.year, month: date.month, day: 1)) * TimeGrain.dayMs
        }

        /// The first instant of the UTC month after the one starting at `start`.
        public static func nextMonth(_ start: Int64) -> Int64 {
            monthStart(start + 31 * TimeGrain.dayMs)
        }
    }

    /// The counts of every cell the round touched.
    public private(set) var counts: [Key: ConversionCounts] = [:]

    /// The dimensions counted (all of them, or only the audience's where other rows count the
    /// rest).
    public let dimensions: [Dimension]

    public init(dimensions: [Dimension] = Dimension.allCases) {
        self.dimensions = dimensions
    }

    /// Counts one event in its rows: one per grain and dimension.
    public mutating func add(_ event: CountedEvent, occurredAtMs: Int64) {
        for grain in Grain.allCases {
            let bucket = grain.bucket(occurredAtMs)
            for dimension in dimensions {
                let key = Key(
                    dimension: dimension.rawValue, grain: grain.rawValue, bucketMs: bucket, value: dimension.value(of: event),
                    platform: dimension == .all ? Int16(event.platform.code) : -1, bot: event.isBot)
                counts[key, default: ConversionCounts()].add(event)
            }
        }
    }

    /// Adds a stored row's counts to its cell (a cell the round does not touch is left alone).
    public mutating func merge(stored: ConversionCounts, into key: Key) {
        counts[key]?.add(stored)
    }
}

/// Which rollup cells (`RollupCells`, PostgreSQL's `lp_rollups` rows) answer a stats plan, and
/// how the query's pieces read:
/// whole UTC days and hours from the rows, everything finer from the raw events. Nil when the
/// rows cannot answer it (filtered by more than one dimension, or grouped by one and filtered
/// by another): then the whole range is read from the raw events.
public struct RollupRows: Sendable {
    public let plan: StatsPlan
    /// The rows' dimension, and the value and platform they are limited to (nil: any).
    public let dimension: RollupCells.Dimension
    public let value: String?
    public let platform: Int16?
    /// How rows group: 'value', 'platform', 'bucket' or 'all' (see `stats/rollup_counts.sql`).
    public let key: String
    public let pieces: [Piece]
    /// Whether the store keeps rows of this dimension by hour (otherwise by day and month).
    public let hourRows: Bool

    /// One read of an answer: rows of one grain over [from, to), or raw events.
    public enum Piece: Equatable, Sendable {
        case rows(RollupCells.Grain, from: Int64, to: Int64)
        case raw(from: Int64, to: Int64)
        /// Most days of one month, [from, to): their counts are the month's row less the day
        /// rows of the month's other days (fewer rows to read); their visitors (which do not
        /// subtract) come from their own day rows.
        case mostOfMonth(from: Int64, to: Int64)
    }

    /// Rows of `plan`, read from the grains kept: a store that keeps no hour rows of a
    /// dimension (SQLite's rows by audience: days and months) reads those hours from the raw
    /// events.
    public init?(plan: StatsPlan, hourRows: Bool = true) {
        self.plan = plan
        self.hourRows = hourRows
        let f = plan.query.filters
        let valueFilters = f.valueFilters
        switch plan.grouping {
        case .dimension(.platform):
            guard valueFilters.isEmpty else { return nil }
            (dimension, value, key) = (.all, nil, "platform")
        case .dimension(let d):
            guard f.platform == nil, valueFilters.allSatisfy({ $0.0 == d }) else { return nil }
            (dimension, value, key) = (RollupCells.Dimension(d), valueFilters.first?.1, "value")
        case .none, .buckets:
            if valueFilters.isEmpty {
                (dimension, value) = (.all, nil)
            } else {
                guard valueFilters.count == 1, f.platform == nil else { return nil }
                (dimension, value) = (RollupCells.Dimension(valueFilters[0].0), valueFilters[0].1)
            }
            if case .buckets = plan.grouping { key = "bucket" } else { key = "all" }
        }
        platform = f.platform.map { Int16($0.code) }
        // The plan's hour pieces read hour rows and its day pieces day rows, whole UTC months
        // among them month rows; its quarter-hours (no rows of that grain here) read raw events.
        // A time series keeps every row in its bucket: no month less its other days there.
        var isSeries = false
        if case .buckets = plan.grouping { isSeries = true }
        var pieces: [Piece] = []
        for piece in plan.pieces {
            let mapped: [Piece]
            switch piece {
            case .rollup(.day, let a, let b), .rollup(.dayByPlatform, let a, let b): mapped = Self.days(from: a, to: b, subtracting: !isSeries)
            case .rollup(.hour, let a, let b), .rollup(.hourByPlatform, let a, let b): mapped = [hourRows ? .rows(.hour, from: a, to: b) : .raw(from: a, to: b)]
            case .rollup(_, let a, let b), .raw(let a, let b): mapped = [.raw(from: a, to: b)]
            case .dimensionDays(_, let fromDay, let toDay):
                mapped = Self.days(from: fromDay * TimeGrain.dayMs, to: toDay * TimeGrain.dayMs, subtracting: !isSeries)
            }
            for next in mapped {
                switch (pieces.last, next) {
                case (.raw(let a, let b)?, .raw(let c, let d)) where b == c: pieces[pieces.count - 1] = .raw(from: a, to: d)
                case (.rows(let g, let a, let b)?, .rows(let h, let c, let d)) where g == h && b == c:
                    pieces[pieces.count - 1] = .rows(g, from: a, to: d)
                default: pieces.append(next)
                }
            }
        }
        self.pieces = pieces
    }

    /// Whole UTC days [from, to) month by month: a whole month as its month row; most of a
    /// month, with `subtracting`, as the month less its other days; else as day rows.
    public static func days(from: Int64, to: Int64, subtracting: Bool = false) -> [Piece] {
        var pieces: [Piece] = []
        var month = RollupCells.Grain.monthStart(from)
        while month < to {
            let next = RollupCells.Grain.nextMonth(month)
            let (a, b) = (max(from, month), min(to, next))
            let piece: Piece
            if a == month && b == next {
                piece = .rows(.month, from: a, to: b)
            } else if subtracting && (b - a) * 2 > next - month {
                piece = .mostOfMonth(from: a, to: b)
            } else {
                piece = .rows(.day, from: a, to: b)
            }
            switch (pieces.last, piece) {
            case (.rows(let g, let c, let d)?, .rows(let h, let e, let f)) where g == h && d == e:
                pieces[pieces.count - 1] = .rows(g, from: c, to: f)
            default: pieces.append(piece)
            }
            month = next
        }
        return pieces
    }

    /// One read a store makes to answer from these rows, in order.
    public enum Read: Equatable, Sendable {
        /// The counted raw events of [from, to), through `StatsPlan.addRaw`.
        case raw(from: Int64, to: Int64)
        /// The rows of one grain over [from, to): their counts added, taken away or not read
        /// (`counting`), their click visitors merged with `visitors`; with `onlyAskedKeys`, only
        /// the rows of the values asked for (a breakdown's page).
        case rows(RollupCells.Grain, from: Int64, to: Int64, counting: RollupRowCounting, visitors: Bool, onlyAskedKeys: Bool)
    }

    /// What a store reads to answer its question, and whether it then drops the groups that
    /// netted to nothing (`droppingNetted`). `withVisitors`: click visitors wanted; `asksKeys`:
    /// the question names the values it wants (`onlyKeys`); `visitorsOnly`: of those only
    /// the visitors are wanted (a breakdown's second pass, for its page).
    ///
    /// Both stores read the same list, each through its own statements: a month less its other
    /// days is the month's row added and those days' rows taken away, its visitors (which do
    /// not subtract) from its own day rows.
    /// Throws when answering `query` from `rows` (nil: from the raw events of its whole range,
    /// a question no rows answer) would count raw events before `horizonMs`, which retention
    /// has deleted, naming the parameter to move: never an answer counted from what is left.
    public static func refuseRawReads(_ rows: RollupRows?, of query: StatsQuery, before horizonMs: Int64) throws(ParameterError) {
        guard let rows else {
            guard query.fromMs >= horizonMs else {
                throw ParameterError.countedFromRawEvents(
                    horizonMs: horizonMs, what: "A question filtered by two dimensions, or grouped by one and filtered by another,")
            }
            return
        }
        for case .raw(let from, _) in rows.pieces where from < horizonMs {
            let parameter = from == query.fromMs ? "from" : "to"
            throw rows.hourRows ? .finerThanKept(parameter, horizonMs: horizonMs) : .finerThanKeptByDay(parameter, horizonMs: horizonMs)
        }
    }

    public func reads(withVisitors: Bool, asksKeys: Bool, visitorsOnly: Bool) -> (reads: [Read], dropsNetted: Bool) {
        // The second pass of a breakdown wants the visitors of its page alone.
        let counting: RollupRowCounting = visitorsOnly && withVisitors && asksKeys && key == "value" ? .none : .add
        var reads: [Read] = []
        var dropsNetted = false
        for piece in pieces {
            switch piece {
            case .raw(let from, let to):
                reads.append(.raw(from: from, to: to))
            case .rows(let grain, let from, let to):
                reads.append(.rows(grain, from: from, to: to, counting: counting, visitors: withVisitors, onlyAskedKeys: asksKeys))
            case .mostOfMonth(let from, let to):
                if counting == .add {
                    let month = RollupCells.Grain.monthStart(from), next = RollupCells.Grain.nextMonth(month)
                    reads.append(.rows(.month, from: month, to: next, counting: .add, visitors: false, onlyAskedKeys: false))
                    for (a, b) in [(month, from), (to, next)] where a < b {
                        reads.append(.rows(.day, from: a, to: b, counting: .subtract, visitors: false, onlyAskedKeys: false))
                    }
                    dropsNetted = true
                }
                if withVisitors {
                    reads.append(.rows(.day, from: from, to: to, counting: .none, visitors: true, onlyAskedKeys: asksKeys))
                }
            }
        }
        return (reads, dropsNetted)
    }

    /// `groups` without those that netted to nothing: a value seen only in the days taken away
    /// from a month is not in the range.
    public static func droppingNetted(_ groups: [StatsGroupKey: CountsByAudience]) -> [StatsGroupKey: CountsByAudience] {
        groups.filter { _, c in
            c.people.events != 0 || c.bots.events != 0 || !c.people.clickVisitors.isEmpty || !c.bots.clickVisitors.isEmpty
        }
    }

    /// The group a row's key (as `stats/rollup_counts.sql` gives it) counts in.
    public func group(_ key: String) -> StatsGroupKey {
        switch self.key {
        case "value": .value(key.isEmpty ? nil : key)
        case "platform": .value(Int16(key).map { Platform.fromCode(UInt8(truncatingIfNeeded: $0)).rawValue })
        case "bucket": plan.bucket(containing: Int64(key) ?? 0)
        default: .all
        }
    }
}

/// What a read of rollup rows (`RollupRows.Read`) does with their counts, on either store: adds
/// them, takes them away (a month less its other days), or reads only their visitors.
public enum RollupRowCounting: Sendable { case add, subtract, none }

