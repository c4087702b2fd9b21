import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import Testing

/// One event as a test sends it; the oracle reads the same values.
struct SentEvent {
    var id: String
    var type: String
    var ms: Int64
    var platform: String
    var ip: String
    var userAgent: String
    var ref: String? = nil
    var campaign: String? = nil
    var source: String? = nil
    var medium: String? = nil
    var clickId: String? = nil
    var deferred: Bool? = nil
    var deviceId: String? = nil
    var osVersion: String? = nil
    /// A Play Install Referrer string the app passes on (`lp_click=…&utm_…=…`).
    var installReferrer: String? = nil
    /// Whether `clickId` came from `installReferrer` (set by `asStored`).
    var viaReferrer = false
    var referrer: String? = nil

    /// The event as the server keeps it: an install referrer's click id, and its utm values
    /// where the event sent none, as if the event had sent them.
    var asStored: SentEvent {
        guard let raw = installReferrer else { return self }
        var pairs: [String: String] = [:]
        for pair in raw.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2, pairs[String(kv[0])] == nil { pairs[String(kv[0])] = String(kv[1]) }
        }
        var e = self
        if let id = pairs["lp_click"] { (e.clickId, e.viaReferrer) = (id, true) }
        e.campaign = campaign ?? pairs["utm_campaign"]
        e.source = source ?? pairs["utm_source"]
        e.medium = medium ?? pairs["utm_medium"]
        return e
    }

    static let botAgents: Set<String> = ["facebookexternalhit/1.1", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"]
    static let personAgent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"

    var isBot: Bool { Self.botAgents.contains(userAgent) }
    var visitor: String { deviceId ?? "\(ip)|\(userAgent)" }

    var json: [String: Any] {
        var o: [String: Any] = ["id": id, "type": type, "timestamp": ms, "platform": platform, "ip": ip, "user_agent": userAgent]
        if let ref { o["ref"] = ref }
        if let campaign { o["campaign"] = campaign }
        if let source { o["source"] = source }
        if let medium { o["medium"] = medium }
        if let clickId { o["click_id"] = clickId }
        if let deferred { o["deferred"] = deferred }
        if let deviceId { o["device_id"] = deviceId }
        if let osVersion { o["os_version"] = osVersion }
        if let installReferrer { o["install_referrer"] = installReferrer }
        if let referrer { o["referrer"] = referrer }
        return o
    }
}

/// A plain, obviously-correct reading of the attribution rules and metrics, straight from the
/// events as sent (in the order they were stored), with no buckets, sketches or SQL.
struct Oracle {
    struct Counted {
        var event: SentEvent
        var ref, campaign, source, medium: String?
        var match: String?
        /// Its own audience, or that of the click a rule took its link from.
        var audience: CountedAudience

        init(_ event: SentEvent, audience: CountedAudience) {
            self.event = event
            ref = event.ref; campaign = event.campaign; source = event.source; medium = event.medium
            self.audience = audience
        }

        /// What each rule gives an install, open or fallback (the rules' lookups are the
        /// callers'): a bot keeps its own link.
        mutating func bot() { match = event.ref == nil ? "organic" : "ref" }

        /// Rule 1: the click its `click_id` names; its own link values first.
        mutating func clickId(_ click: SentEvent) {
            match = event.viaReferrer ? "install_referrer" : "click_id"
            ref = event.ref ?? click.ref; campaign = event.campaign ?? click.campaign
            source = event.source ?? click.source; medium = event.medium ?? click.medium
        }

        /// Rule 2: its own ref; the rest from the newest click of that ref, if any.
        mutating func ref(newest latest: SentEvent?) {
            match = "ref"
            if let latest { campaign = event.campaign ?? latest.campaign; source = event.source ?? latest.source; medium = event.medium ?? latest.medium }
        }

        /// Rule 3: everything from the newest click of the same device within the window.
        mutating func fingerprint(_ click: SentEvent) {
            match = "fingerprint"
            ref = click.ref; campaign = click.campaign; source = click.source; medium = click.medium
        }

        /// Rule 4: no link; the event keeps its own campaign, source and medium.
        mutating func organic() {
            match = "organic"
        }
    }

