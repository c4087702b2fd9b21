import AsyncHTTPClient
import Foundation
import LinkpulseDomain
import LinkpulseStore
import Logging
import TestSupport
import Testing

/// Several real daemons (`linkpulse serve --database postgres://…`) on one real PostgreSQL, as
/// behind a load balancer: an id is stored once whichever daemon receives it, an acknowledged
/// event survives kill -9 of its daemon, the daemons share keys, visitor ids and hosted links.
@Suite struct PostgresDaemonTests {
    /// A daemon on `url`, with a data directory of its own (which it leaves empty).
    static func daemon(_ url: String, arguments: [String] = []) throws -> (DaemonProcess, URL) {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-pg-daemon-\(UUID().uuidString)")
        return (try DaemonProcess(dataDirectory: data, arguments: ["--database", url] + arguments), data)
    }

    /// Two daemons on `url` (with `key` as their ingest key when given, and `extra` arguments)
    /// and their data directories.
    static func twoDaemons(_ url: String, key: String? = nil, extra: [String] = []) throws -> (DaemonProcess, DaemonProcess, [URL]) {
        let arguments = (key.map { ["--ingest-key", $0] } ?? []) + extra
        let (a, dataA) = try daemon(url, arguments: arguments)
        let (b, dataB) = try daemon(url, arguments: arguments)
        return (a, b, [dataA, dataB])
    }

    static func database(_ prefix: String) throws -> (cluster: PostgresTestCluster, url: String, name: String) {
        let cluster = try PostgresTestCluster.shared.get()
        let url = try cluster.makeDatabase(prefix)
        return (cluster, url, String(url.split(separator: "/").last!))
    }

    static func answer(_ body: String) throws -> (accepted: Int, duplicates: Int) {
        let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return (json?["accepted"] as? Int ?? -1, json?["duplicates"] as? Int ?? -1)
    }

    @Test func theSameIdsSentToTwoDaemonsAtOnceAreStoredOnceUnderOneKeyAndOneVisitorId() async throws {
        let (cluster, url, name) = try Self.database("two_daemons")
        // Keys made with `linkpulse keys create` on the database, stored once for both daemons.
        let nowhere = FileManager.default.temporaryDirectory
        let key = try LiveHTTP.createKey(.ingest, in: nowhere, database: url)
        let readKey = try LiveHTTP.createKey(.read, in: nowhere, database: url)
        let (a, b, data) = try Self.twoDaemons(url)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = a.terminate()
            _ = b.terminate()
            for directory in data { try? FileManager.default.removeItem(at: directory) }
        }
        let storedKeys = try cluster.psql("SELECT count(*) || '|' || count(DISTINCT digest) FROM lp_access_keys", database: name)
        #expect(storedKeys.trimmingCharacters(in: .whitespacesAndNewlines) == "2|2", "both keys stored once, as hashes")

