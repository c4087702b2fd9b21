import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Hosted links with the real binary: `linkpulse links` beside a running daemon, and taps
/// answered while the daemon is killed (`kill -9`) whose clicks are all on disk afterwards.
@Suite struct HostedLinkCommandTests {
    static let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36"

    /// An installation directory with the example links configuration beside it.
    static func installation() throws -> (data: URL, config: URL, root: URL) {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-links-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let config = root.appending(path: "links.json")
        try Data(contentsOf: OpenAPIContractTests.repository.appending(path: "ops/links.example.json")).write(to: config)
        return (root.appending(path: "data"), config, root)
    }

    /// A client that shows redirects instead of following them.
    static let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// `GET path` on the link domain `host` of the daemon at `base`: status and Location.
    static func visit(_ base: String, _ path: String, host: String = "go.example.com", userAgent: String) async throws -> (status: Int, location: String?) {
        var request = HTTPClientRequest(url: base + path)
        request.headers.replaceOrAdd(name: "Host", value: host)
        request.headers.add(name: "User-Agent", value: userAgent)
        let response = try await http.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "Location"))
    }

    @Test func linksImportedAndMadeBesideARunningDaemonServeAtOnce() async throws {
        let (data, config, root) = try Self.installation()
        defer { try? FileManager.default.removeItem(at: root) }
        let daemon = try DaemonProcess(dataDirectory: data, arguments: ["--links-config", config.path])
        defer { daemon.kill9() }
        let place = ["--data-dir", data.path, "--links-config", config.path]

        let csv = root.appending(path: "links.csv")
        try """
            ref,url,campaign,deep_link_value,ios_preview,social_title
            spring,https://example.com/spring,spring,sale-1,false,"Spring, at last"
            ,https://example.com/made,,,,
            summer,https://example.com/summer,summer,,true,
            """.write(to: csv, atomically: true, encoding: .utf8)
        let imported = try LiveHTTP.command(["links", "import", csv.path] + place)
        #expect(imported.status == 0 && imported.output.contains("imported 3 links"), "\(imported.output)")
        // Taken refs are skipped and counted; a row that cannot be served stops everything.
        let again = try LiveHTTP.command(["links", "import", csv.path] + place)
        #expect(again.status == 0 && again.output.contains("imported 1 links; skipped 2 whose ref is taken"), "\(again.output)")
        try "ref,url\nfine,https://example.com/f\nbad,javascript:alert(1)\n".write(to: csv, atomically: true, encoding: .utf8)
        let refused = try LiveHTTP.command(["links", "import", csv.path] + place)
        #expect(refused.status != 0 && refused.output.contains("line 3, url:") && refused.output.contains("nothing was imported"), "\(refused.output)")
        try "ref,url,colour\nx,https://example.com,red\n".write(to: csv, atomically: true, encoding: .utf8)
        #expect(try LiveHTTP.command(["links", "import", csv.path] + place).output.contains("colour"))

        let made = try LiveHTTP.command(["links", "create", "--url", "https://example.com/w", "--ref", "winter", "--campaign", "winter"] + place)
        #expect(made.status == 0 && made.output.hasSuffix("https://go.example.com/winter\n"), "\(made.output)")
        let listed = try LiveHTTP.command(["links", "list"] + place)
        #expect(!listed.output.contains("fine") && listed.output.split(separator: "\n").filter { $0.contains("https://go.example.com/") }.count == 5, "\(listed.output)")

        // The daemon serves them at once, on its link domains only.
        let spring = try await Self.visit(daemon.baseURL, "/spring", userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64)")
        #expect(spring.status == 302 && spring.location == "https://example.com/spring")
        let winter = try await Self.visit(daemon.baseURL, "/winter", host: "open.example.com:443", userAgent: "Mozilla/5.0 (X11; Linux x86_64)")
        #expect(winter.status == 302 && winter.location == "https://example.com/w")
        #expect(try await Self.visit(daemon.baseURL, "/winter", host: "127.0.0.1", userAgent: "curl/8").status == 404)
        let deleted = try LiveHTTP.command(["links", "delete", "winter"] + place)
        #expect(deleted.status == 0, "\(deleted.output)")
        #expect(try await Self.visit(daemon.baseURL, "/winter", userAgent: "curl/8").status == 410)
        #expect(try LiveHTTP.command(["links", "delete", "winter"] + place).status != 0)
        #expect(daemon.terminate() == 0)
    }

    /// `linkpulse links check-domain --via` against the daemon: its own files pass on both
    /// domains; against a configuration the daemon does not serve (another app id), a host that
    /// is not a link domain, or nothing listening, it exits 1 naming what is wrong.
    @Test func checkDomainPassesTheDaemonsOwnFilesAndNamesWhatIsWrong() async throws {
        let (data, config, root) = try Self.installation()
        defer { try? FileManager.default.removeItem(at: root) }
        let daemon = try DaemonProcess(dataDirectory: data, arguments: ["--links-config", config.path])
        defer { daemon.kill9() }
        let good = try LiveHTTP.command(["links", "check-domain", "--links-config", config.path, "--via", daemon.baseURL])
        #expect(good.status == 0 && good.output.contains("every file is as Apple and Google want it"), "\(good.output)")
        #expect(good.output.components(separatedBy: "ok      /.well-known/apple-app-site-association").count == 3, "\(good.output)")

        let other = root.appending(path: "other.json")
        let text = try String(contentsOf: config, encoding: .utf8)
        try text.replacingOccurrences(of: "com.example.shop\"]", with: "com.example.shop\", \"ABCDE12345.com.example.other\"]")
            .write(to: other, atomically: true, encoding: .utf8)
        let missing = try LiveHTTP.command(["links", "check-domain", "go.example.com", "--links-config", other.path, "--via", daemon.baseURL])
        #expect(missing.status == 1 && missing.output.contains("lacks the app ids ABCDE12345.com.example.other"), "\(missing.output)")
        let stranger = try LiveHTTP.command(["links", "check-domain", "www.example.com", "--links-config", config.path, "--via", daemon.baseURL])
        #expect(stranger.status == 1 && stranger.output.contains("not one of the configuration's domains") && stranger.output.contains("answers 404"), "\(stranger.output)")
        let nobody = try LiveHTTP.command(["links", "check-domain", "go.example.com", "--links-config", config.path, "--via", "http://127.0.0.1:\(try PostgresTestCluster.freePort())"])
        #expect(nobody.status == 1 && nobody.output.contains("cannot be fetched"), "\(nobody.output)")
        #expect(daemon.terminate() == 0)
    }

    /// Taps keep coming while the daemon is killed: every tap that was answered (a redirect with
    /// its click id) has its click stored after the restart, once.
    @Test(.timeLimit(.minutes(3))) func kill9NeverLosesAnAnsweredTap() async throws {
        let (data, config, root) = try Self.installation()
        defer { try? FileManager.default.removeItem(at: root) }
        let place = ["--data-dir", data.path, "--links-config", config.path]
        var daemon = try DaemonProcess(dataDirectory: data, arguments: ["--links-config", config.path])
        let made = try LiveHTTP.command(["links", "create", "--url", "https://example.com/tap", "--ref", "tap"] + place)
        #expect(made.status == 0, "\(made.output)")
        let answered = Locked<[String]>([])
        let base = daemon.baseURL
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while true {
                        guard let visit = try? await Self.visit(base, "/tap", userAgent: Self.android) else { return }
                        guard visit.status == 302, let location = visit.location,
                              let id = location.firstMatch(of: /lp_click=([0-9a-f-]{36})/)?.output.1 else { return }
                        answered.withLock { $0.append(String(id)) }
                    }
                }
            }
            // Killed once some taps were answered, while the others are in flight.
            try await eventually(within: .seconds(120), every: .milliseconds(5)) {
                try #require(daemon.process.isRunning, "the daemon stopped before 200 taps were answered")
                return answered.withLock { $0.count } >= 200
            }
            daemon.kill9()
            try await group.waitForAll()
        }
        daemon = try DaemonProcess(dataDirectory: data, arguments: ["--links-config", config.path])
        #expect(daemon.terminate() == 0)
        let ids = answered.withLock { $0 }
        let stored = try LiveHTTP.storedIds(data)
        #expect(ids.count >= 200 && Set(ids).count == ids.count)
        let lost = ids.filter { stored[$0] == nil }
        #expect(lost.isEmpty, "answered taps without a stored click: \(lost.count) of \(ids.count)")
        #expect(ids.allSatisfy { stored[$0] ?? 0 <= 1 }, "each click once")
    }
}
