import Foundation
import LinkpulseDomain
import Testing

/// The pure parts of deferred deep linking: the install referrer, the deep link content, the
/// answer, the hints' validation, the rate limiter.
@Suite struct DeferredDeepLinkTests {
    @Test func anInstallReferrerGivesItsClickAndUTMValues() {
        let parsed = InstallReferrer(parsing: "lp_click=2f0c&utm_source=news+letter&utm_medium=e%2Dmail&utm_campaign=spring&gclid=x")
        #expect(parsed == InstallReferrer(parsing: "lp_click=2f0c&utm_source=news%20letter&utm_medium=e-mail&utm_campaign=spring"))
        #expect(parsed.clickId == "2f0c" && parsed.source == "news letter" && parsed.medium == "e-mail" && parsed.campaign == "spring")
        // Encoded once more on its way (the Play Store URL's own parameter), first value wins,
        // empty values are absent, junk is ignored.
        let twice = InstallReferrer(parsing: "lp_click%3Dabc%26utm_source%3Dplay")
        #expect(twice.clickId == "abc" && twice.source == "play")
        let odd = InstallReferrer(parsing: "lp_click=a&lp_click=b&utm_source=&junk&=x")
        #expect(odd.clickId == "a" && odd.source == nil)
        #expect(InstallReferrer(parsing: "utm_source=google-play&utm_medium=organic").clickId == nil)
        // An encoded `+` is a plus; a broken escape or one that is not UTF-8 is kept as sent
        // (`+` still a space); blanks around the string (tab, no-break space) are not part of it.
        let kept = InstallReferrer(parsing: "\t\u{a0}lp_click=a%2Bb&utm_source=50%+off&utm_medium=%FF+x&utm_campaign=caf%C3%A9 \u{3000}")
        #expect(kept.clickId == "a+b" && kept.source == "50% off" && kept.medium == "%FF x" && kept.campaign == "café")
        #expect(InstallReferrer(parsing: "lp_click%3dabc").clickId == "abc")
    }

    @Test func deepLinkContentPrefersPropertiesOverTheURL() {
        let content = DeepLinkContent(
            properties: #"{"deep_link_sub10":true,"deep_link_sub2":2.5,"deep_link_value":"shoe-123","other":"x"}"#,
            url: "https://go.example/p?deep_link_value=url&deep_link_sub1=a%2Fb&deep_link_sub3=&deep_link_sub11=no")
        #expect(content.fields.map(\.key) == ["value", "sub1", "sub2", "sub10"])
        #expect(content.fields.map(\.value) == ["shoe-123", "a/b", "2.5", "true"])
        #expect(DeepLinkContent(properties: nil, url: "not a url ^").fields.isEmpty)
    }

    static let click = AnsweredClick(
        id: "c1", occurredAtMs: 1_000, url: "https://go.example/p?deep_link_value=v", properties: nil,
        dimensions: LinkDimensions(ref: "r", campaign: "c", source: "s", medium: "m"))

    static func event(_ match: MatchType?, click: AnsweredClick? = click, candidates: Int? = nil, bot: Bool = false, first: Int64? = 9) -> AttributedEvent {
        AttributedEvent(
            seq: 9, kind: .install, isBot: bot, isResolve: true, own: LinkDimensions(source: "own"), url: "https://app.example/x?deep_link_value=own",
            properties: nil, match: match, click: click, candidates: candidates, firstResolveSeq: first)
    }

    @Test func theAnswerSaysHowCertainItIs() {
        let referrer = ResolveAnswer(Self.event(.installReferrer))
        #expect(referrer.matched && referrer.certain && referrer.candidates == 1 && referrer.firstSession == true)
        #expect(referrer.dimensions == LinkDimensions(ref: "r", campaign: "c", source: "own", medium: "m"))
        #expect(referrer.click == Self.click && referrer.deepLink.fields.map(\.value) == ["v"])
        let guess = ResolveAnswer(Self.event(.fingerprint, candidates: 3, first: 2))
        #expect(guess.matched && !guess.certain && guess.candidates == 3 && guess.firstSession == false)
        #expect(guess.dimensions == Self.click.dimensions)
        // A ref match names no click (the newest of a ref is anybody's); its link is its own.
        let ref = ResolveAnswer(Self.event(.ref))
        #expect(ref.certain && ref.click == nil && ref.deepLink.fields.map(\.value) == ["own"])
        let organic = ResolveAnswer(Self.event(.organic, click: nil))
        #expect(!organic.matched && !organic.certain && organic.candidates == 0 && organic.dimensions == LinkDimensions(source: "own"))
        let bot = ResolveAnswer(Self.event(nil, click: nil, bot: true))
        #expect(!bot.matched && bot.matchType == .organic)
    }

