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
/// (duplicate ids) and late arrivals (events sent hours after they happened). Visitors come
/// from public addresses (a fifth IPv6) spread as the address space is, on phones, tablets and
/// desktops, in browsers and in the in-app browsers of social apps, and a social source's clicks
/// carry that site's referrer.
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
        let ip = publicAddress()
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
        if let referrer = Self.referrers[Self.sources[sourceIndex]] { click.referrer = .value(referrer) }
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
            let webkit = "AppleWebKit/605.1.15 (KHTML, like Gecko)"
            let os = "\(major)_\(minor)"
            let inApp = rng.unit()
            let agent =
                if inApp < 0.10 {
                    "Mozilla/5.0 (iPad; CPU OS \(os) like Mac OS X) \(webkit) Version/\(major).\(minor) Mobile/15E148 Safari/604.1"
                } else if inApp < 0.25 {
                    "Mozilla/5.0 (iPhone; CPU iPhone OS \(os) like Mac OS X) \(webkit) Mobile/15E148 Instagram 309.0.2.20.109 (iPhone15,3; iOS \(os); en_US; en; scale=3.00; 1290x2796; 541635890)"
                } else if inApp < 0.33 {
                    "Mozilla/5.0 (iPhone; CPU iPhone OS \(os) like Mac OS X) \(webkit) Mobile/15E148 [FBAN/FBIOS;FBAV/441.0.0.23.105;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/\(major).\(minor);FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]"
                } else {
                    "Mozilla/5.0 (iPhone; CPU iPhone OS \(os) like Mac OS X) \(webkit) Version/\(major).\(minor) Mobile/15E148 Safari/604.1"
                }
            return ("ios", agent, "\(major).\(minor)")
        } else if roll < 0.85 {
            let major = 10 + rng.below(5)
            let chrome = "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.163 Mobile Safari/537.36"
            let kind = rng.unit()
            let agent =
                if kind < 0.15 {
                    "Mozilla/5.0 (Linux; Android \(major); SAMSUNG SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36"
                } else if kind < 0.25 {
                    "Mozilla/5.0 (Linux; Android \(major); Pixel 7 Build/TQ3A.230901.001; wv) \(chrome) Instagram 307.0.0.34.111 Android (33/\(major); 420dpi; 1080x2400; Google/google; Pixel 7; panther; panther; en_US; 532277134)"
                } else {
                    "Mozilla/5.0 (Linux; Android \(major); Pixel 7) \(chrome)"
                }
            return ("android", agent, "\(major)")
        } else if roll < 0.97 {
            let kind = rng.unit()
            let agent =
                if kind < 0.55 {
                    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36"
                } else if kind < 0.75 {
                    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15"
                } else if kind < 0.9 {
                    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36 Edg/119.0.2151.97"
                } else {
                    "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
                }
            return ("desktop", agent, "10")
        }
        return ("other", "Mozilla/5.0 (PlayStation; PlayStation 5/6.50) AppleWebKit/605.1.15 (KHTML, like Gecko)", "6.5")
    }

    /// The referrer a click from a social source carries (none from email, SMS or a newsletter).
    static let referrers = [
        "facebook": "https://lm.facebook.com/", "instagram": "https://l.instagram.com/", "google": "https://www.google.com/",
        "twitter": "https://t.co/",
    ]

    /// A public address, as visitors have: IPv4 anywhere outside the private, shared, loopback,
    /// link-local, documentation and multicast blocks (so countries follow how the address space
    /// is spread), or, for a fifth of visitors, IPv6 in the blocks the regional registries give
    /// out.
    mutating func publicAddress() -> String {
        if rng.chance(0.2) {
            let block = [0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00][rng.below(5)]
            let groups = (0..<3).map { _ in String(rng.below(0x10000), radix: 16) }
            return "\(String(block + rng.below(0x100), radix: 16)):\(groups.joined(separator: ":"))::\(String(rng.below(0x10000), radix: 16))"
        }
        while true {
            let (a, b) = (1 + rng.below(223), rng.below(256))
            let reserved = a == 10 || a == 127 || (a == 100 && b >= 64 && b < 128) || (a == 169 && b == 254) || (a == 172 && b >= 16 && b < 32)
                || (a == 192 && (b == 168 || b == 0)) || (a == 198 && (b == 18 || b == 19 || b == 51)) || (a == 203 && b == 0)
            if !reserved { return "\(a).\(b).\(rng.below(256)).\(1 + rng.below(254))" }
        }
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
