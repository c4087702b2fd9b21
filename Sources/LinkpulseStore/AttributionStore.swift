import Foundation
import GRDB
import LinkpulseDomain
import Logging
import Synchronization

/// The attribution follower: every event attributed once, in store order, into the attribution
/// file (`linkpulse-attribution.sqlite`), by `Attributor` (see
/// `queries/attributions/0001_attribution.sql` for what it keeps). Its rounds, run on threads
/// it owns after each ingest commit, are the file's only writer; the rollup job and the
/// answers to apps read what it decided.
public final class AttributionStore: Sendable {
    /// The follower's connection: the attribution file alone. A round reads its events through
    /// the event store (`EventStore.attributionPage`), in a transaction of the events' own.
    let queue: DatabaseQueue
    /// A connection used only to checkpoint the file's WAL, so a checkpoint never waits for
    /// a round (its commits never checkpoint, see `checkpoint(_:)`).
    let checkpointer: DatabaseQueue
    /// The events it attributes (a page a round), and where it reads the answers from.
    let events: EventStore
    let queries: SQLQueries
    let logger: Logger
    /// How long before an install or open a click may be to match it by fingerprint.
    let windowMs: Int64
    /// The attribution rules, applied to every event in store order.
    let attributor: Attributor
    /// The store's tuned sizes and times: the click index entries held in memory
    /// (`recentClickEntries`, see `RecentClicks`); how far before the memory horizon the
    /// on-disk fingerprint index reaches (`fingerprintClicksKeptMs`: each move of clicks to disk
    /// moves the index's start to that far before the new horizon, a whole UTC hour, and its
    /// older rows are deleted; a lookup before that start reads the raw events of its window
    /// instead); the slices, budgets and waits of those moves.
    let tuning: SQLiteTuning
    /// Whether the on-disk fingerprint index may hold rows before its start (at start, and after
    /// the start moved): the follower then deletes them between rounds (`pruneFingerprintClicks`).
    let fingerprintPruneDue = Atomic<Bool>(true)
    /// The memory half of the click indexes as the last committed round left it (only the
    /// follower's rounds use it, one at a time).
    let recentClicksKept = Mutex<RecentClicks?>(nil)
    /// The entries of the memory half last kept, for `/metrics` (read without the lock).
    let recentClickEntriesKept = Atomic<Int>(0)
    /// How far attribution has come, for callers waiting for an answer.
    let progress = AttributionProgress()
    /// How long the attribution rounds (moves of clicks to disk included) have worked in all.
    public let roundTime = WorkTime()
    /// Whether the memory half of the click indexes has been listed in this process (by
    /// `listRecentClicksSoon` or a round): until then, the next round lists it first.
    let recentClicksListed = Atomic<Bool>(false)
    /// How many answers rounds have read for their waiters, handed over or parked for a caller
    /// yet to come (see `answersAwaited`, `AttributionProgress.expect`).
    let answersHandedOver = Atomic<Int>(0)
    /// When the file's WAL was last checkpointed.
    let checkpointed = Mutex(ContinuousClock.now)
    /// Whether the file's WAL should start over: set by the checkpoint job past its limit, and
    /// by a move of clicks to disk that waits for room; the derived-work loop (the file's only
    /// writer, and its only long reader with the rollup passes it runs between its rounds)
    /// checkpoints to the end between two turns (`restartAttributionWALIfWanted`), and its next
    /// commit starts the WAL over. No reader waits for it, as for the events WAL
    /// (`EventStore.walRestartWanted`).
    let walRestartWanted = Atomic<Bool>(false)
    /// The derived-work loop: the follower's rounds, and the rollup passes between them.
    let derived = DerivedWork()
    /// The same rounds at normal priority, run only when a caller waits for an answer (an app's
    /// first launch): it then comes before the load, not after it (measured: resolve p99 at 64
    /// connections 2.2 s with the follower alone, 40 ms with this thread). A thread's priority
    /// can be lowered but not raised again without privileges, hence a thread of its own.
    let urgentThread = StoreThread(name: "linkpulse.attribution.urgent", nice: 0)
    let urgentRequests: CoalescedWork
    /// Set when the store closes: rounds stop between two batches.
    let closing = Mutex(false)
    /// Whether the next slice of a move of clicks to disk waits for the WAL to start over, or
    /// gave up waiting (see `walHasRoomForSlice`); nil while the WAL has room.
    let sliceWait = Mutex<SliceWait?>(nil)
    /// How many urgent rounds wait for the attribution connection now (see `movePutOff`).
    let urgentRoundsWaiting = Atomic<Int>(0)
    /// When the last urgent round ended (see `movePutOff`).
    let urgentRoundEnded = Mutex<ContinuousClock.Instant?>(nil)
    /// Whether the last round that could work on a move of clicks to disk left it for apps
    /// being answered (see `movePutOff`): the follower then looks again once they may have
    /// gone quiet, or, while an urgent round waits, stops (that round wakes it).
    let moveLeftForApps = Atomic<Bool>(false)

    init(
        queue: DatabaseQueue, checkpointer: DatabaseQueue, events: EventStore, windowMs: Int64, tuning: SQLiteTuning,
        queries: SQLQueries, logger: Logger
    ) {
        self.tuning = tuning
        self.queue = queue
        self.checkpointer = checkpointer
        self.events = events
        self.windowMs = windowMs
        attributor = Attributor(windowMs: windowMs)
        self.queries = queries
        self.logger = logger
        urgentRequests = CoalescedWork(on: urgentThread, coversRunning: false)
    }

    /// The seq through which every event is attributed.
    public func attributedThroughSeq() throws -> Int64 {
        try queue.inDatabase { db in try derivedWatermark(db, queries.attribution.state) }
    }

    /// Attributes every event stored so far, in rounds of at most `batch` events; returns how
    /// many events it went through (clicks included). Synchronous; the urgent thread, commands
    /// and tests call it (the derived-work loop goes a round a turn, see `derivedTurn`).
    /// With `background` (rounds no one waits on, as the loop's), each round first starts the
    /// attribution file's WAL over if wanted, and reads no answers for waiters. With `urgent`
    /// (the thread for commits an app waits on), rounds leave moves of clicks to disk to the
    /// follower.
    @discardableResult
    public func attributeAll(batch: Int = 20_000, background: Bool = false, urgent: Bool = false) throws -> Int {
        var total = 0
        while true {
            if background { try restartAttributionWALIfWanted() }
            let processed = try attributeRound(maxEvents: batch, answering: !background, movesClicks: !urgent)
            total += processed
            if closing.withLock({ $0 }) { return total }
            if urgent ? processed < batch : !followerGoesOn(afterRoundOf: processed, batch: batch) { return total }
        }
    }

