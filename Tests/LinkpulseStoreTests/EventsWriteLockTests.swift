import Foundation
import GRDB
import Logging
import Testing

@testable import LinkpulseStore

/// Writes to the events database (export ledger, quarantine retention) lock the events file
/// only: a long transaction on a derived file (a rollup pass, an attribution round) must not
/// make them wait, and fail after the busy timeout.
@Suite struct EventsWriteLockTests {
    @Test func eventsWritesDoNotWaitForALongTransactionOnTheDerivedFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try AppDatabase(directory: directory, durability: .normal, logger: Logger(label: "test"))
        defer { try? database.close() }

        // Another connection holds the write locks of the rollup and attribution files, as a
        // long pass does.
        let holder = try DatabaseQueue(path: directory.appending(path: AppDatabase.rollupFileName).path)
        let (locked, release, released) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread.detachNewThread {
            try? holder.inDatabase { db in
                try db.execute(sql: "ATTACH DATABASE ? AS attr", arguments: [directory.appending(path: AppDatabase.attributionFileName).path])
                try db.inTransaction(.immediate) {
                    locked.signal()
                    release.wait()
                    return .rollback
                }
            }
            released.signal()
        }
        locked.wait()
        // Each would wait out the 10 s busy timeout and throw "database is locked" if it
        // asked for the derived files' locks (the holder only lets go at the end).
        #expect(try database.events.pruneQuarantine(receivedBeforeMs: 0) == 0)
        try await database.exportLedger.recordExport(ExportFileRecord(
            name: "x.csv", job: "x", periodStartMs: 0, periodEndMs: 1, periodLabel: "x", rows: 0, bytes: 0, createdAtMs: 1))
        try await database.exportLedger.forgetExportFile(name: "x.csv")
        release.signal()
        released.wait()
        try holder.close()
    }
}
