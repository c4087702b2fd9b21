import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import Testing

@testable import LinkpulseServer

/// The Segment-compatible endpoints through the real router: authentication as the SDKs send
/// it, status codes they understand, and storage exactly as `/v1/events` does it.
@Suite struct SegmentHTTPTests {
    static let basic = "Basic " + Data("\(TestInstallation.ingestKey):".utf8).base64EncodedString()

    static func post(
        _ client: some TestClientProtocol, _ path: String, _ body: String, authorization: String? = basic,
        extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        try await post(client, path, Array(body.utf8), authorization: authorization, extra: extra)
    }

    static func post(
        _ client: some TestClientProtocol, _ path: String, _ body: [UInt8], authorization: String? = basic, extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let authorization { headers[.authorization] = authorization }
        headers.append(contentsOf: extra)
        return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    static func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
    }

    static let lifecycle = """
        {"batch":[
          {"type":"track","event":"Deep Link Clicked","messageId":"s-click","timestamp":"2026-11-20T10:00:00Z",
           "anonymousId":"web-1","properties":{"url":"https://shop.example/p?ref=spring"},
           "context":{"userAgent":"Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X)","ip":"203.0.113.9"}},
          {"type":"track","event":"Application Installed","messageId":"s-install","timestamp":"2026-11-20T10:05:00Z",
           "properties":{"ref":"spring","version":"2.1.0","build":"210"},
           "context":{"os":{"name":"iOS","version":"17.2"},"app":{"version":"2.1.0"},"device":{"id":"dev-1"},"ip":"203.0.113.9"}},
          {"type":"screen","name":"Home","messageId":"s-screen"},
          {"type":"identify","userId":"u-1","messageId":"s-identify"},
          {"type":"track","event":"Order Completed","messageId":"s-order"}
        ],"sentAt":"2026-11-20T10:06:00Z"}
        """

