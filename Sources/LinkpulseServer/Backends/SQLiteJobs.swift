import CSystemTuning
import Foundation
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Synchronization

/// Merges the writer's in-memory id tail into the on-disk id index when it has grown past
/// `threshold` ids, or when ids have waited longer than `maxAge` (to keep restarts fast).
public struct IdIndexJob: TimerJob {
    public let name = "id-index"
    let events: EventStore
    let threshold: Int
    let maxAge: Duration
    let lastMerge = MutexBox(ContinuousClock.now)
    let mergeDuration = Metrics.Timer(label: "linkpulse_store_id_merge_step_duration_seconds", preferredDisplayUnit: .seconds)
    let logger: Logger

    public init(events: EventStore, threshold: Int = 100_000, maxAge: Duration = .seconds(60), logger: Logger) {
        self.events = events
        self.threshold = threshold
        self.maxAge = maxAge
        self.logger = logger
    }

    public func run() throws {
        if !events.idMergeInProgress {
            let waiting = events.idTailCount
            let stale = ContinuousClock.now - lastMerge.value > maxAge
            guard waiting >= threshold || (waiting > 0 && stale) else { return }
        }
        // Steps run on the store's merge thread at low priority, a round spread over ticks, while
        // the tail stays within its bound; when ids pile up faster than that (sustained batch
        // load that leaves no idle CPU), whole rounds at normal priority, slice after slice,
        // keep the writer's memory bounded (and each slice the index's WAL).
        let behind = events.idTailCount > 3 * threshold
        let (lastMerge, mergeDuration, logger) = (self.lastMerge, self.mergeDuration, self.logger)
        events.requestIdMergeStep(maxCount: 4 * threshold, slices: 8, urgent: behind) { result in
            switch result {
            case .success(let step):
                if step.roundFinished { lastMerge.value = ContinuousClock.now }
                mergeDuration.recordNanoseconds(step.took.nanoseconds)
                logger.debug("merged ids into the id index", metadata: ["ids": "\(step.merged)", "took": "\(step.took)"])
            case .failure(let error):
                logger.error("id index merge failed; the next tick tries again", metadata: ["error": "\(error)"])
            }
        }
    }

    public func finish() async {
        await events.idMergesSettled()
    }
}

/// Checkpoints the events database's WAL on its own connection, so commits never pay for it.
/// The timer only triggers: each pass runs on the checkpointers' own GRDB queues (a tick while
/// one is under way is skipped).
public struct CheckpointJob: TimerJob {
    public let name = "checkpoint"
    let database: AppDatabase
    private let atRest: MutexBox<WALsAtRest>
    private let ticking: AsyncTickJob
    let duration = Metrics.Timer(label: "linkpulse_store_checkpoint_duration_seconds", preferredDisplayUnit: .seconds)

    /// A job over `database`'s WALs; `atRest` decides when they are truncated (by default after
    /// the store's `SQLiteTuning.quietFor`).
    public init(database: AppDatabase, atRest: WALsAtRest? = nil, logger: Logger) {
        self.database = database
        let atRest = MutexBox(atRest ?? WALsAtRest(quietFor: database.tuning.quietFor))
        self.atRest = atRest
        let duration = self.duration
        ticking = AsyncTickJob(name: "checkpoint") {
            do {
                try await Self.pass(database, atRest: atRest, duration: duration)
            } catch {
                logger.error("checkpoint failed; it runs again at the next tick", metadata: ["error": "\(error)"])
            }
        }
    }

    public func run() throws {
        try ticking.run()
    }

    public func finish() async {
        await ticking.finish()
    }

    /// One pass, now: a passive checkpoint of the events and attribution files (see
    /// `AppDatabase.checkpoint`), then, once the store has been quiet for a few seconds, every
    /// WAL truncated to zero bytes (`WALsAtRest`).
    public func pass() async throws {
        try await Self.pass(database, atRest: atRest, duration: duration)
    }

    private static func pass(_ database: AppDatabase, atRest: MutexBox<WALsAtRest>, duration: Metrics.Timer) async throws {
        let start = ContinuousClock.now
        try await database.checkpoint()
        duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        let progress = try await database.rollups.rollupProgress()
        if atRest.update({ $0.observe(progress, at: .now) }) { await database.truncateWALs() }
    }
}

/// Deletes what is kept only for a while: quarantined bodies older than
/// `--quarantine-retention-days`, and raw events past `--retention-days` once counted. The timer
/// only makes it due: it runs on the derived-work loop, a batch a turn between the loop's
/// rounds (each batch one short write transaction; ingest commits between them).
public struct RetentionJob: TimerJob {
    public let name = "retention"
    let database: AppDatabase
    /// Days a quarantined body is kept; 0 keeps them forever.
    let quarantineDays: Int
    /// How long raw events are kept.
    let rawEvents: RawEventRetention
    /// The scheduled jobs that export raw events: retention waits for their periods.
    let rawEventExports: [String]
    let now: @Sendable () -> Int64
    let logger: Logger
    let deletedQuarantine = Counter(label: "linkpulse_retention_deleted_total", dimensions: [("what", "quarantine")])
    let deletedEvents = Counter(label: "linkpulse_retention_deleted_total", dimensions: [("what", "events")])
    let horizon = Gauge(label: "linkpulse_retention_raw_horizon_seconds")
    /// How long each raw-event run took, from its first batch to its space release (the loop's
    /// other turns between its steps included).
    let took = Metrics.Timer(label: "linkpulse_retention_raw_run_duration_seconds", preferredDisplayUnit: .seconds)

