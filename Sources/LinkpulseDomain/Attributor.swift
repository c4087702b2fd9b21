/// A stored click, as attribution sees it.
public struct KnownClick: Sendable, Equatable {
    /// The server's sequence number of the click (its place in store order).
    public var seq: Int64
    /// When the click happened, UTC ms.
    public var occurredAtMs: Int64
    /// The link the click was on. Decisions never depend on it: a lookup whose caller records
    /// only the click's seq may leave it empty (the SQLite store's click indexes do), and the
    /// `Attribution`'s dimensions then hold the event's own only.
    public var dimensions: LinkDimensions
    /// The clicking device's OS version as major.minor (see `osMajorMinor`), when known.
    public var osVersion: String?

    public init(seq: Int64, occurredAtMs: Int64, dimensions: LinkDimensions, osVersion: String? = nil) {
        self.seq = seq; self.occurredAtMs = occurredAtMs; self.dimensions = dimensions; self.osVersion = osVersion
    }
}

/// What fingerprint matching compares: the first 8 bytes of the keyed IP hash and the platform.
public struct Fingerprint: Hashable, Sendable {
    public var ipKey: Int64
    public var platform: Platform

    public init(ipKey: Int64, platform: Platform) {
        self.ipKey = ipKey; self.platform = platform
    }

    /// The fingerprint of an event with a keyed IP hash (hex), or nil without one.
    public init?(ipHash: String?, platform: Platform) {
        guard let ipHash else { return nil }
        self.init(ipKey: Self.ipKey(ipHash), platform: platform)
    }

    /// The first 8 bytes of a hex keyed IP hash, as a signed integer (0 for malformed input).
    public static func ipKey(_ hex: String) -> Int64 {
        Int64(bitPattern: UInt64(hex.prefix(16), radix: 16) ?? 0)
    }
}

/// The clicks attribution may match, as stored so far.
///
/// Called in store order: when an event is attributed, the lookup answers from the clicks
/// stored before it (and only those), which is what makes a replay give the same answers as
/// the first pass.
public protocol ClickLookup {
    /// The click stored under exactly this event id (a bot's click too), or nil.
    mutating func click(id: String) throws -> KnownClick?
    /// The newest non-bot click of `ref` that happened at or before `atMs`; of clicks at the
    /// same instant, the one stored last.
    mutating func newestClick(ref: String, atOrBefore atMs: Int64) throws -> KnownClick?
    /// The non-bot clicks with this fingerprint that happened in [fromMs, throughMs], newest
    /// first (of clicks at the same instant, the one stored last first).
    mutating func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) throws -> [KnownClick]
}

/// Where the `click_id` of an install or open came from: what the app read it from.
public enum ClickIdSource: String, Sendable, CaseIterable, StoredAsCode {
    /// Android's Play Install Referrer (`lp_click` in the `install_referrer` string).
    case installReferrer = "install_referrer"
    /// What the landing page wrote to the iOS pasteboard.
    case pasteboard
    /// The universal link (iOS) the app was opened with.
    case universalLink = "universal_link"
    /// The app link (Android) the app was opened with.
    case appLink = "app_link"
    /// Anything else the app knows the click by.
    case other

    /// The small code it is stored as (`event_rows.click_id_source`).
    public var code: Int {
        switch self {
        case .installReferrer: 0
        case .pasteboard: 1
        case .universalLink: 2
        case .appLink: 3
        case .other: 4
        }
    }

    /// The case stored under `code`, nil for an unknown code.
    public init?(code: Int) {
        switch code {
        case 0: self = .installReferrer
        case 1: self = .pasteboard
        case 2: self = .universalLink
        case 3: self = .appLink
        case 4: self = .other
        default: return nil
        }
    }
}

/// One install, open or fallback to attribute: what the rules read of it.
public struct AttributionSubject: Sendable, Equatable {
    public var seq: Int64
    public var kind: EventKind
    public var occurredAtMs: Int64
    /// The event's own link dimensions, as sent.
    public var dimensions: LinkDimensions
    public var clickId: String?
    /// Where `clickId` came from, when the event said.
    public var clickIdSource: ClickIdSource?
    public var fingerprint: Fingerprint?
    /// The OS version as sent (normalised to major.minor by the rules).
    public var osVersion: String?
    public var isBot: Bool

    public init(
        seq: Int64, kind: EventKind, occurredAtMs: Int64, dimensions: LinkDimensions, clickId: String? = nil,
        clickIdSource: ClickIdSource? = nil, fingerprint: Fingerprint? = nil, osVersion: String? = nil, isBot: Bool = false
    ) {
        self.seq = seq; self.kind = kind; self.occurredAtMs = occurredAtMs; self.dimensions = dimensions
        self.clickId = clickId; self.clickIdSource = clickIdSource; self.fingerprint = fingerprint
        self.osVersion = osVersion; self.isBot = isBot
    }
}

/// What attribution decided for one install, open or fallback.
public struct Attribution: Sendable, Equatable {
    public var match: MatchType
    /// The click whose link the event is counted under: the matched click (click_id and
    /// fingerprint), or the newest click of the ref that filled what the event did not send
    /// (ref); nil when there is none.
    public var clickSeq: Int64?
    /// The matched click's event id (install_referrer and click_id matches only).
    public var clickId: String?
    /// The dimensions the event is counted under.
    public var dimensions: LinkDimensions
    /// How many stored clicks fitted the rule that matched: for a fingerprint match, every
    /// click of the window the newest was chosen from; 1 for the other matches, 0 for organic.
    public var candidates: Int

