import Foundation
import Synchronization
import TestSupport

/// A value behind a lock, shareable between tasks and threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// The real `linkpulse` binary, started as a child process over a data directory, for tests
/// that need a real process: crashes, signals, restarts. Its output goes to a file that `log`
/// reads (a file, not a pipe with a readability handler: Foundation's handlers on Linux race
/// with the process ending, and several of these run side by side).
final class DaemonProcess: Sendable {
    let process: ChildProcess
    let logFile: URL
    let port: Int

    /// The binary the test build already has, next to the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "linkpulse")
    }

    /// Starts `linkpulse serve --port 0` and waits until it says which port it listens on.
    init(dataDirectory: URL, arguments extra: [String] = [], environment: [String: String] = [:]) throws {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        logFile = FileManager.default.temporaryDirectory.appending(path: "linkpulse-daemon-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = try ChildProcess(
            executable: Self.binary.path, arguments: ["serve", "--port", "0", "--data-dir", dataDirectory.path] + extra,
            environment: env, output: logFile.path)

        var found: Int?
        let (child, log) = (process, logFile)
        eventuallyBlocking(within: .seconds(60)) {
            found = Self.listeningPort(in: Self.read(log))
            return found != nil || !child.isRunning
        }
        guard let found else {
            kill(process.pid, SIGKILL)
            _ = process.status(wait: true)
            throw DaemonError.didNotStart(Self.read(logFile))
        }
        port = found
    }

    deinit { try? FileManager.default.removeItem(at: logFile) }

    static func listeningPort(in log: String) -> Int? {
        for line in log.split(separator: "\n") where line.contains("listening") && line.contains("port=") {
            let digits = line.split(separator: "port=")[1].prefix { $0.isNumber }
            if let port = Int(digits) { return port }
        }
        return nil
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// SIGKILL: no chance to flush or clean up.
    func kill9() {
        // A reaped pid may already belong to another process: signal only a live child.
        guard process.isRunning else { return }
        kill(process.pid, SIGKILL)
        _ = process.status(wait: true)
    }

    /// SIGTERM, then waits for the exit status (nil when it did not exit within `timeout`).
    func terminate(timeout: TimeInterval = 30) -> Int32? {
        if let status = process.status(wait: false) { return status }
        kill(process.pid, SIGTERM)
        eventuallyBlocking(within: .seconds(timeout)) { !process.isRunning }
        if let status = process.status(wait: false) { return status }
        kill(process.pid, SIGKILL)
        _ = process.status(wait: true)
        return nil
    }

    /// Everything the process has printed so far.
    var log: String { Self.read(logFile) }

    static func read(_ file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
}

enum DaemonError: Error, CustomStringConvertible {
    case didNotStart(String)

    var description: String {
        switch self {
        case .didNotStart(let log): "linkpulse did not start listening. Output:\n\(log)"
        }
    }
}
