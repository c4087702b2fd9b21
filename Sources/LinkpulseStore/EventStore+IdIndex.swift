import Foundation
import GRDB
import LinkpulseDomain

/// The id index: deduplication that stays fast when random client ids outgrow the page cache.
///
/// A plain unique index on random ids makes every insert touch a random B-tree page, which
/// slows SQLite about ten-fold once the index no longer fits in memory. Instead, new ids live
/// in the writer's in-memory tail (`IdTail`), and a background job merges them into the
/// on-disk index in large sorted runs, in a separate file so a merge never holds the events
/// database's write lock. Lookups read both; reads of a big index are cheap, writes are not.
extension EventStore {
    /// How many stored ids are not yet in the on-disk index (held in memory by the writer).
    public var idTailCount: Int { tail.withLock { $0.count } }

    /// Whether a merge round has started and not finished (see `mergeIdIndexStep`).
    public var idMergeInProgress: Bool { mergeRound.withLock { $0 != nil } }

    /// Merges the ids of up to `maxCount` committed events past the watermark into the on-disk
    /// index, all at once, and advances the watermark. Returns how many it merged. Finishes a
    /// round already in progress instead of starting one. For start-up and tests; the id index
    /// job uses `mergeIdIndexStep` to spread the work.
    @discardableResult
    public func mergeIdIndex(maxCount: Int = 1_000_000) throws -> Int {
        var total = 0
        repeat {
            total += try mergeIdIndexStep(maxCount: maxCount, slices: 1).merged
        } while idMergeInProgress
        return total
    }

    /// One step of a merge round. A round takes the ids of up to `maxCount` committed events
    /// past the watermark, sorted by key, and inserts them in `slices` key ranges (more when
    /// the index is large: see `WriteSlices`), one range per
    /// call, each in its own transaction of the index file: a merge rewrites most of the index's
    /// leaves, and in slices that cost is spread over several timer ticks instead of stealing
    /// the CPU from ingest at once. The last slice advances the watermark in its transaction;
    /// only then may the writer forget those ids. A crash mid-round leaves extra index entries
    /// past the watermark, which the next round inserts again harmlessly (INSERT OR IGNORE).
    ///
    /// Synchronous; steps run one at a time (a second caller waits for the first). Safe beside
    /// the writer, which forgets merged ids only at the start of its next transaction.
    @discardableResult
    public func mergeIdIndexStep(maxCount: Int = 1_000_000, slices: Int = 8) throws -> (merged: Int, roundFinished: Bool) {
        try mergeSteps.withLock { _ in try mergeIdIndexStepAlone(maxCount: maxCount, slices: slices) }
    }

    /// What one merge step did, for the id index job's log and metrics.
    public struct IdMergeStep: Sendable {
        public var merged: Int
        public var roundFinished: Bool
        public var took: Duration
    }

    /// Asks for a merge step on the store's merge threads: one at low priority, or, when
    /// `urgent` (the tail has outgrown its bound), steps at normal priority until the round is
    /// done. Returns at once; a request made while one of its kind is pending or running adds
    /// nothing. `done` is told each step's outcome, on the merge thread.
    public func requestIdMergeStep(
        maxCount: Int, slices: Int, urgent: Bool, done: @escaping @Sendable (Result<IdMergeStep, any Error>) -> Void
    ) {
        (urgent ? idMergeUrgentRequests : idMergeRequests).request(repeating: { [self] in
            let start = ContinuousClock.now
            let result = Result {
                let (merged, finished) = try mergeIdIndexStep(maxCount: maxCount, slices: slices)
                return IdMergeStep(merged: merged, roundFinished: finished, took: ContinuousClock.now - start)
            }
            done(result)
            guard urgent, case .success(let step) = result else { return false }
            return !step.roundFinished
        })
    }

    /// Waits until the merge steps asked for so far are done.
    public func idMergesSettled() async {
        _ = try? await idMergeThread.run {}
        _ = try? await idMergeUrgentThread.run {}
    }

