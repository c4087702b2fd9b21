import LinkpulseDomain

/// The rollup rows on PostgreSQL (`lp_rollups`) one round of counted events adds to: pure, so
/// what a round writes is what the events say (tested without a database).
///
/// Every event counts in its UTC hour, day and month, in five rows of each: once in all by its
/// platform (dimension 0), and once under each link dimension's value (ref, campaign, source,
/// medium; '' when it has none), people and bots apart. Months keep a breakdown over a quarter
/// to a few thousand rows a value-month instead of one a value-day.
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

    /// The grains rows are kept at (`lp_rollups.grain`: `RollupGrain`'s codes for hours and days).
    enum Grain: Int16, CaseIterable {
        case hour = 6, day = 2, month = 7

        /// The start of the bucket of this grain holding `ms` (UTC).
        func bucket(_ ms: Int64) -> Int64 {
            switch self {
            case .hour: TimeGrain.floor(ms, TimeGrain.hourMs)
            case .day: TimeGrain.floor(ms, TimeGrain.dayMs)
            case .month: Self.monthStart(ms)
            }
        }

        /// The first instant of the UTC month holding `ms`.
        static func monthStart(_ ms: Int64) -> Int64 {
            let date = Timestamp.civilFromDays(Int(TimeGrain.floor(ms, TimeGrain.dayMs) / TimeGrain.dayMs))
            return Int64(Timestamp.daysFromCivil(year: date.year, month: date.month, day: 1)) * TimeGrain.dayMs
        }

        /// The first instant of the UTC month after the one starting at `start`.
        static func nextMonth(_ start: Int64) -> Int64 {
            monthStart(start + 31 * TimeGrain.dayMs)
        }
    }

    private(set) var counts: [Key: ConversionCounts] = [:]

    /// Counts one event in its fifteen rows.
    mutating func add(_ event: CountedEvent, occurredAtMs: Int64) {
        for grain in Grain.allCases {
            let bucket = grain.bucket(occurredAtMs)
            for dimension in Dimension.allCases {
                let key = Key(
                    dimension: dimension.rawValue, grain: grain.rawValue, bucketMs: bucket, value: dimension.value(of: event.dimensions),
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

extension ConversionCounts {
    /// How many counts a row of `lp_rollups` holds (`row`).
    static let rowColumnCount = 15

    /// The counts as a row of `lp_rollups` holds them, in its column order (`events` …
    /// `installs_install_referrer`, then the five opens by match type): what
    /// `rollups/cells.sql` and `stats/rollup_counts.sql` read and `rollups/upsert.sql` writes.
    var row: [Int64] {
        [events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens,
         installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic].map(Int64.init)
    }

    /// The counts of a row's columns in `row` order, each times `sign`.
    init(row v: [Int64], sign: Int = 1) {
        self.init()
        let n = v.map { sign * Int($0) }
        (events, clicks, fallbacks, installsClickId, installsRef) = (n[0], n[1], n[2], n[3], n[4])
        (installsFingerprint, installsOrganic, opens, deferredOpens, installsInstallReferrer) = (n[5], n[6], n[7], n[8], n[9])
        (opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic) = (n[10], n[11], n[12], n[13], n[14])
    }
}