    /// Whether two OS versions agree on major and minor (a missing one agrees with any).
    static func versionsAgree(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return true }
        return a.split(separator: ".").prefix(2) == b.split(separator: ".").prefix(2)
    }

    let counted: [Counted]

    /// `audience` tells an event's own audience (by default none is known).
    init(_ sent: [SentEvent], windowMs: Int64 = 7_200_000, audience: (SentEvent) -> CountedAudience = { _ in .unknown }) {
        var stored: [SentEvent] = []
        var seen = Set<String>()
        for e in sent where seen.insert(e.id).inserted { stored.append(e.asStored) }
        var result: [Counted] = []
        for (i, e) in stored.enumerated() {
            let earlier = stored[..<i]
            var c = Counted(e, audience: audience(e))
            if e.type == "click" {
                // counted under its own link
            } else if e.isBot {
                c.bot()
            } else if let id = e.clickId, let click = earlier.first(where: { $0.id == id && $0.type == "click" }) {
                c.clickId(click)
                c.audience = audience(click)
            } else if let ref = e.ref {
                let newest = Self.newest(earlier.filter { $0.type == "click" && !$0.isBot && $0.ref == ref && $0.ms <= e.ms })
                c.ref(newest: newest)
                if let newest { c.audience = audience(newest) }
            } else if e.type != "fallback", let click = Self.newest(earlier.filter({
                $0.type == "click" && !$0.isBot && $0.ip == e.ip && $0.platform == e.platform
                    && $0.ms <= e.ms && $0.ms >= e.ms - windowMs && Self.versionsAgree($0.osVersion, e.osVersion)
            })) {
                c.fingerprint(click)
                c.audience = audience(click)
            } else {
                c.organic()
            }
            result.append(c)
        }
        counted = result
    }

    /// The click with the latest time; of equal times, the one stored last.
    static func newest(_ clicks: [SentEvent]) -> SentEvent? {
        clicks.reduce(nil as SentEvent?) { best, x in best == nil || x.ms >= best!.ms ? x : best }
    }

    struct Filters {
        var campaign, ref, source, medium, platform: String?
        var audience: [StatsDimension: String] = [:]
        var query: String {
            ([("campaign", campaign), ("ref", ref), ("source", source), ("medium", medium), ("platform", platform)]
                + audience.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, Optional($0.value)) })
                .compactMap { name, value in value.map { "&\(name)=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } }.joined()
        }
    }

    /// The metrics of the events in [from, to) passing the filters, as the API names them.
    func metrics(from: Int64, to: Int64, filters: Filters, includeBots: Bool, where extra: (Counted) -> Bool = { _ in true }) -> [String: Double?] {
        let inRange = counted.filter { c in
            c.event.ms >= from && c.event.ms < to && extra(c)
                && (filters.campaign == nil || c.campaign == filters.campaign) && (filters.ref == nil || c.ref == filters.ref)
                && (filters.source == nil || c.source == filters.source) && (filters.medium == nil || c.medium == filters.medium)
                && (filters.platform == nil || c.event.platform == filters.platform)
                && filters.audience.allSatisfy { c.audience.value($0.key) == $0.value }
        }
        let people = inRange.filter { includeBots || !$0.event.isBot }
        func n(_ type: String) -> Int { people.filter { $0.event.type == type }.count }
        let clicks = n("click"), installs = n("install")
        func rate(_ x: Int) -> Double? { clicks == 0 ? nil : Double(x) / Double(clicks) }
        func matched(_ type: String, _ match: String) -> Int { people.filter { $0.event.type == type && $0.match == match }.count }
        var byMatch: [String: Double?] = [:]
        for match in ["install_referrer", "click_id", "ref", "fingerprint", "organic"] {
            byMatch[match] = Double(matched("install", match))
            byMatch["opens_" + match] = Double(matched("open", match))
        }
        // Rates count what links brought: every match type but organic.
        let linkedInstalls = installs - matched("install", "organic"), linkedOpens = n("open") - matched("open", "organic")
        return byMatch.merging([
            "clicks": Double(clicks),
            "unique_clicks": Double(Set(people.filter { $0.event.type == "click" }.map(\.event.visitor)).count),
            "fallbacks": Double(n("fallback")), "installs": Double(installs), "opens": Double(n("open")),
            "deferred_opens": Double(people.filter { $0.event.type == "open" && $0.event.deferred == true }.count),
            "install_rate": rate(linkedInstalls), "open_rate": rate(linkedOpens), "fallback_rate": rate(n("fallback")),
            "bot_events": Double(inRange.filter { $0.event.isBot }.count),
        ]) { own, _ in own }
    }

    /// The API's metrics object flattened the same way: `installs_by_match`'s counts under
    /// their match type's name, `opens_by_match`'s under `opens_` and the name.
    static func flatten(_ metrics: [String: Any]) -> [String: Double?] {
        var flat: [String: Double?] = [:]
        for (name, value) in metrics {
            if let nested = value as? [String: Any] {
                let prefix = name == "opens_by_match" ? "opens_" : ""
                for (inner, v) in nested { flat.updateValue((v as? NSNumber)?.doubleValue, forKey: prefix + inner) }
            } else {
                flat.updateValue((value as? NSNumber)?.doubleValue, forKey: name)
            }
        }
        return flat
    }

    static func same(_ a: [String: Double?], _ b: [String: Double?]) -> Bool {
        guard Set(a.keys) == Set(b.keys) else { return false }
        return a.allSatisfy { key, value in
            switch (value, b[key]!) {
            case (nil, nil): true
            case (let x?, let y?): abs(x - y) < 1e-9
            default: false
            }
        }
    }
}

