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
///
/// The on-disk index has two levels (`IdIndexLevels`): merges go into a small recent level,
/// which is folded into the main one, a key range at a time, once it has grown to an eighth of
/// it. A round then rewrites the recent level's few leaves instead of most of the main level's.
extension EventStore {
    /// How many stored ids are not yet in the on-disk index (held in memory by the writer).
    public var idTailCount: Int { tail.withLock { $0.count } }

    /// Whether a merge round or a fold has started and not finished, or a fold is due (see
    /// `mergeIdIndexStep`): either way, the next steps have work without new ids.
    public var idMergeInProgress: Bool {
        mergeRound.withLock { $0 != nil } || foldRound.withLock { $0 != nil } || idLevels.withLock { $0.foldDue(minimum: tuning.idFoldMinimum, ratio: tuning.idFoldRatio) }
    }

    /// How many keys each level of the on-disk id index holds.
    public var idIndexLevels: IdIndexLevels { idLevels.withLock { $0 } }

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

    /// One step of a merge round, or of a fold. A round takes the ids of up to `maxCount`
    /// committed events past the watermark, sorted by key, and inserts them into the recent
    /// level in `slices` key ranges (more when that level is large: see `WriteSlices`), one
    /// range per call, each in its own transaction of the index file: a merge rewrites most of
    /// the level's leaves, and in slices that cost is spread over several timer ticks instead
    /// of stealing the CPU from ingest at once. The last slice advances the watermark in its
    /// transaction; only then may the writer forget those ids. A crash mid-round leaves extra
    /// index entries past the watermark, which the next round inserts again harmlessly (INSERT
    /// OR IGNORE).
    ///
    /// Between rounds, once the recent level is due (`IdIndexLevels.foldDue`), steps fold it
    /// into the main level instead, one key range a step (`foldStep`); a fold's steps report
    /// no ids merged, and its last one a finished round.
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
        } else if let fold = foldRound.withLock({ $0 }) ?? plannedFold(atLeast: slices) {
            return (0, try foldStep(fold))
        } else {
            let from = indexedThrough.withLock { $0 }
            let newest = try maxSeq()
            guard newest > from else { return (0, true) }
            let upTo = min(newest, from + Int64(maxCount))
            var pairs = try pool.read { db in
                var pairs: [(key: Int64, seq: Int64)] = []
                let rows = HotStatement(try db.cachedStatement(sql: queries.idKeysInRange), in: db)
                try rows.bind(":after_seq", from)
                try rows.bind(":through_seq", upTo)
                while try rows.step() {
                    let key = rows.withStoredId(IdInRangeColumn.eventId) { EventIdKey.of(utf8: $0) } ?? EventIdKey.of("")
                    pairs.append((key, rows.int64(IdInRangeColumn.seq)))
                }
                return pairs
            }
            // Sorted by key, each slice is one key range, inserted left to right. A slice
            // rewrites at most the leaves of its range of the recent level, which all go
            // through the WAL: enough slices that each range holds at most
            // `SQLiteTuning.sliceBytes` of that level (the WAL is truncated after every slice).
            pairs.sort { $0.key != $1.key ? $0.key < $1.key : $0.seq < $1.seq }
            let recentBytes = idLevels.withLock { $0.recentShare(of: WriteSlices.fileBytes(idIndex.path)) }
            round = MergeRound(upTo: upTo, pairs: pairs, slices: WriteSlices.count(items: pairs.count, coveredBytes: recentBytes, sliceBytes: tuning.sliceBytes, atLeast: slices))
        }
        let slice = round.pairs[WriteSlices.range(round.slicesDone, of: round.slices, count: round.pairs.count)]
        let last = round.slicesDone + 1 == round.slices
        let added = try idIndex.write { db in
            let before = db.totalChangesCount
            let insert = HotStatement(try db.cachedStatement(sql: queries.insertEventId), in: db)
            for pair in slice {
                try insert.bind(InsertEventIdParameter.idKey, pair.key)
                try insert.bind(InsertEventIdParameter.seq, pair.seq)
                try insert.run()
            }
            let added = db.totalChangesCount - before
            if last {
                try db.execute(sql: queries.idIndex.setIndexedThrough, arguments: ["seq": round.upTo])
            }
            return added
        }
        idLevels.withLock { $0.recent += added }
        truncateIdIndexWAL()
        // The filter learns the keys before the writer may forget them: no moment without either.
        try ensureIdFilter()
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

    /// Keeps the index file's WAL to one slice; readers only ever hold it for one lookup.
    private func truncateIdIndexWAL() {
        _ = try? idIndex.inDatabase { db in try Row.fetchOne(db, sql: queries.truncateWAL) }
    }

    /// A fold when the recent level is due, else nil: at least `atLeast` key ranges, and as
    /// many as it takes for each to cover at most `SQLiteTuning.sliceBytes` of the index file (the
    /// main level's leaves of a range are what its slice rewrites). Between rounds only, so a
    /// fold cut short by a restart is planned again by the next step.
    private func plannedFold(atLeast: Int) -> FoldRound? {
        let levels = idLevels.withLock { $0 }
        guard levels.foldDue(minimum: tuning.idFoldMinimum, ratio: tuning.idFoldRatio) else { return nil }
        return FoldRound(slices: WriteSlices.count(items: levels.recent, filePath: idIndex.path, sliceBytes: tuning.sliceBytes, atLeast: atLeast))
    }

    /// One slice of a fold: the recent level's keys of one key range copied into the main
    /// level and deleted from the recent one, in one transaction, so a lookup (which reads both
    /// in one statement) finds every key at every moment. Keys merged meanwhile into a range
    /// already folded wait in the recent level for the next fold. A fold cut short by a restart
    /// is planned again by the next step; slices done again copy nothing twice (OR IGNORE).
    /// Returns whether that was the fold's last slice.
    private func foldStep(_ fold: FoldRound) throws -> Bool {
        let start = ContinuousClock.now
        let keys = WriteSlices.keyRange(fold.slicesDone, of: fold.slices)
        let index = queries.idIndex
        let (copied, removed) = try idIndex.write { db -> (Int, Int) in
            try db.cachedStatement(sql: index.foldInsert).execute(arguments: ["low_key": keys.lowerBound, "high_key": keys.upperBound])
            let copied = db.changesCount
            try db.cachedStatement(sql: index.foldDelete).execute(arguments: ["low_key": keys.lowerBound, "high_key": keys.upperBound])
            return (copied, db.changesCount)
        }
        idLevels.withLock {
            $0.main += copied
            $0.recent -= removed
        }
        truncateIdIndexWAL()
        let last = fold.slicesDone + 1 == fold.slices
        foldRound.withLock { $0 = last ? nil : FoldRound(slices: fold.slices, slicesDone: fold.slicesDone + 1) }
        logger.debug("folded recent ids into the id index", metadata: [
            "slice": "\(fold.slicesDone + 1)/\(fold.slices)", "ids": "\(removed)", "took": "\(ContinuousClock.now - start)",
        ])
        return last
    }

    /// Builds the id filter if it was left to its first use (`IdFilterBuild.atFirstUse`): every
    /// reader of `filter` calls this first. Blocks for as long as the build takes (about 2.5 s
    /// at 10 M ids), once.
    func ensureIdFilter() throws {
        try filterPending.withLock { pending in
            guard pending else { return }
            try loadOrRebuildFilter(databaseId: try databaseId(), levels: idLevels.withLock { $0 })
            pending = false
        }
    }

    /// The capacity a filter of the index's keys is built with: room for half as many again.
    static func filterCapacity(_ levels: IdIndexLevels) -> Int {
        max(1 << 20, (levels.main + levels.recent) * 3 / 2)
    }

    /// The id filter as the last clean close saved it (`SavedIdFilter`), when it covers the
    /// index as it is; otherwise built from every key of the index.
    func loadOrRebuildFilter(databaseId: String, levels: IdIndexLevels) throws {
        let covers = SavedIdFilter.Covers(
            databaseId: databaseId, indexedThrough: indexedThrough.withLock { $0 }, keys: levels.main + levels.recent)
        if let saved = SavedIdFilter.load(from: savedFilterURL, expecting: covers) {
            filter.withLock { $0 = saved }
            logger.info("id filter loaded as saved at the last close", metadata: ["keys": "\(covers.keys)"])
            return
        }
        try rebuildFilter(capacity: Self.filterCapacity(levels))
    }

    /// Where a clean close saves the id filter (see `SavedIdFilter`).
    var savedFilterURL: URL { directory.appending(path: SavedIdFilter.fileName) }

    /// At close, once nothing writes to the id index any more: saves the id filter for the next
    /// open, when it was built. A failure costs only the next open's build.
    func saveIdFilter() {
        guard !filterPending.withLock({ $0 }) else { return }
        do {
            let covers = SavedIdFilter.Covers(
                databaseId: try databaseId(), indexedThrough: indexedThrough.withLock { $0 },
                keys: idLevels.withLock { $0.main + $0.recent })
            try SavedIdFilter.save(filter.withLock { $0 }, covering: covers, to: savedFilterURL)
        } catch {
            logger.warning("id filter not saved: the next start builds it again", metadata: ["error": "\(error)"])
        }
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
    func prepareIdIndex(tailLimit: Int, idFilter: IdFilterBuild) throws {
        let installation = queries.installation, index = queries.idIndex
        let (databaseId, newest) = try pool.write { db -> (String, Int64) in
            if let id = try String.fetchOne(db, sql: installation.databaseId) {
                return (id, try Int64.fetchOne(db, sql: installation.maxSeq) ?? 0)
            }
            let id = UUID().uuidString.lowercased()
            try db.execute(sql: installation.insertDatabaseId, arguments: ["id": id])
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
            try db.execute(sql: index.reset, arguments: ["database_id": databaseId])
            return 0
        }
        indexedThrough.withLock { $0 = through }
        let levels = try idIndex.read { db in
            let counts = try Row.fetchOne(db, sql: index.keyCount)
            return IdIndexLevels(main: counts?[0] ?? 0, recent: counts?[1] ?? 0)
        }
        idLevels.withLock { $0 = levels }
        switch idFilter {
        case .atOpen: try loadOrRebuildFilter(databaseId: databaseId, levels: levels)
        case .atFirstUse: filterPending.withLock { $0 = true }
        }
        while try maxSeq() - indexedThrough.withLock({ $0 }) > Int64(tailLimit) {
            let merged = try mergeIdIndex()
            logger.info("id index caught up", metadata: ["merged": "\(merged)"])
        }
        let start = indexedThrough.withLock { $0 }
        try pool.read { db in
            let rows = HotStatement(try db.cachedStatement(sql: queries.idKeysInRange), in: db)
            try rows.bind(":after_seq", start)
            try rows.bind(":through_seq", Int64.max)
            var loaded = IdTail()
            while try rows.step() {
                loaded.add(key: rows.withStoredId(IdInRangeColumn.eventId) { EventIdKey.of(utf8: $0) } ?? EventIdKey.of(""), seq: rows.int64(IdInRangeColumn.seq))
            }
            tail.withLock { $0 = loaded }
        }
    }
}

