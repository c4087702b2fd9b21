import Foundation

/// Settings of synthetic traffic (`linkpulse generate`, benchmarks, tests, the demo).
public struct TrafficProfile: Sendable {
    /// About how many events to make (duplicates included).
    public var events: Int
    /// How many days back from `endMs` the traffic spreads over.
    public var days: Int
    public var refs: Int
    public var campaigns: Int
    public var seed: UInt64
    /// The end of the traffic, UTC ms (usually now).
    public var endMs: Int64

    public init(events: Int, days: Int, refs: Int = 1_000, campaigns: Int = 20, seed: UInt64 = 1, endMs: Int64) {
        self.events = events; self.days = days; self.refs = refs; self.campaigns = campaigns; self.seed = seed; self.endMs = endMs
    }
}

/// Realistic synthetic link traffic, deterministic for a seed: clicks with the platform mix of
/// real traffic (mostly phones), link-preview bots, fallbacks to the web, installs and opens
/// that follow their clicks after realistic delays — some naming the click's id, some only
/// the ref, some neither (left to fingerprinting) — organic installs, client retries
/// (duplicate ids) and late arrivals (events sent hours after they happened).
///
/// Produces payloads, as apps and landing pages would send them; callers validate and store
/// them through the same code as ingest.
public struct TrafficGenerator: Sendable {
    public let profile: TrafficProfile
    var rng: SplitMix64
    /// Events held back to arrive late (after the rest).
    var late: [EventPayload] = []
    var made = 0

    public init(_ profile: TrafficProfile) {
        self.profile = profile
        self.rng = SplitMix64(seed: profile.seed)
    }

    static let sources = ["email", "facebook", "instagram", "google", "twitter", "sms", "newsletter"]
    static let mediums = ["email", "social", "social", "cpc", "social", "sms", "email"]
    static let botAgents = [
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
        "WhatsApp/2.23.20.0", "TelegramBot (like TwitterBot)", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ]

    /// The next batch of at most `count` payloads; empty when the profile's events are made.
    public mutating func next(_ count: Int) -> [EventPayload] {
        var batch: [EventPayload] = []
        while batch.count < count && made < profile.events {
            let visit = makeVisit()
            for event in visit {
                // 2% arrive late (after everything else), 1% are sent twice (a retry).
                if rng.chance(0.02) { late.append(event) } else { batch.append(event) }
                if rng.chance(0.01) { batch.append(event) }
            }
            made += visit.count
        }
        if batch.isEmpty && !late.isEmpty {
            batch = Array(late.prefix(count))
            late.removeFirst(batch.count)
        }
        return batch
    }