/// Random event sets, sent through the real ingest route, rolled up, and asked about through
/// the real stats routes; every answer must equal the oracle's.
@Suite struct StatsOracleTests {
    static let refs = ["alpha", "beta", "gamma", "delta"]
    static let campaigns = ["spring", "fall"]
    /// Two addresses of a country (in the Tor data), two of none.
    static let ips = [AudienceHTTPTests.addresses.v4, "203.0.113.2", AudienceHTTPTests.addresses.v6, "2001:db8::7"]
    static let platforms = ["ios", "android", "desktop"]
    /// People's user agents: three browsers on two systems.
    static let agents = [SentEvent.personAgent, AudienceHTTPTests.agents.android, AudienceHTTPTests.agents.instagram]
    static let referrers: [String?] = [nil, "https://l.instagram.com/?u=x", "https://www.google.com/search?q=shoes", "android-app://com.google.android.gm/"]

    /// An event's own audience as ingest derives it from `data`.
    static func audience(_ data: AudienceData) -> (SentEvent) -> CountedAudience {
        { e in
            let agent = data.classifier.classify(e.userAgent).agentText
            return CountedAudience(stored: AudienceDimensions.stored(country: data.countries.country(of: e.ip), agent: agent, language: ""), referrer: e.referrer)
        }
    }

    static func randomEvents(count: Int, around center: Int64, spanMs: Int64, seed: UInt64) -> [SentEvent] {
        var rng = SplitMix64(seed: seed)
        var events: [SentEvent] = []
        for i in 0..<count {
            let ms = center - spanMs / 2 + Int64(rng.unit() * Double(spanMs))
            let kinds = ["click", "click", "click", "install", "open", "fallback"]
            var e = SentEvent(
                id: "e\(seed)-\(i)", type: kinds[rng.below(kinds.count)], ms: ms,
                platform: platforms[rng.below(platforms.count)], ip: ips[rng.below(ips.count)],
                userAgent: rng.chance(0.1) ? Array(SentEvent.botAgents).sorted()[rng.below(2)] : agents[rng.below(agents.count)])
            e.referrer = referrers[rng.below(referrers.count)]
            if e.type == "click" || e.type == "fallback" || rng.chance(0.3) { e.ref = refs[rng.below(refs.count)] }
            if e.type == "click" || rng.chance(0.2) { e.campaign = rng.chance(0.8) ? campaigns[rng.below(2)] : nil }
            if rng.chance(0.5) { e.source = ["email", "sms"][rng.below(2)] }
            if rng.chance(0.3) { e.medium = "paid" }
            if e.type != "click", rng.chance(0.3), let click = events.filter({ $0.type == "click" }).randomElement(using: &rng) {
                if e.type == "install", e.platform == "android", rng.chance(0.6) {
                    e.installReferrer = "lp_click=\(click.id)" + (rng.chance(0.5) ? "&utm_source=play&utm_campaign=store" : "")
                } else {
                    e.clickId = click.id
                }
            }
            if e.type == "open", rng.chance(0.4) { e.deferred = true }
            if rng.chance(0.3) { e.deviceId = "device-\(rng.below(6))" }
            if rng.chance(0.4) { e.osVersion = ["17.1", "17.1.2", "16.4"][rng.below(3)] }
            events.append(e)
            if rng.chance(0.03) { events.append(e) }  // a retry
        }
        return events
    }

