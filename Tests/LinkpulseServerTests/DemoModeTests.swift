import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

/// `linkpulse serve --demo`, the real binary: a separate demo database, filled, and a printed
/// dashboard address whose key works.
@Suite(.serialized) struct DemoModeTests {
    @Test func demoFillsItsOwnDatabaseAndPrintsAWorkingDashboardLink() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonProcess(dataDirectory: directory, arguments: ["--demo", "--demo-events", "3000"])
        defer { _ = daemon.terminate() }
        // The link is printed once the server listens.
        var link: String?
        try await eventually(within: .seconds(30), every: .milliseconds(50)) {
            link = daemon.log.split(separator: "\n").first { $0.contains("/dashboard/#key=") }.map { $0.trimmingCharacters(in: .whitespaces) }
            return link != nil
        }
        let printed = try #require(link)
        #expect(printed.hasPrefix("http://127.0.0.1:\(daemon.port)/dashboard/#key=lpr_"))
        let key = String(printed.split(separator: "=").last ?? "")

        // The demo has its own database; the real one is untouched.
        #expect(FileManager.default.fileExists(atPath: directory.appending(path: "demo/linkpulse.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "linkpulse.sqlite").path))

        // The key opens stats with traffic in them, rolled up already.
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        // The default range (the last 7 days) lies inside the demo's month.
        var request = HTTPClientRequest(url: daemon.baseURL + "/v1/stats/summary")
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .seconds(30))
        } catch {
            try? await http.shutdown()
            throw error
        }
        #expect(response.status.code == 200)
        let body = try await response.body.collect(upTo: 1 << 20)
        let metrics = (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["metrics"] as? [String: Any]
        #expect((metrics?["clicks"] as? Int ?? 0) > 0)
        try await http.shutdown()
    }
}