    /// Whether the follower goes on after a round that went through `processed` of at most
    /// `batch` events: a full round leaves more, and a move of clicks to disk in progress is
    /// worked on round after round until done, leaving the connection free between its slices.
    /// A short round read every event stored when it began: no empty round (a write
    /// transaction of its own) just to find that out; later commits ask for their own.
    func followerGoesOn(afterRoundOf processed: Int, batch: Int) -> Bool {
        guard processed < batch else { return true }
        if moveLeftForApps.load(ordering: .relaxed) {
            // A move (begun or due) left for apps being answered (see `movePutOff`). A round
            // waiting for the connection wakes the follower when it ends; otherwise one has
            // just ended, and the last round of a flood wakes the follower too early to go
            // on: it looks again once apps may have gone quiet.
            if urgentRoundsWaiting.load(ordering: .relaxed) > 0 { return false }
            RetryBackoff(pause: tuning.appsQuietFor).pauseThread()
            return true
        }
        if sliceWaitsForWAL {
            // Looked at again shortly rather than in a run of empty rounds.
            RetryBackoff(pause: tuning.retryAfter).pauseThread()
            return true
        }
        return moveInProgress
    }

    /// Between two turns of the derived-work loop, while a restart of the WAL is wanted: a
    /// passive checkpoint of the file that no commit can overtake (the loop's rounds are its
    /// only writer, and the urgent ones go through the same connection); once it reaches the
    /// end, the next round's commit starts the WAL over.
    func restartAttributionWALIfWanted() throws {
        guard walRestartWanted.load(ordering: .relaxed) else { return }
        let (pages, done) = try queue.inDatabase { db in try checkpoint(db) }
        if done >= pages { walRestartWanted.store(false, ordering: .relaxed) }
    }

    /// `attributeAll` for the command line, which has the machine to itself: rounds of 200,000
    /// events in a 256 MiB page cache (the daemon's follower keeps 2 MiB). Fewer commits and
    /// checkpoints, and click indexes that stay in memory, replay 1 M generated events in about
    /// half the time.
    @discardableResult
    public func attributeAllInBulk() throws -> Int {
        try queue.inDatabase { db in try db.execute(sql: queries.connection.cacheSize(kib: 262_144)) }
        defer { try? queue.inDatabase { db in try db.execute(sql: queries.connection.cacheSize(kib: tuning.pageCaches.attributionKiB)) } }
        let total = try attributeAll(batch: 200_000)
        // A replay's rounds are few (each prunes for a moment): the command leaves no row before
        // the fingerprint index's span behind, nor their pages (in a file its reset made able to
        // give them back; the daemon's follower leaves them for the clicks it moves to disk next).
        try queue.inDatabase { db in
            while fingerprintPruneDue.load(ordering: .relaxed) { try pruneFingerprintClicks(db) }
            try db.execute(sql: queries.connection.incrementalVacuum(pages: 0))
        }
        return total
    }

    /// Attributes, if the follower has not yet, the events up to `count` past `seq` (a rollup
    /// pass's worth): bounded work even while ingest goes on, so a rollup run never waits for
    /// attribution to catch up with events stored after it began.
    func attributeAhead(of seq: Int64, by count: Int) throws {
        let wanted = seq + Int64(count)
        while try attributedThroughSeq() < wanted {
            if try attributeRound(maxEvents: 20_000) == 0 { return }
        }
    }

    /// `followCommits` at normal priority, for a caller waiting for an answer (both threads'
    /// rounds go through the one attribution connection, one at a time). It never waits for
    /// the WAL: an app is waiting.
    func followCommitsUrgently() {
        urgentRequests.request(once: { [self] in attributeAllLogged(urgent: true) })
    }

    /// Lists the memory half of the click indexes, at normal priority in the background, unless
    /// a round of this process already has. After a start, the first round lists it (on a
    /// large installation, seconds of reading the events' time index): asked for when the
    /// daemon starts, that is not done with an app's resolve waiting behind it (measured: the
    /// first second of resolves after a start had a p99 of 805 ms).
    public func listRecentClicksSoon() {
        urgentRequests.request(once: { [self] in
            do {
                try listRecentClicks()
            } catch {
                logger.error("listing the recent clicks failed; the next round lists them", metadata: ["error": "\(error)"])
            }
        })
    }

    /// `listRecentClicksSoon`'s work: a round's transaction that attributes nothing and keeps
    /// the memory half for the next round (clicks past its capacity go to disk with the new
    /// horizon, as in a round).
    func listRecentClicks() throws {
        try queue.inDatabase { db in
            var listed: RecentClicks?
            try db.inTransaction(.deferred) {
                try db.cachedStatement(sql: queries.attribution.lock).execute()
                let state = try Row.fetchOne(db.cachedStatement(sql: queries.attribution.state))
                let disk = try DiskClicks(db: db, queries: queries.attribution, events: events, fingerprintFromMs: state?[AttributionStateColumn.fingerprintFromMs] ?? Int64.min)
                listed = try recentClicks(through: state?[AttributionStateColumn.attributedThroughSeq] ?? 0, horizon: state?[AttributionStateColumn.recentFromMs] ?? Int64.min, disk: disk)
                return .commit
            }
            if let listed { keep(listed) }
        }
    }

    /// Keeps a committed round's (or listing's) memory half for the next round.
    private func keep(_ recent: RecentClicks) {
        recentClickEntriesKept.store(recent.entries, ordering: .relaxed)
        recentClicksKept.withLock { $0 = recent }
        recentClicksListed.store(true, ordering: .relaxed)
    }

    /// Whether this process has listed the memory half of the click indexes yet (see
    /// `listRecentClicksSoon`): until then, the first round lists it before it answers.
    public var hasListedRecentClicks: Bool { recentClicksListed.load(ordering: .relaxed) }

