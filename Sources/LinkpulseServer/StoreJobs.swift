import CSystemTuning
import Foundation
import LinkpulseStore
import Logging
import Metrics

/// Merges the writer's in-memory id tail into the on-disk id index when it has grown past
/// `threshold` ids, or when ids have waited longer than `maxAge` (to keep restarts fast).
public struct IdIndexJob: TimerJob {
    public let name = "id-index"
    let database: AppDatabase
    let threshold: Int
    let maxAge: Duration
    let lastMerge = MutexBox(ContinuousClock.now)
    let mergeDuration = Metrics.Timer(label: "linkpulse_store_id_merge_step_duration_seconds", preferredDisplayUnit: .seconds)
    let logger: Logger

    public init(database: AppDatabase, threshold: Int = 100_000, maxAge: Duration = .seconds(60), logger: Logger) {
        self.database = database
        self.threshold = threshold
        self.maxAge = maxAge
        self.logger = logger
    }

    public func run() throws {
        if !database.idMergeInProgress {
            let waiting = database.idTailCount
            let stale = ContinuousClock.now - lastMerge.value > maxAge
            guard waiting >= threshold || (waiting > 0 && stale) else { return }
        }
        let start = ContinuousClock.now
        // Spread a round over ticks while merges keep up; when ids pile up faster than that
        // (sustained batch load), merge whole rounds to keep the writer's memory bounded.
        let behind = database.idTailCount > 3 * threshold
        let (merged, finished) = try database.mergeIdIndexStep(maxCount: 4 * threshold, slices: behind ? 1 : 8)
        if finished { lastMerge.value = ContinuousClock.now }
        mergeDuration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        logger.debug("merged ids into the id index", metadata: ["ids": "\(merged)", "took": "\(ContinuousClock.now - start)"])
    }
}

/// Checkpoints the events database's WAL on its own connection, so commits never pay for it.
public struct CheckpointJob: TimerJob {
    public let name = "checkpoint"
    let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    let duration = Metrics.Timer(label: "linkpulse_store_checkpoint_duration_seconds", preferredDisplayUnit: .seconds)

    public func run() throws {
        let start = ContinuousClock.now
        try database.checkpoint()
        duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
    }
}

/// Rolls every new event up (attribution and conversion rollups) until caught up. Runs on
/// its own timer; never blocks ingest (the rollups live in their own file).
public struct RollupJob: TimerJob {
    public let name = "rollup"
    let database: AppDatabase
    let logger: Logger
    let processed = Counter(label: "linkpulse_rollup_events_total")
    let duration = Metrics.Timer(label: "linkpulse_rollup_pass_duration_seconds", preferredDisplayUnit: .seconds)

    public init(database: AppDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func run() throws {
        // A backlog is worked off over several ticks, a few seconds each, on a thread of lower
        // priority: under full ingest load the writer and the handlers come first, and stats
        // catch up when the load drops (measured: without this, rollups took half of the
        // ingest throughput on two cores).
        try LowPriorityThread.run { _ = try runAndCount(budget: .seconds(3)) }
    }

    /// One run (until caught up, or past `budget`); returns how many events it rolled up.
    func runAndCount(budget: Duration? = nil) throws -> Int {
        let start = ContinuousClock.now
        let count = try database.rollUpAll(batch: 50_000, budget: budget)
        duration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
        processed.increment(by: count)
        if count > 0 {
            logger.debug("rolled up events", metadata: ["events": "\(count)", "took": "\(ContinuousClock.now - start)"])
        }
        return count
    }
}

/// Runs work on a fresh thread whose nice value is raised, and waits for it. A fresh thread
/// because a thread's priority, once lowered, cannot be raised again without privileges, and
/// pooled threads go on to run other work.
enum LowPriorityThread {
    static let nice: Int32 = 10

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = MutexBox<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = linkpulse_nice_this_thread(nice)
            outcome.value = Result { try body() }
            done.signal()
        }
        thread.name = "linkpulse.rollup"
        thread.start()
        done.wait()
        return try outcome.value!.get()
    }
}

/// Runs blocking store work (a rollup pass) on a Dispatch thread and waits for it, so that it
/// never holds one of Swift concurrency's few cooperative threads.
func offCooperativeThreads<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
