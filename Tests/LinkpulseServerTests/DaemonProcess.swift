import Foundation
import Synchronization

/// A value behind a lock, shareable between tasks and threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A child process started with `posix_spawn`, its output appended to a file. Every child of
/// the tests (daemons, commands, SDK scripts, chromedriver) is launched this way, not with
/// Foundation's `Process`, whose `run()` now and then crashed the whole test process (SIGSEGV
/// in a `memmove` inside `run()`, seen in CI and here, even with launches made one at a time).
final class ChildProcess: Sendable {
    let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable`; standard output goes to the file `output` (appended), standard
    /// error to `errors` (nil: the same file).
    init(
        executable: String, arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        output: String, errors: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
        self.pid = pid
    }

    /// The exit status (128 + the signal for a process a signal ended), or nil while it runs;
    /// with `wait`, blocks until it has exited. -1 when someone else reaped it.
    func status(wait: Bool) -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            var reaped: pid_t
            repeat { reaped = waitpid(pid, &raw, wait ? 0 : WNOHANG) } while reaped == -1 && errno == EINTR
            if reaped == -1 && errno == ECHILD {
                known = -1
                return -1
            }
            guard reaped == pid else { return nil }
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            known = status
            return status
        }
    }

    var isRunning: Bool { status(wait: false) == nil }
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

        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            Thread.sleep(forTimeInterval: 0.02)
            found = Self.listeningPort(in: Self.read(logFile))
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
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
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
