/// How an install, open or fallback was tied to a click (stored with the event by the rollup job).
public enum MatchType: String, Sendable, CaseIterable, Codable, StoredAsCode {
    /// The click's id came back through the store's install referrer (Android): certain.
    case installReferrer = "install_referrer"
    /// The event named the click's id: certain.
    case clickId = "click_id"
    /// The event carried the link's ref: certain about the link, campaign filled from its clicks.
    case ref
    /// Same network address and platform within the attribution window: a guess.
    case fingerprint
    /// No link: the install or open did not come from one.
    case organic

    /// The match type of an event attribution does not look at (a bot's): `ref` when it names
    /// its own link, else `organic`. The one place this rule lives.
    public static func unattributed(ref: String?) -> MatchType { ref == nil ? .organic : .ref }

    /// The small code it is stored as (`attribution.match_type` of the attribution file): the
    /// most frequent first, since SQLite stores 0 and 1 in no byte at all.
    public var code: Int {
        switch self {
        case .ref: 0
        case .clickId: 1
        case .organic: 2
        case .fingerprint: 3
        case .installReferrer: 4
        }
    }

    /// The case stored under `code`, nil for an unknown code.
    public init?(code: Int) {
        switch code {
        case 0: self = .ref
        case 1: self = .clickId
        case 2: self = .organic
        case 3: self = .fingerprint
        case 4: self = .installReferrer
        default: return nil
        }
    }
}

/// A case the store keeps as a small integer code instead of its name. Each type reads its
/// codes back with a switch of its own: a search of `allCases` from a generic default built the
/// array of every case for each event a rollup pass read (7.5% of a rebuild's counting thread,
/// measured 2026-11-29). `StoredAsCodeTests` checks that both directions
/// agree.
public protocol StoredAsCode: CaseIterable {
    /// The code it is stored as.
    var code: Int { get }
    /// The case stored under `code`, nil for an unknown code.
    init?(code: Int)
}

/// The campaign dimensions an event is counted under.
public struct LinkDimensions: Sendable, Hashable {
    public var ref: String?
    public var campaign: String?
    public var source: String?
    public var medium: String?

    public init(ref: String? = nil, campaign: String? = nil, source: String? = nil, medium: String? = nil) {
        self.ref = ref; self.campaign = campaign; self.source = source; self.medium = medium
    }

    /// These dimensions, with every empty one taken from `click` (the event's own values win).
    public func filled(from click: LinkDimensions) -> LinkDimensions {
        LinkDimensions(
            ref: ref ?? click.ref, campaign: campaign ?? click.campaign,
            source: source ?? click.source, medium: medium ?? click.medium)
    }
}

/// One event as the rollups count it: its kind, where it came from, and the dimensions and
/// match type attribution gave it.
public struct CountedEvent: Sendable {
    public var kind: EventKind
    public var platform: Platform
    public var isBot: Bool
    public var deferred: Bool
    public var visitorHash: UInt64
    public var dimensions: LinkDimensions
    /// The match type of an install, open or fallback (nil for clicks).
    public var match: MatchType?
    /// The audience values it counts under (`CountedAudience.counted`).
    public var audience: CountedAudience

    public init(
        kind: EventKind, platform: Platform, isBot: Bool, deferred: Bool, visitorHash: UInt64,
        dimensions: LinkDimensions, match: MatchType?, audience: CountedAudience = .unknown
    ) {
        self.kind = kind; self.platform = platform; self.isBot = isBot; self.deferred = deferred
        self.visitorHash = visitorHash; self.dimensions = dimensions; self.match = match; self.audience = audience
    }
}

extension CountedEvent {
    /// The one count this event adds to besides `events`, as a lane of the stored counts
    /// (lane 0 being `events`): 1 clicks, 2 fallbacks, 3–6 installs by click id, ref,
    /// fingerprint, organic, 7 opens, 9 installs by install referrer (added last, so stored
    /// vectors of nine lanes still read right); `deferred` when it also adds to lane 8, the
    /// deferred opens. An open also adds to its match type's lane (`openMatchLane`). What
    /// `ConversionCounts.add(_:)` counts, for callers that keep counts as vectors.
    public var countLane: (lane: Int, deferred: Bool) {
        switch kind {
        case .click: (1, false)
        case .fallback: (2, false)
        case .open: (7, self.deferred)
        case .install:
            switch match ?? .organic {
            case .installReferrer: (9, false)
            case .clickId: (3, false)
            case .ref: (4, false)
            case .fingerprint: (5, false)
            case .organic: (6, false)
            }
        }
    }

    /// For an open, the lane of its match type besides lane 7 (all opens): 10 install
    /// referrer, 11 click id, 12 ref, 13 fingerprint, 14 organic. Nil for every other kind.
    /// Parts of lanes: neither `events` nor a kind count includes them twice.
    public var openMatchLane: Int? {
        guard kind == .open else { return nil }
        return Self.openMatchLanes.lowerBound + (match ?? .organic).byMatchIndex
    }

