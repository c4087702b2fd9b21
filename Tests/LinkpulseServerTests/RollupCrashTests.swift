import Foundation
import GRDB
import TestSupport
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Testing

/// The real `linkpulse rollup` killed with -9 in the middle of its passes, again and again:
/// what it committed plus what the next run adds must equal a rollup done in one go.
@Suite(.serialized) struct RollupCrashTests {
    /// The real `linkpulse rollup` started on the installation's directory with `arguments`.
    static func rollup(_ installation: TestInstallation, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(
            executable: DaemonProcess.binary.path,
            arguments: ["rollup", "--data-dir", installation.directory.path, "--log-level", "error"] + arguments,
            output: "/dev/null")
    }

    @Test func aRollupKilledMidwayNeverCountsTwice() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 20_000, days: 4, refs: 100, campaigns: 5, seed: 11)
        try installation.database.close()

        func rollup(killAfter delay: Duration?) async throws {
            let process = try Self.rollup(installation, ["--batch", "1500"])
            if let delay {
                try await Task.sleep(for: delay)
                kill(process.pid, SIGKILL)
            }
            _ = process.status(wait: true)
        }
        for delay in [300, 700, 1_100, 1_500] { try await rollup(killAfter: .milliseconds(delay)) }
        try await rollup(killAfter: nil)

        let database = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? database.close() }
        #expect(try database.rollups.rolledThroughSeq() == Int64(outcome.stored))
        let query = StatsQuery(fromMs: end - 5 * 86_400_000, toMs: end)
        let afterKills = try await database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true)
        let series = try await database.stats.statsCounts(query, grouping: .buckets([end - 5 * 86_400_000, end - 2 * 86_400_000]), withVisitors: true)
        try database.rollups.resetRollups()
        _ = try await onThreadOfItsOwn { try database.rollups.rollUpAll() }
        #expect(try await database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true) == afterKills)
        #expect(try await database.stats.statsCounts(query, grouping: .buckets([end - 5 * 86_400_000, end - 2 * 86_400_000]), withVisitors: true) == series)
        let total = afterKills.values.reduce(0) { $0 + $1.people.events + $1.bots.events }
        #expect(total == outcome.stored)
    }

    /// `linkpulse rollup --rebuild` (and `--reattribute`) with no daemon on the directory
    /// starts from new derived files instead of emptying them, and counts the same; beside a
    /// daemon (its directory lock held here) it empties them in place, as before; after
    /// retention it refuses and leaves the rollups alone.
    @Test func aRebuildStartsFromNewDerivedFilesOnlyWhenThatIsSafe() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 6_000, days: 3, refs: 60, campaigns: 4, seed: 12)
        _ = try await onThreadOfItsOwn { [database = installation.database] in try database.rollups.rollUpAll() }
        let query = StatsQuery(fromMs: end - 4 * 86_400_000, toMs: end)
        let counts = try await installation.database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        try installation.database.close()

        func rollup(_ arguments: [String]) throws -> Int32? {
            try Self.rollup(installation, arguments).status(wait: true)
        }
        // A table of the test's own in each derived file tells whether the file was made anew.
        func mark(_ name: String) throws {
            try DatabaseQueue(path: installation.directory.appending(path: name).path).write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS test_mark (x INTEGER)")
            }
        }
        func isMarked(_ name: String) throws -> Bool {
            try DatabaseQueue(path: installation.directory.appending(path: name).path).read { db in
                try db.tableExists("test_mark")
            }
        }
        func countsNow() async throws -> [StatsGroupKey: CountsByAudience] {
            let database = try AppDatabase(directory: installation.directory, logger: installation.logger)
            defer { try? database.close() }
            #expect(try database.rollups.rolledThroughSeq() == Int64(outcome.stored))
            return try await database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        }
        let rollups = AppDatabase.rollupFileName, attribution = AppDatabase.attributionFileName

        try mark(rollups)
        try mark(attribution)
        #expect(try rollup(["--rebuild"]) == 0)
        #expect(try !isMarked(rollups), "the rollup file was made anew")
        #expect(try isMarked(attribution), "a rebuild alone keeps the attribution")
        #expect(try await countsNow() == counts)

        try mark(rollups)
        #expect(try rollup(["--rebuild", "--reattribute"]) == 0)
        #expect(try !isMarked(rollups))
        #expect(try !isMarked(attribution), "a replay of attribution starts a new attribution file")
        #expect(try await countsNow() == counts)

        try mark(rollups)
        try mark(attribution)
        do {
            let claim = try DataDirectoryLock(directory: installation.directory)
            #expect(try rollup(["--rebuild", "--reattribute"]) == 0)
            withExtendedLifetime(claim) {}
        }
        #expect(try isMarked(rollups), "beside a daemon the files are emptied in place")
        #expect(try isMarked(attribution))
        #expect(try await countsNow() == counts)

        // Retention has deleted raw events: the rollups hold the only counts of them.
        try await DatabaseQueue(path: installation.directory.appending(path: AppDatabase.eventsFileName).path).write { db in
            try db.execute(sql: "INSERT INTO installation (name, value) VALUES ('raw_horizon_ms', ?)", arguments: [end - 10 * 86_400_000])
        }
        #expect(try rollup(["--rebuild"]) != 0)
        #expect(try isMarked(rollups), "a refused recount leaves the rollup file as it was")
        #expect(try await countsNow() == counts)
    }

    /// A rebuild from new files writes them without waiting for the disk, with a marker beside
    /// them: killed midway, the marker is left and the next open counts the rollups again from
    /// nothing (a machine that stopped might have left them torn), with the same answers. A
    /// marker found while another live process holds the directory is left alone.
    @Test func aRebuildKilledMidwayIsCountedAgain() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 30_000, days: 4, refs: 200, campaigns: 6, seed: 13)
        _ = try await onThreadOfItsOwn { [database = installation.database] in try database.rollups.rollUpAll() }
        let query = StatsQuery(fromMs: end - 5 * 86_400_000, toMs: end)
        let counts = try await installation.database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true)
        try installation.database.close()
        let marker = installation.directory.appending(path: AppDatabase.rebuildMarkerFileName).path
        let rollupFile = installation.directory.appending(path: AppDatabase.rollupFileName).path

        var markersLeft = 0
        for delay in [0, 100, 300] {
            let process = try Self.rollup(installation, ["--rebuild", "--batch", "500"])
            // Killed a moment after the unsynced phase began (a fixed delay from the start
            // fell before it on a loaded machine, where opening the files took longer).
            try await eventually(within: .seconds(60), every: .milliseconds(5)) {
                FileManager.default.fileExists(atPath: marker) || !process.isRunning
            }
            try await Task.sleep(for: .milliseconds(delay))
            // A reaped pid may already belong to another process: signal only a live child.
            if process.isRunning { kill(process.pid, SIGKILL) }
            _ = process.status(wait: true)
            guard FileManager.default.fileExists(atPath: marker) else { continue }
            markersLeft += 1
            try await DatabaseQueue(path: rollupFile).write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS test_mark (x INTEGER)") }
            let database = try AppDatabase(directory: installation.directory, logger: installation.logger)
            #expect(!FileManager.default.fileExists(atPath: marker), "the open takes the marker away")
            #expect(try database.rollups.rolledThroughSeq() == 0, "and counts from nothing")
            _ = try await onThreadOfItsOwn { try database.rollups.rollUpAll() }
            #expect(try database.rollups.rolledThroughSeq() == Int64(outcome.stored))
            #expect(try await database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true) == counts)
            try database.close()
        }
        #expect(markersLeft > 0, "no kill landed during a rebuild: the test checked nothing")

        // Beside a live daemon (the holder of the directory) a marker is not this process's to act on.
        let daemon = try DaemonProcess(dataDirectory: installation.directory)
        FileManager.default.createFile(atPath: marker, contents: Data("1\n".utf8))
        let beside = try AppDatabase(directory: installation.directory, logger: installation.logger)
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(try beside.rollups.rolledThroughSeq() == Int64(outcome.stored))
        try beside.close()
        _ = daemon.terminate()
    }

    /// Two `linkpulse rollup` commands at once on the same events: each pass is written only
    /// on top of the watermark it counted after, so whichever comes second falls back to
    /// counting from the other's watermark, and nothing is counted twice.
    @Test func twoRollupsAtOnceCountEachEventOnce() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 30_000, days: 4, refs: 150, campaigns: 5, seed: 14)
        try installation.database.close()
        let processes = try (0..<2).map { _ in
            try Self.rollup(installation, ["--batch", "700"])
        }
        for process in processes { #expect(process.status(wait: true) == 0) }

        let database = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? database.close() }
        #expect(try database.rollups.rolledThroughSeq() == Int64(outcome.stored))
        let query = StatsQuery(fromMs: end - 5 * 86_400_000, toMs: end)
        let together = try await database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        try database.rollups.resetRollups()
        _ = try await onThreadOfItsOwn { try database.rollups.rollUpAll() }
        #expect(try await database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true) == together)
    }
}

