import Foundation
import GRDB
import LinkpulseDomain
import Logging
import Synchronization
import Testing

@testable import LinkpulseStore

/// A store in a temporary directory; `reopen()` simulates a restart.
final class TemporaryStore {
    let directory: URL
    var database: AppDatabase
    let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .error
        return logger
    }()

    /// The store's tuned sizes and times: the daemon's, or small ones that make attribution use
    /// its disk half, write moves of clicks in many slices, or fold the id index early.
    let tuning: SQLiteTuning

    init(
        directory: URL = FileManager.default.temporaryDirectory.appending(path: "linkpulse-store-\(UUID().uuidString)"),
        tuning: SQLiteTuning = .daemon
    ) throws {
        self.directory = directory
        self.tuning = tuning
        database = try AppDatabase(directory: directory, durability: .normal, tuning: tuning, logger: logger)
    }

    /// A store whose tuning is the daemon's but for what `change` sets.
    convenience init(_ change: (inout SQLiteTuning) -> Void) throws {
        try self.init(tuning: SQLiteTuning.daemon.with(change))
    }

    /// Closes the store and opens it again, keeping at most `tailLimit` ids in memory at open.
    func reopen(tailLimit: Int = SQLiteTuning.daemon.tailLimit) throws {
        try database.close()
        database = try AppDatabase(
            directory: directory, durability: .normal, tuning: tuning.with { $0.tailLimit = tailLimit }, logger: logger)
    }

    deinit {
        try? database.close()
        try? FileManager.default.removeItem(at: directory)
    }

    func event(_ id: String) -> IngestEvent {
        IngestEvent(id: id, kind: .open, occurredAtMs: 1_795_255_620_000, receivedAtMs: 1_795_255_620_000, platform: .ios, visitorId: "v")
    }

    /// Ingests ids as one request and returns how many were stored (the rest were duplicates).
    @discardableResult
    func ingest(_ ids: [String]) async throws -> Int {
        let outcomes = try await database.ingest([IngestWork(events: ids.map(event), quarantine: [])])
        return outcomes[0].filter { $0 != .duplicate }.count
    }

    func count(_ sql: String) throws -> Int {
        try database.events.pool.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }
}

