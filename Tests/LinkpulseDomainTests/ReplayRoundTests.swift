import LinkpulseDomain
import Testing

/// The pure part of attribution on PostgreSQL: a round over clicks earlier rounds left behind.
@Suite struct ReplayRoundTests {
    static let t: Int64 = 1_795_255_620_000

    /// Clicks come back from the store in any order; of two at the same instant the one stored
    /// last is still the newest, by ref and by fingerprint (and a click found both ways counts
    /// once among the candidates).
    @Test func earlierClicksAtOneInstantKeepTheirStoreOrder() throws {
        let fingerprint = Fingerprint(ipKey: 42, platform: .ios)
        let first = KnownClick(seq: 10, occurredAtMs: Self.t, dimensions: LinkDimensions(ref: "spring", campaign: "a"))
        let second = KnownClick(seq: 12, occurredAtMs: Self.t, dimensions: LinkDimensions(ref: "spring", campaign: "b"))
        var earlier = ReplayRound.EarlierClicks()
        earlier.byRef = [second, first]
        earlier.byFingerprint = [(fingerprint, second), (fingerprint, first), (fingerprint, second)]
        for order in [earlier.byFingerprint, Array(earlier.byFingerprint.reversed())] {
            earlier.byFingerprint = order
            earlier.byRef.reverse()
            let byRef = IngestEvent(id: "i1", kind: .install, occurredAtMs: Self.t + 1000, receivedAtMs: Self.t + 1000, ref: "spring", platform: .ios, visitorId: "v1")
            let byFingerprint = IngestEvent(
                id: "i2", kind: .install, occurredAtMs: Self.t + 2000, receivedAtMs: Self.t + 2000, platform: .ios,
                ipHash: "000000000000002a" + String(repeating: "0", count: 16), visitorId: "v2")
            #expect(Fingerprint(ipHash: byFingerprint.ipHash, platform: .ios) == fingerprint)
            let round = ReplayRound(events: [(20, byRef), (21, byFingerprint)])
            let decided = try round.decide(earlier, attributor: Attributor(windowMs: 7_200_000)).attributions
            #expect(decided.map(\.attribution.clickSeq) == [12, 12])
            #expect(decided.map(\.attribution.dimensions.campaign) == ["b", "b"])
            #expect(decided[1].attribution.candidates == 2, "two clicks fitted, each once")
        }
    }
}