        var accepted = 0
        var duplicates = 0
        var ids: [String] = []
        for round in 0..<20 {
            let batch = LiveHTTP.batch(prefix: "both-\(round)", count: 50)
            ids += batch.ids
            async let toA = LiveHTTP.send(http, "\(a.baseURL)/v1/events", key: key, body: batch.body)
            async let toB = LiveHTTP.send(http, "\(b.baseURL)/v1/events", key: key, body: batch.body)
            for answer in try await [toA, toB] {
                #expect(answer.status == 202, "\(answer.body)")
                let counts = try Self.answer(answer.body)
                accepted += counts.accepted
                duplicates += counts.duplicates
            }
        }
        #expect(accepted == ids.count && duplicates == ids.count, "each id accepted by one daemon, a duplicate at the other")
        let stored = try cluster.psql("SELECT count(*) || '|' || count(DISTINCT event_id) FROM lp_events", database: name)
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "\(ids.count)|\(ids.count)")

        // The same phone through either daemon: one visitor (the hashing secret is the database's).
        let phone = #""type":"click","ref":"same","user_agent":"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148""#
        _ = try await LiveHTTP.send(http, "\(a.baseURL)/v1/events", key: key, body: "{\"id\":\"visitor-a\",\(phone)}")
        _ = try await LiveHTTP.send(http, "\(b.baseURL)/v1/events", key: key, body: "{\"id\":\"visitor-b\",\(phone)}")
        let visitors = try cluster.psql("SELECT count(DISTINCT visitor_id) || '|' || count(*) FROM lp_events WHERE event_id LIKE 'visitor-%'", database: name)
        #expect(visitors.trimmingCharacters(in: .whitespacesAndNewlines) == "1|2")

        // A rejected event, kept in quarantine, is listed by either daemon.
        let rejected = try await LiveHTTP.send(http, "\(a.baseURL)/v1/events", key: key, body: #"{"id":"bad-1","type":"teleport"}"#)
        #expect(rejected.status == 400)
        let quarantine = try await LiveHTTP.send(http, "\(b.baseURL)/v1/admin/quarantine?limit=5", method: .GET, key: readKey)
        #expect(quarantine.status == 200 && quarantine.body.contains("teleport") && quarantine.body.contains("invalid_value"), "\(quarantine.body)")

        // Ready once attribution (whichever daemon does it) has caught up; it says how far behind.
        var health = try await LiveHTTP.send(http, "\(b.baseURL)/readyz", method: .GET)
        try await eventually(within: .seconds(10), every: .milliseconds(50)) {
            health = try await LiveHTTP.send(http, "\(b.baseURL)/readyz", method: .GET)
            return health.status == 200 && health.body.contains("(0 events waiting)")
        }
        #expect(health.status == 200 && health.body.contains("rollup_lag") && health.body.contains("(0 events waiting)"), "\(health.body)")
        let metrics = try await LiveHTTP.send(http, "\(a.baseURL)/metrics", method: .GET)
        #expect(metrics.body.contains("linkpulse_attribution_backlog_events 0") && metrics.body.contains("linkpulse_rollup_lag_seconds 0") && metrics.body.contains("linkpulse_rollup_backlog_events 0"), "\(metrics.body.prefix(2000))")
        try await http.shutdown()
    }

    /// A click through one daemon, the app's first launch through the other: answered at once
    /// (the commit of the resolve wakes whichever daemon attributes), and the per-address
    /// limit of `serve --resolve-rate/--resolve-burst` holds on PostgreSQL too.
    @Test func aResolveThroughEitherDaemonIsAnsweredAtOnceAndLimitedPerAddress() async throws {
        let (_, url, _) = try Self.database("resolve_daemons")
        let key = "lpi_test_resolve"
        // The derived work's timer waits an hour: only the notices of the commits can get the
        // answers out within the 3 s a resolve waits (else 503 attribution_pending).
        let (a, b, data) = try Self.twoDaemons(url, key: key, extra: ["--resolve-rate", "0.01", "--resolve-burst", "3", "--rollup-interval", "1h"])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = a.terminate()
            _ = b.terminate()
            for directory in data { try? FileManager.default.removeItem(at: directory) }
        }
        let click = #"{"id":"c-1","type":"click","ref":"spring","platform":"android","ip":"198.51.100.4","user_agent":"Mozilla/5.0 (Linux; Android 14; Pixel 8)"}"#
        #expect(try await LiveHTTP.send(http, "\(a.baseURL)/v1/events", key: key, body: click).status == 202)
        // Six first launches, three through each daemon.
        for n in 1...6 {
            let install = #"{"id":"i-\#(n)","type":"install","platform":"android","install_referrer":"lp_click=c-1","user_agent":"Mozilla/5.0 (Linux; Android 14; Pixel 8)"}"#
            let answer = try await LiveHTTP.send(http, "\((n % 2 == 0 ? a : b).baseURL)/v1/resolve", key: key, body: install)
            #expect(answer.status == 200 && answer.body.contains(#""match_type":"install_referrer""#) && answer.body.contains(#""ref":"spring""#), "\(answer.body)")
        }
        let limited = try await LiveHTTP.send(
            http, "\(b.baseURL)/v1/resolve", key: key, body: #"{"id":"i-3","type":"install","platform":"android"}"#)
        let limitedAgain = try await LiveHTTP.send(
            http, "\(b.baseURL)/v1/resolve", key: key, body: #"{"id":"i-4","type":"install","platform":"android"}"#)
        #expect([limited.status, limitedAgain.status].contains(429), "the burst of 3 a daemon is spent: \(limited.body) \(limitedAgain.body)")
        try await http.shutdown()
    }

    /// Clicks and installs through two daemons; the one doing the attribution is killed with
    /// SIGKILL while events keep coming; the other takes over, and in the end every event is
    /// attributed once, exactly as one replay of all of them decides.
    @Test func whenTheAttributingDaemonIsKilledTheOtherTakesOverAndTheAnswersAreExact() async throws {
        let (_, url, _) = try Self.database("takeover")
        let key = "lpi_test_takeover"
        let readKey = "lpr_test_takeover"
        let (a, b, data) = try Self.twoDaemons(url, key: key, extra: ["--read-key", readKey])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let reader = try await PostgresStore.open(try PostgresLocation(url: url), logger: logger, nowMs: 0, connectTimeout: .seconds(180))
        defer {
            _ = a.terminate()
            _ = b.terminate()
            for directory in data { try? FileManager.default.removeItem(at: directory) }
        }
        /// Sends `rounds` batches of clicks and installs alternately to the two daemons.
        func send(_ prefix: String, rounds: Int, to daemons: [DaemonProcess]) async throws {
            for round in 0..<rounds {
                let batch = LiveHTTP.batch(prefix: "\(prefix)-\(round)", count: 100)
                let answer = try await LiveHTTP.send(http, "\(daemons[round % daemons.count].baseURL)/v1/events", key: key, body: batch.body)
                #expect(answer.status == 202, "\(answer.body)")
            }
        }
        try await send("before", rounds: 20, to: [a, b])
        // Whichever daemon took the lock says so in its log.
        var leader: DaemonProcess?
        try await eventually(within: .seconds(10), every: .milliseconds(50)) {
            leader = [a, b].first { DaemonProcess.read($0.logFile).contains("now does the derived work") }
            return leader != nil
        }
        let first = try #require(leader)
        let other = first === a ? b : a
        try await send("during", rounds: 30, to: [a, b])
        first.kill9()
        try await send("after", rounds: 20, to: [other])

        let events = try await reader.events.events(afterSeq: 0, limit: 1_000_000)
        let expected = try PostgresDerivedWork.replay(events, windowMs: 7_200_000)
        var stored: [PostgresAttributionRecord] = []
        try await eventually(within: .seconds(15), every: .milliseconds(50)) {
            stored = try await reader.attributions(afterSeq: 0, limit: 1_000_000)
            return stored.count >= expected.count
        }
        #expect(events.count == 7000)
        #expect(stored.count == expected.count && stored == expected, "\(stored.count) answers stored, \(expected.count) expected")
        #expect(DaemonProcess.read(other.logFile).contains("now does the derived work"), "the other daemon took over")

        // And the stats count every event once: the rollups of both leaders add up to the events.
        let counted = try await LiveHTTP.send(http, "\(other.baseURL)/v1/admin/rollup", method: .POST, key: readKey)
        #expect(counted.status == 200, "\(counted.body)")
        let day: Int64 = 86_400_000
        let times = events.map(\.event.occurredAtMs)
        let range = "from=\(Timestamp.formatUTC(times.min()! - day).prefix(10))&to=\(Timestamp.formatUTC(times.max()! + day).prefix(10))&tz=UTC"
        let summary = try await LiveHTTP.send(http, "\(other.baseURL)/v1/stats/summary?\(range)", method: .GET, key: readKey)
        let metrics = (try JSONSerialization.jsonObject(with: Data(summary.body.utf8)) as? [String: Any])?["metrics"] as? [String: Any] ?? [:]
        let kinds = Dictionary(uniqueKeysWithValues: events.map { ($0.seq, $0.event.kind) })
        let byMatch = Dictionary(grouping: expected.filter { kinds[$0.seq] == .install }, by: \.match).mapValues(\.count)
        #expect(metrics["clicks"] as? Int == events.filter { $0.event.kind == .click }.count, "\(summary.body)")
        #expect(metrics["installs"] as? Int == events.filter { $0.event.kind == .install }.count)
        let shown = (metrics["installs_by_match"] as? [String: Int] ?? [:]).filter { $0.value > 0 }
        #expect(shown == Dictionary(uniqueKeysWithValues: byMatch.map { ($0.key.rawValue, $0.value) }), "\(summary.body)")
        await reader.close()
        try await http.shutdown()
    }

    @Test func anAcknowledgedEventSurvivesKill9OfItsDaemon() async throws {
        let (cluster, url, name) = try Self.database("kill9")
        let key = "lpi_test_kill9"
        let (a, b, data) = try Self.twoDaemons(url, key: key)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = b.terminate()
            for directory in data { try? FileManager.default.removeItem(at: directory) }
        }
        let acknowledged = Locked<[String]>([])
        let senders = (0..<4).map { sender in
            Task {
                for round in 0..<1000 {
                    let batch = LiveHTTP.batch(prefix: "k\(sender)-\(round)", count: 20)
                    guard let answer = try? await LiveHTTP.send(http, "\(a.baseURL)/v1/events", key: key, body: batch.body) else { return }
                    if answer.status == 202 { acknowledged.withLock { $0 += batch.ids } }
                }
            }
        }
        // Killed mid-stream: once requests are being acknowledged (however loaded the machine),
        // at a point of the stream chosen at random.
        let killAt = 200 + 20 * Int.random(in: 0...10)
        try await eventually(within: .seconds(60), every: .milliseconds(5)) { acknowledged.withLock { $0.count } >= killAt }
        a.kill9()
        for sender in senders { await sender.value }
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count > 0, "some requests were acknowledged before the kill")

        // The other daemon still takes events; every acknowledged one is stored exactly once.
        let after = LiveHTTP.batch(prefix: "after", count: 10)
        #expect(try await LiveHTTP.send(http, "\(b.baseURL)/v1/events", key: key, body: after.body).status == 202)
        let stored = try cluster.psql("SELECT event_id FROM lp_events", database: name).split(separator: "\n").map(String.init)
        let counts = Dictionary(stored.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(acked.filter { counts[$0] != 1 }.isEmpty, "every acknowledged id stored once")
        #expect(after.ids.allSatisfy { counts[$0] == 1 })
        try await http.shutdown()
    }

    /// Hosted links are the database's: a link made, changed or deleted through one daemon is
    /// served so by the other at its very next tap, and each tap's click is stored once.
    @Test func aLinkMadeThroughOneDaemonServesOnTheOtherAtItsNextTap() async throws {
        let (cluster, url, name) = try Self.database("shared_links")
        let admin = try LiveHTTP.createKey(.admin, in: FileManager.default.temporaryDirectory, database: url)
        let (_, config, root) = try HostedLinkCommandTests.installation()
        let (a, b, data) = try Self.twoDaemons(url, extra: ["--links-config", config.path])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = a.terminate()
            _ = b.terminate()
            for directory in data + [root] { try? FileManager.default.removeItem(at: directory) }
        }
        let desktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"

        let made = try await LiveHTTP.send(
            http, "\(a.baseURL)/v1/links", key: admin, body: #"{"ref":"shared","url":"https://example.com/first","campaign":"both"}"#)
        #expect(made.status == 201, "\(made.body)")
        let first = try await HostedLinkCommandTests.visit(b.baseURL, "/shared", userAgent: desktop)
        #expect(first.status == 302 && first.location == "https://example.com/first", "made through one daemon, served by the other")

        let changed = try await LiveHTTP.send(http, "\(b.baseURL)/v1/links/shared", method: .PATCH, key: admin, body: #"{"url":"https://example.com/second"}"#)
        #expect(changed.status == 200, "\(changed.body)")
        let second = try await HostedLinkCommandTests.visit(a.baseURL, "/shared", userAgent: desktop)
        #expect(second.status == 302 && second.location == "https://example.com/second", "changed through one daemon, served so by the other")

        #expect(try await LiveHTTP.send(http, "\(a.baseURL)/v1/links/shared", method: .DELETE, key: admin).status == 204)
        #expect(try await HostedLinkCommandTests.visit(b.baseURL, "/shared", userAgent: desktop).status == 410)

        let clicks = try cluster.psql("SELECT count(*) || '|' || count(DISTINCT event_id) FROM lp_events WHERE ref = 'shared' AND campaign = 'both' AND type = 0", database: name)
        #expect(clicks.trimmingCharacters(in: .whitespacesAndNewlines) == "2|2", "the two answered taps, one click each")
        try await http.shutdown()
    }
}
