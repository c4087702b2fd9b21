import AsyncHTTPClient
import Foundation
import TestSupport
import GRDB
import LinkpulseDomain
import LinkpulseStore
import NIOCore
import NIOHTTP1
import Testing

/// One answer of a live daemon.
struct LiveAnswer {
    var status: Int
    var retryAfter: String?
    var body: String
}

/// Requests to a daemon started as a child process (`DaemonProcess`).
enum LiveHTTP {
    static func send(
        _ http: HTTPClient, _ url: String, method: HTTPMethod = .POST, key: String? = nil, body: String? = nil
    ) async throws -> LiveAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 22)
        return LiveAnswer(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"), body: String(buffer: bytes))
    }

    /// An ingest and a read key made with `linkpulse keys create` in the installation under
    /// `directory` (before its daemon starts, so the daemon loads them at once).
    static func keys(_ directory: URL) throws -> (ingest: String, read: String) {
        (try createKey(.ingest, in: directory), try createKey(.read, in: directory))
    }

    /// A key of `kind` made with `linkpulse keys create` under `directory` (or `--database`
    /// when `database` is given): the last line it prints.
    static func createKey(_ kind: AccessKind, in directory: URL, database: String? = nil, name: String = "test") throws -> String {
        let target = database.map { ["--database", $0] } ?? ["--data-dir", directory.path]
        let created = try command(["keys", "create", "--kind", kind.rawValue, "--name", name] + target)
        guard created.status == 0, let key = created.output.split(separator: "\n").last.map(String.init), key.hasPrefix(kind.prefix) else {
            throw DaemonError.didNotStart("keys create failed: \(created.output)")
        }
        return key
    }

    /// Runs `linkpulse ARGS…` to its end; its exit status and output.
    static func command(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appending(path: "linkpulse-command-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let child = try ChildProcess(executable: DaemonProcess.binary.path, arguments: arguments, output: log.path)
        let status = child.status(wait: true) ?? -1
        return (status, DaemonProcess.read(log))
    }

    /// The ids of the events stored in a data directory, with how many times each is there.
    static func storedIds(_ directory: URL) throws -> [String: Int] {
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let queue = try DatabaseQueue(path: directory.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        defer { try? queue.close() }
        return try queue.read { db in
            var ids: [String: Int] = [:]
            for id in try String.fetchAll(db, sql: "SELECT event_id FROM events") { ids[id, default: 0] += 1 }
            return ids
        }
    }

    /// A body of `count` new clicks and installs (alternating) from a non-bot phone; their ids.
    static func batch(prefix: String, count: Int) -> (ids: [String], body: String) {
        let ids = (0..<count).map { "\(prefix)-\($0)" }
        let agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
        let events = ids.enumerated().map { index, id in
            index % 2 == 0
                ? #"{"id":"\#(id)","type":"click","ref":"ops","campaign":"backup","user_agent":"\#(agent)"}"#
                : #"{"id":"\#(id)","type":"install","ref":"ops","platform":"ios","user_agent":"\#(agent)"}"#
        }
        return (ids, "[" + events.joined(separator: ",") + "]")
    }
}

/// `linkpulse backup` while the daemon ingests, and `linkpulse restore` of it: every event
/// acknowledged before the backup began comes back exactly once and is counted once.
@Suite(.serialized) struct BackupRestoreTests {
    @Test func aBackupTakenUnderIngestRestoresEveryAcknowledgedEventOnceAndCountsItOnce() async throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-backup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let (data, restored, file) = (root.appending(path: "data"), root.appending(path: "restored"), root.appending(path: "linkpulse.backup"))
        let http = HTTPClient.shared
        let keys = try LiveHTTP.keys(data)
        let daemon = try DaemonProcess(data: data)
        defer { daemon.kill9() }  // a failed expectation must not leave it running

        // Ingest runs throughout the backup, one batch after the other.
        let acked = Locked<[String]>([])
        let stop = Locked(false)
        let base = daemon.baseURL
        let load = Task {
            var number = 0
            while !stop.withLock({ $0 }) {
                number += 1
                let batch = LiveHTTP.batch(prefix: "b\(number)", count: 50)
                if let answer = try? await LiveHTTP.send(http, base + "/v1/events", key: keys.ingest, body: batch.body), answer.status == 202 {
                    acked.withLock { $0 += batch.ids }
                }
            }
        }
        try #require(await eventually(within: .seconds(300)) { acked.withLock { $0.count } >= 2_000 }, "the load was not acknowledged")
        let ackedBefore = acked.withLock { $0 }
        let backup = try LiveHTTP.command(["backup", "--data-dir", data.path, "--out", file.path])
        // The load keeps being acknowledged beside and after the backup before it stops.
        let ackedAfter = ackedBefore.count + 500
        try #require(await eventually(within: .seconds(300)) { acked.withLock { $0.count } >= ackedAfter }, "the load stalled beside the backup")
        stop.withLock { $0 = true }
        _ = await load.value
        #expect(backup.status == 0, "\(backup.output)")
        #expect(backup.output.contains("integrity ok"))
        #expect(daemon.terminate() == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "the backup holds the keys")

        // Not into an installation without --force.
        let refused = try LiveHTTP.command(["restore", file.path, "--data-dir", data.path])
        #expect(refused.status != 0 && refused.output.contains("not empty"), "\(refused.output)")

        let restore = try LiveHTTP.command(["restore", file.path, "--data-dir", restored.path])
        #expect(restore.status == 0, "\(restore.output)")
        let ids = try LiveHTTP.storedIds(restored)
        let missing = ackedBefore.filter { ids[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) acknowledged events missing, such as \(missing.prefix(3))")
        #expect(ids.values.allSatisfy { $0 == 1 })
        #expect(try Data(contentsOf: restored.appending(path: "secrets.json")) == Data(contentsOf: data.appending(path: "secrets.json")), "the same hashing secret")

        // The restored installation rebuilds its derived state and counts every event once.
        let again = try DaemonProcess(data: restored)
        defer { again.kill9() }
        let rollup = try await LiveHTTP.send(http, again.baseURL + "/v1/admin/rollup", key: keys.read)
        #expect(rollup.status == 200, "\(rollup.body)")
        let summary = try await LiveHTTP.send(http, again.baseURL + "/v1/stats/summary", method: .GET, key: keys.read)
        let clicks = ids.keys.filter { $0.split(separator: "-").last.flatMap { Int($0) }.map { $0 % 2 == 0 } ?? false }.count
        #expect(summary.body.contains(#""clicks":\#(clicks),"#), "\(summary.body)")
        #expect(summary.body.contains(#""installs":\#(ids.count - clicks),"#), "\(summary.body)")
        #expect(again.terminate() == 0)

        // --force replaces the installation the backup came from, derived files included.
        let replaced = try LiveHTTP.command(["restore", file.path, "--data-dir", data.path, "--force"])
        #expect(replaced.status == 0, "\(replaced.output)")
        #expect(try LiveHTTP.storedIds(data) == ids)
    }

    @Test func restoreRefusesAFileThatIsNoBackup() throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-notbackup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let file = root.appending(path: "random.bin")
        try Data(repeating: 7, count: 4096).write(to: file)
        let result = try LiveHTTP.command(["restore", file.path, "--data-dir", root.appending(path: "d").path])
        #expect(result.status != 0 && result.output.contains("not a Linkpulse backup"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: root.appending(path: "d/linkpulse.sqlite").path))
    }

    /// Flags of this issue's and the pacing's that make no sense are refused before anything
    /// starts, with what to give instead (no data directory is created).
    @Test func nonsenseOperationsFlagsAreRefusedWithTheirFix() throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-flags-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let cases: [([String], String)] = [
            (["--ingest-pacing", "fast"], "--ingest-pacing must be auto, off, or a lag of at least 1s"),
            (["--ingest-pacing", "500ms"], "--ingest-pacing must be auto, off, or a lag of at least 1s"),
            (["--retention-interval", "10ms"], "--retention-interval must be a duration of at least 1s"),
            (["--retention-days=-1"], "--retention-days must be 0"),
            (["--min-free-disk", "lots"], "--min-free-disk must be a size"),
        ]
        for (flags, message) in cases {
            let result = try LiveHTTP.command(["serve", "--data-dir", root.path, "--port", "0"] + flags)
            #expect(result.status != 0 && result.output.contains(message), "\(flags): \(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: root.path))
    }

    @Test func aSecondDaemonAndARestoreAreRefusedWhileADaemonServesTheDirectory() async throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-claimed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appending(path: "data")
        let daemon = try DaemonProcess(data: data)
        defer { daemon.kill9() }
        let second = try LiveHTTP.command(["serve", "--data-dir", data.path, "--port", "0"])
        #expect(second.status != 0 && second.output.contains("another linkpulse serve"), "\(second.output)")
        #expect(second.output.contains("process \(daemon.process.pid)"), "names the daemon that holds it: \(second.output)")
        let file = root.appending(path: "copy.backup")
        #expect(try LiveHTTP.command(["backup", "--data-dir", data.path, "--out", file.path]).status == 0, "a backup is fine beside it")
        let restore = try LiveHTTP.command(["restore", file.path, "--data-dir", data.path, "--force"])
        #expect(restore.status != 0 && restore.output.contains("another linkpulse serve"), "\(restore.output)")
        #expect(daemon.terminate() == 0)
        // Released with the process: the directory can be served, and restored into, again.
        #expect(try LiveHTTP.command(["restore", file.path, "--data-dir", data.path, "--force"]).status == 0)
    }
}

