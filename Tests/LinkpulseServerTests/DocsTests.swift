import Foundation
import Testing
import TestSupport

/// The README and `docs/*.md` as a reader meets them: every relative link and anchor leads
/// somewhere, and every example marked `<!-- run -->` runs against a live daemon and answers
/// as the block marked `<!-- answer -->` after it shows.
///
/// An answer block is a pattern: its lines must appear in the output in order (other lines may
/// come between them), `…` stands for any text, and spaces stand for any white space, so a JSON
/// answer may be wrapped for reading. A runnable block must also end with status 0.
@Suite struct DocsTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The README first (its examples make the keys and traffic of a new user), then every page.
    static var pages: [URL] {
        let docs = root.appending(path: "docs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
        return [root.appending(path: "README.md")]
            + names.filter { $0.hasSuffix(".md") }.sorted().map { docs.appending(path: $0) }
    }

    @Test func everyRelativeLinkAndAnchorLeadsSomewhere() throws {
        var broken: [String] = []
        var checked = 0
        for page in Self.pages {
            let document = try MarkdownDocument(contentsOf: page)
            for link in document.links where !link.isExternal {
                checked += 1
                let (path, anchor) = link.pathAndAnchor
                let target = path.isEmpty ? page : page.deletingLastPathComponent().appending(path: path).standardizedFileURL
                guard FileManager.default.fileExists(atPath: target.path) else {
                    broken.append("\(page.lastPathComponent): \(link.target) (no such file)")
                    continue
                }
                if let anchor {
                    let anchors = try MarkdownDocument(contentsOf: target).anchors
                    if !anchors.contains(anchor) { broken.append("\(page.lastPathComponent): \(link.target) (no such heading)") }
                }
            }
        }
        #expect(checked > 50, "the pages link to each other")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func headingsMakeTheAnchorsGitHubMakes() {
        #expect(MarkdownDocument.anchor(of: "4. Health") == "4-health")
        #expect(MarkdownDocument.anchor(of: "`POST /v1/resolve`") == "post-v1resolve")
        #expect(MarkdownDocument.anchor(of: "Flags of `linkpulse serve`") == "flags-of-linkpulse-serve")
        #expect(MarkdownDocument.anchor(of: "Segment and RudderStack SDKs") == "segment-and-rudderstack-sdks")
    }

    @Test func anAnswerPatternMatchesWhatItShowsAndNothingElse() {
        let shown = """
            HTTP/1.1 202 Accepted
            {"accepted":1,"duplicates":0,
             "errors":[],"rejected":0}
            """
        let pattern = RunnableExample.pattern(ofAnswer: shown)
        let output = "HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\n\r\n{\"accepted\":1,\"duplicates\":0,\"errors\":[],\"rejected\":0}"
        #expect(RunnableExample.matches(output, pattern))
        #expect(!RunnableExample.matches(output.replacingOccurrences(of: "202", with: "400"), pattern))
        #expect(!RunnableExample.matches(output.replacingOccurrences(of: "\"accepted\":1", with: "\"accepted\":0"), pattern))
        let elided = RunnableExample.pattern(ofAnswer: #"{"match_type":"install_referrer",…,"ref":"…"}"#)
        #expect(RunnableExample.matches(#"{"match_type":"install_referrer","certain":true,"ref":"ab12cd"}"#, elided))
        #expect(!RunnableExample.matches(#"{"match_type":"organic","certain":false,"ref":null}"#, elided))
    }

    @Test func everyRunnableExampleAnswersAsShown() async throws {
        let work = FileManager.default.temporaryDirectory.appending(path: "linkpulse-docs-\(UUID().uuidString)")
        let data = work.appending(path: "data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // The examples call the binary where ops/serve.sh builds it.
        let release = work.appending(path: ".build/release")
        try FileManager.default.createDirectory(at: release, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: release.appending(path: "linkpulse"), withDestinationURL: DaemonProcess.binary)

        // Hosted links on, with the example configuration the links page shows.
        let daemon = try DaemonProcess(
            dataDirectory: data, arguments: ["--links-config", Self.root.appending(path: "ops/links.example.json").path])
        defer { _ = daemon.terminate() }
        // Pages after the README read keys of their own from the environment, as a reader who
        // has made them would.
        var environment = ProcessInfo.processInfo.environment
        for kind in ["ingest", "read", "admin"] {
            let printed = try ChildProcess.run(
                DaemonProcess.binary.path, ["keys", "create", "--kind", kind, "--name", "docs", "--data-dir", data.path])
            environment["\(kind.uppercased())_KEY"] = printed.split(separator: "\n").last.map(String.init)
        }

        var examples = 0
        for page in Self.pages {
            let runnable = try MarkdownDocument(contentsOf: page).runnableExamples
            guard !runnable.isEmpty else { continue }
            examples += runnable.count
            let pageEnvironment = page.lastPathComponent == "README.md" ? environment.filter { !$0.key.hasSuffix("_KEY") } : environment
            let port = daemon.port
            let outcomes = try await onThreadOfItsOwn {
                try RunnableExample.run(runnable, in: work, port: port, environment: pageEnvironment)
            }
            for (example, outcome) in zip(runnable, outcomes) {
                let place = "\(page.lastPathComponent):\(example.line)"
                #expect(outcome.status == 0, "\(place) ended with status \(outcome.status):\n\(outcome.output)")
                if let answer = example.answer {
                    #expect(
                        RunnableExample.matches(outcome.output, RunnableExample.pattern(ofAnswer: answer)),
                        "\(place) answered\n\(outcome.output)\nwhere the page shows\n\(answer)")
                }
            }
        }
        #expect(examples >= 8, "the README and the pages show runnable examples")
    }
}

/// A Markdown file read for its links, headings and marked examples (outside code blocks only).
struct MarkdownDocument {
    struct Link {
        var target: String
        var isExternal: Bool { target.contains("://") || target.hasPrefix("mailto:") }
        var pathAndAnchor: (String, String?) {
            guard let hash = target.firstIndex(of: "#") else { return (target, nil) }
            return (String(target[..<hash]), String(target[target.index(after: hash)...]))
        }
    }

    var links: [Link] = []
    var anchors: Set<String> = []
    var runnableExamples: [RunnableExample] = []

    init(contentsOf url: URL) throws {
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var index = 0
        var pendingRun: (line: Int, code: String)?
        var marker: String?
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("```") {
                var body: [String] = []
                index += 1
                while index < lines.count, !lines[index].hasPrefix("```") {
                    body.append(lines[index])
                    index += 1
                }
                let text = body.joined(separator: "\n")
                if marker == "run" {
                    if let pending = pendingRun { runnableExamples.append(RunnableExample(line: pending.line, code: pending.code)) }
                    pendingRun = (index - body.count, text)
                } else if marker == "answer", let pending = pendingRun {
                    runnableExamples.append(RunnableExample(line: pending.line, code: pending.code, answer: text))
                    pendingRun = nil
                }
                marker = nil
                index += 1
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "<!-- run -->" { marker = "run" } else if trimmed == "<!-- answer -->" { marker = "answer" } else if !trimmed.isEmpty { marker = nil }
            if line.hasPrefix("#") {
                let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
                anchors.insert(Self.anchor(of: title))
            }
            links += Self.links(in: line)
            index += 1
        }
        if let pending = pendingRun { runnableExamples.append(RunnableExample(line: pending.line, code: pending.code)) }
    }

    /// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
    static func anchor(of title: String) -> String {
        String(title.lowercased().compactMap { c -> Character? in
            if c.isLetter || c.isNumber || c == "-" || c == "_" { return c }
            return c == " " ? "-" : nil
        })
    }

    /// The targets of `[text](target)` in a line, code spans left out.
    static func links(in line: String) -> [Link] {
        var text = ""
        var inCode = false
        for c in line {
            if c == "`" { inCode.toggle(); continue }
            if !inCode { text.append(c) }
        }
        var found: [Link] = []
        var rest = text[...]
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = after[..<close].split(separator: " ").first.map(String.init) ?? ""
            if !target.isEmpty { found.append(Link(target: target)) }
            rest = after[close...]
        }
        return found
    }
}

