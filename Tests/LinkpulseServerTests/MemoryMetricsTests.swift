import AsyncHTTPClient
import Foundation
@testable import LinkpulseServer
import TestSupport
import Testing

/// `/metrics` of a real daemon reports its memory, split as the kernel splits it, and the
/// sizes of what the store keeps in memory, each equal to what the events sent make it.
@Suite(.serialized) struct MemoryMetricsTests {
    /// The samples of a Prometheus text exposition, by name with labels as written.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Whether the store's figures are those of the events sent, and the process figures come
    /// from one reading (a scrape may fall between the job's records of one reading).
    static func settled(_ samples: [String: Double]) -> Bool {
        let parts = ["anonymous", "file", "shared"].compactMap { samples[#"linkpulse_memory_resident_bytes{kind="\#($0)"}"#] }
        return samples["linkpulse_attribution_recent_click_entries"] == 60 && samples["linkpulse_rollup_link_tuples"] == 15
            && parts.count == 3 && parts.reduce(0, +) == samples["process_resident_memory_bytes"]
    }

    @Test func metricsReportTheProcessMemoryAndWhatTheStoreHoldsInIt() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-memory-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let started = ContinuousClock.now
        let keys = try LiveHTTP.keys(data)
        let daemon = try DaemonProcess(dataDirectory: data, arguments: ["--rollup-interval", "1s"])
        defer { daemon.kill9() }
        let http = HTTPClient.shared

        // 30 clicks from 30 addresses, each with a ref (two index entries a click), over
        // 5 refs × 3 campaigns: 15 link tuples.
        let agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
        let clicks = (0..<30).map { i in
            #"{"id":"mem-\#(i)","type":"click","ref":"m\#(i % 5)","campaign":"c\#(i % 3)","ip":"198.51.100.\#(i + 1)","user_agent":"\#(agent)"}"#
        }
        let sent = try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: keys.ingest, body: "[" + clicks.joined(separator: ",") + "]")
        #expect(sent.status == 202, "\(sent.body)")

        var samples: [String: Double] = [:]
        var text = ""
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            text = try await LiveHTTP.send(http, daemon.baseURL + "/metrics", method: .GET).body
            samples = Self.samples(text)
        } while ContinuousClock.now < deadline && !Self.settled(samples)
        try MetricHelpTests.expectPromtoolAccepts(text)

        #expect(samples["linkpulse_attribution_recent_click_entries"] == 60, "\(samples)")
        #expect(samples["linkpulse_attribution_recent_click_capacity"] == 1_000_000)
        #expect(samples["linkpulse_rollup_link_tuples"] == 15)
        // Not yet merged into the id index: that waits for 100,000 ids or for ids a minute old
        // (on a machine loaded enough for the daemon to be up that long, they may be merged).
        let tail = samples["linkpulse_ingest_id_tail_ids"]
        if ContinuousClock.now - started < .seconds(55) {
            #expect(tail == 30)
        } else {
            #expect(tail == 30 || tail == 0, "\(String(describing: tail))")
        }

        let resident = try #require(samples["process_resident_memory_bytes"])
        let anonymous = try #require(samples[#"linkpulse_memory_resident_bytes{kind="anonymous"}"#])
        let file = try #require(samples[#"linkpulse_memory_resident_bytes{kind="file"}"#])
        let shared = try #require(samples[#"linkpulse_memory_resident_bytes{kind="shared"}"#])
        // One reading of /proc/self/status: the kernel's three parts add up to its total.
        #expect(anonymous + file + shared == resident)
        #expect(resident > 10 * 1_048_576 && anonymous > 0 && file > 0)
        #expect(try #require(samples["linkpulse_memory_peak_resident_bytes"]) >= resident)
        #expect(try #require(samples["process_virtual_memory_bytes"]) > resident)
        // Four database files with their WALs, the listening socket, at least.
        #expect(try #require(samples["process_open_fds"]) >= 9)
    }
}

/// Every metric the code makes has a `# HELP` text, and `/metrics` passes Prometheus's own
/// checker (`promtool check metrics`, unpacked by `ops/install-deps.sh test`).
@Suite struct MetricHelpTests {
    static var promtool: String { OpenAPIContractTests.repository.appending(path: ".build/promtool/usr/bin/promtool").path }

    /// `promtool check metrics` finds nothing to say of `exposition`, and each `# TYPE` line
    /// follows its `# HELP` line.
    static func expectPromtoolAccepts(_ exposition: String) throws {
        let lines = exposition.split(separator: "\n")
        for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
            let name = line.split(separator: " ")[2]
            #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "\(name) has no # HELP")
        }
        guard FileManager.default.isExecutableFile(atPath: promtool) else {
            Issue.record("promtool is not unpacked at \(promtool): run ops/install-deps.sh test")
            return
        }
        let file = FileManager.default.temporaryDirectory.appending(path: "linkpulse-metrics-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try exposition.write(to: file, atomically: true, encoding: .utf8)
        let checked = try ChildProcess.run("/bin/sh", ["-c", "\"$0\" check metrics < \"$1\" 2>&1", promtool, file.path])
        #expect(checked.isEmpty, "promtool check metrics: \(checked)")
    }

    /// Names of the metrics the sources make (`label: "linkpulse_…"` or `"process_…"`).
    static func namesInSources() throws -> Set<String> {
        let sources = OpenAPIContractTests.repository.appending(path: "Sources")
        let pattern = try Regex(#"label: "((?:linkpulse|process)_[a-z_]+)""#)
        var names = Set<String>()
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) { names.insert(String(match.output[1].substring ?? "")) }
        }
        return names
    }

    @Test func everyMetricInTheSourcesHasAHelpText() throws {
        let names = try Self.namesInSources()
        #expect(names.count >= 40 && names.contains("linkpulse_link_visits_total"), "\(names.count) names found")
        #expect(names.subtracting(MetricHelp.texts.keys).sorted() == [], "metrics without a help text in MetricHelp")
        #expect(Set(MetricHelp.texts.keys).subtracting(names).sorted() == [], "help texts of metrics no code makes")
    }

    @Test func theHelpLineGoesBeforeEachTypeLine() {
        let text = "# TYPE linkpulse_wal_bytes gauge\nlinkpulse_wal_bytes{file=\"events\"} 3\n# TYPE unknown_thing counter\nunknown_thing 1\n"
        let annotated = String(decoding: MetricHelp.annotate(Array(text.utf8)), as: UTF8.self)
        #expect(annotated == "# HELP linkpulse_wal_bytes \(MetricHelp.texts["linkpulse_wal_bytes"]!)\n" + text)
    }
}
