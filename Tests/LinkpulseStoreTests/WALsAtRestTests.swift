import Foundation
import LinkpulseDomain
@testable import LinkpulseStore
import Testing

/// A quiet store's WALs go back to zero bytes: when (`WALsAtRest`, pure, on a clock the test
/// moves) and how (`AppDatabase.truncateWALs`, on real files).
@Suite struct WALsAtRestTests {
    static func progress(stored: Int64, attributed: Int64? = nil, counted: Int64? = nil) -> RollupProgress {
        RollupProgress(
            storedThroughSeq: stored, countedThroughSeq: counted ?? stored, attributedThroughSeq: attributed ?? stored,
            oldestUncountedReceivedAtMs: nil)
    }

    @Test func aQuietSpellTruncatesOnceAfterItsLength() {
        var atRest = WALsAtRest(quietFor: .seconds(5))
        let t0 = ContinuousClock.now
        let seconds = { (s: Int) in t0 + .seconds(s) }
        func observe(_ progress: RollupProgress, at now: ContinuousClock.Instant) -> Bool { atRest.observe(progress, at: now) }
        #expect(!observe(Self.progress(stored: 100), at: seconds(0)))
        #expect(!observe(Self.progress(stored: 100), at: seconds(4)), "quiet for 4 s only")
        #expect(observe(Self.progress(stored: 100), at: seconds(5)))
        #expect(!observe(Self.progress(stored: 100), at: seconds(6)), "once a spell")
        #expect(!observe(Self.progress(stored: 100), at: seconds(60)))
        // New events end the spell; the next one starts once they are counted.
        #expect(!observe(Self.progress(stored: 150, attributed: 120, counted: 100), at: seconds(61)))
        #expect(!observe(Self.progress(stored: 150), at: seconds(62)))
        #expect(!observe(Self.progress(stored: 150), at: seconds(66)))
        #expect(observe(Self.progress(stored: 150), at: seconds(67)))
    }

    @Test func aBacklogIsNeverQuiet() {
        var atRest = WALsAtRest(quietFor: .seconds(5))
        let t0 = ContinuousClock.now
        func observe(_ progress: RollupProgress, at now: ContinuousClock.Instant) -> Bool { atRest.observe(progress, at: now) }
        for s in 0..<30 {
            #expect(!observe(Self.progress(stored: 100, attributed: 100, counted: 90), at: t0 + .seconds(s)))
            #expect(!observe(Self.progress(stored: 100, attributed: 80, counted: 80), at: t0 + .seconds(s) + .milliseconds(500)))
        }
    }

    @Test func truncatingLeavesEveryWALEmpty() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: AttributionStoreTests.traffic(seed: 7, count: 3_000), quarantine: [])])
        try store.database.attribution.attributeAll()
        _ = try store.database.rollups.rollUpAll()
        let files = [AppDatabase.eventsFileName, AppDatabase.idIndexFileName, AppDatabase.attributionFileName, AppDatabase.rollupFileName]
        func walBytes(_ file: String) -> Int {
            let path = store.directory.appending(path: file + "-wal").path
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        }
        #expect(walBytes(AppDatabase.eventsFileName) > 0, "the events written are in the WAL")
        await store.database.truncateWALs()
        for file in files { #expect(walBytes(file) == 0, "\(file)") }
        // Nothing was lost: every event is still there, counted.
        let progress = try await store.database.rollups.rollupProgress()
        #expect(progress.storedThroughSeq > 2_900 && progress.countedThroughSeq == progress.storedThroughSeq)
    }
}