    public init(
        database: AppDatabase, quarantineDays: Int, rawEvents: RawEventRetention = RawEventRetention(days: 0),
        rawEventExports: [String] = [], now: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.database = database
        self.quarantineDays = quarantineDays
        self.rawEvents = rawEvents
        self.rawEventExports = rawEventExports
        self.now = now
        self.logger = logger
    }

    /// Makes a run due on the derived-work loop.
    public func run() throws {
        database.housekeepingSoon(name, step: runSteps(), ended: logFailure(name, logger))
    }

    /// A whole run, now; returns when it has ended.
    public func runNow() async throws {
        try await database.housekeeping(name, step: runSteps())
    }

    /// The steps of one run: the quarantine and the horizon first, then the raw events a batch
    /// a step.
    private func runSteps() -> @Sendable () throws -> Bool {
        let job = self
        let run = MutexBox<(started: ContinuousClock.Instant, raw: RawRetentionRun)?>(nil)
        return {
            if let started = run.value?.started {
                // Stepped in place: a copy of the run would copy the clicks it keeps, a step at a time.
                let (more, outcome) = try run.update { run in Result { (try run!.raw.step(), run!.raw.outcome) } }.get()
                if !more { job.report(outcome, took: ContinuousClock.now - started) }
                return more
            }
            guard let raw = try job.start() else { return false }
            run.value = (ContinuousClock.now, raw)
            return true
        }
    }

    /// Deletes the old quarantined bodies, and begins a raw-event run when one is due (nil: none).
    private func start() throws -> RawRetentionRun? {
        if quarantineDays > 0 {
            let deleted = try database.events.pruneQuarantine(receivedBeforeMs: now() - Int64(quarantineDays) * 86_400_000)
            deletedQuarantine.increment(by: deleted)
            if deleted > 0 { logger.info("deleted old quarantined bodies", metadata: ["rows": "\(deleted)", "days": "\(quarantineDays)"]) }
        }
        guard rawEvents.deletes else { return nil }
        let pending = try rawEventExports.compactMap { try database.exportLedger.nextExportPeriodStart(job: $0) }.min()
        guard let wanted = rawEvents.horizon(nowMs: now(), pendingExportFromMs: pending) else { return nil }
        return try database.rawRetentionRun(before: wanted)
    }

    private func report(_ outcome: RawRetentionOutcome, took duration: Duration) {
        took.recordNanoseconds(duration.nanoseconds)
        deletedEvents.increment(by: outcome.deletedEvents)
        horizon.record(Double(outcome.horizonMs) / 1000)
        if outcome.deletedEvents > 0 {
            logger.info("deleted raw events past their retention", metadata: [
                "events": "\(outcome.deletedEvents)", "horizon": "\(Timestamp.formatUTC(outcome.horizonMs))",
                "clicks_kept_for_later_events": "\(outcome.keptClicks)", "pages_released": "\(outcome.releasedPages)",
            ])
        }
    }
}

/// Seals old raw events into compressed blocks (`--seal-after-days`), once attributed and
/// counted. The timer only makes it due: it runs on the derived-work loop, `blocksAStep` blocks
/// of about a thousand events a turn (each block its own short transaction; ingest commits
/// between them), until nothing old enough is left. Events that happen now are never old
/// enough, so under live load a run only looks.
public struct SealJob: TimerJob {
    public let name = "seal"
    /// The blocks a step seals at most.
    static let blocksAStep = 16
    let database: AppDatabase
    let age: SealAge
    let now: @Sendable () -> Int64
    let logger: Logger
    let sealed = Counter(label: "linkpulse_sealed_events_total")

    public init(database: AppDatabase, age: SealAge, now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.database = database
        self.age = age
        self.now = now
        self.logger = logger
    }

    /// Makes a run due on the derived-work loop.
    public func run() throws {
        let job = self
        database.housekeepingSoon(name, step: { try job.step() }, ended: logFailure(name, logger))
    }

    /// A whole run, now; returns when it has ended.
    public func runNow() async throws {
        let job = self
        try await database.housekeeping(name, step: { try job.step() })
    }

    private func step() throws -> Bool {
        let report = try database.sealOldEvents(nowMs: now(), age: age, maxBlocks: Self.blocksAStep)
        sealed.increment(by: report.events)
        if report.blocks > 0 {
            logger.debug("sealed old events", metadata: [
                "blocks": "\(report.blocks)", "events": "\(report.events)", "left_out_of_order": "\(report.leftOut)",
            ])
        }
        return report.blocks == Self.blocksAStep
    }
}

