import LinkpulseDomain
import Testing

/// The attribution rules over an in-memory `ClickIndex`: no database involved.
@Suite struct AttributorTests {
    static let hour: Int64 = 3_600_000
    static let t0: Int64 = 1_793_000_000_000
    let attributor = Attributor(windowMs: 2 * hour)

    /// Replays events in store order as the store does: clicks go into the index, the rest are
    /// attributed against what the index holds so far.
    struct Replay {
        var index = ClickIndex()
        var seq: Int64 = 0
        let attributor: Attributor

        mutating func click(
            _ id: String, at: Int64, ref: String? = nil, campaign: String? = nil, source: String? = nil,
            ip: Int64? = 1, platform: Platform = .ios, os: String? = nil, bot: Bool = false
        ) -> Int64 {
            seq += 1
            let click = KnownClick(
                seq: seq, occurredAtMs: t0 + at, dimensions: LinkDimensions(ref: ref, campaign: campaign, source: source),
                osVersion: osMajorMinor(os))
            index.add(click, id: id, fingerprint: ip.map { Fingerprint(ipKey: $0, platform: platform) }, isBot: bot)
            return seq
        }

        mutating func event(
            _ kind: EventKind, at: Int64, ref: String? = nil, campaign: String? = nil, source: String? = nil,
            medium: String? = nil, clickId: String? = nil, ip: Int64? = 1, platform: Platform = .ios, os: String? = nil,
            bot: Bool = false
        ) throws -> Attribution {
            seq += 1
            let subject = AttributionSubject(
                seq: seq, kind: kind, occurredAtMs: t0 + at,
                dimensions: LinkDimensions(ref: ref, campaign: campaign, source: source, medium: medium), clickId: clickId,
                fingerprint: ip.map { Fingerprint(ipKey: $0, platform: platform) }, osVersion: os, isBot: bot)
            return try attributor.attribute(subject, in: &index)
        }
    }

    var replay: Replay { Replay(attributor: attributor) }