    /// `mergeIdIndexStep` with `mergeSteps` held.
    private func mergeIdIndexStepAlone(maxCount: Int, slices: Int) throws -> (merged: Int, roundFinished: Bool) {
        var round: MergeRound
        if let current = mergeRound.withLock({ $0 }) {
            round = current
        } else {
            let from = indexedThrough.withLock { $0 }
            let newest = try maxSeq()
            guard newest > from else { return (0, true) }
            let upTo = min(newest, from + Int64(maxCount))
            var pairs = try pool.read { db in
                var pairs: [(key: Int64, seq: Int64)] = []
                let rows = try Row.fetchCursor(db.cachedStatement(sql: queries.idKeysInRange), arguments: [from, upTo])
                while let row = try rows.next() { pairs.append((EventIdKey.of(row[0] as String), row[1])) }
                return pairs
            }
            // Sorted by key, each slice is one key range, inserted left to right. A slice
            // rewrites at most the leaves of its range, which all go through the WAL: enough
            // slices that each range holds at most `WriteSlices.maxBytes` of the index (its WAL
            // is truncated after every slice).
            pairs.sort { $0.key != $1.key ? $0.key < $1.key : $0.seq < $1.seq }
            round = MergeRound(
                upTo: upTo, pairs: pairs, slices: WriteSlices.count(items: pairs.count, filePath: idIndex.path, atLeast: slices))
        }
        let slice = round.pairs[WriteSlices.range(round.slicesDone, of: round.slices, count: round.pairs.count)]
        let last = round.slicesDone + 1 == round.slices
        try idIndex.write { db in
            let insert = try db.cachedStatement(sql: queries.insertEventId)
            for pair in slice { try insert.execute(arguments: [pair.key, pair.seq]) }
            if last {
                try db.execute(sql: queries.idIndex.setIndexedThrough, arguments: [round.upTo])
            }
        }
        // Keep the index file's WAL to one slice; readers only ever hold it for one lookup.
        _ = try? idIndex.inDatabase { db in try Row.fetchOne(db, sql: queries.truncateWAL) }
        // The filter learns the keys before the writer may forget them: no moment without either.
        if filter.withLock({ $0.count + slice.count > $0.capacity }) {
            try rebuildFilter(capacity: (filter.withLock { $0.count } + slice.count) * 3 / 2)
        } else {
            for chunk in stride(from: slice.startIndex, to: slice.endIndex, by: 8192) {
                filter.withLock { filter in
                    for pair in slice[chunk..<min(chunk + 8192, slice.endIndex)] { filter.insert(pair.key) }
                }
            }
        }
        guard last else {
            round.slicesDone += 1
            mergeRound.withLock { $0 = round }
            return (slice.count, false)
        }
        indexedThrough.withLock { $0 = round.upTo }
        tail.withLock { $0.requestPrune(through: round.upTo) }
        mergeRound.withLock { $0 = nil }
        return (slice.count, true)
    }

    /// Builds a filter of every key in the on-disk index, sized for `capacity` keys, and swaps
    /// it in. Called at open and by merges when the filter is full.
    func rebuildFilter(capacity: Int) throws {
        var fresh = IdFilter(capacity: capacity)
        let allKeys = queries.idIndex.allKeys
        try idIndex.read { db in
            let keys = try Int64.fetchCursor(db, sql: allKeys)
            while let key = try keys.next() { fresh.insert(key) }
        }
        filter.withLock { $0 = fresh }
    }

    /// At open: ties the id index to this database, rebuilds it when it belongs elsewhere or
    /// claims events that do not exist, merges until at most `tailLimit` ids are left over,
    /// then loads those into the writer's tail.
    func prepareIdIndex(tailLimit: Int) throws {
        let installation = queries.installation, index = queries.idIndex
        let (databaseId, newest) = try pool.write { db -> (String, Int64) in
            if let id = try String.fetchOne(db, sql: installation.databaseId) {
                return (id, try Int64.fetchOne(db, sql: installation.maxSeq) ?? 0)
            }
            let id = UUID().uuidString.lowercased()
            try db.execute(sql: installation.insertDatabaseId, arguments: [id])
            return (id, try Int64.fetchOne(db, sql: installation.maxSeq) ?? 0)
        }
        let through = try idIndex.write { db -> Int64 in
            let state = try Row.fetchOne(db, sql: index.state)
            if let state, state["database_id"] as String == databaseId, (state["indexed_through_seq"] as Int64) <= newest {
                return state["indexed_through_seq"]
            }
            if state != nil {
                logger.warning("id index belongs to another database state; rebuilding it", metadata: ["events": "\(newest)"])
            }
            try db.execute(sql: index.reset, arguments: [databaseId])
            return 0
        }
        indexedThrough.withLock { $0 = through }
        let indexedCount = try idIndex.read { db in try Int.fetchOne(db, sql: index.keyCount) ?? 0 }
        try rebuildFilter(capacity: max(1 << 20, indexedCount * 3 / 2))
        while try maxSeq() - indexedThrough.withLock({ $0 }) > Int64(tailLimit) {
            let merged = try mergeIdIndex()
            logger.info("id index caught up", metadata: ["merged": "\(merged)"])
        }
        let start = indexedThrough.withLock { $0 }
        try pool.read { db in
            let rows = try Row.fetchCursor(db.cachedStatement(sql: queries.idKeysInRange), arguments: [start, Int64.max])
            var loaded = IdTail()
            while let row = try rows.next() { loaded.add(key: EventIdKey.of(row[0] as String), seq: row[1]) }
            tail.withLock { $0 = loaded }
        }
    }
}

/// A merge into the id index in progress: the sorted ids to insert and how many slices are done.
struct MergeRound: Sendable {
    let upTo: Int64
    let pairs: [(key: Int64, seq: Int64)]
    let slices: Int
    var slicesDone = 0

    init(upTo: Int64, pairs: [(key: Int64, seq: Int64)], slices: Int) {
        self.upTo = upTo
        self.pairs = pairs
        self.slices = slices
    }
}
