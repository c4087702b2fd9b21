import LinkpulseDomain
import Testing

@Suite struct TrafficGeneratorTests {
    static let end = Timestamp.parseRFC3339("2026-11-22T00:00:00Z")!

    static func all(_ profile: TrafficProfile) -> [EventPayload] {
        var generator = TrafficGenerator(profile)
        var events: [EventPayload] = []
        while true {
            let batch = generator.next(1_000)
            if batch.isEmpty { return events }
            events += batch
        }
    }

    @Test func theSameSeedMakesTheSameTraffic() {
        let profile = TrafficProfile(events: 3_000, days: 5, refs: 50, campaigns: 5, seed: 7, endMs: Self.end)
        #expect(Self.all(profile) == Self.all(profile))
        var other = profile
        other.seed = 8
        #expect(Self.all(profile) != Self.all(other))
    }

    @Test func trafficLooksLikeTheRealThing() {
        let events = Self.all(TrafficProfile(events: 20_000, days: 10, refs: 200, campaigns: 10, seed: 1, endMs: Self.end))
        #expect(events.count >= 20_000)
        var kinds: [String: Int] = [:]
        for e in events { kinds[e.type.value ?? "", default: 0] += 1 }
        #expect(kinds["click", default: 0] > kinds["install", default: 0] && kinds["install", default: 0] > 0)
        #expect(kinds["open", default: 0] > 0 && kinds["fallback", default: 0] > 0)
        let clicks = kinds["click", default: 0]
        let bots = events.filter { ($0.userAgent.value ?? "").contains("bot") || ($0.userAgent.value ?? "").contains("external") || ($0.userAgent.value ?? "").hasPrefix("WhatsApp") }
        #expect(bots.count > clicks / 50 && bots.count < clicks / 5, "a few percent of clicks are preview fetchers")
        let installs = events.filter { $0.type.value == "install" }
        #expect(installs.contains { $0.clickId.value != nil } && installs.contains { $0.ref.value != nil })
        #expect(installs.contains { $0.clickId.value == nil && $0.ref.value == nil }, "some installs carry nothing (fingerprint or organic)")
        let ids = events.compactMap(\.id.value)
        #expect(Set(ids).count < ids.count, "some events are sent twice, as retries are")
        // Time order, except for the late arrivals flushed at the end.
        func ms(_ e: EventPayload) -> Double { if case .value(.epochMillis(let ms)) = e.timestamp { ms } else { 0 } }
        let times = events.map(ms)
        #expect(times.allSatisfy { $0 >= Double(Self.end - 10 * 86_400_000) && $0 <= Double(Self.end) })
        let tail = times.suffix(100)
        #expect(tail.first! < times[times.count * 9 / 10], "the last events sent are late arrivals from earlier")
    }

    @Test func visitorsComeFromPublicAddressesInManyBrowsers() {
        let events = Self.all(TrafficProfile(events: 5_000, days: 3, refs: 100, campaigns: 5, seed: 3, endMs: Self.end))
        let addresses = events.compactMap(\.ip.value)
        let v6 = addresses.filter { $0.contains(":") }
        #expect(v6.count > addresses.count / 10 && v6.count < addresses.count / 3, "about a fifth IPv6")
        let private4 = addresses.filter { $0.hasPrefix("10.") || $0.hasPrefix("192.168.") || $0.hasPrefix("127.") }
        #expect(private4.isEmpty)
        let agents = Set(events.compactMap(\.userAgent.value))
        #expect(agents.contains { $0.contains("Instagram") } && agents.contains { $0.contains("iPad") } && agents.contains { $0.contains("Edg/") })
        let referred = events.filter { $0.type.value == "click" && $0.referrer.value != nil }
        #expect(referred.count > events.count / 20)
        #expect(referred.allSatisfy { ["facebook", "instagram", "google", "twitter"].contains($0.source.value ?? "") })
    }
}
