import Foundation
import Logging
import LinkpulseServer
import LinkpulseStore
import TestSupport
import Testing

/// The checkpoint job truncates every WAL once the store is quiet, and not while events wait.
@Suite struct CheckpointJobTests {
    static func walBytes(_ installation: TestInstallation) -> [String: Int] {
        let files = [AppDatabase.eventsFileName, AppDatabase.idIndexFileName, AppDatabase.attributionFileName, AppDatabase.rollupFileName]
        return Dictionary(uniqueKeysWithValues: files.map { file in
            let path = installation.directory.appending(path: file + "-wal").path
            return (file, (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        })
    }

    @Test func aQuietStoreHasItsWALsTruncatedByTheJob() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        _ = try await installation.storeGeneratedTraffic(events: 3_000, days: 2, refs: 30, campaigns: 3, seed: 5)
        // Quiet at once (a spell of no length), so two runs a moment apart are enough.
        let job = CheckpointJob(database: installation.database, atRest: WALsAtRest(quietFor: .zero), logger: Logger(label: "test"))
        try await job.pass()
        #expect((Self.walBytes(installation)[AppDatabase.eventsFileName] ?? 0) > 0, "events still wait: nothing truncated")
        _ = try await installation.database.rollups.rollUpNow()
        try await job.pass()  // the spell begins: every event attributed and counted
        try await job.pass()  // and has lasted
        #expect(Self.walBytes(installation).values.allSatisfy { $0 == 0 }, "\(Self.walBytes(installation))")
    }
}
