import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import NIOCore
import Testing

@testable import LinkpulseServer

/// The stats API's HTTP contract: keys, errors naming the parameter, compression.
@Suite struct StatsHTTPTests {
    @Test func needsTheReadKeyNotTheIngestKey() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            // No key: 401; an ingest key (known, of the wrong kind): 403.
            let cases: [(HTTPFields, HTTPResponse.Status)] = [([:], .unauthorized), ([.authorization: "Bearer \(TestInstallation.ingestKey)"], .forbidden)]
            for (headers, status) in cases {
                for path in ["/v1/stats/summary", "/v1/stats/breakdown?by=ref", "/v1/stats/timeseries"] {
                    let response = try await client.execute(uri: path, method: .get, headers: headers, body: nil)
                    #expect(response.status == status)
                }
                let rollup = try await client.execute(uri: "/v1/admin/rollup", method: .post, headers: headers, body: nil)
                #expect(rollup.status == status)
            }
            let viaQuery = try await client.execute(uri: "/v1/stats/summary?key=\(TestInstallation.readKey)", method: .get, body: nil)
            #expect(viaQuery.status == .ok)
        }
    }

    @Test func malformedParametersAreNamedIn400s() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let cases = [
                ("/v1/stats/summary?tz=Not/AZone", "tz"), ("/v1/stats/summary?from=2026-13-01", "from"),
                ("/v1/stats/summary?from=2026-11-05&to=2026-11-01", "from"), ("/v1/stats/breakdown?by=color", "by"),
                ("/v1/stats/breakdown?by=ref&sort=name", "sort"), ("/v1/stats/breakdown?by=ref&limit=5000", "limit"),
                ("/v1/stats/timeseries?interval=minute", "interval"), ("/v1/stats/summary?from=2020-01-01&to=2026-01-01", "to"),
            ]
            for (path, parameter) in cases {
                let response = try await client.execute(
                    uri: path, method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
                #expect(response.status == .badRequest, "\(path)")
                let error = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: [String: String]]
                #expect(error?["error"]?["code"] == "invalid_parameter")
                #expect(error?["error"]?["parameter"] == parameter, "\(path)")
                #expect(error?["error"]?["message"]?.contains("`\(parameter)`") == true)
            }
        }
    }

    /// A name an endpoint does not take is a `400` naming it (a typo never answers as if
    /// unfiltered), on every stats, export and links endpoint, on both stores; `key` is taken
    /// everywhere, and every name an endpoint documents still passes.
    @Test(arguments: StoreBackend.allCases)
    func unknownParametersAreRefusedNamingThem(on backend: StoreBackend) async throws {
        try await backend.test("strict_parameters", settings: HostedLinkHTTPTests.settings) { client, _ in
            #expect(try await HostedLinkHTTPTests.api(client, .post, "/v1/links", #"{"ref":"s1","url":"https://example.com"}"#).status == .created)
            let refused = [
                ("/v1/stats/summary?campain=spring", "campain", "campaign"),
                ("/v1/stats/breakdown?by=ref&srot=clicks", "srot", "sort"),
                ("/v1/stats/timeseries?intervals=day", "intervals", "interval"),
                ("/v1/export.csv?by=ref&colour=red", "colour", nil),
                ("/v1/events.csv?by=ref", "by", nil),
                ("/v1/exports?limit=3", "limit", nil),
                ("/v1/links?campaign=spring", "campaign", nil),
                ("/v1/links/s1?stats=true", "stats", nil),
                ("/v1/links/s1/qr.svg?scale=3", "scale", nil),
                ("/v1/links/s1/qr.png?size=300", "size", nil),
                ("/v1/admin/quarantine?limt=5", "limt", "limit"),
            ]
            for (path, parameter, suggestion) in refused {
                let answer = try await HostedLinkHTTPTests.api(client, .get, path, key: TestInstallation.readKey)
                let error = answer.json["error"] as? [String: Any]
                #expect(answer.status == .badRequest && error?["parameter"] as? String == parameter, "\(path): \(answer.json)")
                let message = error?["message"] as? String ?? ""
                #expect(message.hasPrefix("`\(parameter)` is not a parameter here."), "\(message)")
                if let suggestion { #expect(message.contains("Did you mean `\(suggestion)`?"), "\(message)") }
            }
            let taken = [
                "/v1/stats/summary?from=2026-11-01&to=2026-11-07&tz=UTC&campaign=a&ref=b&source=c&medium=d&platform=ios&include_bots=true",
                "/v1/stats/breakdown?by=ref&sort=clicks&order=asc&limit=5&offset=0", "/v1/stats/timeseries?interval=day",
                "/v1/export.csv?by=ref&limit=5", "/v1/export.csv?interval=day", "/v1/events.csv?include_bots=false",
                "/v1/links?limit=5&offset=0&stats=true&tz=UTC&include_bots=true", "/v1/links/s1/qr.png?scale=2",
                "/v1/admin/quarantine?limit=5", "/v1/stats/summary?key=\(TestInstallation.readKey)",
            ]
            for path in taken {
                #expect(try await HostedLinkHTTPTests.api(client, .get, path, key: TestInstallation.readKey).status == .ok, "\(path)")
            }
        }
    }

    /// Every stats, export and links-with-stats answer says how fresh it is: `counted_through`
    /// (every event received before it is counted) and `lag_seconds`, in its JSON and its
    /// headers, on both stores; on SQLite, whose rollups wait for the test here, exactly.
    @Test(arguments: StoreBackend.allCases)
    func everyAnswerSaysHowFreshItIs(on backend: StoreBackend) async throws {
        let clock = Locked<Int64>(1_795_255_620_000)
        try await backend.test("freshness", settings: HostedLinkHTTPTests.settings, now: { clock.withLock { $0 } }) { client, _ in
            #expect(try await HostedLinkHTTPTests.api(client, .post, "/v1/links", #"{"ref":"f1","url":"https://example.com"}"#).status == .created)
            let received = clock.withLock { $0 }
            try await AttributionScenarioTests.send([AttributionScenarioTests.event("fresh-1", "click", at: 0, ["ref": "f1"])], client)
            clock.withLock { $0 += 5_000 }
            let now = received + 5_000
            for path in ["/v1/stats/summary", "/v1/stats/breakdown?by=ref", "/v1/stats/timeseries", "/v1/links?stats=true"] {
                let answer = try await HostedLinkHTTPTests.api(client, .get, path, key: TestInstallation.readKey)
                let through = try #require(Timestamp.parseRFC3339(answer.json["counted_through"] as? String ?? ""), "\(path): \(answer.json)")
                let lag = try #require(answer.json["lag_seconds"] as? Double, "\(path)")
                // Up to date, or behind by the one event waiting since it arrived.
                #expect(Double(now - through) / 1000 == lag && (through == now || through == received), "\(path): \(answer.json)")
                if backend == .sqlite { #expect(through == received && lag == 5, "\(path): \(answer.json)") }
                #expect(answer.response.headers[HTTPField.Name("Linkpulse-Counted-Through")!] == answer.json["counted_through"] as? String)
                #expect(answer.response.headers[HTTPField.Name("Linkpulse-Lag-Seconds")!] == "\(lag)")
            }
            for path in ["/v1/export.csv?by=ref", "/v1/events.csv"] {
                let answer = try await HostedLinkHTTPTests.api(client, .get, path, key: TestInstallation.readKey)
                #expect(answer.status == .ok)
                #expect(answer.response.headers[HTTPField.Name("Linkpulse-Counted-Through")!].flatMap(Timestamp.parseRFC3339) != nil, "\(path)")
                #expect(answer.response.headers[HTTPField.Name("Linkpulse-Lag-Seconds")!].flatMap(Double.init) != nil, "\(path)")
            }
            _ = try await AttributionScenarioTests.rollUp(client)
            let counted = try await HostedLinkHTTPTests.api(client, .get, "/v1/stats/summary", key: TestInstallation.readKey)
            #expect(counted.json["counted_through"] as? String == Timestamp.formatUTC(now) && counted.json["lag_seconds"] as? Double == 0)
        }
    }

    @Test func answersAreGzippedWhenAccepted() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        // A clock that stands still: both answers say the same `counted_through`.
        try await installation.application(installation.dependencies(now: { 1_795_255_620_000 })).test(.router) { client in
            let path = "/v1/stats/timeseries?from=2026-11-01&to=2026-11-07"
            let plain = try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
            #expect(plain.headers[.contentEncoding] == nil)
            #expect(plain.headers[.contentType]?.hasPrefix("application/json") == true)
            let gzipped = try await client.execute(
                uri: path, method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)", .acceptEncoding: "gzip, deflate"], body: nil)
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            let inflated = try Zlib.inflate(Array(buffer: gzipped.body), limit: 1 << 20)
            #expect(inflated == Array(buffer: plain.body))
            let points = (try JSONSerialization.jsonObject(with: Data(inflated)) as? [String: Any])?["points"] as? [Any]
            #expect(points?.count == 7)
        }
    }
}
