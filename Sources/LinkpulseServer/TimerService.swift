import Dispatch
import LinkpulseStore
import Metrics
import Synchronization
import Logging
import ServiceLifecycle

/// One synchronous, idempotent unit of work run by a `TimerService`.
public protocol TimerJob: Sendable {
    /// A short name for logs and the timer's queue label.
    var name: String { get }
    /// Does the work. Runs on the timer's own serial queue, never concurrently with itself.
    func run() throws
}

/// Runs a job every `interval` on a `DispatchSourceTimer` with its own serial queue, both
/// created and cancelled inside `run()`. On graceful shutdown it stops the timer and waits for
/// a running job to finish. A failing job is logged and tried again at the next tick.
public struct TimerService: Service {
    let job: any TimerJob
    let interval: Duration
    let logger: Logger

    public init(job: any TimerJob, every interval: Duration, logger: Logger) {
        self.job = job
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let queue = DispatchQueue(label: "linkpulse.timer.\(job.name)")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanos = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
            leeway: .nanoseconds(max(nanos / 20, 1_000_000)))
        let job = self.job
        let logger = self.logger
        timer.setEventHandler {
            do {
                try job.run()
            } catch {
                logger.error("timer job failed; it runs again at the next tick", metadata: ["job": "\(job.name)", "error": "\(error)"])
            }
        }
        timer.resume()
        try? await gracefulShutdown()
        timer.cancel()
        // A job already running finishes before this service reports that it has stopped.
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        logger.debug("timer stopped", metadata: ["job": "\(job.name)"])
    }
}

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

/// A value behind a lock, for small bits of state shared with timer handlers.
final class MutexBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
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
