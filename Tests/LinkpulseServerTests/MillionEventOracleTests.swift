import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import Synchronization
import TestSupport
import Testing

/// The stats oracle at scale: a million events sent through the real ingest route over 30
/// days of a fake clock, with late events (up to 7 days), retries, bots and device clocks
/// days off (corrected by `sent_at`), rolled up pass after pass as they arrive (so late events
/// land in days already merged into blocks); then every metric of every dimension, the
/// summary and the daily series are compared with a plain reading of the events in three
/// zones (UTC, +5:30, +5:45), over whole local dates and over arbitrary instants.
///
/// Unique clicks are exact up to `VisitorSketch.exactLimit` visitors and estimated beyond
/// (HyperLogLog, standard error 0.8%): compared exactly below the limit, within 3% above.
@Suite struct MillionEventOracleTests {
    /// How many distinct events are sent (`LINKPULSE_ORACLE_EVENTS` overrides it, to try
    /// the test quickly; the suite runs a million).
    static let eventCount = ProcessInfo.processInfo.environment["LINKPULSE_ORACLE_EVENTS"].flatMap { Int($0) } ?? 1_000_000
    static let days: Int64 = 30
    static let day: Int64 = 86_400_000
    static let start: Int64 = 20_400 * 86_400_000  // 2025-11-08T00:00:00Z
    static let refs = (0..<900).map { "r\($0)" }  // a breakdown's rows fit one page (1,000)
    static let campaigns = (0..<30).map { "c\($0)" }
    static let sources = ["email", "sms", "ads", "social", "qr"]
    static let platforms = ["ios", "android", "web", "desktop", "other"]
    /// The bot user agents in a fixed order (a `Set`'s order changes from run to run).
    static let botAgents = SentEvent.botAgents.sorted()

    /// One event as sent: the stored fields, plus how its time was sent (device clock skew,
    /// `sent_at`) and the fake clock of its request.
    struct Sent {
        var event: SentEvent
        var skewMs: Int64?
        var receivedMs: Int64