    /// `attributeAll` for the threads, which have no one to report to.
    func attributeAllLogged(urgent: Bool) {
        do {
            try attributeAll(urgent: urgent)
        } catch {
            logger.error("attribution round failed; the next commit or rollup pass retries it", metadata: ["error": "\(error)"])
        }
    }

    /// Forgets every attribution, so that the follower replays the events in store order.
    /// The rollups counted from them must go too: `AppDatabase.resetAttribution` does both.
    func reset() throws {
        try events.refuseRecountAfterRetention("attributing every raw event again")
        let databaseId = try events.databaseId()
        try queue.inDatabase { db in
            try db.inTransaction(.deferred) {
                try db.execute(sql: queries.attribution.reset, arguments: ["database_id": databaseId, "window_ms": windowMs])
                recentClicksKept.withLock { $0 = nil }
                recentClickEntriesKept.store(0, ordering: .relaxed)
                progress.restart(at: 0)
                return .commit
            }
            // The emptied file would otherwise keep every page of the old answers as free space.
            // Only space is at stake: a vacuum that fails leaves the pages free for the replay.
            // The vacuum makes the file one that can give pages back later too (the fingerprint
            // index's rows before its span, see `attributeAllInBulk`).
            do {
                try db.execute(sql: queries.connection.autoVacuumIncremental)
                try db.execute(sql: queries.connection.vacuum)
            } catch {
                logger.notice("the emptied attribution file keeps its free pages", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Whether a move of clicks from memory to disk has begun and not finished (see
    /// `moveSlices`).
    var moveInProgress: Bool { recentClicksKept.withLock { $0?.outgoing != nil } }

    /// How many click index entries the memory half holds (two a click with a ref and a
    /// fingerprint), as of the last committed round (0 before it is first listed), and how
    /// many it keeps before moving about half to disk.
    public var recentClickEntries: (held: Int, capacity: Int) {
        (recentClickEntriesKept.load(ordering: .relaxed), tuning.recentClickEntries)
    }

    /// One round over at most `maxEvents` events past the attribution watermark: each event in
    /// seq order, clicks indexed as they come (so later events of the round see them), every
    /// person's install, open and fallback attributed by the `Attributor`, the watermark
    /// advanced, all in one transaction of the attribution file. Returns how many events it went
    /// through (0 when up to date). Idempotent and restartable like the rollup pass; never takes
    /// the events database's write lock. With `answering` (a round at normal priority), the
    /// answers someone waits for are read after the commit and handed over with the wake-up.
    /// With `movesClicks`, a round then begins a move of clicks from memory to disk when memory
    /// is past its capacity, and writes slices of the one in progress (`moveSlices`); without
    /// it (the urgent thread's rounds, which an app waits behind), it leaves both to the
    /// follower, which it wakes.
    func attributeRound(maxEvents: Int, answering: Bool = false, movesClicks: Bool = true) throws -> Int {
        try roundTime.measure { try attributeRoundTimed(maxEvents: maxEvents, answering: answering, movesClicks: movesClicks) }
    }

    /// `attributeRound`, inside `roundTime`.
    private func attributeRoundTimed(maxEvents: Int, answering: Bool, movesClicks: Bool) throws -> Int {
        // An urgent round counts itself as waiting until it has the connection (see `movePutOff`).
        var waiting = !movesClicks
        if waiting { urgentRoundsWaiting.add(1, ordering: .relaxed) }
        defer {
            if waiting { urgentRoundsWaiting.subtract(1, ordering: .relaxed) }
            if !movesClicks { urgentRoundEnded.withLock { $0 = .now } }
        }
        return try queue.inDatabase { db in
            if waiting {
                urgentRoundsWaiting.subtract(1, ordering: .relaxed)
                waiting = false
            }
            var processed = 0
            var kept: RecentClicks?
            var upToDate: Int64?
            var answers: [Int64: AttributedEvent] = [:]
            try db.inTransaction(.deferred) {
                // Cached statements: a round runs after every commit, and `advance` reads the
                // events view, whose compilation alone cost more than a small round.
                try db.cachedStatement(sql: queries.attribution.lock).execute()
                let state = try Row.fetchOne(db.cachedStatement(sql: queries.attribution.state))
                let watermark: Int64 = state?[AttributionStateColumn.attributedThroughSeq] ?? 0
                // Read after the lock (a retention run that moved the horizon waits for this
                // round), in a short transaction of the events' own: this one never holds a
                // snapshot of them.
                let page = try events.attributionPage(after: watermark, limit: maxEvents)
                guard let last = page.events.last else {
                    // Perhaps another process attributed them: whoever waits is served.
                    upToDate = watermark
                    return .commit
                }
                let disk = try DiskClicks(db: db, queries: queries.attribution, events: events, fingerprintFromMs: state?[AttributionStateColumn.fingerprintFromMs] ?? Int64.min)
                let recent = try recentClicks(through: watermark, horizon: state?[AttributionStateColumn.recentFromMs] ?? Int64.min, disk: disk)
                var round = try AttributionRound(
                    db: db, queries: queries.attribution,
                    clicks: StoredClicks(
                        byId: page.clicksById,
                        wanted: Set(page.events.lazy.compactMap { $0.subject.kind == .click ? nil : $0.subject.clickId.map(StoredIdKey.init) }),
                        recent: recent, disk: disk, keptFromMs: page.rawHorizonMs))
                for event in page.events { try round.add(event, attributor: attributor) }
                try db.cachedStatement(sql: queries.attribution.advance).execute(arguments: ["seq": last.subject.seq, "event_id": page.lastEventId])
                round.clicks.recent.throughSeq = last.subject.seq
                kept = round.clicks.recent
                processed = page.events.count
                return .commit
            }
            // The answers are committed: whoever waits for them is served before any slice of
            // a move of clicks to disk is written.
            if let through = kept?.throughSeq ?? upToDate {
                if answering { answers = answersAwaited(through: through) }
                answersHandedOver.add(answers.count, ordering: .relaxed)
                progress.advance(to: through, answers: answers)
            }
            // Only a committed round's memory is kept (before the next round can start on this
            // connection), and one that finished a move only once the file's horizon has moved
            // too: after a failure the next round lists it again from the file's horizon.
            if var recent = kept ?? recentClicksKept.withLock({ kept in defer { kept = nil }; return kept }) {
                // The memory's only copy from here: ending a move removes entries in place, which
                // a second reference would make copy every array.
                kept = nil
                if !movesClicks {
                    if recent.outgoing != nil || recent.entries > recent.capacity { followCommits() }
                } else if movePutOff(recent) {
                    moveLeftForApps.store(true, ordering: .relaxed)
                } else {
                    moveLeftForApps.store(false, ordering: .relaxed)
                    if recent.outgoing == nil {
                        _ = recent.beginMove { items in
                            WriteSlices.count(items: items, filePath: queue.path, sliceBytes: tuning.sliceBytes)
                        }
                    }
                    if recent.outgoing != nil {
                        guard try moveSlices(&recent, db) else { return processed }
                    }
                    // Beside a move too: it writes rows after the memory horizon, this deletes
                    // rows before the span, a week and more before it.
                    try pruneFingerprintClicks(db)
                }
                keep(recent)
            }
            if ContinuousClock.now - checkpointed.withLock({ $0 }) > tuning.quietFor {
                try checkpoint(db)
            }
            return processed
        }
    }

    /// Works on the move of clicks to disk in progress, after a round has committed, on its
    /// connection: writes its next slices for at most `SQLiteTuning.moveSliceBudget` (at least
    /// one), and once all are on disk, finishes it: the entries that arrived late stored and the
    /// file's horizon moved in one transaction, only if no other process attributed meanwhile, and
    /// the memory's with it (`RecentClicks.finishMove`). Returns false when the horizon could not
    /// move: the memory is then dropped and listed again by the next round.
    ///
    /// Why in slices: the entries are sorted by key but spread over the whole ref table (every
    /// ref's newest clicks), so one transaction rewrote nearly every leaf of it, and the WAL grew
    /// by tens of megabytes a move (183 MiB in a 120 s soak, 409 MiB in 300 s). Each slice covers a
    /// part of the key space small enough to rewrite at most `SQLiteTuning.sliceBytes` of the file,
    /// in a transaction of its own, and the WAL is checkpointed after it; the next slice is written
    /// only once the WAL has room for it (`walHasRoomForSlice`), which it waits for across rounds.
    ///
    /// Why between rounds: a move wrote all its slices at once, 35 at 1.1 GB, and held the
    /// attribution connection for seconds, during which nothing was attributed (the rollup
    /// passes counted nothing: the 10-minute soak's lag peaks) and an app's resolve waited.
    /// Now rounds go on between slices: the entries that leave stay in memory, and lookups
    /// find them there, until the move finishes.
    ///
    /// Why that is safe: until the horizon moves, slices only add rows at or after the file's
    /// horizon, which no lookup reads (fingerprints are read from disk before the memory
    /// horizon only, refs only when memory has none), and a move written again after a
    /// failure ignores the rows already there.
    func moveSlices(_ recent: inout RecentClicks, _ db: Database) throws -> Bool {
        // Slices write clicks from the memory horizon on: all within the fingerprint span.
        let disk = try DiskClicks(db: db, queries: queries.attribution, events: events, fingerprintFromMs: .min)
        let deadline = ContinuousClock.now + tuning.moveSliceBudget
        while let move = recent.outgoing, move.slicesDone < move.slices {
            if movePutOff(recent) {
                moveLeftForApps.store(true, ordering: .relaxed)
                return true
            }
            guard try walHasRoomForSlice(db) else { return true }
            try db.inTransaction(.deferred) {
                try db.cachedStatement(sql: queries.attribution.lock).execute()
                try recent.outgoingRows(slice: move.slicesDone, of: move.slices) { try disk.store($0) }
                return .commit
            }
            // Copies what it can now; the next slice's `walHasRoomForSlice` sees to the rest.
            try checkpoint(db)
            recent.sliceMoved()
            if ContinuousClock.now >= deadline, recent.outgoing.map({ $0.slicesDone < $0.slices }) == true { return true }
        }
        // Counts for the log only.
        guard let (byRef, byFingerprint, slices) = recent.outgoing.map({ ($0.refEntries, $0.fingerprints.count, $0.slices) })
        else { return true }
        // Every slice is written: the next move waits for room afresh.
        sliceWait.withLock { $0 = nil }
        var moved = false
        var late = 0
        try db.inTransaction(.deferred) {
            try db.cachedStatement(sql: queries.attribution.lock).execute()
            let state = try Row.fetchOne(db.cachedStatement(sql: queries.attribution.state))
            guard state?[AttributionStateColumn.attributedThroughSeq] == recent.throughSeq, let left = recent.finishMove() else { return .commit }
            // Late rows before the fingerprint index's span are left to the raw events.
            let finishing = try DiskClicks(db: db, queries: queries.attribution, events: events, fingerprintFromMs: state?[AttributionStateColumn.fingerprintFromMs] ?? Int64.min)
            for row in left.late { try finishing.store(row) }
            try finishing.moveHorizon(to: left.horizonMs)
            // The fingerprint index's span follows the horizon; its rows before go between rounds.
            let (kept, overflow) = left.horizonMs.subtractingReportingOverflow(tuning.fingerprintClicksKeptMs)
            if !overflow, case let spanStart = TimeGrain.floor(kept, TimeGrain.hourMs), spanStart > state?[AttributionStateColumn.fingerprintFromMs] ?? Int64.min {
                try db.cachedStatement(sql: queries.attribution.setFingerprintFrom).execute(arguments: ["from_ms": spanStart])
                fingerprintPruneDue.store(true, ordering: .relaxed)
            }
            late = left.late.count
            moved = true
            return .commit
        }
        logger.debug("clicks moved to disk", metadata: [
            "by_ref": "\(byRef)", "by_fingerprint": "\(byFingerprint)", "slices": "\(slices)",
            "late": "\(late)", "horizon_moved": "\(moved)",
        ])
        return moved
    }

    /// Deletes the on-disk fingerprint index's rows before its span (see
    /// `SQLiteTuning.fingerprintClicksKeptMs`), after a round, on its connection, while some may be
    /// left: `SQLiteTuning.roundEvents` rows a transaction, for at most `moveSliceBudget` (at least
    /// one batch), the WAL checkpointed between them as between a move's slices. No lookup reads
    /// those rows (before the span they are read from the raw events), so they may go at any pace;
    /// the pages they free are used again by the clicks moved to disk next. `attributeAllInBulk`
    /// runs it to the end.
    func pruneFingerprintClicks(_ db: Database) throws {
        guard fingerprintPruneDue.load(ordering: .relaxed) else { return }
        let state = try Row.fetchOne(db.cachedStatement(sql: queries.attribution.state))
        let spanStart: Int64 = state?[AttributionStateColumn.fingerprintFromMs] ?? Int64.min
        guard spanStart > Int64.min else { return fingerprintPruneDue.store(false, ordering: .relaxed) }
        let deadline = ContinuousClock.now + tuning.moveSliceBudget
        while true {
            var deleted = 0
            try db.inTransaction(.deferred) {
                deleted = try deleteFingerprintClicks(db, before: spanStart, batch: tuning.roundEvents)
                return .commit
            }
            logger.debug("fingerprint clicks before the index's span deleted", metadata: ["rows": "\(deleted)", "before_ms": "\(spanStart)"])
            if deleted < tuning.roundEvents { return fingerprintPruneDue.store(false, ordering: .relaxed) }
            try checkpointBetweenSlices(db)
            if ContinuousClock.now >= deadline { return }
        }
    }

    /// Whether a round leaves the move of clicks to disk (beginning one, or its next slice) for
    /// later: apps are being answered (an urgent round, which an app's resolve waits behind, waits
    /// for the connection, or one ended less than `SQLiteTuning.appsQuietFor` ago), and memory
    /// holds at most half as many entries again as its capacity. Each urgent round wakes the
    /// follower, which takes the move up again once apps have been quiet that long.
    ///
    /// Why: an urgent round that arrives during a slice waits for all of it (49–312 ms for 32
    /// MiB of the file, measured on 31 M events), so a move during a flood of resolves put the
    /// resolve p99 at 64 connections at 115 ms against 20–24 ms without one. A round waiting
    /// right now is not enough: in such a flood one rarely is at the moment the follower looks
    /// (it runs right after the urgent round that woke it), and the next one arrives during its
    /// slice. Resolves add no clicks, so a flood of them alone never forces the move; clicks
    /// arriving meanwhile grow memory, and past the bound the move goes on as before.
    func movePutOff(_ recent: RecentClicks) -> Bool {
        let moveWanted = recent.outgoing != nil || recent.entries > recent.capacity
        guard moveWanted, recent.entries <= recent.capacity + recent.capacity / 2 else { return false }
        if urgentRoundsWaiting.load(ordering: .relaxed) > 0 { return true }
        return urgentRoundEnded.withLock { $0.map { ContinuousClock.now - $0 < tuning.appsQuietFor } ?? false }
    }

    /// WAL frames up to which a slice of a move may add to the WAL rather than wait for it to
    /// start over: a quarter of a slice's bytes in 4 KiB pages (2,048, 8 MiB, in the daemon).
    /// A slice is cut to rewrite at most 32 MiB of the file, but its page splits and the rounds
    /// between it and the next restart add to that: 26 MiB on top of up to 16 MiB of frames
    /// made a WAL of 56 MiB in a soak, too close to its 64 MiB bound.
    var sliceRoomPages: Int { tuning.sliceBytes / 4 / 4096 }

    /// Whether the WAL has room for the next slice of a move of clicks to disk, on the follower's
    /// connection between rounds: it holds at most `sliceRoomPages` frames, or a checkpoint
    /// (`restartCheckpoint`) copied all of it back with no reader left on it, so the slice's commit
    /// writes it over from its start. Otherwise a restart is wanted (`walRestartWanted`), and the
    /// slice is left to a later round (the follower looks again every `SQLiteTuning.retryAfter`
    /// meanwhile, once the reader keeping the copy short is done), for at most
    /// `SQLiteTuning.sliceWaitsAtMost`: then it is written all the same, and so are the move's next
    /// slices until the WAL has room again, and a warning says so.
    ///
    /// Why wait rather than block: the slice used to be written after the checkpoint between two
    /// slices had waited `SQLiteTuning.walWaitsAtMost` for the copy in vain, or had reached the end
    /// while a rollup pass begun just before (on a thread of its own then) kept the WAL from
    /// starting over. Either way the slice added 32 MiB to a WAL that held the previous one: 67–109
    /// MiB in three soaks against the 64 MiB bound. Waiting between rounds holds the clicks on
    /// their way out in memory a little longer, and attributes meanwhile.
    func walHasRoomForSlice(_ db: Database) throws -> Bool {
        let (restarts, pages) = try restartCheckpoint(db)
        let (wait, before) = sliceWait.withLock { wait in
            let before = wait
            if restarts || pages <= sliceRoomPages {
                wait = nil
            } else if case .waiting(let since) = wait, ContinuousClock.now - since >= tuning.sliceWaitsAtMost {
                wait = .gaveUp
            } else if wait == nil {
                wait = .waiting(since: .now)
            }
            return (wait, before)
        }
        switch wait {
        case nil:
            // No restart is wanted for this slice any more (a round's commit may have started
            // the WAL over since).
            if restarts || before != nil { walRestartWanted.store(false, ordering: .relaxed) }
            return true
        case .waiting:
            walRestartWanted.store(true, ordering: .relaxed)
            return false
        case .gaveUp:
            if before != .gaveUp {
                walRestartWanted.store(false, ordering: .relaxed)
                logger.warning("clicks moved to disk add to a WAL that a reader kept from starting over", metadata: [
                    "wal_pages": "\(pages)", "waited": "\(tuning.sliceWaitsAtMost)",
                ])
            }
            return true
        }
    }

    /// Whether the next slice of a move waits for the WAL to start over (see
    /// `walHasRoomForSlice`).
    var sliceWaitsForWAL: Bool {
        sliceWait.withLock { if case .waiting = $0 { true } else { false } }
    }

    /// Where the next slice of a move stands while the WAL has no room for it.
    enum SliceWait: Equatable {
        /// It waits for the WAL to start over, since then.
        case waiting(since: ContinuousClock.Instant)
        /// It waited `SQLiteTuning.sliceWaitsAtMost`: the move's slices are written without waiting
        /// until the WAL has room again.
        case gaveUp
    }

    /// The WAL checkpointed in RESTART mode with the connection's busy handler off (it waits for
    /// no one): whether it finished, so the next commit writes the WAL over from its start, and
    /// the WAL's frames. When a reader's snapshot keeps it short, it copies what it can, as a
    /// passive one does.
    func restartCheckpoint(_ db: Database) throws -> (restarts: Bool, walPages: Int) {
        let row = try db.withBusyWaitOff { try Row.fetchOne(db, sql: queries.connection.checkpointRestart) }
        checkpointed.withLock { $0 = ContinuousClock.now }
        return (row?[WALCheckpointColumn.busy] == 0, row?[WALCheckpointColumn.log] ?? 0)
    }

    /// Between two batches of the fingerprint index's pruning, on the follower's connection: a
    /// passive checkpoint, and when the WAL is past `SQLiteTuning.walRestartBytes` and the copy
    /// fell short, `checkpointToEnd`.
    func checkpointBetweenSlices(_ db: Database) throws {
        let (pages, done) = try checkpoint(db)
        if pages > tuning.walRestartPages, done < pages { try checkpointToEnd(db) }
    }

    /// The WAL checkpointed to its end, so that the next write starts it over rather than adding to
    /// it. A reader on an older snapshot (a stats read or an export) keeps the copy short until it
    /// ends: the copy is tried again every `SQLiteTuning.retryAfter`, for at most `walWaitsAtMost`
    /// (then the next write adds to the WAL). A passive checkpoint tried once let the WAL reach 205
    /// MiB in a 10-minute soak, four slices deep.
    func checkpointToEnd(_ db: Database) throws {
        let deadline = ContinuousClock.now + tuning.walWaitsAtMost
        while true {
            let (pages, done) = try checkpoint(db)
            if done >= pages || ContinuousClock.now >= deadline { return }
            RetryBackoff(pause: tuning.retryAfter).pauseThread()
        }
    }

    /// The memory half of the click indexes for a round starting at `watermark`: the one the
    /// last round of this process left, when it is exact for this watermark and horizon;
    /// otherwise (at start, after a failed round, after another process attributed) listed
    /// again from the events (`EventStore.forEachRecentClick`). Taken out: a round that fails
    /// leaves none behind.
    func recentClicks(through watermark: Int64, horizon: Int64, disk: DiskClicks) throws -> RecentClicks {
        let left = recentClicksKept.withLock { kept in
            defer { kept = nil }
            return kept
        }
        if let left, left.throughSeq == watermark, left.horizonMs == horizon { return left }
        var recent = RecentClicks(horizonMs: horizon, throughSeq: watermark, capacity: tuning.recentClickEntries)
        try events.forEachRecentClick(from: horizon, through: watermark) { click in
            _ = recent.add(seq: click.seq, ms: click.occurredAtMs, ref: click.ref, fingerprint: click.fingerprint, osVersion: click.osVersion)
            // In time order, so a new horizon is never after a click still to come.
            if let horizon = try recent.spill({ try disk.store($0) }) { try disk.moveHorizon(to: horizon) }
        }
        return recent
    }

    /// At open: ties the attribution file to this database, and starts it over when it belongs
    /// to another one, claims events that do not exist, or names another event at its
    /// watermark than the one stored there. The rollups counted from it are then ahead of it,
    /// and `RollupStore.prepareRollups`, which runs next, recomputes them.
    func prepareAttribution() throws {
        let state = try queue.inDatabase { db -> Row? in
            try queries.prepareAttributionStatements(db)
            return try Row.fetchOne(db, sql: queries.attribution.state)
        }
        guard let state else { return try reset() }
        if let reason = try events.mismatch(
            databaseId: state[AttributionStateColumn.databaseId], watermark: state[AttributionStateColumn.attributedThroughSeq],
            eventIdAtWatermark: state[AttributionStateColumn.throughEventId]) {
            logger.warning("attributing every event again", metadata: ["reason": "\(reason)"])
            return try reset()
        }
        if (state[AttributionStateColumn.attributionWindowMs] as Int64) != windowMs {
            logger.notice(
                "the attribution window changed: events stored from now on are attributed with the new one, earlier answers stand (`linkpulse rollup --rebuild --reattribute` applies it to all)",
                metadata: ["previous_ms": "\(state[AttributionStateColumn.attributionWindowMs] as Int64)", "configured_ms": "\(windowMs)"])
            try queue.inDatabase { db in try db.execute(sql: queries.attribution.setWindow, arguments: ["window_ms": windowMs]) }
        }
        progress.advance(to: state[AttributionStateColumn.attributedThroughSeq])
    }

    /// Checkpoints the file's WAL (PASSIVE: never waits for its writer) on `db`, one of its own
    /// connections. The follower commits after every ingest commit; had each commit
    /// checkpointed when the WAL filled, every few hundred rounds would have paid for writing
    /// pages back and a flush (measured: a third of the resolve throughput). The daemon's
    /// checkpoint job calls `checkpoint(restartPages:)` every second; the follower itself only
    /// when nothing has for `SQLiteTuning.quietFor` (a command such as `linkpulse rollup`
    /// has no job). Returns the WAL's frames and how many of them are copied back.
    @discardableResult
    func checkpoint(_ db: Database) throws -> (walPages: Int, checkpointed: Int) {
        let row = try Row.fetchOne(db, sql: queries.connection.checkpointPassive)
        checkpointed.withLock { $0 = ContinuousClock.now }
        return (row?[WALCheckpointColumn.log] ?? 0, row?[WALCheckpointColumn.checkpointed] ?? 0)
    }

    /// The checkpoint job's pass over the file, on a connection of its own; past `restartPages`
    /// the derived-work loop is asked to start the WAL over between two turns
    /// (`walRestartWanted`).
    func checkpoint(restartPages: Int) async throws {
        let (pages, _) = try await checkpointer.writeWithoutTransaction { [self] db in try checkpoint(db) }
        walRestartWanted.store(pages > restartPages, ordering: .relaxed)
    }

    /// Returns once the follower has finished the rounds asked for before this call (nothing
    /// then reads the events database on its behalf until the next commit).
    public func settled() async {
        _ = try? await derived.thread.run {}
        _ = try? await urgentThread.run {}
    }

    /// Makes rounds stop between two batches (the next start finishes the backlog).
    func beginClosing() {
        closing.withLock { $0 = true }
    }

    /// Lets the queued rounds finish and ends the threads (after `beginClosing`).
    func stopThreads() {
        derived.stop()
        urgentThread.stop()
    }

    /// Truncates the WAL and closes the connections (after `beginClosing`).
    func close(truncating truncate: String) throws {
        _ = try? queue.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        try checkpointer.close()
        try queue.close()
    }
}

extension HotStatement {
    /// A match type in its stored form (`MatchType.code`); nil for NULL (no attribution) or an
    /// unknown code.
    func matchType(_ column: some ColumnIndex) -> MatchType? {
        isNull(column) ? nil : MatchType(code: Int(int64(column)))
    }

    /// The fingerprint of a row of `event_rows`, from its `ip_hash` and `platform` columns; nil
    /// without a hash.
    func storedFingerprint(hash: some ColumnIndex, platform: some ColumnIndex) -> Fingerprint? {
        let platform = Platform.fromCode(UInt8(truncatingIfNeeded: int64(platform)))
        if columnIsBlob(hash), let bytes = blob(hash), bytes.count >= 8 {
            // The first 8 bytes, as `Fingerprint.ipKey` reads them from the hex text.
            return Fingerprint(ipKey: Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))), platform: platform)
        }
        return Fingerprint(ipHash: text(hash), platform: platform)
    }
}

/// One stored event as the attribution follower reads it.
struct AttributionSourceEvent {
    /// Its event id, as a click's id is looked up.
    var eventKey: StoredIdKey
    var subject: AttributionSubject
    /// For an event sent to `/v1/resolve`, the key of its device (see `events_after.sql`).
    var resolvingDevice: String? = nil
}

/// The disk half of the click indexes: the clicks before the memory horizon.
struct DiskClicks {
    let newestByRef, byFingerprint, insertRef, insertFingerprint, setHorizon: HotStatement
    /// The clicks before the fingerprint index's span, read from the raw events an hour at a time.
    let rawHours: RawClickHours
    /// The start of the on-disk fingerprint index's span (see
    /// `SQLiteTuning.fingerprintClicksKeptMs`): before it, clicks are found in the raw events.
    let fingerprintFromMs: Int64

    init(db: Database, queries: AttributionQueries, events: EventStore, fingerprintFromMs: Int64) throws {
        func statement(_ sql: String) throws -> HotStatement { HotStatement(try db.cachedStatement(sql: sql), in: db) }
        self.fingerprintFromMs = fingerprintFromMs
        newestByRef = try statement(queries.newestRefClick)
        byFingerprint = try statement(queries.fingerprintClicks)
        rawHours = RawClickHours(readHour: events.rawClicks(ofHour:))
        insertRef = try statement(queries.insertRefClick)
        insertFingerprint = try statement(queries.insertFingerprintClick)
        setHorizon = try statement(queries.setHorizon)
    }

    /// The newest click on disk of `ref` at or before `atMs`.
    func newest(ref: String, atOrBefore atMs: Int64) throws -> RecentClicks.RefEntry? {
        try newestByRef.bind(NewestRefClickParameter.ref, ref)
        try newestByRef.bind(NewestRefClickParameter.atMs, atMs)
        guard try newestByRef.step() else { return nil }
        defer { newestByRef.finish() }
        return RecentClicks.RefEntry(ms: newestByRef.int64(RefClickColumn.occurredAtMs), seq: newestByRef.int64(RefClickColumn.seq))
    }

    /// The clicks before the memory horizon with this fingerprint in [fromMs, throughMs] stored
    /// before seq `storedBefore`, newest first: from the on-disk index within its span, from
    /// the raw events before it.
    func clicks(
        with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64, storedBefore: Int64
    ) throws -> [RecentClicks.FingerprintMatch] {
        var found: [RecentClicks.FingerprintMatch] = []
        if throughMs >= fingerprintFromMs {
            found = try indexedClicks(with: fingerprint, from: max(fromMs, fingerprintFromMs), through: throughMs)
        }
        if fromMs < fingerprintFromMs {
            found += try rawHours.clicks(with: fingerprint, from: fromMs, through: min(throughMs, fingerprintFromMs - 1), storedBefore: storedBefore)
        }
        return found
    }

    /// The clicks of the on-disk index with this fingerprint in [fromMs, throughMs], newest first.
    private func indexedClicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) throws -> [RecentClicks.FingerprintMatch] {
        var found: [RecentClicks.FingerprintMatch] = []
        var hour = TimeGrain.floor(throughMs, TimeGrain.hourMs) / TimeGrain.hourMs
        let firstHour = TimeGrain.floor(fromMs, TimeGrain.hourMs) / TimeGrain.hourMs
        let s = byFingerprint
        while hour >= firstHour {
            typealias P = FingerprintClicksParameter
            try s.bind(P.hour, hour)
            try s.bind(P.ipKey, fingerprint.ipKey)
            try s.bind(P.platform, Int64(fingerprint.platform.code))
            try s.bind(P.fromMs, fromMs)
            try s.bind(P.throughMs, throughMs)
            typealias C = FingerprintClickColumn
            while try s.step() { found.append(RecentClicks.FingerprintMatch(ms: s.int64(C.occurredAtMs), seq: s.int64(C.seq), osVersion: s.text(C.osVersion))) }
            hour -= 1
        }
        return found
    }

    /// Puts a click on disk (one before the memory horizon).
    func store(seq: Int64, ms: Int64, ref: String?, fingerprint: Fingerprint?, osVersion: String?) throws {
        if let ref {
            try insertRef.bind(InsertRefClickParameter.ref, ref)
            try insertRef.bind(InsertRefClickParameter.occurredAtMs, ms)
            try insertRef.bind(InsertRefClickParameter.seq, seq)
            try insertRef.run()
        }
        // Before the fingerprint index's span (a click that arrived late), the raw events serve.
        if let fingerprint, ms >= fingerprintFromMs {
            let s = insertFingerprint
            typealias P = InsertFingerprintClickParameter
            try s.bind(P.hour, TimeGrain.floor(ms, TimeGrain.hourMs) / TimeGrain.hourMs)
            try s.bind(P.ipKey, fingerprint.ipKey)
            try s.bind(P.platform, Int64(fingerprint.platform.code))
            try s.bind(P.occurredAtMs, ms)
            try s.bind(P.seq, seq)
            try s.bind(P.osVersion, osVersion)
            try s.run()
        }
    }

    /// Puts a click that leaves memory on disk (see `RecentClicks.outgoingRows`).
    func store(_ row: RecentClicks.DiskRow) throws {
        try store(seq: row.seq, ms: row.ms, ref: row.ref, fingerprint: row.fingerprint, osVersion: row.osVersion)
    }

    /// Records the memory horizon: clicks before it are on disk.
    func moveHorizon(to horizonMs: Int64) throws {
        try setHorizon.bind(":horizon_ms", horizonMs)
        try setHorizon.run()
    }
}

/// The clicks attribution may match, as `Attributor` looks them up: those named by id in the
/// round, and the click indexes (memory from the horizon on, disk before it). Clicks of the
/// round are indexed as they are read, so later events of the round see them. Clicks that
/// happened before the raw-event horizon (`keptFromMs`) are never matched: retention deletes
/// their rows.
///
/// Clicks found in the indexes carry no link (`KnownClick.dimensions` empty): this store's
/// attribution record keeps the click's seq only, and whoever counts or answers reads the
/// link from the click's row, so a round never reads the events for it.
struct StoredClicks: ClickLookup {
    /// The clicks stored before the round that its events name by id.
    let byId: [String: KnownClick]
    /// The round's own clicks that later events of the round name by id (`wanted`).
    var ofRound: [StoredIdKey: KnownClick] = [:]
    /// The ids the round's events name.
    let wanted: Set<StoredIdKey>
    var recent: RecentClicks
    let disk: DiskClicks
    /// The raw-event horizon, UTC ms (`Int64.min` while nothing was deleted).
    let keptFromMs: Int64
    /// The seq of the event being attributed: lookups in the raw events see only the clicks
    /// stored before it, as the indexes do.
    var storedBefore: Int64 = .max

