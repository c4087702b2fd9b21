import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` server (installed by
/// `ops/install-deps.sh test`), initialised into a temporary directory, listening on a free
/// loopback port, stopped when the test process exits. Under root (as CI runs) the server runs
/// as `nobody`, since PostgreSQL refuses to run as root.
///
/// One cluster serves the whole test process (`shared`); each test makes a database of its own
/// (`makeDatabase`). Clusters left behind by a test process that died are stopped and removed
/// when the next one starts.
public final class PostgresTestCluster: Sendable {
    /// The process's cluster, started on first use; the error says what is missing.
    public static let shared: Result<PostgresTestCluster, any Error> = Result { try PostgresTestCluster() }

    /// The superuser every test connects as (trust authentication on loopback).
    public static let user = "linkpulse"

    public let port: Int
    public let directory: URL
    let binaries: URL

    /// Where clusters live: one `linkpulse-pg-*` directory each, under the system's temp directory.
    static let parent = URL(fileURLWithPath: NSTemporaryDirectory())

    private init() throws {
        binaries = try Self.serverBinaries()
        Self.removeAbandoned(binaries: binaries)
        directory = Self.parent.appendingPathComponent("linkpulse-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "\(getpid())".write(to: directory.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        if getuid() == 0 { try Self.run("/bin/chown", ["-R", "nobody:nogroup", directory.path]) }
        let data = directory.appendingPathComponent("data").path
        _ = try Self.runServerTool(binaries: binaries, "initdb", ["-D", data, "-U", Self.user, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        let port = try Self.freePort()
        self.port = port
        _ = try Self.runServerTool(binaries: binaries, "pg_ctl", [
            "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60",
            "-o", "-p \(port) -c listen_addresses=127.0.0.1 -k \(directory.path) -c max_connections=300 -c shared_buffers=64MB",
            "start",
        ])
        Self.started.withLock { $0.append((binaries, data)) }
        if Self.stopAtExitRegistered.withLock({ registered in defer { registered = true }; return !registered }) {
            atexit { PostgresTestCluster.stopAll() }
        }
    }

    /// `postgres://linkpulse@127.0.0.1:<port>/<database>`.
    public func url(database: String) -> String { "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)" }

    /// Creates an empty database with a new name starting with `prefix` and returns its URL.
    public func makeDatabase(_ prefix: String = "test") throws -> String {
        let name = "\(prefix.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "_" })_\(UInt64.random(in: 0...UInt64.max) % 1_000_000_000_000)"
        try psql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Runs one SQL command as the superuser against `database` (the `postgres` database by
    /// default) with `psql`, and returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try runServerTool("psql", psqlArguments(database) + ["-c", sql])
    }

    /// psql as the superuser on `database`: unaligned, tuples only, stopping at the first error.
    func psqlArguments(_ database: String) -> [String] {
        ["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", database, "-v", "ON_ERROR_STOP=1"]
    }

    /// The names of the columns `sql` answers with, in order, as the server describes the
    /// statement without running it (psql's `\gdesc`; its parameters stay unbound).
    public func columnNames(of sql: String, database: String) throws -> [String] {
        let file = FileManager.default.temporaryDirectory.appending(path: "linkpulse-gdesc-\(UUID().uuidString).sql")
        defer { try? FileManager.default.removeItem(at: file) }
        try (sql + "\n\\gdesc\n").write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let described = try runServerTool("psql", psqlArguments(database) + ["-f", file.path])
        return described.split(separator: "\n").compactMap { $0.split(separator: "|", omittingEmptySubsequences: false).first.map(String.init) }
    }

    /// Runs one of the server's programs, as `nobody` when this process is root.
    @discardableResult
    func runServerTool(_ name: String, _ arguments: [String]) throws -> String {
        try Self.runServerTool(binaries: binaries, name, arguments)
    }

    static func runServerTool(binaries: URL, _ name: String, _ arguments: [String]) throws -> String {
        let tool = binaries.appendingPathComponent(name).path
        if getuid() == 0 { return try run("/usr/sbin/runuser", ["-u", "nobody", "--", tool] + arguments) }
        return try run(tool, arguments)
    }

    /// The directory of Debian's PostgreSQL server programs (the newest version installed).
    static func serverBinaries() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        throw ClusterError(description: "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/initdb): run ops/install-deps.sh test")
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError(description: "could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops and removes clusters whose test process is gone.
    static func removeAbandoned(binaries: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix("linkpulse-pg-") {
            let dir = parent.appendingPathComponent(name)
            let owner = (try? String(contentsOf: dir.appendingPathComponent("owner.pid"), encoding: .utf8)).flatMap { Int32($0) }
            if let owner, kill(owner, 0) == 0 || errno == EPERM { continue }
            _ = try? runServerTool(binaries: binaries, "pg_ctl", ["-D", dir.appendingPathComponent("data").path, "-m", "immediate", "stop"])
            try? FileManager.default.removeItem(at: dir)
        }
    }

    private static let started = Mutex<[(binaries: URL, data: String)]>([])
    private static let stopAtExitRegistered = Mutex(false)

    /// Stops every cluster this process started and removes its files.
    static func stopAll() {
        for cluster in started.withLock({ $0 }) {
            _ = try? runServerTool(binaries: cluster.binaries, "pg_ctl", ["-D", cluster.data, "-m", "immediate", "stop"])
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: cluster.data).deletingLastPathComponent())
        }
    }

    /// Runs `path` with `arguments` to its end (as a `ChildProcess`, outputs through files);
    /// its standard output, or an error with both outputs.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> String {
        do {
            return try ChildProcess.run(path, arguments)
        } catch let failure as ChildProcess.Failure {
            throw ClusterError(description: failure.description)
        }
    }

    public struct ClusterError: Error, CustomStringConvertible {
        public var description: String
    }
}

