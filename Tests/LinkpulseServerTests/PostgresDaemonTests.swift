import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Several real daemons (`linkpulse serve --database postgres://…`) on one real PostgreSQL, as
/// behind a load balancer: an id is stored once whichever daemon receives it, an acknowledged
/// event survives kill -9 of its daemon, the daemons share keys and visitor ids.
@Suite struct PostgresDaemonTests {
    /// A daemon on `url`, with a data directory of its own (which it leaves empty).
    static func daemon(_ url: String, arguments: [String] = []) throws -> (DaemonProcess, URL) {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-pg-daemon-\(UUID().uuidString)")
        return (try DaemonProcess(dataDirectory: data, arguments: ["--database", url] + arguments), data)
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
        let (a, dataA) = try Self.daemon(url)
        let (b, dataB) = try Self.daemon(url)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = a.terminate()
            _ = b.terminate()
            for data in [dataA, dataB] { try? FileManager.default.removeItem(at: data) }
        }
        let key = try cluster.psql("SELECT value FROM lp_installation WHERE key = 'ingest_key'", database: name)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("lpi_"), "the first daemon stored its generated key")

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

        // What does not run on PostgreSQL yet says so.
        let stats = try await LiveHTTP.send(http, "\(a.baseURL)/v1/stats/summary", method: .GET, key: key)
        #expect(stats.status == 501 && stats.body.contains("not_on_postgresql"), "\(stats.body)")
        let health = try await LiveHTTP.send(http, "\(b.baseURL)/readyz", method: .GET)
        #expect(health.status == 200, "\(health.body)")
        try await http.shutdown()
    }

    @Test func anAcknowledgedEventSurvivesKill9OfItsDaemon() async throws {
        let (cluster, url, name) = try Self.database("kill9")
        let key = "lpi_test_kill9"
        let (a, dataA) = try Self.daemon(url, arguments: ["--ingest-key", key])
        let (b, dataB) = try Self.daemon(url, arguments: ["--ingest-key", key])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            _ = b.terminate()
            for data in [dataA, dataB] { try? FileManager.default.removeItem(at: data) }
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
        try await Task.sleep(for: .milliseconds(1500))
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
}