    /// The lanes of opens by match type, in `MatchType.byMatchIndex` order.
    public static let openMatchLanes = 10..<15

    /// How many lanes an event counts in (the last is the last of `openMatchLanes`).
    public static let laneCount = openMatchLanes.upperBound
}

extension MatchType {
    /// Its place in the counts by match type (`installs_by_match`, `opens_by_match`, their CSV
    /// columns): install referrer, click id, ref, fingerprint, organic.
    public var byMatchIndex: Int {
        switch self {
        case .installReferrer: 0
        case .clickId: 1
        case .ref: 2
        case .fingerprint: 3
        case .organic: 4
        }
    }
}

/// Additive counts of a set of events, as stored in one rollup row. Everything but the visitor
/// sketch is a plain sum, so rows of any buckets combine by adding.
public struct ConversionCounts: Sendable, Equatable {
    public var events = 0
    public var clicks = 0
    public var fallbacks = 0
    public var installsClickId = 0
    public var installsRef = 0
    public var installsFingerprint = 0
    public var installsOrganic = 0
    public var opens = 0
    public var deferredOpens = 0
    public var installsInstallReferrer = 0
    /// The opens by match type (parts of `opens`).
    public var opensInstallReferrer = 0
    public var opensClickId = 0
    public var opensRef = 0
    public var opensFingerprint = 0
    public var opensOrganic = 0
    /// The visitors of the clicks.
    public var clickVisitors = VisitorSketch()

    public init() {}

    public var installs: Int { installsInstallReferrer + installsClickId + installsRef + installsFingerprint + installsOrganic }

    /// Counts one event.
    public mutating func add(_ event: CountedEvent) {
        events += 1
        let (lane, deferred) = event.countLane
        switch lane {
        case 1:
            clicks += 1
            clickVisitors.insert(hash: event.visitorHash)
        case 2: fallbacks += 1
        case 3: installsClickId += 1
        case 4: installsRef += 1
        case 5: installsFingerprint += 1
        case 6: installsOrganic += 1
        case 9: installsInstallReferrer += 1
        default: opens += 1
        }
        if deferred { deferredOpens += 1 }
        if event.kind == .open {
            switch event.match ?? .organic {
            case .installReferrer: opensInstallReferrer += 1
            case .clickId: opensClickId += 1
            case .ref: opensRef += 1
            case .fingerprint: opensFingerprint += 1
            case .organic: opensOrganic += 1
            }
        }
    }

    /// Adds every count of `other`.
    public mutating func add(_ other: ConversionCounts) {
        events += other.events
        clicks += other.clicks
        fallbacks += other.fallbacks
        installsClickId += other.installsClickId
        installsRef += other.installsRef
        installsFingerprint += other.installsFingerprint
        installsOrganic += other.installsOrganic
        opens += other.opens
        deferredOpens += other.deferredOpens
        installsInstallReferrer += other.installsInstallReferrer
        opensInstallReferrer += other.opensInstallReferrer
        opensClickId += other.opensClickId
        opensRef += other.opensRef
        opensFingerprint += other.opensFingerprint
        opensOrganic += other.opensOrganic
        clickVisitors.merge(other.clickVisitors)
    }
}

/// The counts of one answer, split into people and bots, so that `include_bots` and
/// `bot_events` can be answered from the same rows.
public struct CountsByAudience: Sendable, Equatable {
    public var people = ConversionCounts()
    public var bots = ConversionCounts()

    public init() {}

    public mutating func add(_ counts: ConversionCounts, isBot: Bool) {
        if isBot { bots.add(counts) } else { people.add(counts) }
    }

    public mutating func add(_ other: CountsByAudience) {
        people.add(other.people)
        bots.add(other.bots)
    }

    /// The distinct click visitors alone (an estimate beyond 1,000, not capped by the clicks).
    public func clickVisitors(includeBots: Bool) -> Int {
        var visitors = people.clickVisitors
        if includeBots { visitors.merge(bots.clickVisitors) }
        return visitors.count
    }

    /// The metrics of the answer: people only, or everyone with `includeBots`.
    public func metrics(includeBots: Bool) -> ConversionMetrics {
        var counted = people
        if includeBots { counted.add(bots) }
        return ConversionMetrics(counted, botEvents: bots.events)
    }
}

/// The metrics every stats answer reports, under the same names in JSON, CSV and the dashboard.
public struct ConversionMetrics: Sendable, Equatable, Codable {
    /// Installs or opens by the match type that tied them to a click (`organic`: none did).
    public struct ByMatch: Sendable, Equatable, Codable {
        public var installReferrer: Int
        public var clickId: Int
        public var ref: Int
        public var fingerprint: Int
        public var organic: Int

        enum CodingKeys: String, CodingKey {
            case installReferrer = "install_referrer", clickId = "click_id", ref, fingerprint, organic
        }

        /// Those a link brought: every match type but organic.
        public var fromLinks: Int { installReferrer + clickId + ref + fingerprint }
    }