    static func post(_ events: [SentEvent], with client: some TestClientProtocol) async throws {
        for start in stride(from: 0, to: events.count, by: 500) {
            let chunk = events[start..<min(start + 500, events.count)].map(\.json)
            let body = try JSONSerialization.data(withJSONObject: chunk)
            let response = try await client.execute(
                uri: "/v1/events", method: .post,
                headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentType: "application/json"],
                body: ByteBuffer(bytes: body))
            #expect(response.status == .accepted)
        }
    }

    static func get(_ client: some TestClientProtocol, _ path: String) async throws -> [String: Any] {
        let response = try await client.execute(
            uri: path, method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
        #expect(response.status == .ok, "\(path): \(String(buffer: response.body))")
        return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any] ?? [:]
    }

    /// The local start of the day or hour containing `date` in `zone`, by Foundation's calendar.
    static func localStart(_ ms: Int64, _ unit: Calendar.Component, _ zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = calendar.dateInterval(of: unit, for: Date(timeIntervalSince1970: Double(ms) / 1000))!.start
        return Int64((start.timeIntervalSince1970 * 1000).rounded())
    }

    static func checkZone(
        _ zoneName: String, events: [SentEvent], oracle: Oracle, center: Int64, seed: UInt64, client: some TestClientProtocol
    ) async throws {
        let zone = TimeZone(identifier: zoneName)!
        var rng = SplitMix64(seed: seed)
        let encodedZone = zoneName.replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(of: "+", with: "%2B")
        for round in 0..<4 {
            // A range of arbitrary instants (not on any bucket edge) or of whole local dates.
            var from = center - 2 * 86_400_000 + Int64(rng.below(86_400_000)) + Int64(rng.below(1000))
            var to = from + 3_600_000 + Int64(rng.below(3 * 86_400_000))
            var range = "from=\(Timestamp.formatUTC(from))&to=\(Timestamp.formatUTC(to))"
            if round == 0 {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let day = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(center) / 1000 - 86_400))
                let first = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
                let afterLast = calendar.date(byAdding: .day, value: 3, to: first)!
                from = Int64(first.timeIntervalSince1970 * 1000)
                to = Int64(afterLast.timeIntervalSince1970 * 1000)
                let last = calendar.date(byAdding: .day, value: 2, to: first)!
                let f = calendar.dateComponents([.year, .month, .day], from: first), l = calendar.dateComponents([.year, .month, .day], from: last)
                range = String(format: "from=%04d-%02d-%02d&to=%04d-%02d-%02d", f.year!, f.month!, f.day!, l.year!, l.month!, l.day!)
            }
            let includeBots = rng.chance(0.3)
            var filters = Oracle.Filters()
            switch rng.below(7) {
            case 0: filters.campaign = campaigns[rng.below(2)]
            case 1: filters.platform = platforms[rng.below(3)]
            case 2: filters.ref = refs[rng.below(refs.count)]; filters.source = "email"
            case 3: filters.audience[.country] = "GB"
            case 4: filters.audience[.browser] = ["Instagram", "Chrome"][rng.below(2)]; filters.campaign = rng.chance(0.5) ? "spring" : nil
            case 5: filters.audience[.referrerHost] = "l.instagram.com"; filters.audience[.os] = rng.chance(0.5) ? "iOS" : nil
            default: break
            }
            let common = "\(range)&tz=\(encodedZone)&include_bots=\(includeBots)\(filters.query)"

            let summary = try await get(client, "/v1/stats/summary?\(common)")
            let expected = oracle.metrics(from: from, to: to, filters: filters, includeBots: includeBots)
            let got = Oracle.flatten(summary["metrics"] as? [String: Any] ?? [:])
            #expect(Oracle.same(got, expected), "summary \(zoneName) \(common)\n got \(got)\n want \(expected)")
            #expect(Timestamp.parseRFC3339(summary["from"] as? String ?? "") == from)
            #expect(Timestamp.parseRFC3339(summary["to"] as? String ?? "") == to)

            for by in ["campaign", "ref", "source", "platform", "country", "device", "os", "browser", "referrer_host"] {
                let breakdown = try await get(client, "/v1/stats/breakdown?\(common)&by=\(by)&limit=1000")
                let rows = breakdown["rows"] as? [[String: Any]] ?? []
                #expect(breakdown["total_rows"] as? Int == rows.count)
                for row in rows {
                    let key = row["key"] as? String
                    let want = oracle.metrics(from: from, to: to, filters: filters, includeBots: includeBots) { c in
                        switch by {
                        case "campaign": c.campaign == key
                        case "ref": c.ref == key
                        case "source": c.source == key
                        case "platform": c.event.platform == key
                        default: c.audience.value(StatsDimension(rawValue: by)!).flatMap { $0.isEmpty ? nil : $0 } == key
                        }
                    }
                    let got = Oracle.flatten(row["metrics"] as? [String: Any] ?? [:])
                    #expect(Oracle.same(got, want), "breakdown by \(by)=\(key ?? "null") \(zoneName) \(common)\n got \(got)\n want \(want)")
                }
                let clicksInRows = rows.reduce(0.0) { $0 + ((($1["metrics"] as? [String: Any])?["clicks"] as? NSNumber)?.doubleValue ?? 0) }
                #expect(clicksInRows == expected["clicks"]!!, "rows of \(by) must add up to the summary")
            }

            for interval in ["hour", "day"] where interval == "day" || to - from <= 3 * 86_400_000 {
                let series = try await get(client, "/v1/stats/timeseries?\(common)&interval=\(interval)")
                let points = series["points"] as? [[String: Any]] ?? []
                let unit: Calendar.Component = interval == "day" ? .day : .hour
                // Every local unit starts on the 15-minute grid: visit each grid point in range.
                var starts: [Int64] = []
                var t = from
                while t < to {
                    let start = localStart(t, unit, zone)
                    if starts.last != start { starts.append(start) }
                    t = (t / 900_000 + 1) * 900_000
                }
                #expect(points.map { Timestamp.parseRFC3339($0["t"] as? String ?? "") } == starts.map { Optional($0) },
                        "\(interval) points in \(zoneName) \(common)")
                for (i, point) in points.enumerated() where i < starts.count {
                    let end = i + 1 < starts.count ? starts[i + 1] : to
                    let want = oracle.metrics(from: max(from, starts[i]), to: min(to, end), filters: filters, includeBots: includeBots)
                    let got = Oracle.flatten(point["metrics"] as? [String: Any] ?? [:])
                    #expect(Oracle.same(got, want), "\(interval) point \(point["t"] ?? "") \(zoneName)\n got \(got)\n want \(want)")
                }
            }
        }
    }

    static let centers: [(seed: UInt64, center: String)] = [
        (1, "2026-11-01T06:00:00Z"),  // New York falls back on 2026-11-01 (a 25-hour day)
        (2, "2026-03-08T07:00:00Z"),  // New York springs forward on 2026-03-08 (23 hours)
        (3, "2026-10-15T12:00:00Z"),
    ]

    @Test(arguments: StoreBackend.allCases, Self.centers)
    func rollupAnswersEqualTheOracle(on backend: StoreBackend, around: (seed: UInt64, center: String)) async throws {
        let (seed, center) = (around.seed, Timestamp.parseRFC3339(around.center)!)
        let data = try await AudienceHTTPTests.loaded.value
        let events = Self.randomEvents(count: 400, around: center, spanMs: 4 * 86_400_000, seed: seed)
        let oracle = Oracle(events, audience: Self.audience(data))
        // The random set exercises every attribution rule, bots and retries, and installs
        // counted under another audience than their own.
        #expect(Set(oracle.counted.compactMap(\.match)) == ["install_referrer", "click_id", "ref", "fingerprint", "organic"])
        #expect(oracle.counted.contains { $0.event.isBot } && oracle.counted.count < events.count)
        #expect(oracle.counted.contains { $0.event.type == "install" && $0.audience != Self.audience(data)($0.event) })
        #expect(Set(oracle.counted.map(\.audience.country)) == ["GB", "", data.countries.country(of: AudienceHTTPTests.addresses.v6)])
        try await backend.test("oracle_\(seed)", audience: data) { client, _ in
            try await Self.post(events, with: client)
            let rollup = try await client.execute(
                uri: "/v1/admin/rollup", method: .post, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
            #expect(rollup.status == .ok)
            for zone in ["UTC", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns", "America/New_York"] {
                try await Self.checkZone(zone, events: events, oracle: oracle, center: center, seed: seed &+ UInt64(zone.count), client: client)
            }
        }
    }

    /// Questions by audience over months: whole months, most of a month (the month's row less
    /// its other days), days, and edges inside a day, grouped and filtered, equal the oracle's
    /// on both stores (SQLite's rows by audience are by day and month; PostgreSQL's by hour too).
    @Test(arguments: StoreBackend.allCases)
    func audienceAnswersOverMonthsEqualTheOracle(on backend: StoreBackend) async throws {
        let data = try await AudienceHTTPTests.loaded.value
        let center = Timestamp.parseRFC3339("2026-10-01T00:00:00Z")!
        let events = Self.randomEvents(count: 800, around: center, spanMs: 90 * 86_400_000, seed: 7)
        let oracle = Oracle(events, audience: Self.audience(data))
        let ranges: [(String, Int64, Int64)] = [
            ("2026-09-01", "2026-09-30"), ("2026-09-03", "2026-09-28"), ("2026-08-20", "2026-10-10"), ("2026-10-02", "2026-10-04"),
        ].map { from, to in
            let a = Timestamp.parseRFC3339("\(from)T00:00:00Z")!, b = Timestamp.parseRFC3339("\(to)T00:00:00Z")! + 86_400_000
            return ("from=\(from)&to=\(to)", a, b)
        } + [("from=2026-09-02T07:13:00Z&to=2026-09-29T16:41:30Z", Timestamp.parseRFC3339("2026-09-02T07:13:00Z")!, Timestamp.parseRFC3339("2026-09-29T16:41:30Z")!)]
        try await backend.test("oracle_months", audience: data) { client, _ in
            try await Self.post(events, with: client)
            _ = try await AttributionScenarioTests.rollUp(client)
            for (range, from, to) in ranges {
                for filters in [Oracle.Filters(), Oracle.Filters(audience: [.country: "GB"])] {
                    let common = "\(range)&tz=UTC&include_bots=false\(filters.query)"
                    let summary = Oracle.flatten(try await Self.get(client, "/v1/stats/summary?\(common)")["metrics"] as? [String: Any] ?? [:])
                    let want = oracle.metrics(from: from, to: to, filters: filters, includeBots: false)
                    #expect(Oracle.same(summary, want), "summary \(common)\n got \(summary)\n want \(want)")
                    for by in ["country", "browser", "referrer_host"] {
                        let dimension = StatsDimension(rawValue: by)!
                        let rows = try await Self.get(client, "/v1/stats/breakdown?\(common)&by=\(by)&limit=1000")["rows"] as? [[String: Any]] ?? []
                        #expect(!rows.isEmpty, "\(by) \(common)")
                        for row in rows {
                            let key = row["key"] as? String
                            let want = oracle.metrics(from: from, to: to, filters: filters, includeBots: false) { c in
                                c.audience.value(dimension).flatMap { $0.isEmpty ? nil : $0 } == key
                            }
                            let got = Oracle.flatten(row["metrics"] as? [String: Any] ?? [:])
                            #expect(Oracle.same(got, want), "by \(by)=\(key ?? "null") \(common)\n got \(got)\n want \(want)")
                        }
                    }
                }
            }
        }
    }
}
