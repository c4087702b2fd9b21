import Foundation
import Synchronization

/// A child process started with `posix_spawn`, its output appended to a file. Every child of
/// the tests (daemons, commands, SDK scripts, chromedriver) is launched this way, not with
/// Foundation's `Process`, whose `run()` now and then crashed the whole test process (SIGSEGV
/// in a `memmove` inside `run()`, seen in CI and here, even with launches made one at a time).
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable`; standard output goes to the file `output` (appended), standard
    /// error to `errors` (nil: the same file).
    public init(
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
    public func status(wait: Bool) -> Int32? {
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

    public var isRunning: Bool { status(wait: false) == nil }

    /// A command that exited with a status other than 0, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `path` with `arguments` to its end and returns its standard output; throws
    /// `Failure` (with both outputs) when it exits with another status than 0.
    public static func run(_ path: String, _ arguments: [String]) throws -> String {
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("linkpulse-run-\(UUID().uuidString)")
        let outPath = outputs.path + ".out"
        let errPath = outputs.path + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let status = try ChildProcess(executable: path, arguments: arguments, output: outPath, errors: errPath).status(wait: true)
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) failed (\(status ?? -1)): \(out) \(err)")
        }
        return out
    }
}