    public var clicks: Int
    public var uniqueClicks: Int
    public var fallbacks: Int
    public var installs: Int
    public var opens: Int
    public var deferredOpens: Int
    /// The installs links brought (every match but organic) / clicks; nil when there were no
    /// clicks. An organic install is no click's outcome, so it is no part of a rate.
    public var installRate: Double?
    /// The opens links brought / clicks, as `installRate`.
    public var openRate: Double?
    public var fallbackRate: Double?
    public var installsByMatch: ByMatch
    public var opensByMatch: ByMatch
    /// Every bot event in the answer's range and filters, whether or not bots are included.
    public var botEvents: Int

    public init(_ c: ConversionCounts, botEvents: Int) {
        clicks = c.clicks
        // An estimate beyond 1,000 visitors may overshoot slightly; never more visitors than clicks.
        uniqueClicks = min(c.clickVisitors.count, c.clicks)
        fallbacks = c.fallbacks
        installs = c.installs
        opens = c.opens
        deferredOpens = c.deferredOpens
        installsByMatch = ByMatch(
            installReferrer: c.installsInstallReferrer, clickId: c.installsClickId, ref: c.installsRef, fingerprint: c.installsFingerprint, organic: c.installsOrganic)
        opensByMatch = ByMatch(
            installReferrer: c.opensInstallReferrer, clickId: c.opensClickId, ref: c.opensRef, fingerprint: c.opensFingerprint, organic: c.opensOrganic)
        let clicks = Double(c.clicks)
        installRate = c.clicks == 0 ? nil : Double(installsByMatch.fromLinks) / clicks
        openRate = c.clicks == 0 ? nil : Double(opensByMatch.fromLinks) / clicks
        fallbackRate = c.clicks == 0 ? nil : Double(c.fallbacks) / clicks
        self.botEvents = botEvents
    }

    enum CodingKeys: String, CodingKey {
        case clicks, uniqueClicks = "unique_clicks", fallbacks, installs, opens, deferredOpens = "deferred_opens"
        case installRate = "install_rate", openRate = "open_rate", fallbackRate = "fallback_rate"
        case installsByMatch = "installs_by_match", opensByMatch = "opens_by_match", botEvents = "bot_events"
    }

    /// Rates are encoded as `null` when undefined (not left out).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(clicks, forKey: .clicks)
        try c.encode(uniqueClicks, forKey: .uniqueClicks)
        try c.encode(fallbacks, forKey: .fallbacks)
        try c.encode(installs, forKey: .installs)
        try c.encode(opens, forKey: .opens)
        try c.encode(deferredOpens, forKey: .deferredOpens)
        try c.encode(installRate, forKey: .installRate)
        try c.encode(openRate, forKey: .openRate)
        try c.encode(fallbackRate, forKey: .fallbackRate)
        try c.encode(installsByMatch, forKey: .installsByMatch)
        try c.encode(opensByMatch, forKey: .opensByMatch)
        try c.encode(botEvents, forKey: .botEvents)
    }

    /// The value of a sortable metric (see `StatsSort`); nil rates sort as lowest.
    public func value(of metric: StatsMetric) -> Double {
        switch metric {
        case .clicks: Double(clicks)
        case .uniqueClicks: Double(uniqueClicks)
        case .fallbacks: Double(fallbacks)
        case .installs: Double(installs)
        case .opens: Double(opens)
        case .deferredOpens: Double(deferredOpens)
        case .installRate: installRate ?? -1
        case .openRate: openRate ?? -1
        case .fallbackRate: fallbackRate ?? -1
        case .botEvents: Double(botEvents)
        }
    }
}

/// The metrics a breakdown can be sorted by (an allow-list: names never reach SQL).
public enum StatsMetric: String, Sendable, CaseIterable {
    case clicks, uniqueClicks = "unique_clicks", fallbacks, installs, opens, deferredOpens = "deferred_opens"
    case installRate = "install_rate", openRate = "open_rate", fallbackRate = "fallback_rate"
    case botEvents = "bot_events"
}

/// Normalises an OS version to major.minor ("17.1.2" → "17.1", "14" → "14"), for fingerprint
/// matching. Nil for nil or empty input.
public func osMajorMinor(_ version: String?) -> String? {
    guard let version, !version.isEmpty else { return nil }
    let parts = version.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
    return parts.prefix(2).joined(separator: ".")
}

/// The rules the rollups are counted by, numbered so that a store can tell rollups counted by
/// earlier ones and count them again from the raw events:
/// 1. until 2026-12: an organic event lost its campaign; opens were not split by match type.
/// 2. an organic event keeps its own campaign, source and medium; opens are counted by match
///    type (`opens_by_match`).
/// 3. every event is also counted by its audience (country, device, os, browser, referrer host,
///    language), an install or open a click brought under that click's.
public enum CountingRules {
    /// The rules this version counts by.
    public static let version = 3
    /// What changed since earlier versions, for the log line of a recount.
    public static let changes =
        "an organic install or open keeps its own campaign; opens are counted by match type; events are counted by audience"
}