    init(byId: [String: KnownClick], wanted: Set<StoredIdKey>, recent: RecentClicks, disk: DiskClicks, keptFromMs: Int64 = .min) {
        self.byId = byId; self.wanted = wanted; self.recent = recent; self.disk = disk; self.keptFromMs = keptFromMs
    }

    func click(id: String) -> KnownClick? {
        guard let click = byId[id] ?? (ofRound.isEmpty ? nil : ofRound[StoredIdKey(id)]) else { return nil }
        return click.occurredAtMs >= keptFromMs ? click : nil
    }

    func newestClick(ref: String, atOrBefore atMs: Int64) throws -> KnownClick? {
        // Memory first: every click there is later than every click on disk.
        guard let entry = try recent.newest(ref: ref, atOrBefore: atMs) ?? disk.newest(ref: ref, atOrBefore: atMs),
              entry.ms >= keptFromMs else { return nil }
        return KnownClick(seq: entry.seq, occurredAtMs: entry.ms, dimensions: LinkDimensions())
    }

    func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) throws -> [KnownClick] {
        let fromMs = max(fromMs, keptFromMs)
        guard fromMs <= throughMs else { return [] }
        var found = recent.clicks(with: fingerprint, from: fromMs, through: throughMs)
        if fromMs < recent.horizonMs {
            found += try disk.clicks(with: fingerprint, from: fromMs, through: min(throughMs, recent.horizonMs - 1), storedBefore: storedBefore)
        }
        return found.map { KnownClick(seq: $0.seq, occurredAtMs: $0.ms, dimensions: LinkDimensions(), osVersion: $0.osVersion) }
    }
}

