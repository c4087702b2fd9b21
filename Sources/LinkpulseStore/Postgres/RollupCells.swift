import LinkpulseDomain

/// The rollup rows on PostgreSQL (`lp_rollups`) one round of counted events adds to: pure, so
/// what a round writes is what the events say (tested without a database).
///
/// Every event counts in its UTC hour and its UTC day, in five rows of each: once in all by its
/// platform (dimension 0), and once under each link dimension's value (ref, campaign, source,
/// medium; '' when it has none), people and bots apart.
struct RollupCells {
    /// One row's key, in `lp_rollups`' primary key order.
    struct Key: Hashable, Sendable {
        var dimension: Int16
        var grain: Int16
        var bucketMs: Int64
        var value: String
        /// The platform's code in dimension 0, -1 in the others.
        var platform: Int16
        var bot: Bool
    }

    /// The rows' dimensions (`lp_rollups.dimension`).
    enum Dimension: Int16, CaseIterable {
        case all = 0, ref, campaign, source, medium

        /// The rows that answer a grouping or filter by this stats dimension (platform is a
        /// column of the rows in all).
        init(_ dimension: StatsDimension) {
            switch dimension {
            case .ref: self = .ref
            case .campaign: self = .campaign
            case .source: self = .source
            case .medium: self = .medium
            case .platform: self = .all
            }
        }

        func value(of d: LinkDimensions) -> String {
            switch self {
            case .all: ""
            case .ref: d.ref ?? ""
            case .campaign: d.campaign ?? ""
            case .source: d.source ?? ""
            case .medium: d.medium ?? ""
            }
        }
    }

    /// The grains rows are kept at: UTC hours and days (`RollupGrain`'s codes).
    static let grains: [(code: Int16, lengthMs: Int64)] = [
        (Int16(RollupGrain.hour.rawValue), TimeGrain.hourMs), (Int16(RollupGrain.day.rawValue), TimeGrain.dayMs),
    ]

    private(set) var counts: [Key: ConversionCounts] = [:]

    /// Counts one event in its ten rows.
    mutating func add(_ event: CountedEvent, occurredAtMs: Int64) {
        for grain in Self.grains {
            let bucket = TimeGrain.floor(occurredAtMs, grain.lengthMs)
            for dimension in Dimension.allCases {
                let key = Key(
                    dimension: dimension.rawValue, grain: grain.code, bucketMs: bucket, value: dimension.value(of: event.dimensions),
                    platform: dimension == .all ? Int16(event.platform.code) : -1, bot: event.isBot)
                counts[key, default: ConversionCounts()].add(event)
            }
        }
    }

    /// Adds a stored row's counts to its cell (a cell the round does not touch is left alone).
    mutating func merge(stored: ConversionCounts, into key: Key) {
        counts[key]?.add(stored)
    }
}
