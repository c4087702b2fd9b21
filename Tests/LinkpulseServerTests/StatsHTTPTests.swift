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

    @Test func answersAreGzippedWhenAccepted() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
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