/// The work of one attribution round: clicks indexed, everything else attributed, in seq order.
struct AttributionRound {
    var clicks: StoredClicks
    let insertAttribution, insertResolveDevice: HotStatement

    init(db: Database, queries: AttributionQueries, clicks: StoredClicks) throws {
        self.clicks = clicks
        insertAttribution = HotStatement(try db.cachedStatement(sql: queries.insertAttribution), in: db)
        insertResolveDevice = HotStatement(try db.cachedStatement(sql: queries.insertResolveDevice), in: db)
    }

    mutating func add(_ event: AttributionSourceEvent, attributor: Attributor) throws {
        let e = event.subject
        if e.kind == .click {
            try index(event)
            return
        }
        if let device = event.resolvingDevice {
            // A bot's resolve too: the device has had its first session either way.
            try insertResolveDevice.bind(InsertResolveDeviceParameter.device, device)
            try insertResolveDevice.bind(InsertResolveDeviceParameter.firstSeq, e.seq)
            try insertResolveDevice.run()
        }
        guard !e.isBot else { return }
        clicks.storedBefore = e.seq
        let attribution = try attributor.attribute(e, in: &clicks)
        typealias P = InsertAttributionParameter
        try insertAttribution.bind(P.seq, e.seq)
        try insertAttribution.bind(P.matchType, Int64(attribution.match.code))
        try insertAttribution.bind(P.matchedClickSeq, attribution.clickSeq)
        try insertAttribution.bind(P.candidates, attribution.match == .fingerprint ? Int64(attribution.candidates) : nil)
        try insertAttribution.run()
    }

    /// Makes a click findable by the events after it: by id (bots' too), and a person's by ref
    /// and by fingerprint, in memory unless it happened before the horizon.
    mutating func index(_ event: AttributionSourceEvent) throws {
        let e = event.subject
        let os = osMajorMinor(e.osVersion)
        if clicks.wanted.contains(event.eventKey) {
            clicks.ofRound[event.eventKey] = KnownClick(seq: e.seq, occurredAtMs: e.occurredAtMs, dimensions: e.dimensions, osVersion: os)
        }
        guard !e.isBot else { return }
        if !clicks.recent.add(seq: e.seq, ms: e.occurredAtMs, ref: e.dimensions.ref, fingerprint: e.fingerprint, osVersion: os) {
            try clicks.disk.store(seq: e.seq, ms: e.occurredAtMs, ref: e.dimensions.ref, fingerprint: e.fingerprint, osVersion: os)
        }
    }
}
