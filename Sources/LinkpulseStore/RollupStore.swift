import Foundation
import GRDB
import LinkpulseDomain
import Logging
import Synchronization

/// The rollups (`linkpulse-rollups.sqlite`): conversion counts by time, link and audience,
/// counted from the attributed events in store order. Its passes, run by the derived-work loop
/// (`DerivedWork`) or by a command, are the file's only writer; `StatsReader` reads it.
public final class RollupStore: Sendable {
    /// The rollup job's connection: the rollup file alone. A pass counts on an events reader
    /// (`count`), which sees the attribution file too, and writes here.
    let queue: DatabaseQueue
    /// The events it counts, and the attribution it counts them under.
    let events: EventStore
    let attribution: AttributionStore
    let queries: SQLQueries
    let logger: Logger
    /// The store's tuned sizes and times (a pass's cells, the cube sums' bound).
    let tuning: SQLiteTuning
    /// The link tuples of the rollup file, cached (shared by the rollup job and the readers).
    let linkTuples = LinkTuples()
    /// Decoded sums of cube blocks and day parts for breakdowns over long ranges (a 90-day
    /// range of 10,000 refs needs about 15 MB of them), at most `SQLiteTuning.cubeSumsBytes`.
    let cubeSums: CubeSumsCache
    /// How long the rollup passes have worked in all.
    public let passTime = WorkTime()
    /// How long the attribution rounds have worked in all (see `passTime`).
    public var attributionRoundTime: WorkTime { attribution.roundTime }
    /// How many link tuples (distinct ref, campaign, source and medium) this process keeps in
    /// memory: every one the rollup file holds that a pass or a stats read has met.
    public var linkTuplesKnown: Int { linkTuples.knownCount }
    /// Set when the store closes: runs stop between two passes.
    let closing = Mutex(false)

    init(queue: DatabaseQueue, events: EventStore, attribution: AttributionStore, tuning: SQLiteTuning, queries: SQLQueries, logger: Logger) {
        self.tuning = tuning
        cubeSums = CubeSumsCache(limitBytes: tuning.cubeSumsBytes)
        self.queue = queue
        self.events = events
        self.attribution = attribution
        self.queries = queries
        self.logger = logger
    }

    /// Makes runs stop between two passes (the next start finishes the backlog).
    func beginClosing() {
        closing.withLock { $0 = true }
    }

    /// Truncates the WAL and closes the connection (after `beginClosing`).
    func close(truncating truncate: String) throws {
        _ = try? queue.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        try queue.close()
    }

    /// The seq through which every event is counted in the rollups.
    public func rolledThroughSeq() throws -> Int64 {
        try queue.inDatabase { db in try derivedWatermark(db, queries.rollup.state) }
    }

    /// Rolls up every event stored so far, in passes of `batch` events (attributing each
    /// pass's worth first, see `rollUp`); returns how many. Synchronous; for the command line,
    /// the admin endpoint and tests.
    @discardableResult
    public func rollUpAll(batch: Int = 200_000) throws -> Int {
        var total = 0
        while true {
            let processed = try rollUp(maxEvents: batch)
            total += processed
            if processed == 0 || closing.withLock({ $0 }) { return total }
        }
    }

    /// A pass of `rollUp` stops once it holds `SQLiteTuning.passCells` 15-minute cells (its
    /// other events are the next pass's). A pass's memory grows with its cells, not its events:
    /// about 400 bytes a cell over its three grains, the new link tuples it names and the parts
    /// it writes. Events spread over many link tuples (a million in `ops/bench/events.lua`) make
    /// a cell of almost every event, and a pass of 200,000 of them took about 90 MB of the
    /// daemon's memory; traffic over fewer links shares cells and still makes passes of 200,000
    /// events. The command line's rebuild (`rollUpAllInParallel`), which has the machine to
    /// itself, is not bounded so.

    /// Makes a count of every event stored so far due on the derived-work loop, in passes of
    /// `batch` events, and returns at once: false when one was due already (it then goes on
    /// through what is stored now). For the rollup timer, which only triggers. `onPass` gets
    /// how many events each pass counted and how long it took.
    @discardableResult
    public func requestRollUp(batch: Int, onPass: @escaping @Sendable (Result<(count: Int, took: Duration), any Error>) -> Void) -> Bool {
        let fresh = attribution.derived.countSoon(DerivedWork.CountDue(
            batch: batch, pass: { [self] in try rollUp(maxEvents: $0, attributing: false) },
            rolledThroughSeq: { [self] in try rolledThroughSeq() }, onPass: onPass))
        attribution.followCommits()
        return fresh
    }

