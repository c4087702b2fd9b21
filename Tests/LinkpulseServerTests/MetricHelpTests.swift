import Foundation
@testable import LinkpulseServer
import TestSupport
import Testing

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