    @Test func clickIdWinsAndTheEventsOwnValuesWin() throws {
        var r = replay
        let c = r.click("c1", at: 0, ref: "a", campaign: "x", source: "email")
        _ = r.click("c2", at: 10, ref: "b", campaign: "y")
        let a = try r.event(.install, at: 60_000, ref: "b", source: "sms", clickId: "c1")
        #expect(a == Attribution(
            match: .clickId, clickSeq: c, clickId: "c1", dimensions: LinkDimensions(ref: "b", campaign: "x", source: "sms")))
    }

    @Test func aBotsClickStillMatchesByIdButNeverByRefOrFingerprint() throws {
        var r = replay
        let bot = r.click("c1", at: 0, ref: "a", campaign: "x", bot: true)
        #expect(try r.event(.open, at: 1, clickId: "c1").clickSeq == bot)
        #expect(try r.event(.open, at: 1, ref: "a") == Attribution(match: .ref, dimensions: LinkDimensions(ref: "a")))
        #expect(try r.event(.install, at: 1).match == .organic)
    }

    @Test func anUnknownClickIdFallsThroughToTheRef() throws {
        var r = replay
        let c = r.click("c1", at: 0, ref: "a", campaign: "x")
        let a = try r.event(.open, at: 5, ref: "a", clickId: "nope")
        #expect(a == Attribution(match: .ref, clickSeq: c, dimensions: LinkDimensions(ref: "a", campaign: "x")))
    }

    @Test func refTakesTheNewestClickAtOrBeforeTheEvent() throws {
        var r = replay
        _ = r.click("c1", at: 0, ref: "b", campaign: "y")
        _ = r.click("c2", at: hourMs, ref: "b", campaign: "z")
        #expect(try r.event(.open, at: hourMs / 2, ref: "b").dimensions.campaign == "y")
        #expect(try r.event(.open, at: hourMs, ref: "b").dimensions.campaign == "z")
        // Two clicks at the same instant: the one stored last.
        _ = r.click("c3", at: 2 * hourMs, ref: "b", campaign: "first")
        _ = r.click("c4", at: 2 * hourMs, ref: "b", campaign: "second")
        #expect(try r.event(.open, at: 3 * hourMs, ref: "b").dimensions.campaign == "second")
        // A late click (stored after, happened before) is found by time.
        _ = r.click("c5", at: hourMs / 2 + 1, ref: "b", campaign: "late")
        #expect(try r.event(.open, at: hourMs / 2 + 2, ref: "b").dimensions.campaign == "late")
        // Before any click of the ref: matched to the ref with the event's own values.
        #expect(try r.event(.install, at: -1, ref: "b", source: "sms") == Attribution(
            match: .ref, dimensions: LinkDimensions(ref: "b", source: "sms")))
    }

    @Test func fingerprintWindowIsInclusiveAndVersionsMustAgree() throws {
        var r = replay
        let edge = r.click("c1", at: 0, ref: "c", campaign: "w", ip: 9, os: "17.1")
        #expect(try r.event(.install, at: 2 * hourMs, ip: 9, os: "17.1.3") == Attribution(
            match: .fingerprint, clickSeq: edge, dimensions: LinkDimensions(ref: "c", campaign: "w")))
        #expect(try r.event(.install, at: 2 * hourMs + 1, ip: 9, os: "17.1").match == .organic)
        #expect(try r.event(.install, at: hourMs, ip: 9, os: "17.2").match == .organic)
        #expect(try r.event(.install, at: hourMs, ip: 9, platform: .android).match == .organic)
        #expect(try r.event(.install, at: hourMs, ip: 10).match == .organic)
        // Unknown versions on either side do not prevent a match.
        #expect(try r.event(.open, at: hourMs, ip: 9).match == .fingerprint)
        // A click after the event is not a candidate.
        _ = r.click("c2", at: 3 * hourMs, ref: "later", ip: 9)
        #expect(try r.event(.open, at: 2 * hourMs + 1, ip: 9).match == .organic)
    }

    @Test func fingerprintTakesTheNewestCandidateWhoseVersionFits() throws {
        var r = replay
        let older = r.click("c1", at: 0, ref: "old", ip: 3, os: "16.0")
        _ = r.click("c2", at: 10, ref: "newer", ip: 3, os: "17.0")
        let newest = r.click("c3", at: 20, ref: "newest", ip: 3)
        #expect(try r.event(.install, at: 30, ip: 3, os: "16.0").clickSeq == newest)
        _ = r.click("c4", at: 40, ref: "x", ip: 3, os: "17.0")
        #expect(try r.event(.install, at: 50, ip: 3, os: "16.0.1").clickSeq == newest)
        _ = older
    }

    @Test func fallbacksAreNeverFingerprinted() throws {
        var r = replay
        _ = r.click("c1", at: 0, ref: "a", ip: 4)
        #expect(try r.event(.fallback, at: 1, source: "web", medium: "m", ip: 4) == Attribution(
            match: .organic, dimensions: LinkDimensions(source: "web", medium: "m")))
        #expect(try r.event(.install, at: 1, ip: 4).match == .fingerprint)
    }

    /// An install no click brought keeps the campaign it came with (an SDK's `context.campaign`,
    /// the store referrer's `utm_*`): it counts under that campaign, as organic.
    @Test func organicKeepsItsOwnCampaign() throws {
        var r = replay
        _ = r.click("c1", at: 0, ref: "a", campaign: "other", ip: 5)
        let a = try r.event(.install, at: 1, campaign: "c", source: "s", medium: "m", ip: nil)
        #expect(a == Attribution(match: .organic, dimensions: LinkDimensions(campaign: "c", source: "s", medium: "m")))
        #expect(a.match.countedDimensions(own: LinkDimensions(campaign: "c", source: "s", medium: "m"), click: nil) == a.dimensions)
    }

    @Test func botsAreNotAttributed() throws {
        var r = replay
        _ = r.click("c1", at: 0, ref: "a", campaign: "x")
        #expect(try r.event(.install, at: 1, ref: "a", clickId: "c1", bot: true) == Attribution(
            match: .ref, dimensions: LinkDimensions(ref: "a")))
        #expect(try r.event(.open, at: 1, campaign: "k", bot: true) == Attribution(
            match: .organic, dimensions: LinkDimensions(campaign: "k")))
    }

    @Test func aClickStoredAfterTheEventIsNotMatchedById() throws {
        var index = ClickIndex()
        index.add(KnownClick(seq: 5, occurredAtMs: 0, dimensions: LinkDimensions(ref: "a")), id: "c", fingerprint: nil, isBot: false)
        let subject = AttributionSubject(seq: 4, kind: .install, occurredAtMs: 10, dimensions: LinkDimensions(), clickId: "c")
        #expect(try attributor.attribute(subject, in: &index).match == .organic)
    }

    @Test func storedAnswersGiveBackTheCountedDimensions() throws {
        var r = replay
        let own = LinkDimensions(ref: "b", source: "sms")
        _ = r.click("c1", at: 0, ref: "a", campaign: "x", source: "email")
        _ = r.click("c2", at: 0, ref: "b", campaign: "y", ip: 7)
        let clicks: [Int64: LinkDimensions] = [1: LinkDimensions(ref: "a", campaign: "x", source: "email"), 2: LinkDimensions(ref: "b", campaign: "y")]
        for a in [try r.event(.install, at: 1, ref: "b", source: "sms", clickId: "c1"),
                  try r.event(.open, at: 1, ref: "b", source: "sms"),
                  try r.event(.install, at: 1, ip: 7),
                  try r.event(.install, at: 1, ref: nil, source: "sms", ip: 8)] {
            let stored = a.clickSeq.flatMap { clicks[$0] }
            let mine = a.match == .fingerprint || a.match == .organic ? LinkDimensions(source: own.source) : own
            #expect(a.match.countedDimensions(own: mine, click: stored) == a.dimensions)
        }
    }

    @Test func ipKeysAreTheFirstEightBytesOfTheHash() {
        #expect(Fingerprint.ipKey("00000000000000ffabcdef") == 255)
        #expect(Fingerprint.ipKey("ffffffffffffffff00") == -1)
        #expect(Fingerprint(ipHash: nil, platform: .ios) == nil)
    }

    var hourMs: Int64 { Self.hour }
}

extension AttributorTests.Replay {
    static var t0: Int64 { AttributorTests.t0 }
    var t0: Int64 { AttributorTests.t0 }
}