    public init(match: MatchType, clickSeq: Int64? = nil, clickId: String? = nil, dimensions: LinkDimensions, candidates: Int? = nil) {
        self.match = match; self.clickSeq = clickSeq; self.clickId = clickId; self.dimensions = dimensions
        self.candidates = candidates ?? (match == .organic ? 0 : 1)
    }
}

/// The attribution rules, in one place: every install, open and fallback is attributed by this
/// type, whether at first sight or in a replay.
///
/// In order, the first that applies:
/// 1. **click_id** (**install_referrer** when the id came through the store's install
///    referrer): the event names the id of a click stored before it → that click; the event's
///    own dimensions win, the click's fill the gaps.
/// 2. **ref**: the event carries its link's ref → matched to the link; campaign, source and
///    medium it did not send come from the newest non-bot click of that ref at or before it.
/// 3. **fingerprint** (installs and opens only): the newest non-bot click from the same address
///    and platform within `windowMs` before the event (a click exactly `windowMs` before still
///    counts), of the same OS major.minor when both know it → that click's link, whole. A guess,
///    and how many clicks fitted is kept with it (`Attribution.candidates`).
/// 4. **organic**: no link; the event keeps its own campaign, source and medium (an SDK's
///    `context.campaign`, or the install referrer's `utm_*`), and counts under them.
///
/// Bots are not attributed (see `MatchType.unattributed`): they keep their own dimensions.
public struct Attributor: Sendable {
    /// How long before an install or open a click may be to match it by fingerprint, ms.
    public let windowMs: Int64

    public init(windowMs: Int64) {
        self.windowMs = windowMs
    }

    /// Attributes one install, open or fallback against the clicks stored before it.
    /// Not for clicks (they are what others match).
    public func attribute(_ event: AttributionSubject, in clicks: inout some ClickLookup) throws -> Attribution {
        if event.isBot {
            return Attribution(match: .unattributed(ref: event.dimensions.ref), dimensions: event.dimensions)
        }
        if let id = event.clickId, let click = try clicks.click(id: id), click.seq < event.seq {
            return Attribution(
                match: event.clickIdSource == .installReferrer ? .installReferrer : .clickId, clickSeq: click.seq, clickId: id,
                dimensions: event.dimensions.filled(from: click.dimensions))
        }
        if let ref = event.dimensions.ref {
            guard let click = try clicks.newestClick(ref: ref, atOrBefore: event.occurredAtMs) else {
                return Attribution(match: .ref, dimensions: event.dimensions)
            }
            return Attribution(match: .ref, clickSeq: click.seq, dimensions: event.dimensions.filled(from: click.dimensions))
        }
        if event.kind != .fallback, let fingerprint = event.fingerprint {
            let version = osMajorMinor(event.osVersion)
            let fitting = try clicks.clicks(with: fingerprint, from: event.occurredAtMs - windowMs, through: event.occurredAtMs)
                .filter { version == nil || $0.osVersion == nil || $0.osVersion == version }
            if let click = fitting.first {
                // The event has no ref of its own here, so the click's link is taken whole.
                return Attribution(match: .fingerprint, clickSeq: click.seq, dimensions: click.dimensions, candidates: fitting.count)
            }
        }
        return Attribution(match: .organic, dimensions: event.dimensions)
    }
}

extension MatchType {
    /// The dimensions an event attributed with this match type is counted under, from its own
    /// and those of the click stored as its `Attribution.clickSeq` (nil when none). The same
    /// answer `Attributor` gave, recomputed from what the store keeps.
    public func countedDimensions(own: LinkDimensions, click: LinkDimensions?) -> LinkDimensions {
        switch self {
        case .installReferrer, .clickId, .ref: click.map { own.filled(from: $0) } ?? own
        case .fingerprint: click ?? own
        case .organic: own
        }
    }
}

extension CountedEvent {
    /// One stored event as the rollups count it: clicks and bots under their own dimensions
    /// (bots are not attributed), every other event under its stored attribution (`match`,
    /// and `click`, the dimensions of its `clickSeq`'s click); its audience likewise
    /// (`CountedAudience.counted`, from `ownAudience` and `clickAudience`).
    public init(
        kind: EventKind, platform: Platform, isBot: Bool, deferred: Bool, visitorHash: UInt64, own: LinkDimensions,
        match: MatchType?, click: LinkDimensions?, ownAudience: CountedAudience = .unknown, clickAudience: CountedAudience? = nil
    ) {
        var dimensions = own
        var counted = match
        if kind == .click {
            counted = nil
        } else if let match, !isBot {
            dimensions = match.countedDimensions(own: own, click: click)
        } else {
            counted = .unattributed(ref: own.ref)
        }
        self.init(
            kind: kind, platform: platform, isBot: isBot, deferred: deferred, visitorHash: visitorHash, dimensions: dimensions,
            match: counted, audience: CountedAudience.counted(kind: kind, isBot: isBot, match: match, own: ownAudience, click: clickAudience))
    }
}
