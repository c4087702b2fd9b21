import AsyncHTTPClient
import Foundation
import GRDB
import LinkpulseDomain
import LinkpulseStore
import TestSupport
import Testing

/// The audience data of a real daemon process: an MMDB file named with `--geoip`, read again
/// on `SIGHUP` without a restart, and a named file that cannot be read stopping the start.
@Suite struct AudienceReloadTests {
    static let script = SegmentSDKTests.repository.appending(path: "Tests/audience/write_mmdb.py")

    /// Writes an MMDB file of `networks` (CIDR → country) with mmdb-writer (waited for on a
    /// thread of its own, not on the cooperative pool).
    static func writeMMDB(_ path: URL, type: String, _ networks: [String: String]) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: SegmentSDKTests.python.path),
            "the tests' Python environment is missing: run ops/install-deps.sh test (it creates .build/sdk-venv)")
        let arguments = [script.path, path.path, type] + networks.map { "\($0.key)=\($0.value)" }
        let status = try await onThreadOfItsOwn {
            try ChildProcess(executable: SegmentSDKTests.python.path, arguments: arguments, output: "/dev/null", errors: "/dev/null").status(wait: true)
        }
        #expect(status == 0)
    }

    /// The stored audience of the event `id`, read from the daemon's events file.
    static func audience(of id: String, in directory: URL) throws -> AudienceDimensions {
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let queue = try DatabaseQueue(path: directory.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        defer { try? queue.close() }
        return AudienceDimensions(stored: try queue.read { db in try String.fetchOne(db, sql: "SELECT audience FROM events WHERE event_id = ?", arguments: [id]) })
    }

    static func readinessDetail(_ http: HTTPClient, _ daemon: DaemonProcess) async throws -> String {
        let answer = try await LiveHTTP.send(http, daemon.baseURL + "/readyz", method: .GET)
        let checks = (try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["checks"] as? [String: Any]
        return (checks?["audience_data"] as? [String: Any])?["detail"] as? String ?? ""
    }

    @Test func anMMDBFileIsReadAndReadAgainOnSIGHUP() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-audience-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let mmdb = data.appending(path: "countries.mmdb")
        try await Self.writeMMDB(mmdb, type: "Test-Before", ["81.2.69.0/24": "GB", "2a00:1450::/32": "DE"])
        let (ingestKey, _) = try LiveHTTP.keys(data)
        let daemon = try DaemonProcess(dataDirectory: data, arguments: ["--geoip", mmdb.path])
        defer { _ = daemon.terminate() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await Self.reload(http, daemon, data: data, mmdb: mmdb, ingestKey: ingestKey)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    static func reload(_ http: HTTPClient, _ daemon: DaemonProcess, data: URL, mmdb: URL, ingestKey: String) async throws {
        #expect(try await Self.readinessDetail(http, daemon).contains("MMDB Test-Before"))
        let before = #"[{"id":"before-v4","type":"click","ref":"r","ip":"81.2.69.160"},{"id":"before-mapped","type":"click","ref":"r","ip":"::ffff:81.2.69.7"},"#
            + #"{"id":"before-v6","type":"click","ref":"r","ip":"2a00:1450:4001:81b::200e"},{"id":"before-none","type":"click","ref":"r","ip":"192.0.2.1"}]"#
        #expect(try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: ingestKey, body: before).status == 202)
        #expect(try Self.audience(of: "before-v4", in: data).country == "GB")
        #expect(try Self.audience(of: "before-mapped", in: data).country == "GB")
        #expect(try Self.audience(of: "before-v6", in: data).country == "DE")
        #expect(try Self.audience(of: "before-none", in: data).country == "")

        // New data in place, then SIGHUP: the daemon reads it without a restart.
        try await Self.writeMMDB(mmdb, type: "Test-After", ["81.2.69.0/24": "IE"])
        kill(daemon.process.pid, SIGHUP)
        #expect(try await eventually { try await Self.readinessDetail(http, daemon).contains("MMDB Test-After") })
        let after = #"[{"id":"after-v4","type":"click","ref":"r","ip":"81.2.69.160"}]"#
        #expect(try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: ingestKey, body: after).status == 202)
        #expect(try Self.audience(of: "after-v4", in: data).country == "IE")
        #expect(daemon.process.isRunning)

        // A reload that fails keeps what was loaded.
        try Data("not a database".utf8).write(to: mmdb)
        kill(daemon.process.pid, SIGHUP)
        #expect(try await eventually { daemon.log.contains("the reload kept what was loaded before") })
        let kept = #"[{"id":"kept-v4","type":"click","ref":"r","ip":"81.2.69.160"}]"#
        #expect(try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: ingestKey, body: kept).status == 202)
        #expect(try Self.audience(of: "kept-v4", in: data).country == "IE")
    }

    @Test func aNamedFileThatCannotBeReadStopsTheStart() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-audience-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let log = data.appending(path: "serve.log")
        let child = try ChildProcess(
            executable: DaemonProcess.binary.path,
            arguments: ["serve", "--data-dir", data.path, "--port", "0", "--geoip", data.appending(path: "missing.mmdb").path], output: log.path)
        // A daemon that started anyway would never end by itself: it is stopped, and the test fails.
        let ended = try await eventually(within: .seconds(60)) { !child.isRunning }
        if !ended { kill(child.pid, SIGKILL) }
        #expect(ended)
        let status = child.status(wait: false)
        #expect(status != nil && status != 0)
        let output = DaemonProcess.read(log)
        #expect(output.contains("--geoip") && output.contains("missing.mmdb"), "\(output)")
    }
}