    @Test func aBatchStoresItsLinkEventsAndCountsTheRest() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await Self.post(client, "/v1/batch", Self.lifecycle)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == #"{"success":true}"#)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            // The same batch again (an SDK retry): nothing new.
            #expect(try await Self.post(client, "/v1/batch", Self.lifecycle).status == .ok)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 2)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 0)
        #expect(try installation.count("""
            SELECT count(*) FROM events WHERE event_id = 's-click' AND type = 'click' AND ref = 'spring' AND platform = 'ios'
              AND url = 'https://shop.example/p?ref=spring' AND device_id = 'web-1' AND ip_hash IS NOT NULL
            """) == 1)
        #expect(try installation.count("""
            SELECT count(*) FROM events WHERE event_id = 's-install' AND type = 'install' AND ref = 'spring' AND platform = 'ios'
              AND os_version = '17.2' AND app_version = '2.1.0' AND device_id = 'dev-1' AND bot = 0
              AND properties = '{"build":"210","version":"2.1.0"}'
            """) == 1)
    }

    @Test func theWriteKeyIsTakenHowTheSDKsSendIt() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let message = #"{"type":"track","event":"Application Opened","messageId":"k-%@"}"#
        try await installation.application().test(.router) { client in
            // Basic with the key as user name, `writeKey` in the body, or the ingest key's own ways.
            #expect(try await Self.post(client, "/v1/track", message.replacingOccurrences(of: "%@", with: "1")).status == .ok)
            let inBody = #"{"batch":[\#(message.replacingOccurrences(of: "%@", with: "2"))],"writeKey":"\#(TestInstallation.ingestKey)"}"#
            #expect(try await Self.post(client, "/v1/batch", inBody, authorization: nil).status == .ok)
            #expect(try await Self.post(
                client, "/v1/track", message.replacingOccurrences(of: "%@", with: "3"),
                authorization: "Bearer \(TestInstallation.ingestKey)").status == .ok)
            // Wrong or missing: 401 with a reason the SDK can log, nothing stored.
            for authorization in ["Basic " + Data("wrong:".utf8).base64EncodedString(), "Basic !!!", nil] {
                let refused = try await Self.post(client, "/v1/track", message.replacingOccurrences(of: "%@", with: "4"), authorization: authorization)
                #expect(refused.status == .unauthorized)
                #expect(Self.json(refused)["code"] as? String == "unauthorized")
                #expect(Self.json(refused)["success"] as? Bool == false)
            }
            let wrongInBody = #"{"batch":[\#(message.replacingOccurrences(of: "%@", with: "5"))],"writeKey":"nope"}"#
            #expect(try await Self.post(client, "/v1/batch", wrongInBody, authorization: nil).status == .unauthorized)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 3)
    }

    @Test func gzipBatchesAreRead() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let response = try await Self.post(
                client, "/v1/batch", Zlib.gzip(Array(Self.lifecycle.utf8)), extra: [.contentEncoding: "gzip"])
            #expect(response.status == .ok)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 2)
    }

    @Test func badLinkEventsAreQuarantinedTheRestStored() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let big = String(repeating: "x", count: 40_000)
        try await installation.application().test(.router) { client in
            let response = try await Self.post(client, "/v1/batch", """
                {"batch":[
                  {"type":"track","event":"Application Installed","messageId":"q-1","timestamp":"yesterday"},
                  {"type":"track","event":"Deep Link Clicked","messageId":"q-2"},
                  {"event":"Application Opened","messageId":"q-3"},
                  {"type":"track","event":"Application Opened","messageId":"q-4","properties":{"note":"\(big)"}},
                  {"type":"track","event":"Application Opened","messageId":"q-5"}
                ]}
                """)
            #expect(response.status == .ok)
        }
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'q-5'") == 1)
        #expect(try installation.count("SELECT count(*) FROM events") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index = 0 AND code = 'invalid_timestamp' AND field = 'timestamp'") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index = 1 AND code = 'missing_field' AND field = 'ref'") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index = 2 AND field = 'type'") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index = 3 AND code = 'event_too_large'") == 1)
    }

    @Test func requestLevelRefusalsUseTheStatusCodesSDKsUnderstand() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            // An empty batch (an SDK flushing nothing) is fine.
            #expect(try await Self.post(client, "/v1/batch", #"{"batch":[],"sentAt":"2026-11-20T10:00:00Z"}"#).status == .ok)
            let notJSON = try await Self.post(client, "/v1/batch", "batch=1")
            #expect(notJSON.status == .badRequest)
            #expect(Self.json(notJSON)["code"] as? String == "invalid_json")
            let single = try await Self.post(client, "/v1/batch", #"{"type":"track","event":"Application Opened"}"#)
            #expect(single.status == .badRequest && Self.json(single)["code"] as? String == "not_a_batch")
            let array = try await Self.post(client, "/v1/track", #"[{"type":"track"}]"#)
            #expect(array.status == .badRequest && Self.json(array)["code"] as? String == "not_segment")
            let broken = try await Self.post(client, "/v1/track", #"{"type": tru}"#)
            #expect(broken.status == .badRequest && Self.json(broken)["code"] as? String == "invalid_json")
            let bigMessage = #"{"event":"Application Opened","properties":{"note":"\#(String(repeating: "y", count: 40_000))"}}"#
            #expect(try await Self.post(client, "/v1/track", bigMessage).status == .contentTooLarge)
            let messages = (0..<900).map { #"{"type":"track","event":"Application Opened","messageId":"big-\#($0)","properties":{"pad":"\#(String(repeating: "z", count: 500))"}}"# }
            let tooLarge = try await Self.post(client, "/v1/batch", #"{"batch":[\#(messages.joined(separator: ","))]}"#)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(Self.json(tooLarge)["code"] as? String == "body_too_large")
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 0)
        // Every body refused as a whole after it was read is kept (the SDK drops it): not JSON,
        // not Segment, a message too large; a body over the limit is never read.
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index IS NULL AND raw_text = 'batch=1' AND code = 'invalid_json'") == 1)
        #expect(try installation.count(#"SELECT count(*) FROM quarantine WHERE event_index IS NULL AND raw_text = '{"type": tru}' AND code = 'invalid_json'"#) == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine WHERE event_index IS NULL AND code IN ('not_a_batch', 'not_segment', 'message_too_large')") == 3)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 5)
    }

    @Test func everySingleMessageEndpointAnswers() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            for type in SegmentMessageType.allCases {
                for path in ["/v1/\(type.rawValue)", "/v1/\(type.rawValue.prefix(1))"] {
                    let response = try await Self.post(client, path, #"{"messageId":"one-\#(path)","event":"Application Opened","userId":"u"}"#)
                    #expect(response.status == .ok, "\(path)")
                    let preflight = try await client.execute(uri: path, method: .options, headers: [:], body: nil)
                    #expect(preflight.status == .noContent, "\(path)")
                    #expect(preflight.headers[.accessControlAllowOrigin] == "*")
                }
            }
            // Where analytics-swift, analytics-kotlin and analytics.js post their batches.
            let short = try await Self.post(client, "/v1/b", #"{"batch":[{"type":"track","event":"Application Opened","messageId":"one-b"}]}"#)
            #expect(short.status == .ok)
        }
        // Only the track calls are link events.
        let stored = try await installation.reader().read { db in try String.fetchAll(db, sql: "SELECT event_id FROM events WHERE type = 'open' ORDER BY 1") }
        #expect(stored == ["one-/v1/t", "one-/v1/track", "one-b"])
        #expect(try installation.count("SELECT count(*) FROM events") == 3)
    }
}