    /// Rolls up every event stored so far and beyond, until caught up, on the derived-work
    /// loop's thread; returns how many events it counted. For the admin endpoint.
    public func rollUpNow(batch: Int = 200_000) async throws -> Int {
        try await attribution.derived.thread.run { [self] in try rollUpAll(batch: batch) }
    }

    /// Rolls up every event stored when it is called, on the derived-work loop's thread (see
    /// `rollUpThroughCurrent`). For scheduled exports.
    public func rollUpStoredSoFar() async throws -> Int {
        try await attribution.derived.thread.run { [self] in try rollUpThroughCurrent() }
    }

    /// Returns once the derived-work loop has finished the work queued before this call (for a
    /// graceful shutdown).
    public func settled() async {
        _ = try? await attribution.derived.thread.run {}
    }

    /// Rolls up every event stored when it is called (not those arriving meanwhile, so it ends
    /// even under sustained ingest); returns how many events it processed. For readers that must
    /// see everything stored so far: scheduled exports, `linkpulse export`.
    @discardableResult
    public func rollUpThroughCurrent(batch: Int = 200_000) throws -> Int {
        let target = try events.maxSeq()
        var total = 0
        while try rolledThroughSeq() < target {
            // An export must not be written from rollups that stopped short.
            if closing.withLock({ $0 }) { throw StoreError.closed }
            let processed = try rollUp(maxEvents: batch)
            total += processed
            if processed == 0 { break }
        }
        return total
    }

