import AsyncHTTPClient
import Foundation
import LinkpulseDomain
import TestSupport
import GRDB
import LinkpulseStore
import NIOCore
import NIOHTTP1
import Testing

/// The real Python SDKs of Segment (`segment-analytics-python`) and RudderStack
/// (`rudder-sdk-python`) pointed at a real daemon on loopback, configured as an app team would
/// (host and write key): their lifecycle events show up in the stats, attributed.
/// `ops/install-deps.sh test` installs both into `.build/sdk-venv`.
@Suite(.serialized) struct SegmentSDKTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appending(path: ".build/sdk-venv/bin/python")
    static let script = repository.appending(path: "Tests/sdk/send_with_sdks.py")

    struct SDKRun: Decodable {
        struct Failure: Decodable {
            var status: Int?
            var message: String
        }
        var errors: [Failure]
    }

    /// Runs the script with `arguments`; returns what the SDK reported.
    static func send(_ arguments: [String]) throws -> SDKRun {
        let output = FileManager.default.temporaryDirectory.appending(path: "linkpulse-sdk-\(UUID().uuidString).json")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let process = try ChildProcess(executable: python.path, arguments: [script.path] + arguments, output: output.path, errors: "/dev/null")
        let status = process.status(wait: true)
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(status == 0, "\(arguments): \(text)")
        return try JSONDecoder().decode(SDKRun.self, from: Data(text.split(separator: "\n").last.map { Array($0.utf8) } ?? []))
    }

    static func dayText(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }

    @Test func theRealSDKsEventsAreStoredOnceAndAttributed() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path),
            "the SDKs' Python environment is missing: run ops/install-deps.sh test (it creates .build/sdk-venv)")
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-sdk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let config = data.appending(path: "segment.json")
        try Data(#"{"link_domains":["go.example.com"]}"#.utf8).write(to: config)
        let (ingestKey, readKey) = try LiveHTTP.keys(data)
        let daemon = try DaemonProcess(dataDirectory: data, arguments: ["--segment-config", config.path])
        defer { _ = daemon.terminate() }

        // Segment's SDK sends everything twice (the same message ids: a retried batch);
        // RudderStack's gzips its batches; a wrong write key is refused, not retried.
        let segment = try Self.send(["--sdk", "segment", "--host", daemon.baseURL, "--key", ingestKey, "--prefix", "seg", "--ref", "sdk-seg", "--repeat", "2"])
        #expect(segment.errors.isEmpty, "\(segment.errors.map(\.message))")
        let rudder = try Self.send(["--sdk", "rudder", "--host", daemon.baseURL, "--key", ingestKey, "--prefix", "rud", "--ref", "sdk-rud", "--gzip"])
        #expect(rudder.errors.isEmpty, "\(rudder.errors.map(\.message))")
        let wrong = try Self.send(["--sdk", "segment", "--host", daemon.baseURL, "--key", "not-the-key", "--prefix", "bad", "--ref", "sdk-bad"])
        #expect(wrong.errors.map(\.status) == [401])

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        func request(_ path: String, _ method: HTTPMethod = .GET) async throws -> [String: Any] {
            var request = HTTPClientRequest(url: daemon.baseURL + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(readKey)")
            let response = try await http.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status == .ok, "\(path): \(String(buffer: body))")
            return try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        }
        _ = try await request("/v1/admin/rollup", .POST)
        let now = Date()
        let breakdown = try await request(
            "/v1/stats/breakdown?by=ref&from=\(Self.dayText(now - 86_400))&to=\(Self.dayText(now + 86_400))&limit=100")
        let rows = breakdown["rows"] as? [[String: Any]] ?? []
        // What became of every message the SDKs sent: the screens, identifies and other tracks
        // (three per sending, Segment's twice) are ignored, the repeated link events duplicates.
        let metrics = try await http.execute(HTTPClientRequest(url: daemon.baseURL + "/metrics"), timeout: .seconds(30))
        let exposition = String(buffer: try await metrics.body.collect(upTo: 1 << 22))
        for (outcome, count) in [("stored", 6), ("duplicate", 3), ("ignored", 9), ("rejected", 0)] {
            #expect(exposition.contains(#"linkpulse_segment_messages_total{outcome="\#(outcome)"} \#(count)"#), "\(outcome)")
        }
        // Everything was attributed and counted by the rollup call above.
        for gauge in ["linkpulse_rollup_backlog_events", "linkpulse_attribution_backlog_events"] {
            #expect(exposition.contains("\n\(gauge) 0"), "\(gauge)")
        }
        try await http.shutdown()
        for ref in ["sdk-seg", "sdk-rud"] {
            let metrics = rows.first { $0["key"] as? String == ref }?["metrics"] as? [String: Any] ?? [:]
            let byMatch = metrics["installs_by_match"] as? [String: Any] ?? [:]
            #expect(metrics["clicks"] as? Int == 1, "\(ref): \(metrics)")
            #expect(metrics["opens"] as? Int == 1, "\(ref): \(metrics)")
            #expect(byMatch["ref"] as? Int == 1, "\(ref): \(metrics)")
        }
        #expect(!rows.contains { $0["key"] as? String == "sdk-bad" })

        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let db = try DatabaseQueue(path: data.appending(path: AppDatabase.eventsFileName).path, configuration: readOnly)
        defer { try? db.close() }
        // Three link events per SDK (click, install, open), each once; screens, identifies and
        // other tracks are not events.
        let ids = try await db.read { db in try String.fetchAll(db, sql: "SELECT event_id FROM events ORDER BY event_id") }
        #expect(ids == ["rud-click", "rud-install", "rud-open", "seg-click", "seg-install", "seg-open"])
        let campaigns = try await db.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT campaign || '/' || source || '/' || medium FROM events WHERE type = 'click'")
        }
        #expect(campaigns == ["launch/newsletter/email"])
        #expect(daemon.log.isEmpty || !daemon.log.contains("error"))
    }
}
