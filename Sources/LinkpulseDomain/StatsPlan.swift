/// Which stored counts answer a stats query: the plan both stores read by, one rollup grain or
/// raw range at a time, and how a raw event counts in it. Pure: `StatsPlanTests` checks it
/// without a store.

/// The rollup grains: cubes by every link dimension (`cube_parts`) and rows by platform only
/// (`rollups`), each numbered by its `grain` column.
public enum RollupGrain: Int64, CaseIterable, Sendable {
    /// 15-minute UTC buckets by every dimension (a cube).
    case quarterHour = 1
    /// UTC days by every dimension (a cube).
    case day = 2
    /// UTC hours by every dimension (a cube).
    case hour = 6
    /// 15-minute UTC buckets by platform only.
    case quarterHourByPlatform = 3
    /// UTC days by platform only.
    case dayByPlatform = 4
    /// UTC hours by platform only (local days of half-hour zones are mostly whole UTC hours).
    case hourByPlatform = 5

    public var length: Int64 {
        switch self {
        case .quarterHour, .quarterHourByPlatform: TimeGrain.quarterHourMs
        case .hour, .hourByPlatform: TimeGrain.hourMs
        case .day, .dayByPlatform: TimeGrain.dayMs
        }
    }
    /// Whether the grain is by every link dimension, stored as a cube (else rows by platform only).
    public var hasLinkDimensions: Bool { self == .quarterHour || self == .hour || self == .day }
}

/// How a stats answer groups its counts.
public enum StatsGrouping: Sendable, Equatable {
    /// One group for the whole range.
    case none
    /// One group per value of a dimension.
    case dimension(StatsDimension)
    /// One group per time bucket; the sorted bucket starts (UTC ms) are given, and every
    /// instant counts in the last bucket starting at or before it.
    case buckets([Int64])
}

/// The key of one group of a stats answer.
public enum StatsGroupKey: Hashable, Sendable {
    case all
    /// A dimension's value; nil for organic or missing.
    case value(String?)
    /// A time bucket's start, UTC ms.
    case bucket(Int64)
}

/// Which rollups and raw ranges answer a stats query.
///
/// A range is cut into the coarsest rollup rows that fit: whole UTC days, then whole UTC hours
/// (platform-only rollups), then 15-minute buckets, and raw events for what is left at the
/// edges. A time series is cut bucket by bucket, so no row ever straddles two of its buckets.
public struct StatsPlan: Sendable {
    /// One read of the plan.
    public enum Piece: Sendable, Equatable {
        case rollup(RollupGrain, from: Int64, to: Int64)
        case raw(from: Int64, to: Int64)
        /// Whole UTC days [fromDay, toDay) of one dimension's blocks (days since 1970-01-01).
        case dimensionDays(StatsDimension, fromDay: Int64, toDay: Int64)
    }

    public let query: StatsQuery
    public let grouping: StatsGrouping
    /// The reads, in time order, neighbours of one kind merged; together they cover the
    /// query's range (each bucket's part of it, for a time series) exactly once.
    public var pieces: [Piece] = []

    public init(query: StatsQuery, grouping: StatsGrouping) {
        self.query = query
        self.grouping = grouping
        // Rollups without link dimensions are a hundred times smaller: use them when possible.
        let narrow: Bool
        switch grouping {
        case .none, .buckets: narrow = query.filters.onlyPlatform
        case .dimension(let d): narrow = query.filters.onlyPlatform && d == .platform
        }
        let grains: Grains = narrow
            ? Grains(day: .dayByPlatform, hour: .hourByPlatform, quarter: .quarterHourByPlatform)
            : Grains(day: .day, hour: .hour, quarter: .quarterHour)
        var cut: [Piece] = []
        if case .buckets(let starts) = grouping {
            for (i, start) in starts.enumerated() {
                let end = i + 1 < starts.count ? starts[i + 1] : query.toMs
                let (from, to) = (max(start, query.fromMs), min(end, query.toMs))
                if from < to { cut += Self.decompose(from: from, to: to, grains) }
            }
        } else {
            cut = Self.decompose(from: query.fromMs, to: query.toMs, grains)
        }
        // Breakdowns without filters read whole days from the cube blocks.
        if case .dimension(let d) = grouping, StatsDimension.linkAndPlatform.contains(d), d != .platform, query.filters == StatsFilters() {
            cut = cut.map { piece in
                if case .rollup(.day, let from, let to) = piece {
                    return .dimensionDays(d, fromDay: from / TimeGrain.dayMs, toDay: to / TimeGrain.dayMs)
                }
                return piece
            }
        }
        // Neighbouring pieces of the same kind become one read.
        for piece in cut {
            switch (pieces.last, piece) {
            case (.rollup(let g, let a, let b)?, .rollup(let h, let c, let d)) where g == h && b == c:
                pieces[pieces.count - 1] = .rollup(g, from: a, to: d)
            case (.raw(let a, let b)?, .raw(let c, let d)) where b == c:
                pieces[pieces.count - 1] = .raw(from: a, to: d)
            default:
                pieces.append(piece)
            }
        }
    }

