import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import NIOFoundationCompat
import Testing

@testable import LinkpulseServer

@Suite struct IngestHTTPTests {
    @Test func storesOneEventAndAnswers202() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await client.postEvents(#"{"id":"e1","type":"click","ref":"ab12cd","campaign":"winter"}"#)
            #expect(response.status == .accepted)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            #expect(try response.decode(IngestAnswer.self) == IngestAnswer(accepted: 1, duplicates: 0, rejected: 0, errors: []))
        }
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'e1' AND ref = 'ab12cd' AND campaign = 'winter'") == 1)
    }

    @Test func acceptsEveryBodyShape() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let array = try await client.postEvents(#"[{"id":"a1","type":"open"},{"id":"a2","type":"install"}]"#)
            #expect(try array.decode(IngestAnswer.self).accepted == 2)
            let batch = try await client.postEvents(#"{"batch":[{"id":"b1","type":"open"},{"id":"b2","type":"open"}]}"#)
            #expect(try batch.decode(IngestAnswer.self).accepted == 2)
            let beacon = try await client.postEvents(#"{"id":"t1","type":"click","ref":"r"}"#, contentType: "text/plain;charset=UTF-8")
            #expect(try beacon.decode(IngestAnswer.self).accepted == 1)
            let ndjson = try await client.postEvents("{\"id\":\"n1\",\"type\":\"open\"}\n{\"id\":\"n2\",\"type\":\"open\"}\n", contentType: "application/x-ndjson")
            #expect(try ndjson.decode(IngestAnswer.self).accepted == 2)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 7)
    }

    @Test func acceptsGzipAndRefusesBombs() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let events = (0..<200).map { #"{"id":"g\#($0)","type":"click","ref":"r\#($0 % 7)"}"# }.joined(separator: ",")
            let gzipped = Zlib.gzip(Array("[\(events)]".utf8))
            let response = try await client.execute(
                uri: "/v1/events", method: .post,
                headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentEncoding: "gzip", .contentType: "application/json"],
                body: ByteBuffer(bytes: gzipped))
            #expect(response.status == .accepted)
            #expect(try response.decode(IngestAnswer.self).accepted == 200)

            // 64 MiB of spaces compress to about 64 KiB; inflation must stop at 1 MiB.
            let bomb = Zlib.gzip([UInt8](repeating: 0x20, count: 64 << 20))
            #expect(bomb.count < IngestLimits.maxBodyBytes)
            let refused = try await client.execute(
                uri: "/v1/events", method: .post,
                headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentEncoding: "gzip"],
                body: ByteBuffer(bytes: bomb))
            #expect(refused.status == .contentTooLarge)
            #expect(try refused.decode(ErrorAnswer.self).error.code == "body_too_large")
            #expect(refused.headers[.accessControlAllowOrigin] == "*")

            let corrupt = try await client.execute(
                uri: "/v1/events", method: .post,
                headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentEncoding: "gzip"],
                body: ByteBuffer(bytes: Array(gzipped.prefix(40))))
            #expect(corrupt.status == .badRequest)
            #expect(try corrupt.decode(ErrorAnswer.self).error.code == "invalid_encoding")
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 200)
    }

    /// Over real HTTP, through the daemon's own server builder (reads of at most 16 KiB, one a
    /// wake-up): a body of nearly the whole limit arrives in some sixty reads, whole, and the
    /// next request on the same connection is read after it. The daemon runs as a process of
    /// its own and the client waits up to two minutes: in the test process, other tests'
    /// blocking work on the cooperative pool could stall an in-process server past the test
    /// client's fixed 20 s (it did, in full runs of the suite on a slow day).
    @Test func aBodyOfNearlyTheLimitArrivesWholeInSmallReads() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try installation.database.close()
        let path = String(repeating: "p", count: 900)
        let events = (0..<IngestLimits.maxEventsPerRequest).map {
            #"{"id":"big\#($0)","type":"click","ref":"r\#($0 % 13)","url":"https://example.com/\#(path)?n=\#($0)"}"#
        }
        let body = "[\(events.joined(separator: ","))]"
        #expect(body.utf8.count > 900_000 && body.utf8.count < IngestLimits.maxBodyBytes)
        let key = try LiveHTTP.createKey(.ingest, in: installation.directory)
        let daemon = try DaemonProcess(dataDirectory: installation.directory)
        // One connection for both requests: the second is read on the connection the first used.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 1)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        func post(_ text: String) async throws -> (status: UInt, answer: IngestAnswer) {
            var request = HTTPClientRequest(url: daemon.baseURL + "/v1/events")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: text))
            let response = try await http.execute(request, timeout: .seconds(120))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (response.status.code, try JSONDecoder().decode(IngestAnswer.self, from: Data(buffer: bytes)))
        }
        do {
            let big = try await post(body)
            #expect(big.status == 202)
            #expect(big.answer.accepted == IngestLimits.maxEventsPerRequest)
            let next = try await post(#"{"id":"after","type":"open"}"#)
            #expect(next.answer.accepted == 1)
        } catch {
            Issue.record(error)
        }
        try await http.shutdown()
        #expect(daemon.terminate() == 0)
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id LIKE 'big%' AND length(url) > 900") == 1_000)
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'after'") == 1)
    }

    @Test func limitsOnTheWholeRequest() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let big = #"{"type":"open","url":""# + String(repeating: "u", count: (1 << 20) + 10) + #""}"#
            let tooLarge = try await client.postEvents(big)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(try tooLarge.decode(ErrorAnswer.self).error.code == "body_too_large")

            let many = "[" + (0...1000).map { #"{"id":"m\#($0)","type":"open"}"# }.joined(separator: ",") + "]"
            let tooMany = try await client.postEvents(many)
            #expect(tooMany.status == .contentTooLarge)
            #expect(try tooMany.decode(ErrorAnswer.self).error.code == "too_many_events")

            let notJSON = try await client.postEvents("type=click&ref=x")
            #expect(notJSON.status == .badRequest)
            let error = try notJSON.decode(ErrorAnswer.self).error
            #expect(error.code == "invalid_json")
            #expect(error.message.contains("NDJSON"))
        }
        // Nothing of the 1,001 events; the non-JSON body is kept for the operator.
        #expect(try installation.count("SELECT count(*) FROM events") == 0)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index IS NULL AND raw_text = 'type=click&ref=x'") == 1)
    }

    @Test func goodEventsSurviveBadNeighbours() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let body = #"[{"id":"ok1","type":"click","ref":"r"},{"type":"click"},{"id":"ok2","type":"open","platform":"ios"},{"type":"open","timestamp":"soon"},"x"]"#
            let response = try await client.postEvents(body)
            #expect(response.status == .accepted)
            let answer = try response.decode(IngestAnswer.self)
            #expect(answer.accepted == 2)
            #expect(answer.rejected == 3)
            #expect(answer.errors.map(\.index) == [1, 3, 4])
            #expect(answer.errors.map(\.field) == ["ref", "timestamp", nil])
            #expect(answer.errors.map(\.code) == ["missing_field", "invalid_timestamp", "not_an_object"])
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 2)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 3)
        #expect(try installation.count(#"SELECT count(*) FROM quarantine WHERE event_index = 1 AND field = 'ref' AND raw_text = '{"type":"click"}'"#) == 1)
    }

    @Test func allInvalidIs400WithTheBatchAnswer() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await client.postEvents(#"[{"type":"bogus"},{"ref":"x"}]"#)
            #expect(response.status == .badRequest)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            let answer = try response.decode(IngestAnswer.self)
            #expect(answer == IngestAnswer(accepted: 0, duplicates: 0, rejected: 2, errors: answer.errors))
            #expect(answer.errors.count == 2)
        }
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 2)
    }

    @Test func duplicatesAreStoredOnce() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let first = try await client.postEvents(#"[{"id":"d1","type":"open"},{"id":"d1","type":"open"},{"id":"d2","type":"open"}]"#)
            #expect(try first.decode(IngestAnswer.self) == IngestAnswer(accepted: 2, duplicates: 1, rejected: 0, errors: []))
            let retry = try await client.postEvents(#"[{"id":"d1","type":"open"},{"id":"d2","type":"open"}]"#)
            #expect(retry.status == .accepted)
            #expect(try retry.decode(IngestAnswer.self) == IngestAnswer(accepted: 0, duplicates: 2, rejected: 0, errors: []))
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 2)
    }

    @Test func keysInEveryAcceptedPlace() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let body = ByteBuffer(string: #"{"type":"open"}"#)
            let bearer = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(TestInstallation.ingestKey)"], body: body)
            #expect(bearer.status == .accepted)
            let header = try await client.execute(uri: "/v1/events", method: .post, headers: [.init("X-Linkpulse-Key")!: TestInstallation.ingestKey], body: body)
            #expect(header.status == .accepted)
            let query = try await client.execute(uri: "/v1/events?key=\(TestInstallation.ingestKey)", method: .post, body: body)
            #expect(query.status == .accepted)

            for headers: HTTPFields in [[:], [.authorization: "Bearer wrong"], [.authorization: TestInstallation.ingestKey]] {
                let refused = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: body)
                #expect(refused.status == .unauthorized)
                #expect(refused.headers[.accessControlAllowOrigin] == "*")
                #expect(try refused.decode(ErrorAnswer.self).error.code == "unauthorized")
            }
            // A read key is known but of the wrong kind: 403, with CORS too.
            let readKey = try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: body)
            #expect(readKey.status == .forbidden)
            #expect(readKey.headers[.accessControlAllowOrigin] == "*")
            #expect(try readKey.decode(ErrorAnswer.self).error.code == "forbidden")
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 3)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 0)
    }

    @Test func corsPreflight() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/events", method: .options,
                headers: [.origin: "https://shop.example", .accessControlRequestMethod: "POST"])
            #expect(response.status == .noContent)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            #expect(response.headers[.accessControlAllowMethods] == "POST, OPTIONS")
            #expect(response.headers[.accessControlAllowHeaders] == "Authorization, Content-Type, Content-Encoding, X-Linkpulse-Key")
        }
    }

    @Test func botsAreStoredAndFlagged() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await client.postEvents(
                #"{"id":"p1","type":"click","ref":"r"}"#, headers: [.userAgent: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"])
            #expect(try response.decode(IngestAnswer.self).accepted == 1)
            let person = try await client.postEvents(
                #"{"id":"p2","type":"click","ref":"r"}"#, headers: [.userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X)"])
            #expect(try person.decode(IngestAnswer.self).accepted == 1)
        }
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'p1' AND bot = 1 AND bot_reason = 'preview:slack'") == 1)
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'p2' AND bot = 0 AND bot_reason IS NULL AND platform = 'ios'") == 1)
    }

    @Test func forwardedForOnlyWithTrustedProxy() async throws {
        for trust in [false, true] {
            let installation = try TestInstallation()
            defer { installation.remove() }
            let app = installation.application(settings: ServerSettings(port: 0, trustProxy: trust))
            try await app.test(.router) { client in
                _ = try await client.postEvents(
                    #"{"id":"x1","type":"click","ref":"r"}"#,
                    headers: [.init("X-Forwarded-For")!: "10.9.9.9, 203.0.113.50"])
            }
            let expected = trust ? "'\(installation.hasher.ipHash("203.0.113.50"))'" : "NULL"
            #expect(try installation.count("SELECT count(*) FROM events WHERE ip_hash IS \(expected)") == 1, "trust-proxy \(trust)")
        }
    }

    @Test func healthAndQuarantineEndpoints() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            #expect(String(buffer: health.body) == #"{"status":"ok"}"#)

            _ = try await client.postEvents(#"[{"type":"teleport","ip":"203.0.113.7"}]"#)
            let refused = try await client.execute(uri: "/v1/admin/quarantine", method: .get, headers: [.authorization: "Bearer \(TestInstallation.ingestKey)"])
            #expect(refused.status == .forbidden)
            let listed = try await client.execute(uri: "/v1/admin/quarantine?limit=5", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"])
            #expect(listed.status == .ok)
            let text = String(buffer: listed.body)
            #expect(text.contains("teleport"))
            #expect(!text.contains("203.0.113.7"))
            #expect(text.contains(installation.hasher.ipHash("203.0.113.7")))
        }
    }

    @Test func quarantinedBodiesAreDeletedAfterTheirRetention() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let day: Int64 = 86_400_000
        let clock = Locked<Int64>(1_795_255_620_000)
        let deps = installation.dependencies(now: { clock.withLock { $0 } })
        try await installation.application(deps).test(.router) { client in
            _ = try await client.postEvents(#"[{"type":"teleport","id":"old"}]"#)
            clock.withLock { $0 += 20 * day }
            _ = try await client.postEvents(#"[{"type":"warp","id":"new"}]"#)
        }
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 2)
        let job = RetentionJob(database: installation.database, quarantineDays: 30, now: { clock.withLock { $0 } }, logger: installation.logger)
        try await job.runNow()
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 2, "neither is 30 days old yet")
        clock.withLock { $0 += 11 * day }
        try await job.runNow()
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE raw_text LIKE '%warp%'") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 1, "the 31-day-old body is gone")
        try await RetentionJob(database: installation.database, quarantineDays: 0, now: { clock.withLock { $0 } + 1000 * day }, logger: installation.logger).runNow()
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 1, "0 keeps them forever")
    }

    @Test func readinessSaysWhenTheStatsFallTooFarBehind() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let clock = Locked<Int64>(1_795_255_620_000)
        let deps = installation.dependencies(now: { clock.withLock { $0 } })
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), maxRollupLag: .seconds(60))
        try await installation.application(deps, settings: settings).test(.router) { client in
            let idle = try await client.execute(uri: "/readyz", method: .get)
            #expect(idle.status == .ok, "\(String(buffer: idle.body))")
            #expect(String(buffer: idle.body).contains(#""status":"ready""#))

            _ = try await client.postEvents(#"{"id":"r1","type":"click","ref":"r"}"#)
            clock.withLock { $0 += 61_000 }
            let behind = try await client.execute(uri: "/readyz", method: .get)
            #expect(behind.status == .serviceUnavailable && behind.headers[.retryAfter] != nil)
            let answer = try JSONDecoder().decode(HealthReadiness.self, from: Data(buffer: behind.body))
            #expect(answer.status == "not_ready" && answer.checks["rollup_lag"]?.ok == false && answer.checks["database"]?.ok == true)
            // As on PostgreSQL, the lag says how many events wait.
            #expect(answer.checks["rollup_lag"]?.detail.contains("(1 events waiting)") == true, "\(answer.checks)")

            _ = try await client.execute(uri: "/v1/admin/rollup", method: .post, headers: [.authorization: "Bearer \(TestInstallation.readKey)"])
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
        }
    }
}

/// The answer of `/readyz`.
struct HealthReadiness: Decodable {
    struct Check: Decodable {
        var ok: Bool
        var detail: String
    }
    var status: String
    var checks: [String: Check]
}