/// A size-limited tmpfs the test mounts (it needs root, as in CI) and unmounts.
struct SmallFilesystem {
    let directory: URL

    /// Whether this process may mount one (root, and a kernel or container that lets it).
    static let available: Bool = {
        guard geteuid() == 0, let probe = try? SmallFilesystem(megabytes: 1) else { return false }
        probe.remove()
        return true
    }()

    init(megabytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-smallfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(megabytes)m") == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: directory)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EPERM)
        }
    }

    func remove() {
        umount2(directory.path, Int32(MNT_DETACH))
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes a file of zeros until `freeBytes` is left (as near as the filesystem allows).
    func fill(leaving freeBytes: Int64, name: String) throws {
        let usage = try DiskUsage.read(directory: directory)
        let size = max(0, usage.freeBytes - freeBytes)
        let handle = try FileHandle(forWritingTo: {
            let file = directory.appending(path: name)
            FileManager.default.createFile(atPath: file.path, contents: nil)
            return file
        }())
        let chunk = Data(count: 1 << 20)
        var written: Int64 = 0
        while written < size {
            let part = chunk.prefix(Int(min(Int64(chunk.count), size - written)))
            try handle.write(contentsOf: part)
            written += Int64(part.count)
        }
        try handle.close()
    }
}