/// How many keys each level of the on-disk id index holds (`recent_event_ids` and `event_ids`,
/// `queries/ids/0002_recent_event_ids.sql`), and when the recent one is folded into the main.
///
/// Why two levels: the keys are hashes, so a merge round's sorted ids land all over the level
/// they go into and rewrite most of its leaves. Into a main level of 17 M keys that was about
/// 1 KB of page writes an id; into a recent level of at most an eighth of it, an eighth of
/// that, plus one rewrite of the main level per fold, spread over the ids of the fold.
public struct IdIndexLevels: Sendable, Equatable {
    /// Keys in the main level.
    public var main: Int
    /// Keys in the recent level, where merges insert.
    public var recent: Int

    public init(main: Int, recent: Int) {
        self.main = main
        self.recent = recent
    }

    /// Whether the recent level holds at least `minimum` keys and one `ratio`-th of the main
    /// level's (`SQLiteTuning.idFoldMinimum`, `idFoldRatio`).
    public func foldDue(minimum: Int, ratio: Int) -> Bool {
        recent > 0 && recent >= max(minimum, main / ratio)
    }

    /// The recent level's share of `fileBytes`, the size of the file holding both levels.
    func recentShare(of fileBytes: Int) -> Int {
        main + recent == 0 ? fileBytes : Int(Double(fileBytes) * Double(recent) / Double(main + recent))
    }
}

/// A fold of the id index's recent level into the main one in progress: how many key ranges
/// (`WriteSlices.keyRange`) it takes and how many are done.
struct FoldRound: Sendable, Equatable {
    let slices: Int
    var slicesDone = 0
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

/// When `EventStore` builds its id filter (every key of the on-disk id index, so that most new
/// ids skip the index lookup): at open, for processes that take events (`serve`, `generate`),
/// or at its first use, for commands that may never look an id up (`rollup` after a caught-up
/// follower, where building it took 2.5 s of a 10 M-event rebuild's 30).
public enum IdFilterBuild: Sendable {
    case atOpen
    case atFirstUse
}
