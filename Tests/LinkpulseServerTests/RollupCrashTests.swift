import Foundation
import TestSupport
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Testing

/// The real `linkpulse rollup` killed with -9 in the middle of its passes, again and again:
/// what it committed plus what the next run adds must equal a rollup done in one go.
@Suite(.serialized) struct RollupCrashTests {
    @Test func aRollupKilledMidwayNeverCountsTwice() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 20_000, days: 4, refs: 100, campaigns: 5, seed: 11)
        try installation.database.close()

        func rollup(killAfter delay: Duration?) async throws {
            let process = try ChildProcess(
                executable: DaemonProcess.binary.path,
                arguments: ["rollup", "--data-dir", installation.directory.path, "--batch", "1500", "--log-level", "error"],
                output: "/dev/null")
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
        try database.rollups.rollUpAll()
        #expect(try await database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true) == afterKills)
        #expect(try await database.stats.statsCounts(query, grouping: .buckets([end - 5 * 86_400_000, end - 2 * 86_400_000]), withVisitors: true) == series)
        let total = afterKills.values.reduce(0) { $0 + $1.people.events + $1.bots.events }
        #expect(total == outcome.stored)
    }
}