/// The free-space guard on a real, small filesystem: ingest answers 503 with `Retry-After`
/// before SQLite runs out of room, loses nothing it acknowledged, and resumes by itself.
@Suite(.serialized) struct DiskSafetyTests {
    @Test(.enabled(if: SmallFilesystem.available, "skipped: mounting a size-limited tmpfs needs root (CI runs as root)"))
    func ingestStopsBeforeTheDiskIsFullAndResumesWhenThereIsRoomAgain() async throws {
        let filesystem = try SmallFilesystem(megabytes: 96)
        defer { filesystem.remove() }
        let data = filesystem.directory.appending(path: "data")
        let http = HTTPClient.shared
        let keys = try LiveHTTP.keys(data)
        let daemon = try DaemonProcess(
            dataDirectory: data, arguments: ["--min-free-disk", "24MiB"], environment: ["LINKPULSE_LOG_LEVEL": "info"])
        defer { daemon.kill9() }  // a failed expectation must not leave it running
        // About 4 MB above the floor: a few seconds of batches fill it.
        try filesystem.fill(leaving: 28 << 20, name: "filler")

        var acked: [String] = []
        var statuses: [Int: Int] = [:]
        var refusal: LiveAnswer?
        var number = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while refusal == nil, ContinuousClock.now < deadline {
            number += 1
            let batch = LiveHTTP.batch(prefix: "d\(number)", count: 100)
            let answer = try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: keys.ingest, body: batch.body)
            statuses[answer.status, default: 0] += 1
            if answer.status == 202 { acked += batch.ids }
            if answer.status == 503 { refusal = answer }
        }
        let stopped = try #require(refusal, "ingest never refused: \(statuses)")
        #expect(stopped.body.contains(#""code":"insufficient_storage""#) && stopped.retryAfter != nil, "\(stopped.body)")
        #expect(Set(statuses.keys).isSubset(of: [202, 503]), "only 202 and 503: \(statuses)")
        #expect(acked.count >= 1_000)
        let ready = try await LiveHTTP.send(http, daemon.baseURL + "/readyz", method: .GET)
        #expect(ready.status == 503 && ready.retryAfter != nil && ready.body.contains(#""status":"not_ready""#), "\(ready.body)")
        let metrics = try await LiveHTTP.send(http, daemon.baseURL + "/metrics", method: .GET)
        #expect(metrics.body.contains("linkpulse_disk_free_bytes") && metrics.body.contains(#"linkpulse_wal_bytes{file="events"}"#))