    /// Whether the answer groups or filters by an audience dimension.
    public var asksAudience: Bool {
        if case .dimension(let d) = grouping, d.isAudience { return true }
        return !query.filters.audience.isEmpty
    }

    /// Throws when a piece must be read from raw events that happened before `horizonMs`
    /// (retention has deleted them), naming the edge: never counted from what is left.
    public func refuseRawEdges(before horizonMs: Int64) throws(ParameterError) {
        for case .raw(let from, _) in pieces where from < horizonMs {
            throw ParameterError.finerThanKept(from == query.fromMs ? "from" : "to", horizonMs: horizonMs)
        }
    }

    /// The rollup grains a plan cuts into: by every link dimension, or by platform only.
    public struct Grains: Sendable {
        public var day: RollupGrain
        public var hour: RollupGrain
        public var quarter: RollupGrain
    }

    /// [from, to) cut into raw edges finer than 15 minutes, then 15-minute buckets, whole UTC
    /// hours and whole UTC days of `grains`, in time order.
    public static func decompose(from: Int64, to: Int64, _ grains: Grains) -> [Piece] {
        let a = TimeGrain.ceil(from, TimeGrain.quarterHourMs), b = TimeGrain.floor(to, TimeGrain.quarterHourMs)
        guard a < b else { return [.raw(from: from, to: to)] }
        var pieces: [Piece] = []
        if from < a { pieces.append(.raw(from: from, to: a)) }
        func belowDay(_ x: Int64, _ y: Int64) {
            guard x < y else { return }
            let hour = grains.hour
            let hA = TimeGrain.ceil(x, TimeGrain.hourMs), hB = TimeGrain.floor(y, TimeGrain.hourMs)
            guard hA < hB else { return pieces.append(.rollup(grains.quarter, from: x, to: y)) }
            if x < hA { pieces.append(.rollup(grains.quarter, from: x, to: hA)) }
            pieces.append(.rollup(hour, from: hA, to: hB))
            if hB < y { pieces.append(.rollup(grains.quarter, from: hB, to: y)) }
        }
        let dA = TimeGrain.ceil(a, TimeGrain.dayMs), dB = TimeGrain.floor(b, TimeGrain.dayMs)
        if dA < dB {
            belowDay(a, dA)
            pieces.append(.rollup(grains.day, from: dA, to: dB))
            belowDay(dB, b)
        } else {
            belowDay(a, b)
        }
        if b < to { pieces.append(.raw(from: b, to: to)) }
        return pieces
    }

    /// The bucket an instant (or a rollup bucket's start) counts in.
    public func bucket(containing ms: Int64) -> StatsGroupKey {
        guard case .buckets(let starts) = grouping else { return .all }
        var low = 0, high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] <= ms { low = mid + 1 } else { high = mid }
        }
        return .bucket(starts[max(low - 1, 0)])
    }
}

extension StatsPlan {
    /// Adds one raw event, resolved as the rollups count it, to its group: when the filters
    /// admit it and, for a dimension grouping limited to `wanted` values, its value is one.
    public func addRaw(_ resolved: CountedEvent, occurredAtMs: Int64, wanted: Set<String?>?, into groups: inout [StatsGroupKey: CountsByAudience]) {
        guard query.filters.admits(resolved.dimensions, platform: resolved.platform, audience: resolved.audience) else { return }
        let key: StatsGroupKey
        switch grouping {
        case .none: key = .all
        case .dimension(let dimension):
            let value = dimension.value(of: resolved)
            if let wanted, !wanted.contains(value) { return }
            key = .value(value)
        case .buckets: key = bucket(containing: occurredAtMs)
        }
        var c = ConversionCounts()
        c.add(resolved)
        groups[key, default: CountsByAudience()].add(c, isBot: resolved.isBot)
    }
}

extension StatsDimension {
    /// This dimension's value for an event (an audience value `""`, unknown, is nil, as a
    /// missing link value is).
    public func value(of event: CountedEvent) -> String? {
        if self == .platform { return event.platform.rawValue }
        if isAudience { return event.audience.value(self).flatMap { $0.isEmpty ? nil : $0 } }
        return linkValue(of: event.dimensions)
    }

    /// This dimension's value among link dimensions (nil for `platform` and the audience
    /// dimensions, which are not ones).
    public func linkValue(of d: LinkDimensions) -> String? {
        switch self {
        case .campaign: d.campaign
        case .ref: d.ref
        case .source: d.source
        case .medium: d.medium
        case .platform, .country, .device, .os, .browser, .referrerHost, .language: nil
        }
    }
}
