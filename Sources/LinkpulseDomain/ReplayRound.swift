/// One round of attribution over stored events in seq order, with what earlier rounds left in
/// the store handed in, not looked up: pure, so a round decides exactly what a replay of every
/// event through one `ClickIndex` decides (tested), whatever the store behind it.
///
/// A round first says what it needs from earlier rounds (`ClickQueries`): the clicks named by
/// its events' `click_id`s, for each (ref, time) the newest click of that ref at or before it,
/// and for each fingerprint window every click in it. Given those (`EarlierClicks`), `decide`
/// replays the round: its own clicks become findable by the events after them, exactly as in
/// the SQLite follower, and every non-bot install, open and fallback gets its `Attribution`.
/// PostgreSQL attributes through it; SQLite's follower keeps its click index between rounds
/// (`RecentClicks`) and is tested against a replay of every event in store order.
public struct ReplayRound: Sendable {
    public let events: [(seq: Int64, event: IngestEvent)]

    public init(events: [(seq: Int64, event: IngestEvent)]) {
        self.events = events
    }

    /// What a round asks the store for.
    public struct ClickQueries: Equatable, Sendable {
        public var ids: Set<String> = []
        /// (ref, time): the newest click of the ref at or before the time.
        public var newestByRef: Set<RefAt> = []
        /// Every click of the fingerprint in [from, through].
        public var windows: Set<Window> = []

        public struct RefAt: Hashable, Sendable {
            public var ref: String
            public var atMs: Int64
        }

        public struct Window: Hashable, Sendable {
            public var fingerprint: Fingerprint
            public var fromMs: Int64
            public var throughMs: Int64
        }
    }

    /// The clicks of earlier rounds that answer a round's `ClickQueries`.
    public struct EarlierClicks: Sendable {
        /// By event id, bots' clicks too (only ever found by id).
        public var byId: [String: KnownClick] = [:]
        /// Non-bot clicks found by ref or by fingerprint; each may come several times.
        public var byRef: [KnownClick] = []
        public var byFingerprint: [(fingerprint: Fingerprint, click: KnownClick)] = []

        public init() {}
    }

    /// What a round decided, for the store to write in one transaction with its watermark.
    public struct Decisions: Sendable {
        public var attributions: [(seq: Int64, attribution: Attribution)] = []
        /// The round's non-bot clicks, findable by ref and by fingerprint from now on.
        public var refClicks: [KnownClick] = []
        public var fingerprintClicks: [(fingerprint: Fingerprint, click: KnownClick)] = []
        /// The devices whose first resolve of the round this is (bots' too), with its seq; a
        /// device that resolved in an earlier round keeps that one.
        public var firstResolves: [(device: String, seq: Int64)] = []
    }

    /// The key a device's resolves are counted under: its `device_id`, else its visitor id.
    public static func resolvingDevice(_ event: IngestEvent) -> String {
        event.deviceId.map { "d:" + $0 } ?? "v:" + event.visitorId
    }

    /// The subject `Attributor` decides for a stored event.
    public static func subject(seq: Int64, _ e: IngestEvent) -> AttributionSubject {
        AttributionSubject(
            seq: seq, kind: e.kind, occurredAtMs: e.occurredAtMs,
            dimensions: LinkDimensions(ref: e.ref, campaign: e.campaign, source: e.source, medium: e.medium),
            clickId: e.kind == .click ? nil : e.clickId, clickIdSource: e.clickIdSource,
            fingerprint: Fingerprint(ipHash: e.ipHash, platform: e.platform), osVersion: e.osVersion, isBot: e.isBot)
    }

    /// What the round needs from earlier rounds: for every non-bot event it attributes, what
    /// each rule it may reach looks up.
    public func queries(windowMs: Int64) -> ClickQueries {
        var queries = ClickQueries()
        for (seq, event) in events where event.kind != .click && !event.isBot {
            let s = Self.subject(seq: seq, event)
            if let id = s.clickId { queries.ids.insert(id) }
            if let ref = s.dimensions.ref {
                queries.newestByRef.insert(.init(ref: ref, atMs: s.occurredAtMs))
            } else if s.kind != .fallback, let fingerprint = s.fingerprint {
                queries.windows.insert(.init(fingerprint: fingerprint, fromMs: s.occurredAtMs - windowMs, throughMs: s.occurredAtMs))
            }
        }
        return queries
    }

    /// Replays the round over `earlier`.
    public func decide(_ earlier: EarlierClicks, attributor: Attributor) throws -> Decisions {
        var index = ClickIndex()
        for (id, click) in earlier.byId { index.add(click, id: id, fingerprint: nil, isBot: true) }
        // A click found by several queries is added once (a window would count it twice), with
        // its fingerprint when a window found it. A click found by fingerprint is findable by its
        // ref too, which adds nothing wrong: it is a real earlier click, and every ref the round
        // looks up was asked for. They are added in store order, as `ClickIndex` wants: of
        // clicks at the same instant, the one stored last is the newest.
        var found: [Int64: (click: KnownClick, fingerprint: Fingerprint?)] = [:]
        for click in earlier.byRef { found[click.seq] = (click, nil) }
        for (fingerprint, click) in earlier.byFingerprint { found[click.seq] = (click, fingerprint) }
        for seq in found.keys.sorted() {
            index.addFindable(found[seq]!.click, fingerprint: found[seq]!.fingerprint)
        }
        var decisions = Decisions()
        var resolved = Set<String>()
        for (seq, event) in events {
            if event.isResolve, resolved.insert(Self.resolvingDevice(event)).inserted {
                decisions.firstResolves.append((Self.resolvingDevice(event), seq))
            }
            let s = Self.subject(seq: seq, event)
            if event.kind == .click {
                let click = KnownClick(seq: seq, occurredAtMs: s.occurredAtMs, dimensions: s.dimensions, osVersion: osMajorMinor(s.osVersion))
                index.add(click, id: event.id, fingerprint: s.fingerprint, isBot: s.isBot)
                guard !s.isBot else { continue }
                if s.dimensions.ref != nil { decisions.refClicks.append(click) }
                if let fingerprint = s.fingerprint { decisions.fingerprintClicks.append((fingerprint, click)) }
                continue
            }
            guard !s.isBot else { continue }
            decisions.attributions.append((seq, try attributor.attribute(s, in: &index)))
        }
        return decisions
    }
}
