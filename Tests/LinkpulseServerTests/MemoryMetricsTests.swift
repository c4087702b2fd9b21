import AsyncHTTPClient
import Foundation
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

    /// Whether the store's figures are those of the events sent, and the process figures are
    /// one reading (the scrape takes it).
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
        try await eventually(within: .seconds(30), every: .milliseconds(200)) {
            text = try await LiveHTTP.send(http, daemon.baseURL + "/metrics", method: .GET).body
            samples = Self.samples(text)
            return Self.settled(samples)
        }
        try MetricHelpTests.expectPromtoolAccepts(text)

        #expect(samples["linkpulse_attribution_recent_click_entries"] == 60, "\(samples)")
        #expect(samples["linkpulse_attribution_recent_click_capacity"] == 1_000_000)
        #expect(samples["linkpulse_rollup_link_tuples"] == 15)
        // One user agent for the 30 clicks: classified once, then answered from memory.
        #expect(samples[#"linkpulse_user_agent_lookups_total{answer="classified"}"#] == 1, "\(samples)")
        #expect(samples[#"linkpulse_user_agent_lookups_total{answer="remembered"}"#] == 29)
        #expect(samples["linkpulse_user_agent_cache_entries"] == 1)
        #expect(samples["linkpulse_user_agent_cache_capacity"] == 4_096)
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