        /// The JSON object as an app would send it (written by hand: a million of them).
        var json: String {
            let e = event
            var fields = ["\"id\":\"\(e.id)\"", "\"type\":\"\(e.type)\"", "\"platform\":\"\(e.platform)\"", "\"ip\":\"\(e.ip)\"", "\"user_agent\":\"\(e.userAgent)\""]
            if let skewMs {
                // The device clock is off by `skewMs`: both times it sends carry the error.
                fields.append("\"timestamp\":\(e.ms + skewMs)")
                fields.append("\"sent_at\":\(receivedMs + skewMs)")
            } else {
                fields.append("\"timestamp\":\(e.ms)")
            }
            for (name, value) in [("ref", e.ref), ("campaign", e.campaign), ("source", e.source), ("medium", e.medium),
                                  ("click_id", e.clickId), ("device_id", e.deviceId), ("os_version", e.osVersion),
                                  ("install_referrer", e.installReferrer)] {
                if let value { fields.append("\"\(name)\":\"\(value)\"") }
            }
            if let deferred = e.deferred { fields.append("\"deferred\":\(deferred)") }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

    /// The traffic, in the order it is sent: requests of 500 events, each at its clock time.
    static func traffic(seed: UInt64) -> [[Sent]] {
        var rng = SplitMix64(seed: seed)
        let perRequest = 500
        let requests = eventCount / perRequest
        let step = days * day / Int64(requests)
        var recentClicks: [SentEvent] = []
        var sentSoFar: [Sent] = []
        var result: [[Sent]] = []
        for r in 0..<requests {
            let now = start + Int64(r) * step + step - 1
            var batch: [Sent] = []
            for i in 0..<perRequest {
                if i % 50 == 49, let earlier = sentSoFar.randomElement(using: &rng) {
                    // A retry of an event sent before (a duplicate: stored once), on top.
                    batch.append(Sent(event: earlier.event, skewMs: earlier.skewMs, receivedMs: now))
                }
                let kinds = ["click", "click", "click", "click", "click", "click", "install", "install", "open", "open", "fallback"]
                let late = rng.chance(0.03) ? Int64(rng.below(Int(7 * day))) : Int64(rng.below(Int(step)))
                let bot = rng.chance(0.08)
                var e = SentEvent(
                    id: "m\(seed)-\(r)-\(i)", type: kinds[rng.below(kinds.count)], ms: max(start, now - late),
                    platform: platforms[rng.below(platforms.count)], ip: "10.\(rng.below(40)).\(rng.below(50)).\(rng.below(25))",
                    userAgent: bot ? botAgents[rng.below(botAgents.count)] : SentEvent.personAgent)
                if e.type != "click", !bot, rng.chance(0.3), let click = recentClicks.randomElement(using: &rng) {
                    // The same device as a recent click (a fingerprint match, if the window allows).
                    e.ip = click.ip
                    e.platform = click.platform
                }
                if e.type == "click" || e.type == "fallback" || rng.chance(0.3) { e.ref = refs[rng.below(refs.count)] }
                if e.type == "click" || rng.chance(0.2) { e.campaign = rng.chance(0.9) ? campaigns[rng.below(campaigns.count)] : nil }
                if rng.chance(0.6) { e.source = sources[rng.below(sources.count)] }
                if rng.chance(0.3) { e.medium = ["paid", "organic", "referral"][rng.below(3)] }
                if e.type != "click", rng.chance(0.25), let click = recentClicks.randomElement(using: &rng) {
                    if e.type == "install", e.platform == "android", rng.chance(0.5) {
                        e.installReferrer = "lp_click=\(click.id)" + (rng.chance(0.3) ? "&utm_medium=store" : "")
                    } else {
                        e.clickId = click.id
                    }
                }
                if e.type == "open", rng.chance(0.4) { e.deferred = true }
                if rng.chance(0.4) { e.deviceId = "d\(rng.below(200_000))" }
                if rng.chance(0.5) { e.osVersion = ["17.1", "17.1.2", "16.4", "14"][rng.below(4)] }
                if e.type == "click" {
                    if recentClicks.count < 3_000 { recentClicks.append(e) } else { recentClicks[rng.below(3_000)] = e }
                }
                // A fifth of the devices' clocks are up to three days off; they send `sent_at`.
                let skew: Int64? = rng.chance(0.2) ? Int64(rng.below(Int(6 * day))) - 3 * day : nil
                let sent = Sent(event: e, skewMs: skew, receivedMs: now)
                batch.append(sent)
                if r % 7 == 0 { sentSoFar.append(sent) }
            }
            result.append(batch)
        }
        return result
    }

    @Test func aMillionEventsCountExactlyInEveryZone() async throws {
        let began = ContinuousClock.now
        @Sendable func phase(_ what: String) { print("million-event oracle: \(what) after \(ContinuousClock.now - began)") }
        // The oracle's work runs off the cooperative pool (see `onThreadOfItsOwn`).
        let (requests, sent, oracle) = try await onThreadOfItsOwn {
            let requests = Self.traffic(seed: 42)
            let sent = requests.flatMap { $0.map(\.event) }
            return (requests, sent, IndexedOracle(sent))
        }
        #expect(oracle.counted.count == Self.eventCount && sent.count > Self.eventCount)
        // The indexed oracle reads the rules as the plain one does (checked where both run).
        let plain = Oracle(Array(sent.prefix(4_000)))
        #expect(plain.counted.map(\.match) == oracle.counted.prefix(plain.counted.count).map(\.match))
        #expect(plain.counted.map(\.campaign) == oracle.counted.prefix(plain.counted.count).map(\.campaign))
        #expect(Set(oracle.counted.compactMap(\.match)) == ["install_referrer", "click_id", "ref", "fingerprint", "organic"])

        phase("traffic made and read by the oracle")
        let installation = try TestInstallation()
        defer { installation.remove() }
        let clock = Mutex(Self.start)
        let deps = installation.dependencies(queueCapacity: 100_000, now: { clock.withLock { $0 } })
        try await installation.application(deps).test(.router) { client in
            var rollupTime = Duration.zero
            for (r, batch) in requests.enumerated() {
                clock.withLock { $0 = batch[0].receivedMs }
                let body = "[" + batch.map(\.json).joined(separator: ",") + "]"
                let response = try await client.execute(
                    uri: "/v1/events", method: .post,
                    headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentType: "application/json"],
                    body: ByteBuffer(string: body))
                #expect(response.status == .accepted)
                if r % 100 == 99 || r == requests.count - 1 {
                    // As the daemon's timer would: passes over what has arrived so far.
                    let passStart = ContinuousClock.now
                    defer { rollupTime += ContinuousClock.now - passStart }
                    let rollup = try await client.execute(
                        uri: "/v1/admin/rollup", method: .post, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
                    #expect(rollup.status == .ok)
                }
            }
            #expect(try installation.count("SELECT count(*) FROM events") == oracle.counted.count)  // sealed ones included
            phase("stored and rolled up (\(rollupTime) of it rolling up)")

            for (z, zone) in ["UTC", "Asia/Kolkata", "Asia/Kathmandu"].enumerated() {
                try await Self.compare(zone: zone, includeBots: z % 2 == 1, oracle: oracle, client: client)
                phase("compared in \(zone)")
            }
        }
    }

    static func compare(zone zoneName: String, includeBots: Bool, oracle: IndexedOracle, client: some TestClientProtocol) async throws {
        let zone = TimeZone(identifier: zoneName)!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let encodedZone = zoneName.replacingOccurrences(of: "/", with: "%2F")
        // Every whole local date of the traffic, and arbitrary instants nine days apart.
        let firstDate = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(start) / 1000))
        let lastDate = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(start + days * day - 1) / 1000))
        let from = Int64(calendar.date(from: DateComponents(year: firstDate.year, month: firstDate.month, day: firstDate.day))!.timeIntervalSince1970 * 1000)
        let to = Int64(calendar.date(byAdding: .day, value: 1, to: calendar.date(from: DateComponents(year: lastDate.year, month: lastDate.month, day: lastDate.day))!)!.timeIntervalSince1970 * 1000)
        let dates = String(format: "from=%04d-%02d-%02d&to=%04d-%02d-%02d", firstDate.year!, firstDate.month!, firstDate.day!, lastDate.year!, lastDate.month!, lastDate.day!)
        let odd = (from: start + 11 * day + 3_723_456, to: start + 20 * day + 41_234_567)
        let ranges = [(dates, from, to), ("from=\(Timestamp.formatUTC(odd.from))&to=\(Timestamp.formatUTC(odd.to))", odd.from, odd.to)]
        for (range, from, to) in ranges {
            let common = "\(range)&tz=\(encodedZone)&include_bots=\(includeBots)"
            let all = try await onThreadOfItsOwn { oracle.metrics(from: from, to: to, includeBots: includeBots) { _ in 0 } }
            let summary = try await StatsOracleTests.get(client, "/v1/stats/summary?\(common)")
            expectSame(Oracle.flatten(summary["metrics"] as? [String: Any] ?? [:]), all[0] ?? [:], "summary \(common)")

            for by in ["campaign", "ref", "source", "medium", "platform"] {
                let want = try await onThreadOfItsOwn { oracle.metrics(from: from, to: to, includeBots: includeBots) { oracle.key(of: $0, by: by) } }
                let page = try await StatsOracleTests.get(client, "/v1/stats/breakdown?\(common)&by=\(by)&limit=1000")
                let rows = page["rows"] as? [[String: Any]] ?? []
                #expect(page["total_rows"] as? Int == rows.count)
                #expect(rows.count == want.count, "rows of \(by) \(common)")
                for row in rows {
                    let key = oracle.keyId(row["key"] as? String, by: by)
                    expectSame(Oracle.flatten(row["metrics"] as? [String: Any] ?? [:]), want[key] ?? [:], "\(by)=\(row["key"] ?? "null") \(common)")
                }
            }

            let series = try await StatsOracleTests.get(client, "/v1/stats/timeseries?\(common)&interval=day")
            let points = series["points"] as? [[String: Any]] ?? []
            var starts: [Int64] = []
            var t = from
            while t < to {
                let dayStart = StatsOracleTests.localStart(t, .day, zone)
                if starts.last != dayStart { starts.append(dayStart) }
                t = max(t + 1, StatsOracleTests.localStart(dayStart + 30 * 3_600_000, .day, zone))
            }
            #expect(points.count == starts.count, "daily points \(common)")
            let dayStarts = starts
            let byDay = try await onThreadOfItsOwn {
                oracle.metrics(from: from, to: to, includeBots: includeBots) { i in
                    // The last local day starting at or before the event.
                    let ms = oracle.counted[i].event.ms
                    var low = 0, high = dayStarts.count
                    while low < high { let mid = (low + high) / 2; if dayStarts[mid] <= ms { low = mid + 1 } else { high = mid } }
                    return max(low - 1, 0)
                }
            }
            for (i, point) in points.enumerated() where i < starts.count {
                #expect(Timestamp.parseRFC3339(point["t"] as? String ?? "") == starts[i])
                expectSame(Oracle.flatten(point["metrics"] as? [String: Any] ?? [:]), byDay[i] ?? [:], "day \(point["t"] ?? "") \(common)")
            }
        }
    }

    /// Equal metrics, unique clicks within 3% where the oracle's count is past the exact limit.
    static func expectSame(_ got: [String: Double?], _ want: [String: Double?], _ what: String) {
        var got = got, want = want
        if let estimated = got["unique_clicks"] ?? nil, let exact = want["unique_clicks"] ?? nil, exact > Double(VisitorSketch.exactLimit) {
            #expect(abs(estimated - exact) / exact < 0.03, "unique clicks of \(what): \(estimated) for \(exact)")
            got["unique_clicks"] = nil; want["unique_clicks"] = nil
        }
        #expect(Oracle.same(got, want), "\(what)\n got \(got)\n want \(want)")
    }
}