    /// The hand-written body is what JSONEncoder writes of the answer, byte for byte.
    @Test func theAnswersBodyIsWhatTheEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let rich = AnsweredClick(
            id: "c\"1/é", occurredAtMs: 1_795_255_200_123, url: nil,
            properties: #"{"deep_link_sub1":"a","deep_link_sub10":"ten","deep_link_sub2":2.5,"deep_link_value":"v\n😀"}"#,
            dimensions: LinkDimensions(ref: "r", campaign: nil, source: "s\\", medium: "m"))
        let answers = [
            ResolveAnswer(Self.event(.installReferrer)), ResolveAnswer(Self.event(.fingerprint, candidates: 3, first: 2)),
            ResolveAnswer(Self.event(.ref)), ResolveAnswer(Self.event(.organic, click: nil)),
            ResolveAnswer(Self.event(nil, click: nil, bot: true)), ResolveAnswer(Self.event(.clickId, click: rich)),
            ResolveAnswer(AttributedEvent(
                seq: 3, kind: .open, isBot: false, isResolve: false, own: LinkDimensions(), url: nil, properties: nil,
                match: .clickId, click: rich, candidates: nil, firstResolveSeq: nil)),
        ]
        for answer in answers {
            let written = String(decoding: answer.jsonBytes, as: UTF8.self)
            let encoded = String(decoding: try encoder.encode(answer), as: UTF8.self)
            #expect(written == encoded)
        }
    }

    @Test func hintsAreValidated() throws {
        let referred = try validate(#"{"type":"install","install_referrer":"lp_click=c-9&utm_source=play&utm_campaign=x","campaign":"mine"}"#).get()
        #expect(referred.clickId == "c-9" && referred.clickIdSource == .installReferrer)
        #expect(referred.source == "play" && referred.campaign == "mine" && referred.referrer == "lp_click=c-9&utm_source=play&utm_campaign=x")
        let pasted = try validate(#"{"type":"install","click_id":"c-1","click_id_source":"Pasteboard"}"#).get()
        #expect(pasted.clickIdSource == .pasteboard)
        #expect(error(#"{"type":"install","click_id":"c-1","click_id_source":"install_referrer"}"#)?.field == "click_id_source")
        #expect(error(#"{"type":"install","click_id_source":"pasteboard"}"#)?.field == "click_id")
        #expect(error(#"{"type":"install","install_referrer":7}"#)?.field == "install_referrer")
        let long = String(repeating: "x", count: IngestLimits.maxIdLength + 1)
        #expect(error(#"{"type":"install","install_referrer":"lp_click=\#(long)"}"#)?.code == "too_long")
    }

    @Test func installReferrerMatchesAreTheirOwnType() throws {
        var replay = AttributorTests.Replay(attributor: Attributor(windowMs: 2 * AttributorTests.hour))
        let seq = replay.click("c1", at: 0, ref: "r")
        let subject = AttributionSubject(
            seq: 99, kind: .install, occurredAtMs: AttributorTests.t0 + 10, dimensions: LinkDimensions(), clickId: "c1", clickIdSource: .installReferrer)
        let answer = try replay.attributor.attribute(subject, in: &replay.index)
        #expect(answer.match == .installReferrer && answer.clickSeq == seq && answer.candidates == 1)
        var counts = ConversionCounts()
        counts.add(CountedEvent(kind: .install, platform: .android, isBot: false, deferred: false, visitorHash: 1, dimensions: answer.dimensions, match: answer.match))
        #expect(counts.installsInstallReferrer == 1 && counts.installs == 1 && counts.installsClickId == 0)
    }

    @Test func fingerprintMatchesCountTheClicksThatFitted() throws {
        var replay = AttributorTests.Replay(attributor: Attributor(windowMs: 2 * AttributorTests.hour))
        _ = replay.click("a", at: 0, ref: "a", os: "17.1")
        let newest = replay.click("b", at: 60_000, ref: "b")
        _ = replay.click("c", at: 90_000, ref: "c", os: "16.0")  // another OS version: does not fit
        let answer = try replay.event(.install, at: 120_000, os: "17.1.4")
        #expect(answer.match == .fingerprint && answer.clickSeq == newest && answer.candidates == 2)
        #expect(try replay.event(.install, at: 10 * AttributorTests.hour).candidates == 0)
    }

    @Test func eachAddressHasABucket() {
        var limiter = RateLimiter(rate: 1, burst: 2, maxKeys: 3)
        #expect(limiter.take("a", nowMs: 0) == nil && limiter.take("a", nowMs: 0) == nil)
        #expect(limiter.take("a", nowMs: 0) == 1)
        #expect(limiter.take("b", nowMs: 0) == nil)
        #expect(limiter.take("a", nowMs: 1_000) == nil, "a token a second")
        // Idle buckets are forgotten when the table is full; busy ones are kept.
        for key in ["c", "d", "e"] { _ = limiter.take(key, nowMs: 10_000) }
        #expect(limiter.trackedKeys <= 3)
        var off = RateLimiter(rate: 0, burst: 1)
        #expect((0..<100).allSatisfy { _ in off.take("a", nowMs: 0) == nil })
    }
}