@Suite struct IdIndexTests {
    @Test func duplicatesAreFoundBeforeAndAfterAMerge() async throws {
        let store = try TemporaryStore()
        let ids = (0..<500).map { "id-\($0)" }
        #expect(try await store.ingest(ids) == 500)
        #expect(store.database.events.idTailCount == 500)
        #expect(try await store.ingest(Array(ids[0..<10])) == 0)

        #expect(try store.database.events.mergeIdIndex() == 500)
        #expect(try await store.ingest(Array(ids[490..<500]) + ["new-1"]) == 1)
        #expect(store.database.events.idTailCount == 1)  // the merged ids left memory at the next write
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 500)
        #expect(try store.count("SELECT indexed_through_seq FROM ids.index_state") == 500)
        #expect(try store.count("SELECT count(*) FROM events") == 501)
    }

    @Test func aSecondMergeWithNothingNewDoesNothing() async throws {
        let store = try TemporaryStore()
        try await store.ingest(["a", "b"])
        #expect(try store.database.events.mergeIdIndex() == 2)
        #expect(try store.database.events.mergeIdIndex() == 0)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 2)
    }

    @Test func survivesRestartsWithAndWithoutMerges() async throws {
        let store = try TemporaryStore()
        try await store.ingest((0..<100).map { "r\($0)" })
        try store.database.events.mergeIdIndex(maxCount: 60)
        try await store.ingest((100..<150).map { "r\($0)" })
        try store.reopen()
        #expect(store.database.events.idTailCount == 90)  // 40 unmerged + 50 new, reloaded from disk
        #expect(try await store.ingest((0..<150).map { "r\($0)" }) == 0)
        #expect(try await store.ingest(["r150"]) == 1)
    }

    @Test func startupCatchesUpALongTail() async throws {
        let store = try TemporaryStore()
        try await store.ingest((0..<1000).map { "t\($0)" })
        try store.reopen(tailLimit: 100)
        #expect(store.database.events.idTailCount <= 100)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") >= 900)
        #expect(try await store.ingest((0..<1000).map { "t\($0)" }) == 0)
    }

    @Test func aMissingIndexFileIsRebuilt() async throws {
        let store = try TemporaryStore()
        try await store.ingest((0..<300).map { "m\($0)" })
        try store.database.events.mergeIdIndex()
        try store.database.close()
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: store.directory.appending(path: AppDatabase.idIndexFileName + suffix))
        }
        store.database = try AppDatabase(directory: store.directory, durability: .normal, tuning: .daemon.with { $0.tailLimit = 50 }, logger: store.logger)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") >= 250)
        #expect(try await store.ingest((0..<300).map { "m\($0)" }) == 0)
    }

    @Test func anIndexOfAnotherDatabaseIsRebuilt() async throws {
        let first = try TemporaryStore()
        let second = try TemporaryStore()
        try await first.ingest((0..<50).map { "x\($0)" })
        try first.database.events.mergeIdIndex()
        try await second.ingest((0..<20).map { "y\($0)" })
        try second.database.events.mergeIdIndex()
        try first.database.close()
        try second.database.close()
        // Put the first installation's index beside the second's events.
        for suffix in ["", "-wal", "-shm"] {
            let target = second.directory.appending(path: AppDatabase.idIndexFileName + suffix)
            try? FileManager.default.removeItem(at: target)
            try? FileManager.default.copyItem(at: first.directory.appending(path: AppDatabase.idIndexFileName + suffix), to: target)
        }
        try first.reopen()
        second.database = try AppDatabase(directory: second.directory, durability: .normal, logger: second.logger)
        #expect(try await second.ingest((0..<20).map { "y\($0)" }) == 0)
        #expect(try await second.ingest(["x1"]) == 1)
        try second.database.events.mergeIdIndex()
        #expect(try second.count("SELECT count(*) FROM ids.indexed_ids") == 21)
    }

    @Test func mergesRacingTheWriterNeverLetADuplicateThrough() async throws {
        let store = try TemporaryStore()
        let database = store.database
        let merger = Task.detached {
            var merged = 0
            while !Task.isCancelled {
                merged += try database.events.mergeIdIndex(maxCount: 37)
                await Task.yield()
            }
            return merged
        }
        // Every id is sent twice, the second time a few requests later, while merges run.
        for round in 0..<200 {
            let fresh = (0..<20).map { "race-\(round)-\($0)" }
            let again = round >= 3 ? (0..<20).map { "race-\(round - 3)-\($0)" } : []
            #expect(try await store.ingest(fresh + again) == 20)
        }
        merger.cancel()
        _ = try? await merger.value
        #expect(try store.count("SELECT count(*) FROM events") == 4000)
        #expect(try store.count("SELECT count(DISTINCT event_id) FROM events") == 4000)
    }

    @Test func aRoundInSlicesAdvancesTheWatermarkOnlyAtTheEnd() async throws {
        let store = try TemporaryStore()
        try await store.ingest((0..<400).map { "s\($0)" })
        var steps = 0
        var finished = false
        while !finished {
            let step = try store.database.events.mergeIdIndexStep(slices: 4)
            steps += 1
            finished = step.roundFinished
            #expect(step.merged == 100)
            // Between slices every id is still found, and new duplicates are still refused.
            #expect(try await store.ingest(["s\(steps * 7)", "s399"]) == 0)
            let watermark = try store.count("SELECT indexed_through_seq FROM ids.index_state")
            #expect(watermark == (finished ? 400 : 0))
            #expect(store.database.events.idMergeInProgress == !finished)
            // Each slice leaves the index file's WAL empty: it never holds more than one slice.
            let wal = store.directory.appending(path: "linkpulse-ids.sqlite-wal").path
            #expect((try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) == 0, "after slice \(steps)")
        }
        #expect(steps == 4)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 400)
        #expect(try await store.ingest(["s0", "fresh"]) == 1)
        #expect(store.database.events.idTailCount == 1)
    }

    /// Steps asked of the low-priority and the urgent merge thread at once run one at a time:
    /// every slice of every round is merged once, and the watermark never passes an id that is
    /// not in the index (else, once the tail forgot it, a duplicate would get through).
    @Test func stepsAskedOfBothMergeThreadsRunOneAtATime() async throws {
        let store = try TemporaryStore()
        let events = store.database.events
        let steps = Mutex<[EventStore.IdMergeStep]>([])
        for round in 0..<30 {
            try await store.ingest((0..<160).map { "t\(round)-\($0)" })
            while try store.count("SELECT indexed_through_seq FROM ids.index_state") < 160 * (round + 1) || events.idMergeInProgress {
                for urgent in [false, true] {
                    events.requestIdMergeStep(maxCount: 1_000_000, slices: 8, urgent: urgent) { result in
                        if case .success(let step) = result { steps.withLock { $0.append(step) } }
                    }
                }
                await events.idMergesSettled()
            }
        }
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 4_800)
        #expect(try store.count("SELECT indexed_through_seq FROM ids.index_state") == 4_800)
        #expect(steps.withLock { $0.reduce(0) { $0 + $1.merged } } == 4_800, "a slice merged twice, or skipped")
        for round in stride(from: 0, to: 30, by: 7) {
            #expect(try await store.ingest((0..<160).map { "t\(round)-\($0)" }) == 0)
        }
    }

    @Test func aRoundCutShortByARestartIsRedoneHarmlessly() async throws {
        let store = try TemporaryStore()
        try await store.ingest((0..<300).map { "c\($0)" })
        _ = try store.database.events.mergeIdIndexStep(slices: 3)
        _ = try store.database.events.mergeIdIndexStep(slices: 3)
        try store.reopen()  // the round's last slice never ran
        #expect(store.database.events.idTailCount == 300)
        #expect(try await store.ingest((0..<300).map { "c\($0)" }) == 0)
        try store.database.events.mergeIdIndex()
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 300)
        #expect(try await store.ingest((0..<300).map { "c\($0)" }) == 0)
    }

    @Test func theWriterStartsTheWALOverWhenAsked() async throws {
        let store = try TemporaryStore()
        for round in 0..<20 { try await store.ingest((0..<50).map { "w\(round)-\($0)" }) }
        // The WAL starts over only while no reader is inside it: not while the attribution
        // follower, woken by the commits, is still reading them.
        await store.database.attribution.settled()
        let before = try await store.database.checkpoint(restartPages: 1)
        #expect(before.walPages > 20)
        try await store.ingest(["after-reset"])
        let after = try await store.database.checkpoint()
        #expect(after.walPages < before.walPages / 4, "the WAL started over: \(before.walPages) → \(after.walPages)")
        #expect(try store.count("SELECT count(*) FROM events") == 1001)
    }

    /// Merges go into the recent level; once it holds an eighth of the main one (and the
    /// minimum), steps fold it in, a key range at a time. Between every two steps of merges and
    /// folds, every id stored so far is refused again and a new one is taken.
    @Test func foldsMoveTheRecentLevelIntoTheMainOneWithoutLosingAnId() async throws {
        let store = try TemporaryStore { $0.idFoldMinimum = 300 }
        let events = store.database.events
        var stored: [String] = []
        var folds = 0
        var foldSteps = 0
        var probes = 0
        for round in 0..<12 {
            let ids = (0..<250).map { "f\(round)-\($0)" }
            #expect(try await store.ingest(ids) == 250)
            stored += ids
            repeat {
                let foldingBefore = events.idMergeInProgress && events.mergeRound.withLock { $0 == nil }
                let levelsBefore = events.idIndexLevels
                let step = try events.mergeIdIndexStep(maxCount: 1_000_000, slices: 2)
                if foldingBefore {
                    foldSteps += 1
                    #expect(step.merged == 0)
                    #expect(events.idIndexLevels.main + events.idIndexLevels.recent == levelsBefore.main + levelsBefore.recent)
                    if step.roundFinished { folds += 1 }
                }
                // Every id so far is still known, whichever level it is in; a new one is not.
                probes += 1
                let probe = ["f\(round)-\(probes % 250)", stored[(probes * 37) % stored.count], "new-\(probes)"]
                #expect(try await store.ingest(probe) == 1)
                stored.append(probe[2])
            } while events.idMergeInProgress
            let levels = events.idIndexLevels
            #expect(try store.count("SELECT count(*) FROM ids.event_ids") == levels.main)
            #expect(try store.count("SELECT count(*) FROM ids.recent_event_ids") == levels.recent)
        }
        #expect(folds >= 3, "\(folds) folds")
        #expect(foldSteps > folds, "folds were cut into key ranges")
        let levels = events.idIndexLevels
        #expect(levels.main > levels.recent)
        let indexed = try store.count("SELECT count(*) FROM ids.indexed_ids")
        #expect(indexed == (try store.count("SELECT count(*) FROM events")) - events.idTailCount)
        #expect(try store.count("SELECT count(DISTINCT event_id) FROM events") == stored.count)
        #expect(try await store.ingest(stored) == 0)
    }

    /// A fold cut short by a restart is planned again at open and finished by the next steps;
    /// nothing is lost or counted twice.
    @Test func aFoldCutShortIsFinishedAfterARestart() async throws {
        let store = try TemporaryStore { $0.idFoldMinimum = 200 }
        let ids = (0..<600).map { "k\($0)" }
        try await store.ingest(ids)
        let first = try store.database.events.mergeIdIndexStep(maxCount: 1_000_000, slices: 1)
        #expect(first.roundFinished)
        #expect(store.database.events.idMergeInProgress, "600 recent keys against an empty main level: a fold is due")
        _ = try store.database.events.mergeIdIndexStep(maxCount: 1_000_000, slices: 4)
        let afterOneSlice = store.database.events.idIndexLevels
        #expect(afterOneSlice.main > 0 && afterOneSlice.recent > 0 && afterOneSlice.main + afterOneSlice.recent == 600)
        try store.reopen()
        #expect(store.database.events.idIndexLevels == afterOneSlice)
        #expect(store.database.events.idMergeInProgress, "the fold is due again")
        try store.database.events.mergeIdIndex()
        #expect(store.database.events.idIndexLevels == IdIndexLevels(main: 600, recent: 0))
        #expect(try await store.ingest(ids + ["k600"]) == 1)
    }

    /// An id index of 8-byte keys (before its migration 0003) is made one of 6-byte keys at
    /// open, both levels: every id is still found, so none is stored twice.
    @Test func eightByteKeysOfBeforeBecomeSixByteKeys() async throws {
        let store = try TemporaryStore { $0.idFoldMinimum = 200 }
        let ids = (0..<600).map { "old\($0)" }
        try await store.ingest(ids)
        try store.database.events.mergeIdIndex(maxCount: 400)
        _ = try store.database.events.mergeIdIndexStep(maxCount: 1_000_000, slices: 1)
        let levels = store.database.events.idIndexLevels
        #expect(levels.main > 0 && levels.recent > 0, "\(levels)")
        // What the build before left: the first 8 bytes of SHA-256, whose top 6 are today's key.
        try await store.database.events.pool.write { db in
            for table in ["ids.event_ids", "ids.recent_event_ids"] {
                try db.execute(sql: "UPDATE \(table) SET id_key = (id_key << 16) | 0xbeef")
            }
            try db.execute(sql: "DELETE FROM ids.grdb_migrations WHERE identifier LIKE '0003%'")
        }
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids WHERE id_key & 0xffff = 0xbeef") == 600)
        try store.reopen()
        let keys = try await store.database.events.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT i.id_key FROM events e JOIN ids.indexed_ids i ON i.seq = e.seq ORDER BY e.seq")
        }
        #expect(keys == ids.map(EventIdKey.of))
        #expect(store.database.events.idIndexLevels == levels)
        #expect(try await store.ingest(ids + ["new"]) == 1)
    }

    /// A file with more than a quarter of its pages free is vacuumed at open; one with fewer
    /// is left as it is.
    @Test func aFileWithManyFreePagesIsVacuumed() throws {
        let path = FileManager.default.temporaryDirectory.appending(path: "linkpulse-free-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let queue = try DatabaseQueue(path: path)
        let connection = try ConnectionQueries.load()
        func pages() throws -> (free: Int, all: Int) {
            try queue.read { db in (try Int.fetchOne(db, sql: "PRAGMA freelist_count")!, try Int.fetchOne(db, sql: "PRAGMA page_count")!) }
        }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)")
            for i in 0..<4_000 { try db.execute(sql: "INSERT INTO t (id, b) VALUES (?, zeroblob(8000))", arguments: [i]) }
            try db.execute(sql: "DELETE FROM t WHERE id < 600")
        }
        let few = try pages()
        #expect(few.free > 1_024 && few.free * 4 < few.all, "\(few)")
        AppDatabase.compactIfLargelyFree(queue, connection, logger: Logger(label: "test"))
        #expect(try pages() == few)
        try queue.write { db in try db.execute(sql: "DELETE FROM t WHERE id < 3000") }
        AppDatabase.compactIfLargelyFree(queue, connection, logger: Logger(label: "test"))
        let after = try pages()
        #expect(after.free == 0 && after.all < few.all * 2 / 3, "\(after)")
    }

    @Test func keyRangesCoverEveryKeyInOrder() {
        for slices in [1, 2, 3, 7, 64] {
            let ranges = (0..<slices).map { WriteSlices.keyRange($0, of: slices) }
            #expect(ranges.first?.lowerBound == .min)
            #expect(ranges.last?.upperBound == .max)
            for (a, b) in zip(ranges, ranges.dropFirst()) { #expect(a.upperBound &+ 1 == b.lowerBound) }
            // Equal shares: hashes spread evenly land evenly.
            var rng = SystemRandomNumberGenerator()
            var counts = [Int](repeating: 0, count: slices)
            for _ in 0..<64_000 {
                let key = Int64.random(in: .min ... .max, using: &rng) >> 16  // an id key's 48 bits
                counts[ranges.firstIndex { $0.contains(key) }!] += 1
            }
            #expect(counts.allSatisfy { abs($0 - 64_000 / slices) < 64_000 / slices / 5 + 100 }, "\(counts)")
        }
    }

    @Test func aFoldIsDueAtAnEighthOfTheMainLevelAndTheMinimum() {
        #expect(!IdIndexLevels(main: 0, recent: 0).foldDue(minimum: 0, ratio: 8))
        #expect(!IdIndexLevels(main: 0, recent: 99).foldDue(minimum: 100, ratio: 8))
        #expect(IdIndexLevels(main: 0, recent: 100).foldDue(minimum: 100, ratio: 8))
        #expect(!IdIndexLevels(main: 8_000, recent: 999).foldDue(minimum: 100, ratio: 8))
        #expect(IdIndexLevels(main: 8_000, recent: 1_000).foldDue(minimum: 100, ratio: 8))
    }

    @Test func tailKeepsEverySeqOfASharedKey() {
        var tail = IdTail()
        tail.add(key: 5, seq: 1)
        tail.add(key: 5, seq: 2)
        tail.add(key: 5, seq: 3)
        tail.add(key: 9, seq: 4)
        #expect(tail.seqs(for: 5) == [1, 2, 3])
        #expect(tail.count == 4)
        tail.requestPrune(through: 1)
        #expect(tail.seqs(for: 5) == [1, 2, 3])  // nothing dropped until the writer applies it
        tail.applyPendingPrune()
        #expect(tail.seqs(for: 5) == [2, 3])
        #expect(tail.seqs(for: 9) == [4])
        #expect(tail.count == 3)
        tail.requestPrune(through: 3)
        tail.applyPendingPrune()
        #expect(tail.seqs(for: 5) == [])
        #expect(tail.count == 1)
    }

    @Test func tailAnswersAsADictionaryOfEverySeqWouldAcrossPrunes() {
        // Seqs in store order (as the writer adds them, now and then after a gap), keys now
        // and then shared by several seqs, and prunes in between that cut a shared key's seqs
        // in the middle: every answer is the model's, in seq order. Seeded, so a failure
        // reproduces.
        var rng = SplitMix64(seed: 21)
        var tail = IdTail()
        var model: [Int64: [Int64]] = [:]
        var seq: Int64 = 1_000
        let shared: [Int64] = [7, -7, .min, .max, 0]
        for round in 0..<40 {
            for _ in 0..<Int.random(in: 1...5_000, using: &rng) {
                seq += Int.random(in: 0..<100, using: &rng) == 0 ? Int64.random(in: 2...5_000, using: &rng) : 1
                let key = Int.random(in: 0..<50, using: &rng) == 0
                    ? shared.randomElement(using: &rng)! : Int64.random(in: .min ... .max, using: &rng)
                tail.add(key: key, seq: seq)
                model[key, default: []].append(seq)
            }
            if round % 3 == 2 {
                let pruned = seq - Int64.random(in: 0...3_000, using: &rng)
                tail.requestPrune(through: pruned)
                tail.applyPendingPrune()
                model = model.compactMapValues { seqs in
                    let kept = seqs.filter { $0 > pruned }
                    return kept.isEmpty ? nil : kept
                }
            }
            #expect(tail.count == model.values.reduce(0) { $0 + $1.count })
            for (key, seqs) in model { #expect(tail.seqs(for: key) == seqs) }
            #expect(tail.seqs(for: 123_456_789) == [])
        }
    }

    @Test func keyCollisionsAreResolvedByTheIdItself() async throws {
        // Two different ids stored under one key (as a 64-bit collision would) stay distinct:
        // the index is made to file "collider" under the key of "victim".
        let store = try TemporaryStore()
        #expect(try await store.ingest(["collider"]) == 1)
        try store.database.events.mergeIdIndex()
        try await store.database.events.pool.write { db in
            try db.execute(sql: "INSERT INTO ids.event_ids (id_key, seq) SELECT ?, max(seq) FROM event_rows", arguments: [EventIdKey.of("victim")])
        }
        try store.reopen()
        #expect(try await store.ingest(["victim"]) == 1)
        #expect(try await store.ingest(["victim"]) == 0)
        try store.database.events.mergeIdIndex()
        #expect(try await store.ingest(["victim"]) == 0)
        #expect(try store.count("SELECT count(*) FROM events WHERE event_id = 'victim'") == 1)
    }
}

@Suite struct IdFilterTests {
    /// A filter saved and loaded back answers as the one saved, only for the index it covers,
    /// and never from a damaged or cut file; the file is gone once read.
    @Test func aSavedFilterLoadsOnlyWholeAndForTheIndexItCovers() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-filter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appending(path: SavedIdFilter.fileName)
        var filter = IdFilter(capacity: 200_000)
        var rng = SystemRandomNumberGenerator()
        let keys = (0..<50_000).map { _ in Int64.random(in: .min ... .max, using: &rng) }
        for key in keys { filter.insert(key) }
        let covers = SavedIdFilter.Covers(databaseId: "5f0c3c8e-1b7a-4a53-9a55-1f1e0c2b3a4d", indexedThrough: 81_234, keys: 50_000)

        try SavedIdFilter.save(filter, covering: covers, to: url)
        let loaded = try #require(SavedIdFilter.load(from: url, expecting: covers))
        #expect(loaded.saved == filter.saved)
        #expect(keys.allSatisfy { loaded.mayContain($0) })
        #expect(!FileManager.default.fileExists(atPath: url.path), "read once")
        #expect(SavedIdFilter.load(from: url, expecting: covers) == nil, "no file")

        // Another index: another installation, watermark or number of keys.
        for other in [
            SavedIdFilter.Covers(databaseId: "another", indexedThrough: 81_234, keys: 50_000),
            SavedIdFilter.Covers(databaseId: covers.databaseId, indexedThrough: 81_235, keys: 50_000),
            SavedIdFilter.Covers(databaseId: covers.databaseId, indexedThrough: 81_234, keys: 50_001),
        ] {
            try SavedIdFilter.save(filter, covering: covers, to: url)
            #expect(SavedIdFilter.load(from: url, expecting: other) == nil, "\(other)")
        }

        // A word of the filter changed, the checksum changed, or the file cut short.
        let whole = try { try SavedIdFilter.save(filter, covering: covers, to: url); return try Data(contentsOf: url) }()
        for damage in [whole.count / 2, whole.count - 1, 8] {
            var bytes = whole
            bytes[damage] ^= 0x10
            try bytes.write(to: url)
            #expect(SavedIdFilter.load(from: url, expecting: covers) == nil, "byte \(damage) changed")
        }
        for length in [0, 40, whole.count - 8, whole.count - 1] {
            try whole.prefix(length).write(to: url)
            #expect(SavedIdFilter.load(from: url, expecting: covers) == nil, "cut at \(length)")
        }
        try (whole + [0]).write(to: url)
        #expect(SavedIdFilter.load(from: url, expecting: covers) == nil, "a byte past the end")
    }

    /// A clean close saves the id filter and the next open loads it instead of building it; one
    /// saved before the index took more ids is not loaded (it lacks them, and their duplicates
    /// would be stored again).
    @Test func aRestartLoadsTheFilterOfTheIndexAsItIsAndNoOther() async throws {
        let store = try TemporaryStore()
        let saved = store.directory.appending(path: SavedIdFilter.fileName)
        let first = (0..<400).map { "f\($0)" }
        try await store.ingest(first)
        try store.reopen(tailLimit: 0)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 400)
        try store.database.close()
        #expect(FileManager.default.fileExists(atPath: saved.path), "saved at the close")
        let before = try Data(contentsOf: saved)
        store.database = try AppDatabase(directory: store.directory, durability: .normal, tuning: .daemon.with { $0.tailLimit = 0 }, logger: store.logger)
        #expect(!FileManager.default.fileExists(atPath: saved.path), "loaded at the open")
        #expect(try await store.ingest(first) == 0, "every id found through the loaded filter")

        // More ids go into the index; the filter saved before them is put back in place of the
        // one the close saves.
        let second = (0..<400).map { "s\($0)" }
        try await store.ingest(second)
        try store.reopen(tailLimit: 0)
        #expect(try store.count("SELECT count(*) FROM ids.indexed_ids") == 800)
        try store.database.close()
        try before.write(to: saved)
        store.database = try AppDatabase(directory: store.directory, durability: .normal, tuning: .daemon.with { $0.tailLimit = 0 }, logger: store.logger)
        #expect(try await store.ingest(second + first) == 0, "the stale filter was not used")
        #expect(try store.count("SELECT count(*) FROM events") == 800)
    }

    @Test func neverForgetsAKeyAndRarelyImaginesOne() {
        var filter = IdFilter(capacity: 100_000)
        var rng = SystemRandomNumberGenerator()
        let keys = (0..<100_000).map { _ in Int64.random(in: .min ... .max, using: &rng) }
        for key in keys { filter.insert(key) }
        #expect(keys.allSatisfy { filter.mayContain($0) })
        let strangers = (0..<100_000).map { _ in Int64.random(in: .min ... .max, using: &rng) }
        let falsePositives = strangers.filter { filter.mayContain($0) }.count
        #expect(falsePositives < 2_000, "false-positive rate \(Double(falsePositives) / 1000)%")
        #expect(!filter.isOverfull)
        filter.insert(1)
        #expect(filter.isOverfull)
    }
}