/// The oracle's rules (see `Oracle`) with the earlier clicks kept in indexes instead of
/// rescanned for every event: per ref, per (address, platform) and per id, in time order.
struct IndexedOracle {
    let counted: [Oracle.Counted]
    /// Per counted event: its visitor as a small integer (distinct visitor ids, distinct numbers).
    let visitor: [Int32]
    private var keyIds: [String: [String?: Int]] = [:]

    init(_ sent: [SentEvent], windowMs: Int64 = 7_200_000) {
        var seen = Set<String>()
        let stored = sent.filter { seen.insert($0.id).inserted }.map(\.asStored)
        /// Clicks sorted by (time, store order): the newest at or before a time is found by a
        /// binary search, ties going to the one stored last, as the rules say.
        struct Timeline {
            var clicks: [(ms: Int64, order: Int, index: Int)] = []
            mutating func insert(ms: Int64, order: Int, index: Int) {
                var low = 0, high = clicks.count
                while low < high {
                    let mid = (low + high) / 2
                    if (clicks[mid].ms, clicks[mid].order) < (ms, order) { low = mid + 1 } else { high = mid }
                }
                clicks.insert((ms, order, index), at: low)
            }
            /// Positions of the clicks at or before `ms`, newest first.
            func atOrBefore(_ ms: Int64) -> ReversedCollection<Range<Int>> {
                var low = 0, high = clicks.count
                while low < high {
                    let mid = (low + high) / 2
                    if clicks[mid].ms <= ms { low = mid + 1 } else { high = mid }
                }
                return (0..<low).reversed()
            }
        }
        var byRef: [String: Timeline] = [:], byDevice: [String: Timeline] = [:]
        var clickById: [String: Int] = [:]
        var result: [Oracle.Counted] = []
        result.reserveCapacity(stored.count)
        for (i, e) in stored.enumerated() {
            var c = Oracle.Counted(e, audience: .unknown)
            if e.type == "click" {
                if clickById[e.id] == nil { clickById[e.id] = i }
                if !e.isBot {
                    if let ref = e.ref { byRef[ref, default: Timeline()].insert(ms: e.ms, order: i, index: i) }
                    byDevice["\(e.ip)|\(e.platform)", default: Timeline()].insert(ms: e.ms, order: i, index: i)
                }
            } else if e.isBot {
                c.bot()
            } else if let id = e.clickId, let j = clickById[id] {
                c.clickId(stored[j])
            } else if let ref = e.ref {
                let timeline = byRef[ref] ?? Timeline()
                c.ref(newest: timeline.atOrBefore(e.ms).first.map { stored[timeline.clicks[$0].index] })
            } else if e.type != "fallback", let timeline = byDevice["\(e.ip)|\(e.platform)"],
                      let found = timeline.atOrBefore(e.ms).lazy.map({ timeline.clicks[$0] })
                          .prefix(while: { $0.ms >= e.ms - windowMs })
                          .first(where: { Oracle.versionsAgree(stored[$0.index].osVersion, e.osVersion) }) {
                c.fingerprint(stored[found.index])
            } else {
                c.organic()
            }
            result.append(c)
        }
        counted = result
        var visitors: [String: Int32] = [:]
        visitor = result.map { c in
            let id = c.event.visitor
            if let n = visitors[id] { return n }
            let n = Int32(visitors.count)
            visitors[id] = n
            return n
        }
        for by in ["campaign", "ref", "source", "medium", "platform"] {
            var ids: [String?: Int] = [:]
            for i in result.indices { let v = Self.value(of: result[i], by: by); if ids[v] == nil { ids[v] = ids.count } }
            keyIds[by] = ids
        }
    }