/// A shell example of the docs, with the answer the page shows for it.
struct RunnableExample: Sendable {
    var line: Int
    var code: String
    var answer: String?

    struct Outcome: Sendable {
        var status: Int32
        var output: String
    }

    /// Runs a page's examples in one bash session, in order (a variable one sets is there for
    /// the next), in `directory`, against the daemon on `port` where a page says 8080.
    static func run(_ examples: [RunnableExample], in directory: URL, port: Int, environment: [String: String]) throws -> [Outcome] {
        var script = "cd '\(directory.path)' || exit 99\nset -o pipefail\n"
        for (number, example) in examples.enumerated() {
            let code = example.code.replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
            script += "echo '@@example \(number)@@'\n\(code)\necho \"@@status $?@@\"\n"
        }
        let scriptFile = directory.appending(path: "examples-\(UUID().uuidString).sh")
        let outputFile = directory.appending(path: "examples-\(UUID().uuidString).out")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        let status = try ChildProcess(
            executable: "/bin/bash", arguments: [scriptFile.path], environment: environment, output: outputFile.path
        ).status(wait: true)
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        var outcomes: [Outcome] = []
        for number in examples.indices {
            guard let start = output.range(of: "@@example \(number)@@\n") else {
                outcomes.append(Outcome(status: status ?? -1, output: "(never reached)\n\(output)"))
                continue
            }
            let rest = output[start.upperBound...]
            guard let end = rest.range(of: "@@status "), let close = rest[end.upperBound...].range(of: "@@") else {
                outcomes.append(Outcome(status: status ?? -1, output: String(rest)))
                continue
            }
            let code = Int32(rest[end.upperBound..<close.lowerBound]) ?? -1
            outcomes.append(Outcome(status: code, output: String(rest[..<end.lowerBound])))
        }
        return outcomes
    }

    /// The regular expression an answer block stands for.
    static func pattern(ofAnswer answer: String) -> String {
        answer.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { line in
                line.split(separator: "…", omittingEmptySubsequences: false).map { part in
                    part.split(separator: " ", omittingEmptySubsequences: false)
                        .map { NSRegularExpression.escapedPattern(for: String($0)) }.joined(separator: "\\s*")
                }.joined(separator: "[^\\n]*?")
            }
            .joined(separator: "[\\s\\S]*?")
    }

    static func matches(_ output: String, _ pattern: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return false }
        return expression.firstMatch(in: output, range: NSRange(output.startIndex..., in: output)) != nil
    }
}