    mutating func makeVisit() -> [EventPayload] {
        let span = Int64(profile.days) * 86_400_000 - 3_600_000
        // Traffic arrives in time order, as it does from real senders (a few minutes of jitter);
        // the late arrivals are the events held back in `next`.
        let progress = Double(made) / Double(max(profile.events, 1))
        let at = profile.endMs - 3_600_000 - span + Int64(progress * Double(span)) + Int64(rng.below(300_000))
        let ip = "10.\(rng.below(200)).\(rng.below(250)).\(rng.below(250) + 1)"
        let (platform, agent, os) = pickDevice()
        let device = rng.chance(0.5) ? uuid() : nil

        if rng.chance(0.08) {  // an organic install and first open: no link
            var install = payload("install", at: at, ip: ip, agent: agent, os: os, device: device)
            install.appVersion = .value("5.2.0")
            return [install, payload("open", at: at + 5_000, ip: ip, agent: agent, os: os, device: device)]
        }

        let refIndex = Int(Double(profile.refs) * pow(rng.unit(), 2.2))
        let ref = "r\(String(refIndex, radix: 36))"
        let campaign = "campaign_\(refIndex % max(profile.campaigns, 1))"
        let sourceIndex = refIndex % Self.sources.count

        var click = payload("click", at: at, ip: ip, agent: agent, os: nil, device: nil)
        click.ref = .value(ref)
        click.campaign = .value(campaign)
        click.source = .value(Self.sources[sourceIndex])
        click.medium = .value(Self.mediums[sourceIndex])
        click.url = .value("https://go.example.com/p/\(ref)?c=\(campaign)")
        if rng.chance(0.06) {  // a link-preview fetch, no person behind it
            click.userAgent = .value(Self.botAgents[rng.below(Self.botAgents.count)])
            return [click]
        }
        var events = [click]
        let clickId = click.id.value!
        let mobile = platform == "ios" || platform == "android"
        let roll = rng.unit()
        if !mobile || roll < 0.30 {
            if rng.chance(mobile ? 1 : 0.7) {
                var fallback = payload("fallback", at: at + 800 + Int64(rng.below(3_000)), ip: ip, agent: agent, os: nil, device: nil)
                fallback.ref = .value(ref)
                events.append(fallback)
            }
        } else if roll < 0.55 {  // app not installed: store, install, deferred deep link
            let delay = 60_000 + Int64(rng.below(40 * 60_000))
            var install = payload("install", at: at + delay, ip: ip, agent: agent, os: os, device: device)
            let how = rng.unit()
            if how < 0.45, platform == "android" {
                // The Play Store hands the click id back through the install referrer.
                install.installReferrer = .value("\(InstallReferrer.clickParameter)=\(clickId)&utm_medium=app_store")
            } else if how < 0.45 {
                install.clickId = .value(clickId)
            } else if how < 0.7 {
                install.ref = .value(ref)
            }  // else: nothing travelled; fingerprinting may find the click
            events.append(install)
            if rng.chance(0.8) {
                var open = payload("open", at: at + delay + 3_000, ip: ip, agent: agent, os: os, device: device)
                open.deferred = .value(true)
                if how < 0.45 { open.clickId = .value(clickId) } else if how < 0.7 { open.ref = .value(ref) }
                events.append(open)
            }
        } else if roll < 0.9 {  // app installed: a direct deep link
            var open = payload("open", at: at + 1_500 + Int64(rng.below(5_000)), ip: ip, agent: agent, os: os, device: device)
            open.ref = .value(ref)
            if rng.chance(0.5) { open.clickId = .value(clickId) }
            events.append(open)
        }
        return events
    }

    mutating func pickDevice() -> (platform: String, agent: String, os: String) {
        let roll = rng.unit()
        if roll < 0.47 {
            let major = 15 + rng.below(4), minor = rng.below(5)
            return ("ios", "Mozilla/5.0 (iPhone; CPU iPhone OS \(major)_\(minor) like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/\(major).\(minor) Mobile/15E148 Safari/604.1", "\(major).\(minor)")
        } else if roll < 0.85 {
            let major = 10 + rng.below(5)
            return ("android", "Mozilla/5.0 (Linux; Android \(major); Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Mobile Safari/537.36", "\(major)")
        } else if roll < 0.97 {
            return ("desktop", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Safari/537.36", "10")
        }
        return ("other", "Mozilla/5.0 (PlayStation; PlayStation 5/6.50) AppleWebKit/605.1.15 (KHTML, like Gecko)", "6.5")
    }

    mutating func payload(_ type: String, at: Int64, ip: String, agent: String, os: String?, device: String?) -> EventPayload {
        var p = EventPayload()
        p.id = .value(uuid())
        p.type = .value(type)
        p.timestamp = .value(.epochMillis(Double(at)))
        p.ip = .value(ip)
        p.userAgent = .value(agent)
        if let os { p.osVersion = .value(os) }
        if let device { p.deviceId = .value(device) }
        return p
    }

    /// A random (version 4 layout) UUID from the seeded generator.
    mutating func uuid() -> String {
        let a = rng.next(), b = rng.next()
        let hex = String(a, radix: 16).leftPadded(16) + String(b, radix: 16).leftPadded(16)
        let c = Array(hex)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-4\(String(c[13..<16]))-a\(String(c[17..<20]))-\(String(c[20..<32]))"
    }
}

/// A small, fast, seedable random generator (SplitMix64): the same seed gives the same traffic.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// A uniform integer in [0, n).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