        // Room again: ingest takes events again by itself, with nobody restarting anything. The
        // guard reads the disk every second; a debug daemon among the suite's tests side by side
        // (two cores) has taken up to 14 s to accept its first batch after that (its derived work
        // and timers catching up), where alone it takes about a second: the bound is for the
        // loaded case.
        try FileManager.default.removeItem(at: filesystem.directory.appending(path: "filler"))
        let freed = ContinuousClock.now
        var resumed: Duration?
        try await eventually(within: .seconds(60), every: .milliseconds(100)) {
            number += 1
            let batch = LiveHTTP.batch(prefix: "d\(number)", count: 10)
            let answer = try await LiveHTTP.send(http, daemon.baseURL + "/v1/events", key: keys.ingest, body: batch.body)
            #expect(answer.status == 202 || answer.status == 503, "\(answer.body)")
            guard answer.status == 202 else { return false }
            resumed = ContinuousClock.now - freed
            acked += batch.ids
            return true
        }
        let took = try #require(resumed, "ingest did not resume within 60 s")
        print("disk safety: ingest resumed \(took) after space came back")
        #expect(took <= .seconds(30), "resumed after \(took)")
        #expect(try await LiveHTTP.send(http, daemon.baseURL + "/readyz", method: .GET).status == 200)
        #expect(daemon.terminate() == 0)

        let stored = try LiveHTTP.storedIds(data)
        #expect(acked.allSatisfy { stored[$0] == 1 }, "every acknowledged event stored once")
    }
}

/// The units in `ops/systemd/` as systemd itself reads them.
struct SystemdUnitTests {
    static let analyze = "/usr/bin/systemd-analyze"
    static let units = ["linkpulse.service", "linkpulse-backup.service", "linkpulse-backup.timer"]
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "ops/systemd")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: analyze), "skipped: systemd-analyze is not installed (ops/install-deps.sh test installs it)"))
    func theUnitsPassSystemdAnalyzeVerify() throws {
        let daemon = try String(contentsOf: Self.folder.appending(path: "linkpulse.service"), encoding: .utf8)
        for setting in ["User=linkpulse", "StateDirectory=linkpulse", "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n"] {
            #expect(daemon.contains(setting), "\(setting)")
        }
        // verify checks that ExecStart exists: point it at this build's binary.
        let copies = FileManager.default.temporaryDirectory.appending(path: "linkpulse-units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copies) }
        for unit in Self.units {
            let text = try String(contentsOf: Self.folder.appending(path: unit), encoding: .utf8)
            try text.replacingOccurrences(of: "/usr/local/bin/linkpulse", with: DaemonProcess.binary.path)
                .write(to: copies.appending(path: unit), atomically: true, encoding: .utf8)
        }
        let log = copies.appending(path: "verify.log")
        let child = try ChildProcess(
            executable: Self.analyze, arguments: ["verify"] + Self.units.map { copies.appending(path: $0).path }, output: log.path)
        let status = child.status(wait: true)
        let output = DaemonProcess.read(log)
        #expect(status == 0 && output.isEmpty, "\(output)")
    }
}
