import AsyncHTTPClient
import Foundation
import LinkpulseDomain
import NIOCore
import Testing

/// `/v1/resolve` against the real binary, killed with SIGKILL between the click and the app's
/// first launch: the acknowledged click survives, and the answers after restarts stay the same.
@Suite(.serialized) struct ResolveCrashTests {
    static func post(_ http: HTTPClient, _ url: String, key: String, _ body: String) async throws -> (status: Int, body: String) {
        let answer = try await LiveHTTP.send(http, url, key: key, body: body)
        return (answer.status, answer.body)
    }

    @Test func aClickAcknowledgedBeforeAKillIsFoundByTheResolveAfterIt() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-resolve-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let key = try LiveHTTP.createKey(.ingest, in: data)
        var daemon = try DaemonProcess(data: data)
        let agent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
        let click = try await Self.post(http, daemon.baseURL + "/v1/events", key: key, #"""
            {"id":"crash-click","type":"click","ref":"k9","campaign":"crash","platform":"android","user_agent":"\#(agent)",
             "url":"https://go.example/k9?deep_link_value=after-crash"}
            """#)
        #expect(click.status == 202)
        daemon.kill9()

        daemon = try DaemonProcess(data: data)
        let install = #"{"id":"crash-install","type":"install","platform":"android","user_agent":"\#(agent)","install_referrer":"lp_click=crash-click"}"#
        let first = try await Self.post(http, daemon.baseURL + "/v1/resolve", key: key, install)
        #expect(first.status == 200, "\(first.body)")
        #expect(first.body.contains(#""match_type":"install_referrer""#) && first.body.contains(#""value":"after-crash""#))
        // Killed again right after answering: the answer was durable with its event.
        daemon.kill9()
        daemon = try DaemonProcess(data: data)
        let again = try await Self.post(http, daemon.baseURL + "/v1/resolve", key: key, install)
        #expect(again.status == 200 && again.body == first.body)
        #expect(daemon.terminate() == 0)
        try await http.shutdown()
    }
}
