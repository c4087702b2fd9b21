import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The OpenAPI document against the real daemon: schemathesis (from PyPI, installed by
/// `ops/install-deps.sh test`) generates requests for every operation from the document the
/// daemon serves at `/openapi.json`, with a key of each kind, and checks every answer against it.
@Suite(.serialized) struct OpenAPIContractTests {
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    static var schemathesis: String { repository.appending(path: ".build/sdk-venv/bin/schemathesis").path }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: schemathesis), "skipped: schemathesis is not installed (ops/install-deps.sh test installs it)"))
    func everyAnswerOfTheDaemonMatchesItsOpenAPIDocument() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "linkpulse-openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (ingestKey, readKey, adminKey) = ("lpi_contract_ingest", "lpr_contract_read", "lpa_contract_admin")
        // Hosted links on, so that their operations are answered by their handlers.
        let links = folder.appending(path: "links.json")
        try Data(contentsOf: Self.repository.appending(path: "ops/links.example.json")).write(to: links)
        let daemon = try DaemonProcess(
            dataDirectory: folder.appending(path: "data"),
            arguments: ["--ingest-key", ingestKey, "--read-key", readKey, "--admin-key", adminKey, "--links-config", links.path],
            environment: ["LINKPULSE_LOG_LEVEL": "notice"])
        defer { daemon.kill9() }  // a failed expectation must not leave it running
        // The document the daemon serves is docs/openapi.yaml, read by a YAML parser of its own.
        let served = try await LiveHTTP.send(HTTPClient.shared, daemon.baseURL + "/openapi.json", method: .GET)
        #expect(served.status == 200 && served.body.hasPrefix(#"{"components":"#))

        let config = folder.appending(path: "schemathesis.toml")
        try """
            [auth.openapi.ingestKey]
            bearer = "\(ingestKey)"
            [auth.openapi.readKey]
            bearer = "\(readKey)"
            [auth.openapi.adminKey]
            bearer = "\(adminKey)"
            [auth.openapi.segmentWriteKey]
            username = "\(ingestKey)"
            password = ""
            # Invalid data is also rightly refused with 413 when it is too large to read (a
            # 40 KB resolve body): schemathesis's default list of refusals lacks it.
            [checks.negative_data_rejection]
            expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
            """.write(to: config, atomically: true, encoding: .utf8)
        let log = folder.appending(path: "schemathesis.log")
        // Every check but positive_data_acceptance: the schemas describe shapes, and some
        // shapes they allow are still refused for what they say (an unknown time zone, a date
        // out of range, a click without a ref), with the 400 the document lists.
        let seed = ProcessInfo.processInfo.environment["LINKPULSE_SCHEMATHESIS_SEED"] ?? "20261124"
        let run = try ChildProcess(
            executable: Self.schemathesis,
            arguments: [
                "--no-color", "--config-file", config.path, "run", daemon.baseURL + "/openapi.json",
                "--checks", "all", "--exclude-checks", "positive_data_acceptance",
                "--max-examples", "40", "--seed", seed, "--request-timeout", "20",
            ],
            output: log.path)
        let status = run.status(wait: true)
        let output = DaemonProcess.read(log)
        let summary = output.range(of: "SUMMARY").map { String(output[$0.lowerBound...]) } ?? String(output.suffix(3000))
        #expect(status == 0, "schemathesis found answers that contradict the document (seed \(seed)):\n\(output.suffix(6000))")
        #expect(summary.contains("passed"), "\(summary)")
        #expect(daemon.process.isRunning, "the daemon is still running")
        #expect(daemon.terminate() == 0)
    }
}
