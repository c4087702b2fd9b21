import AsyncHTTPClient
import Foundation
import TestSupport
import NIOCore

/// A small W3C WebDriver client for headless Chromium through Debian's `chromedriver`: enough
/// to load pages, type, click, run scripts, read the browser console and take screenshots.
final class WebDriver: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process: ChildProcess
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    let base: String
    private(set) var session = ""

    static var chromedriver: String? {
        ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts chromedriver on a free port and opens a headless browser session (`userAgent`:
    /// the browser's, instead of headless Chromium's own; `arguments`: more of Chromium's).
    static func start(width: Int = 1440, height: Int = 1000, userAgent: String? = nil, arguments: [String] = []) async throws -> WebDriver {
        guard let chromedriver, let chromium else {
            throw Failure(description: "chromium and chromium-driver are not installed (ops/install-deps.sh test installs them)")
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<40_000)
            let process = try ChildProcess(
                executable: chromedriver, arguments: ["--port=\(port)", "--allowed-ips=127.0.0.1"], output: "/dev/null")
            let driver = WebDriver(process: process, base: "http://127.0.0.1:\(port)")
            do {
                try await driver.waitUntilReady()
                try await driver.openSession(chromium: chromium, width: width, height: height, userAgent: userAgent, arguments: arguments)
                return driver
            } catch {
                lastError = error
                await driver.quit()
            }
        }
        throw lastError ?? Failure(description: "chromedriver did not start")
    }

    /// Runs `body` with a fresh browser, which is closed afterwards whatever happens.
    static func with<T>(
        width: Int = 1440, height: Int = 1000, userAgent: String? = nil, arguments: [String] = [], _ body: (WebDriver) async throws -> T
    ) async throws -> T {
        let browser = try await start(width: width, height: height, userAgent: userAgent, arguments: arguments)
        do {
            let result = try await body(browser)
            await browser.quit()
            return result
        } catch {
            await browser.quit()
            throw error
        }
    }

    private init(process: ChildProcess, base: String) {
        self.process = process
        self.base = base
    }

    private func waitUntilReady() async throws {
        let ready = try await eventually(within: .seconds(15), every: .milliseconds(100)) {
            if let status = try? await raw("GET", "/status", nil) as? [String: Any], status["ready"] as? Bool == true { return true }
            guard process.isRunning else { throw Failure(description: "chromedriver exited") }
            return false
        }
        if !ready { throw Failure(description: "chromedriver did not become ready") }
    }

    private func openSession(chromium: String, width: Int, height: Int, userAgent: String?, arguments: [String]) async throws {
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                 "--window-size=\(width),\(height)", "--lang=en-US", "--no-first-run"]
                            + (userAgent.map { ["--user-agent=\($0)"] } ?? []) + arguments,
                    ],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ],
            ],
        ]
        let value = try await raw("POST", "/session", capabilities) as? [String: Any]
        guard let id = value?["sessionId"] as? String else { throw Failure(description: "no session: \(String(describing: value))") }
        session = id
    }

    /// Ends the session and stops chromedriver.
    func quit() async {
        if !session.isEmpty { _ = try? await raw("DELETE", "/session/\(session)", nil) }
        if process.isRunning { kill(process.pid, SIGTERM) }
        // Polled: Foundation's waitUntilExit spins when called from a task on Linux.
        _ = try? await eventually(within: .seconds(5)) { !process.isRunning }
        if process.isRunning { kill(process.pid, SIGKILL) }
        _ = process.status(wait: true)
        try? await http.shutdown()
    }

    /// Sends a WebDriver command; returns its `value`, or throws the driver's error.
    @discardableResult
    func raw(_ method: String, _ path: String, _ body: [String: Any]?) async throws -> Any? {
        var request = HTTPClientRequest(url: base + path)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Content-Type", value: "application/json")
        if let body { request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(buffer: bytes), options: [.fragmentsAllowed]) as? [String: Any]
        let value = object?["value"]
        if response.status.code >= 400 {
            let error = value as? [String: Any]
            throw Failure(description: "\(method) \(path): \(error?["error"] ?? response.status) \(error?["message"] ?? "")")
        }
        return value is NSNull ? nil : value
    }

    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await raw(method, "/session/\(session)\(path)", body)
    }

    func navigate(_ url: String) async throws {
        try await command("POST", "/url", ["url": url])
    }

    /// Runs JavaScript in the page (`arguments[0]`… are `args`) and returns its result.
    @discardableResult
    func script(_ source: String, _ args: [Any] = []) async throws -> Any? {
        try await command("POST", "/execute/sync", ["script": source, "args": args])
    }

    /// The element reference of the first match of a CSS selector.
    func element(_ css: String) async throws -> String {
        let value = try await command("POST", "/element", ["using": "css selector", "value": css]) as? [String: Any]
        guard let id = value?.values.first as? String else { throw Failure(description: "no element \(css)") }
        return id
    }

    /// Clicks like a user (scrolls into view, real pointer events).
    func click(_ css: String) async throws {
        let id = try await element(css)
        try await command("POST", "/element/\(id)/click", [:])
    }

    func type(_ css: String, _ text: String) async throws {
        let id = try await element(css)
        try await command("POST", "/element/\(id)/clear", [:])
        try await command("POST", "/element/\(id)/value", ["text": text])
    }

    /// Waits until `condition` (a JavaScript expression) is true.
    func wait(for condition: String, timeout: Duration = .seconds(60)) async throws {
        if try await eventually(within: timeout, every: .milliseconds(25), { try await script("return Boolean(\(condition));") as? Bool == true }) {
            return
        }
        let state = try? await script("return document.body.dataset.state + ' ' + document.getElementById('status')?.textContent")
        throw Failure(description: "timed out waiting for \(condition) (page: \(String(describing: state)))")
    }

    /// The browser console since the last call (level, message).
    func consoleEntries() async throws -> [(level: String, message: String)] {
        let entries = try await command("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.map { ($0["level"] as? String ?? "", $0["message"] as? String ?? "") }
    }

    func setWindowSize(width: Int, height: Int) async throws {
        try await command("POST", "/window/rect", ["width": width, "height": height])
    }

    /// A PNG of the whole viewport.
    func screenshot() async throws -> Data {
        guard let base64 = try await command("GET", "/screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot")
        }
        return data
    }
}
