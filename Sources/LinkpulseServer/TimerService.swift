import Dispatch
import Synchronization
import Logging
import ServiceLifecycle

/// One synchronous, idempotent unit of work run by a `TimerService`.
public protocol TimerJob: Sendable {
    /// A short name for logs and the timer's queue label.
    var name: String { get }
    /// Does the work, or (for long work) hands it to the thread that owns it and returns.
    /// Runs on the timer's own serial queue, never concurrently with itself; must not block
    /// waiting for other threads.
    func run() throws
    /// Waits for work `run()` handed off to finish (at shutdown, after the timer stopped).
    func finish() async
}

extension TimerJob {
    public func finish() async {}
}

/// Runs a job every `interval` on a `DispatchSourceTimer` with its own serial queue, both
/// created and cancelled inside `run()`. On graceful shutdown it stops the timer and waits for
/// a running job, and the work it handed off, to finish. A failing job is logged and tried again at the next tick.
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
        let nanos = Int(interval.nanoseconds)
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
        await job.finish()
        logger.debug("timer stopped", metadata: ["job": "\(job.name)"])
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
    /// Reads and changes the value under the lock in one step; returns what `body` returns.
    @discardableResult
    func update<T>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}