    static func value(of c: Oracle.Counted, by: String) -> String? {
        switch by {
        case "campaign": c.campaign
        case "ref": c.ref
        case "source": c.source
        case "medium": c.medium
        default: c.event.platform
        }
    }

    func key(of index: Int, by: String) -> Int { keyIds[by]![Self.value(of: counted[index], by: by)]! }
    func keyId(_ value: String?, by: String) -> Int { keyIds[by]![value] ?? -1 }

    /// The metrics of the events in [from, to) by group (`group` of an event's index), as the
    /// API names them; groups without events are left out.
    func metrics(from: Int64, to: Int64, includeBots: Bool, group: (Int) -> Int) -> [Int: [String: Double?]] {
        struct Tally {
            var clicks = 0, fallbacks = 0, installs = 0, opens = 0, deferred = 0, bots = 0
            var matches: [String: Int] = [:]
            var openMatches: [String: Int] = [:]
            var visitors = Set<Int32>()
            var any = false
        }
        var tallies: [Tally] = []  // by group, changed in place
        for i in counted.indices {
            let c = counted[i]
            guard c.event.ms >= from, c.event.ms < to else { continue }
            let g = group(i)
            while tallies.count <= g { tallies.append(Tally()) }
            tallies[g].any = true
            if c.event.isBot { tallies[g].bots += 1 }
            if includeBots || !c.event.isBot {
                switch c.event.type {
                case "click": tallies[g].clicks += 1; tallies[g].visitors.insert(visitor[i])
                case "fallback": tallies[g].fallbacks += 1
                case "install": tallies[g].installs += 1; tallies[g].matches[c.match ?? "", default: 0] += 1
                default:
                    tallies[g].opens += 1
                    tallies[g].openMatches[c.match ?? "", default: 0] += 1
                    if c.event.deferred == true { tallies[g].deferred += 1 }
                }
            }
        }
        var answers: [Int: [String: Double?]] = [:]
        for (g, t) in tallies.enumerated() where t.any { answers[g] = answer(t) }
        return answers
        func answer(_ t: Tally) -> [String: Double?] {
            func rate(_ x: Int) -> Double? { t.clicks == 0 ? nil : Double(x) / Double(t.clicks) }
            var answer: [String: Double?] = [
                "clicks": Double(t.clicks), "unique_clicks": Double(t.visitors.count), "fallbacks": Double(t.fallbacks),
                "installs": Double(t.installs), "opens": Double(t.opens), "deferred_opens": Double(t.deferred),
                // Rates count what links brought: every match type but organic.
                "install_rate": rate(t.installs - (t.matches["organic"] ?? 0)), "open_rate": rate(t.opens - (t.openMatches["organic"] ?? 0)),
                "fallback_rate": rate(t.fallbacks), "bot_events": Double(t.bots),
            ]
            for match in ["install_referrer", "click_id", "ref", "fingerprint", "organic"] {
                answer[match] = Double(t.matches[match] ?? 0)
                answer["opens_" + match] = Double(t.openMatches[match] ?? 0)
            }
            return answer
        }
    }
}
