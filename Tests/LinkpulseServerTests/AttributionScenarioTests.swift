import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import Testing

/// Small hand-built scenarios with exact expected numbers, one per attribution rule and metric.
@Suite struct AttributionScenarioTests {
    static let t0 = Timestamp.parseRFC3339("2026-11-02T10:00:00Z")!
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let range = "from=2026-11-01&to=2026-11-03"

    static func event(_ id: String, _ type: String, at offset: Int64, ip: String = "198.51.100.1", platform: String = "ios", _ extra: [String: Any] = [:]) -> [String: Any] {
        var o: [String: Any] = ["id": id, "type": type, "timestamp": t0 + offset, "ip": ip, "platform": platform, "user_agent": SentEvent.personAgent]
        for (k, v) in extra { o[k] = v }
        return o
    }

    static func send(_ events: [[String: Any]], _ client: some TestClientProtocol) async throws {
        let response = try await client.execute(
            uri: "/v1/events", method: .post,
            headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentType: "application/json"],
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: events)))
        #expect(response.status == .accepted)
    }

    static func rollUp(_ client: some TestClientProtocol) async throws -> Int {
        let response = try await client.execute(
            uri: "/v1/admin/rollup", method: .post, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
        #expect(response.status == .ok)
        return (try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["processed"] as? Int ?? -1
    }

    static func metrics(_ client: some TestClientProtocol, _ query: String) async throws -> [String: Double?] {
        Oracle.flatten(try await StatsOracleTests.get(client, "/v1/stats/summary?\(range)&\(query)")["metrics"] as? [String: Any] ?? [:])
    }

    @Test func eachRuleMatchesAndFillsAsSpecified() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            try await Self.send([
                // Rule 1: the install names the click; the click's campaign fills the gap.
                Self.event("c1", "click", at: 0, ["ref": "a", "campaign": "x", "source": "email"]),
                Self.event("i1", "install", at: 10 * Self.minute, ip: "198.51.100.50", ["click_id": "c1", "source": "sms"]),
                // Rule 2: the newest click of the ref at or before the open gives its campaign.
                Self.event("c2", "click", at: 0, ip: "198.51.100.2", ["ref": "b", "campaign": "y"]),
                Self.event("c3", "click", at: Self.hour, ip: "198.51.100.2", ["ref": "b", "campaign": "z"]),
                Self.event("o1", "open", at: 30 * Self.minute, ip: "198.51.100.60", ["ref": "b"]),
                // Rule 3: same address, platform and OS major.minor, exactly at the window's edge.
                Self.event("c4", "click", at: 0, ip: "198.51.100.9", ["ref": "c", "campaign": "w", "os_version": "17.1"]),
                Self.event("i2", "install", at: 2 * Self.hour, ip: "198.51.100.9", ["os_version": "17.1.3"]),
                // …but not a millisecond past it, nor with another OS version, nor on another platform.
                Self.event("c5", "click", at: 0, ip: "198.51.100.10", ["ref": "d"]),
                Self.event("i3", "install", at: 2 * Self.hour + 1, ip: "198.51.100.10"),
                Self.event("c6", "click", at: 0, ip: "198.51.100.11", ["ref": "e", "os_version": "16.0"]),
                Self.event("i4", "install", at: Self.minute, ip: "198.51.100.11", ["os_version": "17.1"]),
                Self.event("i5", "install", at: Self.minute, ip: "198.51.100.11", platform: "android"),
                // Organic: no click brought it; it keeps the campaign it came with.
                Self.event("i6", "install", at: Self.minute, ip: "198.51.100.99", ["campaign": "own"]),
                // Opens, deferred opens and a fallback.
                Self.event("o2", "open", at: 20 * Self.minute, ip: "198.51.100.50", ["click_id": "c1", "deferred": true]),
                Self.event("f1", "fallback", at: 5 * Self.minute, ip: "198.51.100.3", platform: "desktop", ["ref": "a"]),
            ], client)
            #expect(try await Self.rollUp(client) == 15)
            #expect(try await Self.rollUp(client) == 0)

            let all = try await Self.metrics(client, "")
            #expect(all["clicks"] == 6 && all["installs"] == 6 && all["opens"] == 2 && all["fallbacks"] == 1)
            #expect(all["deferred_opens"] == 1 && all["unique_clicks"] == 5)  // c2 and c3 share a visitor
            #expect(all["click_id"] == 1 && all["ref"] == 0 && all["fingerprint"] == 1 && all["organic"] == 4)
            #expect(all["opens_click_id"] == 1 && all["opens_ref"] == 1 && all["opens_organic"] == 0)
            // Rates count what links brought: two of the six installs, both opens.
            #expect(all["install_rate"] == 2.0 / 6 && all["open_rate"] == 2.0 / 6 && all["fallback_rate"] == 1.0 / 6)

            let x = try await Self.metrics(client, "campaign=x")
            #expect(x["clicks"] == 1 && x["installs"] == 1 && x["opens"] == 1 && x["click_id"] == 1)
            let y = try await Self.metrics(client, "campaign=y")
            #expect(y["opens"] == 1 && y["clicks"] == 1)
            let w = try await Self.metrics(client, "campaign=w")
            #expect(w["installs"] == 1 && w["fingerprint"] == 1)
            // i1 kept its own source; the fallback counts under ref a.
            #expect(try await Self.metrics(client, "source=sms")["installs"] == 1)
            #expect(try await Self.metrics(client, "ref=a")["fallbacks"] == 1)
            let own = try await Self.metrics(client, "campaign=own")
            #expect(own["installs"] == 1 && own["organic"] == 1 && own["clicks"] == 0 && own["install_rate"] == .some(nil))

            let byRef = try await StatsOracleTests.get(client, "/v1/stats/breakdown?\(Self.range)&by=ref&sort=installs")
            let rows = byRef["rows"] as? [[String: Any]] ?? []
            #expect(rows.first?["key"] is NSNull)  // the organic installs lead
            #expect(rows.map { $0["key"] as? String } == [nil, "a", "c", "b", "d", "e"])
        }
    }

    @Test func botsDuplicatesAndLateEvents() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            var bot = Self.event("b1", "click", at: 0, ["ref": "a"])
            bot["user_agent"] = "facebookexternalhit/1.1"
            var botInstall = Self.event("b2", "install", at: Self.minute, ["ref": "a"])
            botInstall["user_agent"] = "facebookexternalhit/1.1"
            try await Self.send([Self.event("c1", "click", at: 0, ["ref": "a"]), bot, botInstall], client)
            try await Self.send([Self.event("c1", "click", at: 0, ["ref": "a"])], client)  // a retry
            _ = try await Self.rollUp(client)
            let people = try await Self.metrics(client, "")
            #expect(people["clicks"] == 1 && people["installs"] == 0 && people["bot_events"] == 2)
            let everyone = try await Self.metrics(client, "include_bots=true")
            #expect(everyone["clicks"] == 2 && everyone["installs"] == 1 && everyone["ref"] == 1 && everyone["bot_events"] == 2)
            #expect(everyone["unique_clicks"] == 2)

            // A click that happened a day earlier arrives now: it lands in its own day.
            try await Self.send([Self.event("late", "click", at: -Self.hour * 24, ["ref": "a"])], client)
            #expect(try await Self.rollUp(client) == 1)
            let series = try await StatsOracleTests.get(client, "/v1/stats/timeseries?\(Self.range)&interval=day")
            let clicks = (series["points"] as? [[String: Any]] ?? []).map { (($0["metrics"] as? [String: Any])?["clicks"] as? Int) ?? -1 }
            #expect(clicks == [1, 1, 0])
        }
    }

    @Test func aRestartBetweenPassesNeverCountsTwice() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let events = StatsOracleTests.randomEvents(count: 300, around: Self.t0, spanMs: 86_400_000, seed: 9)
        try await installation.application().test(.router) { client in
            try await StatsOracleTests.post(events, with: client)
        }
        // Part of the events, then a restart (a new process opening the same files), then the rest.
        #expect(try installation.database.rollups.rollUp(maxEvents: 70) == 70)
        try installation.database.close()
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        #expect(try reopened.rollups.rolledThroughSeq() == 70)
        try reopened.rollups.rollUpAll(batch: 50)
        let query = try StatsQuery.parse(["from": "2026-11-01", "to": "2026-11-03"], defaultZone: "UTC", nowMs: 0)
        let incremental = try await reopened.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        try reopened.rollups.resetRollups()
        try reopened.rollups.rollUpAll()
        let rebuilt = try await reopened.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        #expect(incremental == rebuilt)
        let total = rebuilt.values.reduce(0) { $0 + $1.people.events + $1.bots.events }
        #expect(total == Oracle(events).counted.count)
        try reopened.close()
    }
}