/// What a housekeeping job tells when its run ends: a failure is logged (the next tick tries
/// again), a run cut short by the store closing is not.
private func logFailure(_ job: String, _ logger: Logger) -> @Sendable (Result<Void, any Error>) -> Void {
    { result in
        guard case .failure(let error) = result else { return }
        if case StoreError.closed = error { return }
        logger.error("housekeeping failed; the next tick tries again", metadata: ["job": "\(job)", "error": "\(error)"])
    }
}

/// Rolls new events up into the conversion rollups. The timer only triggers: it makes a count
/// due on the derived-work loop (`DerivedWork`), which counts it pass after pass between its
/// attribution rounds, at low priority (under full ingest load the writer and the handlers
/// come first), working a backlog off without pause; a tick that finds a count still going
/// makes it go on through what is stored by then.
public struct RollupJob: TimerJob {
    public let name = "rollup"
    let rollups: RollupStore
    let logger: Logger
    let processed = Counter(label: "linkpulse_rollup_events_total")
    let duration = Metrics.Timer(label: "linkpulse_rollup_pass_duration_seconds", preferredDisplayUnit: .seconds)

    public init(rollups: RollupStore, logger: Logger) {
        self.rollups = rollups
        self.logger = logger
    }

    public func run() throws {
        let (processed, duration, logger) = (self.processed, self.duration, self.logger)
        // Passes of up to 200,000 events: a backlog is worked off in fewer, larger passes, each
        // rewriting the same day's parts once (measured: after a minute of full load, caught up
        // 37 s after it instead of 85 s with 50,000, and a lower peak RSS).
        rollups.requestRollUp(batch: 200_000) { result in
            switch result {
            case .success(let (count, took)):
                duration.recordNanoseconds(took.nanoseconds)
                processed.increment(by: count)
                if count > 0 { logger.debug("rolled up events", metadata: ["events": "\(count)", "took": "\(took)"]) }
            case .failure(let error):
                logger.error("rollup pass failed; it runs again at the next tick", metadata: ["error": "\(error)"])
            }
        }
    }

    public func finish() async {
        await rollups.settled()
    }

    /// Rolls up until caught up, now, and returns how many events it counted (the admin endpoint).
    func runNow() async throws -> Int {
        let start = ContinuousClock.now
        let count = try await rollups.rollUpNow()
        duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        processed.increment(by: count)
        return count
    }
}

extension AsyncTickJob {
    /// How often `ingestPacing` reads the lag.
    static let ingestPacingInterval: Duration = .milliseconds(250)

    /// Every quarter of a second: reads how far the stats are behind (one indexed query on
    /// GRDB's reader queue) and feeds it to the pacer, logging when pacing begins (at most once a
    /// minute) so an operator sees why ingest slowed.
    static func ingestPacing(rollups: RollupStore, pacer: IngestPacer, now: @escaping @Sendable () -> Int64, logger: Logger) -> AsyncTickJob {
        let lastNotice = MutexBox<Int64?>(nil)
        return AsyncTickJob(name: "ingest-pacing") {
            do {
                try await pacingReading(rollups: rollups, pacer: pacer, at: now(), lastNotice: lastNotice, logger: logger)
            } catch {
                logger.error("could not read how far the stats are behind; the next tick tries again", metadata: ["error": "\(error)"])
            }
        }
    }

    private static func pacingReading(
        rollups: RollupStore, pacer: IngestPacer, at: Int64, lastNotice: MutexBox<Int64?>, logger: Logger
    ) async throws {
        let progress = try await rollups.rollupProgress()
        let lagMs = Int64((progress.lagSeconds(nowMs: at) * 1000).rounded())
        let change = pacer.observe(.init(
            atMs: at, lagMs: lagMs, backlog: progress.backlog, countedThroughSeq: progress.countedThroughSeq,
            attributedThroughSeq: progress.attributedThroughSeq, countingMs: rollups.passTime.milliseconds,
            attributingMs: rollups.attributionRoundTime.milliseconds))
        guard change.now, !change.before else { return }
        let announce = lastNotice.update { last -> Bool in
            if let previous = last, at - previous < 60_000 { return false }
            last = at
            return true
        }
        guard announce else { return }
        logger.notice(
            "ingest paced: the stats are behind (or would take longer than the limit to catch up) and not catching up, so commits wait for the rollups (see --ingest-pacing)",
            metadata: [
                "lag_ms": "\(lagMs)", "catch_up_ms": "\(pacer.catchUpMs.map(String.init) ?? "unknown")", "limit_ms": "\(pacer.lagLimitMs)",
                "backlog_events": "\(progress.backlog)",
                "attribution_backlog_events": "\(progress.attributionBacklog)",
            ])
    }
}