    /// Forgets every rollup so that the next passes recompute them from the raw events and
    /// their stored attribution (`linkpulse rollup --rebuild`, and at open when the rollup file
    /// does not belong to the events database).
    public func resetRollups() throws {
        try events.refuseRecountAfterRetention("counting the rollups again from the raw events")
        let databaseId = try events.databaseId()
        try queue.inDatabase { db in
            try db.inTransaction(.deferred) {
                try db.execute(
                    sql: queries.rollup.reset,
                    arguments: ["database_id": databaseId, "window_ms": attribution.windowMs, "counting_rules": CountingRules.version])
                return .commit
            }
            // The emptied file would otherwise keep every page of the old rollups as free space.
            // Only space is at stake: a vacuum that fails leaves the pages free for the recount.
            do { try db.execute(sql: queries.connection.vacuum) } catch {
                logger.notice("the emptied rollup file keeps its free pages", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One rollup pass over at most `maxEvents` events past the watermark: adds them, under the
    /// dimensions their stored attribution gives them, to every rollup grain, and advances the
    /// watermark, all in one transaction of the rollup file. Returns how many events it
    /// processed (0 when up to date). Idempotent and restartable: a pass that dies leaves
    /// nothing behind, and a finished one is never counted again.
    ///
    /// Never takes the events database's write lock, so it never blocks ingest. Synchronous;
    /// several callers (the timer, `linkpulse rollup`, the admin endpoint) are serialised by
    /// the rollup file's lock.
    ///
    /// Only attributed events are counted. With `attributing`, the pass attributes its worth
    /// first if nothing has yet (bounded, so a pass never chases events stored after it
    /// began): for callers that must count everything stored (the command line, the admin
    /// endpoint, exports). The derived-work loop's passes count what its rounds attributed.
    ///
    /// A pass also stops once it holds `maxCells` 15-minute cells (by default
    /// `SQLiteTuning.passCells`).
    public func rollUp(maxEvents: Int = 200_000, maxCells: Int? = nil, attributing: Bool = true) throws -> Int {
        let maxCells = maxCells ?? tuning.passCells
        if attributing { try attribution.attributeAhead(of: try rolledThroughSeq(), by: maxEvents) }
        return try passTime.measure { try countPass(maxEvents: maxEvents, maxCells: maxCells) }
    }

    /// The counting and writing of a pass of `rollUp`, inside `passTime`: counted on an events
    /// reader (which holds a snapshot of the events only while it counts), written in the
    /// rollup file's own transaction, which reads nothing of them.
    private func countPass(maxEvents: Int, maxCells: Int) throws -> Int {
        while true {
            guard let pass = try count(after: try rolledThroughSeq(), tuples: nil, limit: maxEvents, maxCells: maxCells) else { return 0 }
            let written = try queue.inDatabase { db in
                var written = false
                try db.inTransaction(.deferred) {
                    // A write first: takes the rollup file's write lock, then `write` checks that
                    // no other pass counted these events meanwhile.
                    try db.execute(sql: queries.rollup.lock)
                    written = try write(pass, in: db, visitorsInParts: true)
                    return written ? .commit : .rollback
                }
                // The pass is counted whatever happens to the fold: one that fails is done
                // again after the next pass (parts are read until they are folded).
                if written {
                    do {
                        try foldVisitorPartsIfDue(db)
                    } catch {
                        logger.warning("folding click visitor parts failed; trying again after the next pass", metadata: ["error": "\(error)"])
                    }
                }
                return written
            }
            // Another process's pass came first: count again from its watermark.
            if written { return pass.count }
        }
    }

    /// Writes a prepared pass in the current rollup transaction (which holds the file's write
    /// lock), if it still fits: the watermark is the one it counted after, and no link tuple was
    /// added since it was counted. Returns whether it was written. With `visitorsInParts`, its
    /// click visitors by value go into parts (see `foldVisitorParts`).
    func write(_ pass: PreparedPass, in db: Database, visitorsInParts: Bool) throws -> Bool {
        let state = try Row.fetchOne(db, sql: queries.rollup.state)
        let watermark: Int64 = state?[RollupStateColumn.rolledThroughSeq] ?? 0
        let mergedThroughDay: Int64 = state?[RollupStateColumn.blocksMergedThroughDay] ?? 0
        let lastTuple = try Int64.fetchOne(db, sql: queries.rollup.lastTuple) ?? 0
        guard watermark == pass.watermark, lastTuple == Int64(pass.tuplesBefore.count - 1) else { return false }
        let merged = try RollupWriter(db: db, queries: queries).write(pass, mergedThroughDay: mergedThroughDay, visitorsInParts: visitorsInParts)
        try db.execute(sql: queries.rollup.advanceWatermark, arguments: ["seq": pass.lastSeq, "event_id": pass.lastEventId, "merged_through_day": merged])
        if visitorsInParts { try db.cachedStatement(sql: queries.rollup.countDimensionPartPass).execute() }
        return true
    }

    /// How many passes' click visitors by value wait in parts before they are folded into the
    /// values' days. A fold rewrites every busy value's day sketch once (16 KiB past 1,000
    /// visitors), where merging each pass into them rewrote them all at every pass; readers
    /// merge at most this many parts more per value and day.
    static let visitorPartPasses: Int64 = 16

    /// The most values' days one transaction of a fold writes: each may rewrite a 16 KiB
    /// sketch, so a transaction writes at most about 32 MiB of the file (and of its WAL).
    static let visitorFoldKeys = 2_048

    /// After a pass's commit, on the rollup connection: folds the click visitors by value in
    /// parts into the values' days once `visitorPartPasses` passes have written parts.
    func foldVisitorPartsIfDue(_ db: Database) throws {
        let passes: Int64 = try Row.fetchOne(db, sql: queries.rollup.state)?[RollupStateColumn.dimensionPartPasses] ?? 0
        if passes >= Self.visitorPartPasses { try foldVisitorParts(db) }
    }

    /// Folds every part of the passes counted so far into `dimension_days`, in slices of
    /// `visitorFoldKeys` values' days in key order, each in a transaction of its own (so the WAL is
    /// checkpointed between them), then deletes the parts. A union is idempotent, so a reader
    /// that sees a key both folded and as a part between two slices counts it once, a key
    /// whose parts straddle two slices is merged twice with the same result, and a fold cut
    /// short (a failure, another process's fold) is simply done again.
    func foldVisitorParts(_ db: Database) throws {
        let start = ContinuousClock.now
        let through = try derivedWatermark(db, queries.rollup.state)
        let merged = try mergeVisitorParts(db, through: through)
        try db.inTransaction(.deferred) {
            try db.execute(sql: queries.rollup.lock)
            try db.execute(sql: queries.rollup.deleteDimensionDayParts, arguments: ["pass": through])
            return .commit
        }
        logger.debug("folded click visitor parts", metadata: [
            "values_days": "\(merged.keys)", "slices": "\(merged.slices)", "took": "\(ContinuousClock.now - start)",
        ])
    }

    /// The slices of a fold: the parts of passes through `through` merged into the values'
    /// days, the parts left as they are, `keysPerSlice` values' days a transaction. Returns
    /// how many slices and keys it went through.
    @discardableResult
    func mergeVisitorParts(_ db: Database, through: Int64, keysPerSlice: Int = visitorFoldKeys) throws -> (slices: Int, keys: Int) {
        typealias Key = (dim: String, value: String, day: Int64, bot: Int64)
        var after: Key = ("", "", Int64.min, Int64.min)
        var more = true
        var (slices, keys) = (0, 0)
        while more {
            try db.inTransaction(.deferred) {
                try db.execute(sql: queries.rollup.lock)
                let read = HotStatement(try db.cachedStatement(sql: queries.rollup.dimensionDayPartsAfter), in: db)
                try read.bind(":dim", after.dim)
                try read.bind(":value", after.value)
                try read.bind(":day", after.day)
                try read.bind(":bot", after.bot)
                try read.bind(":pass", through)
                let writer = try RollupWriter(db: db, queries: queries)
                var key: Key?
                var sketch = VisitorSketch()
                var keysInSlice = 0
                func flush(_ key: Key) throws {
                    try writer.upsertDay(dimension: key.dim, value: key.value, day: key.day, isBot: key.bot != 0, sketch: sketch.serialized)
                    after = key
                    sketch = VisitorSketch()
                }
                more = false
                while try read.step() {
                    typealias C = DimensionDayPartColumn
                    let next: Key = (read.text(C.dim) ?? "", read.text(C.value) ?? "", read.int64(C.day), read.int64(C.bot))
                    if let current = key, current != next {
                        try flush(current)
                        key = nil
                        if keysInSlice == keysPerSlice {
                            read.finish()
                            more = true
                            break
                        }
                    }
                    if key == nil {
                        key = next
                        keysInSlice += 1
                    }
                    if let bytes = read.blob(C.clickVisitors) { sketch.merge(serialized: bytes) }
                }
                if !more, let key { try flush(key) }
                slices += 1
                keys += keysInSlice
                return .commit
            }
        }
        return (slices, keys)
    }

    /// Counts the next pass (at most `limit` events after `watermark`, at most `maxCells`
    /// 15-minute cells) on an events reader, in one read transaction, starting from `tuples`
    /// (nil: the stored ones); nil when nothing attributed is left to count.
    func count(
        after watermark: Int64, tuples: LinkTuples.Known?, limit: Int, maxCells: Int = .max, serializingQuarters: Bool = false
    ) throws -> PreparedPass? {
        try events.pool.read { db in
            let attributed = try derivedWatermark(db, queries.rollup.attributionState)
            var counter = try RollupCount(db: db, queries: queries, tuples: try tuples ?? linkTuples.current(db, sql: queries.rollup.tuplesAfter))
            guard let counted = try counter.count(after: watermark, through: attributed, limit: limit, maxCells: maxCells) else { return nil }
            var pass = counter.prepare(after: watermark, lastSeq: counted.lastSeq, count: counted.count, serializingQuarters: serializingQuarters)
            pass.lastEventId = try String.fetchOne(db.cachedStatement(sql: queries.eventIdAtSeq), arguments: ["seq": counted.lastSeq])
            return pass
        }
    }

    /// `count` for the rebuild's counting thread: attributes ahead first, and serializes the
    /// pass's 15-minute parts on that thread.
    func countAhead(after watermark: Int64, tuples: LinkTuples.Known?, limit: Int) throws -> PreparedPass? {
        try attribution.attributeAhead(of: watermark, by: limit)
        return try count(after: watermark, tuples: tuples, limit: limit, serializingQuarters: true)
    }

    /// `rollUpAll` on both cores: each pass is written while the next one is counted and
    /// prepared on another thread (Dispatch's, for the duration of the call). For the command
    /// line, where nothing else needs the cores; the daemon's passes run one at a time on its
    /// derived-work loop. Falls back to passes one at a time when another process
    /// writes the rollups meanwhile.
    ///
    /// The counting side runs ahead of the writing side by up to `PassHandoff.depth` passes
    /// instead of meeting it after every pass: a pass that is slow to write (a day's blocks
    /// merged, the day boundaries) and one that is slow to count no longer leave the other
    /// core idle.
    ///
    /// With `unsynced`, the rollup file's commits and checkpoints do not wait for the disk
    /// (5-9% of a 10 M-event rebuild): only for a file the caller made anew and marked
    /// (`AppDatabase.markUnsyncedRebuild`), whose marker it removes once the file is closed.
    /// Durability comes back before this returns.
    @discardableResult
    public func rollUpAllInParallel(batch: Int = 500_000, unsynced: Bool = false) throws -> Int {
        if unsynced {
            try queue.inDatabase { db in try db.execute(sql: queries.connection.durabilityOff) }
        }
        defer {
            if unsynced { try? queue.inDatabase { db in try db.execute(sql: queries.connection.durabilityNormal) } }
        }
        let start = try rolledThroughSeq()
        let handoff = PassHandoff()
        // Counting on a thread of its own: each pass after the one before, handed over as it
        // is ready (the writer below needs it to run beside it, whatever Dispatch's pool has).
        let counting = Thread { [self] in
            defer { handoff.countingEnded() }
            var after = start
            var tuples: LinkTuples.Known?
            let newest = (try? events.maxSeq()) ?? .max
            while true {
                // The first pass is counted with nothing to write beside it, and the last is
                // written with nothing to count: both short, so neither core waits long.
                let limit = after == start ? max(batch / 5, 1) : min(batch, max(batch / 5, Int(min(newest - after, Int64(Int.max))) / 2, 1))
                let counted = Result { try countAhead(after: after, tuples: tuples, limit: limit) }
                guard handoff.put(counted), case .success(let pass?) = counted else { return }
                after = pass.lastSeq
                tuples = pass.tuplesAfter
            }
        }
        counting.name = "linkpulse.rollups.count"
        counting.start()
        // Writing, on this thread: the passes in order, until none is left or one cannot be
        // written; then the counting thread is stopped and waited for.
        var total = 0
        var finished = true
        var failure: (any Error)?
        do {
            while let pass = try handoff.take().get() {
                let written = try queue.inDatabase { db in
                    var written = false
                    try db.inTransaction(.deferred) {
                        try db.execute(sql: queries.rollup.lock)
                        // The rebuild's passes each cover whole stretches of days: each
                        // value's day is written by few of them, so into the days directly.
                        written = try write(pass, in: db, visitorsInParts: false)
                        return written ? .commit : .rollback
                    }
                    return written
                }
                guard written else {
                    finished = false
                    break
                }
                total += pass.count
            }
        } catch {
            failure = error
        }
        handoff.stop()
        handoff.waitForCountingToEnd()
        if let failure { throw failure }
        // Another process's pass came first: the rest one pass at a time, from its watermark.
        return finished ? total : total + (try rollUpAll(batch: batch))
    }

    /// At open: ties the rollup file to this database, and starts it over when its state does
    /// not fit the events database (see `EventStore.mismatch`), it was counted by earlier
    /// `CountingRules` (when the raw events are all kept to count again), or it is ahead of
    /// the attribution.
    func prepareRollups() throws {
        let state = try queue.inDatabase { db -> Row? in
            try queries.prepareRollupStatements(db)
            return try Row.fetchOne(db, sql: queries.rollup.state)
        }
        guard let state else { return try resetRollups() }
        if let reason = try events.mismatch(
            databaseId: state[RollupStateColumn.databaseId], watermark: state[RollupStateColumn.rolledThroughSeq],
            eventIdAtWatermark: state[RollupStateColumn.throughEventId]) {
            logger.warning("recomputing the rollups", metadata: ["reason": "\(reason)"])
            return try resetRollups()
        }
        let rules: Int = state[RollupStateColumn.countingRules]
        if rules < CountingRules.version {
            if events.rawEventsAreAllKept {
                logger.notice("counting the rollups again by this version's rules", metadata: ["changes": "\(CountingRules.changes)"])
                return try resetRollups()
            }
            // Retention deleted raw events: their rollups are the only counts of them and stay.
            logger.warning(
                "the rollups of deleted raw events stay as counted by earlier rules; what is counted from now on follows this version's",
                metadata: ["changes": "\(CountingRules.changes)"])
            try queue.inDatabase { db in try db.execute(sql: queries.rollup.adoptCountingRules, arguments: ["counting_rules": CountingRules.version]) }
        }
        let watermark: Int64 = state[RollupStateColumn.rolledThroughSeq]
        if watermark > (try attribution.attributedThroughSeq()) {
            // Attribution was started over (its file deleted, or a version that moved it).
            logger.notice("the rollups are ahead of the attribution; recomputing them as it catches up")
            return try resetRollups()
        }
    }
}

/// How far the rollups (and so every stats answer) are behind the stored events.
public struct RollupProgress: Sendable, Equatable {
    /// The newest stored seq.
    public var storedThroughSeq: Int64
    /// Every event with a seq up to this one is counted.
    public var countedThroughSeq: Int64
    /// Every event with a seq up to this one is attributed (only those can be counted).
    public var attributedThroughSeq: Int64
    /// When the oldest event not yet counted was received, UTC ms; nil when all are counted.
    public var oldestUncountedReceivedAtMs: Int64?

    /// Events stored but not yet counted.
    public var backlog: Int64 { max(storedThroughSeq - countedThroughSeq, 0) }
    /// Events stored but not yet attributed.
    public var attributionBacklog: Int64 { max(storedThroughSeq - attributedThroughSeq, 0) }

    /// How long the oldest event not yet counted has been waiting at `nowMs`, in seconds (0 when
    /// every stored event is counted): every event received longer ago than this is in the stats.
    public func lagSeconds(nowMs: Int64) -> Double {
        guard let oldest = oldestUncountedReceivedAtMs else { return 0 }
        return Double(max(nowMs - oldest, 0)) / 1000
    }
}

extension RollupStore {
    /// The rollups' progress, read in one snapshot of both files. For `/metrics` and the
    /// admin API; cheap (two index lookups).
    public func rollupProgress() async throws -> RollupProgress {
        try await events.pool.read { [self] db in try readRollupProgress(db) }
    }

    /// `rollupProgress()` for the store's opening, on a thread of its own: it blocks for the read.
    func rollupProgressBlocking() throws -> RollupProgress {
        try events.pool.read { [self] db in try readRollupProgress(db) }
    }

    private func readRollupProgress(_ db: Database) throws -> RollupProgress {
        let row = try Row.fetchOne(db, sql: queries.rollup.progress)
        return RollupProgress(
            storedThroughSeq: row?[RollupProgressColumn.storedThroughSeq] ?? 0, countedThroughSeq: row?[RollupProgressColumn.countedThroughSeq] ?? 0,
            attributedThroughSeq: row?[RollupProgressColumn.attributedThroughSeq] ?? 0,
            oldestUncountedReceivedAtMs: row?[RollupProgressColumn.oldestUncountedReceivedAtMs])
    }
}

/// Counted passes on their way from the counting thread to the writing one: at most `depth`
/// wait, so the counting side runs ahead without holding more than a few passes in memory.
/// Both sides block on a condition (plain threads of `rollUpAllInParallel`, never the
/// cooperative pool).
final class PassHandoff: @unchecked Sendable {
    /// How many counted passes may wait for the writer.
    static let depth = 1
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: [Result<PreparedPass?, any Error>] = []
    private var stopped = false
    private var countingRunning = true

    /// Hands a counted pass (or the end, nil, or an error) over, waiting while `depth` wait;
    /// false once the writer has stopped taking them.
    func put(_ counted: Result<PreparedPass?, any Error>) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting.count >= Self.depth && !stopped { condition.wait() }
        guard !stopped else { return false }
        waiting.append(counted)
        condition.broadcast()
        return true
    }

    /// The next counted pass, waiting until there is one.
    func take() -> Result<PreparedPass?, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while waiting.isEmpty { condition.wait() }
        let next = waiting.removeFirst()
        condition.broadcast()
        return next
    }

    /// The writer takes no more: a counting side waiting to hand one over gives up.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Said by the counting thread as it ends.
    func countingEnded() {
        condition.lock()
        countingRunning = false
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the counting thread has ended (after `stop`, it ends at its next hand-over).
    func waitForCountingToEnd() {
        condition.lock()
        defer { condition.unlock() }
        while countingRunning { condition.wait() }
    }
}
