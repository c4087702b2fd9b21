import Dispatch
import Synchronization
import Logging
import ServiceLifecycle

/// One synchronous, idempotent unit of work run by a `TimerService`.
public protocol TimerJob: Sendable {
    /// A short name for logs and the timer's queue label.
    var name: String { get }
    /// Triggers the work: hands it to the thread that owns it (a store thread, a GRDB queue, or
    /// a task that awaits them) and returns. Runs on the timer's own serial queue, never
    /// concurrently with itself; must not block.
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
/// With `ticks` (tests), no timer is made: the job runs when the test ticks it, on the same
/// queue, so a test decides when each reading or pass happens instead of waiting for one.
public struct TimerService: Service {
    let job: any TimerJob
    let interval: Duration
    let ticks: ManualTicks?
    let logger: Logger

    public init(job: any TimerJob, every interval: Duration, ticks: ManualTicks? = nil, logger: Logger) {
        self.job = job
        self.interval = interval
        self.ticks = ticks
        self.logger = logger
    }

    public func run() async throws {
        let queue = DispatchQueue(label: "linkpulse.timer.\(job.name)")
        let job = self.job
        let logger = self.logger
        let tick: @Sendable () -> Void = {
            do {
                try job.run()
            } catch {
                logger.error("timer job failed; it runs again at the next tick", metadata: ["job": "\(job.name)", "error": "\(error)"])
            }
        }
        var timer: (any DispatchSourceTimer)?
        if let ticks {
            ticks.register(job.name, queue: queue, tick: tick, settle: { await job.finish() })
        } else {
            let source = DispatchSource.makeTimerSource(queue: queue)
            let nanos = Int(interval.nanoseconds)
            source.schedule(
                deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
                leeway: .nanoseconds(max(nanos / 20, 1_000_000)))
            source.setEventHandler(handler: tick)
            source.resume()
            timer = source
        }
        try? await gracefulShutdown()
        timer?.cancel()
        ticks?.unregister(job.name)
        // A job already running finishes before this service reports that it has stopped.
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        await job.finish()
        logger.debug("timer stopped", metadata: ["job": "\(job.name)"])
    }
}

/// Makes the `TimerService`s of one application, all with the same logger and trigger: Dispatch
/// timers in a daemon, the test's `ManualTicks` in a test that drives them.
public struct Timers: Sendable {
    let ticks: ManualTicks?
    let logger: Logger

    public init(ticks: ManualTicks? = nil, logger: Logger) {
        self.ticks = ticks
        self.logger = logger
    }

    /// A service running `job` every `interval`.
    public func every(_ interval: Duration, _ job: any TimerJob) -> TimerService {
        TimerService(job: job, every: interval, ticks: ticks, logger: logger)
    }
}

/// The timers of an application built for a test: each `TimerService` given these ticks
/// registers its job by name instead of starting a Dispatch timer, and `tick` runs it.
public final class ManualTicks: Sendable {
    private struct Registered {
        var queue: DispatchQueue
        var tick: @Sendable () -> Void
        /// The job's `finish`: waits for the work its runs handed off.
        var settle: @Sendable () async -> Void
    }

    private struct State {
        var jobs: [String: Registered] = [:]
        var waiting: [String: [CheckedContinuation<Registered, Never>]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    func register(_ name: String, queue: DispatchQueue, tick: @escaping @Sendable () -> Void, settle: @escaping @Sendable () async -> Void) {
        let registered = Registered(queue: queue, tick: tick, settle: settle)
        let waiting = state.withLock { state in
            state.jobs[name] = registered
            return state.waiting.removeValue(forKey: name) ?? []
        }
        for continuation in waiting { continuation.resume(returning: registered) }
    }

    func unregister(_ name: String) {
        _ = state.withLock { $0.jobs.removeValue(forKey: name) }
    }

    /// Runs the job named `name` once, on its timer's queue as a tick would, and returns when
    /// that run and the work it handed off have finished (the job's `finish`). Waits for the
    /// job's service to start when it has not yet.
    public func tick(_ name: String) async {
        let registered = await withCheckedContinuation { (continuation: CheckedContinuation<Registered, Never>) in
            let found = state.withLock { state -> Registered? in
                if let job = state.jobs[name] { return job }
                state.waiting[name, default: []].append(continuation)
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
        await withCheckedContinuation { continuation in
            registered.queue.async {
                registered.tick()
                continuation.resume()
            }
        }
        await registered.settle()
    }
}

/// A timer job whose work is `async` (the PostgreSQL store's, the access keys' refresh, the
/// checkpoints, the pacing readings, the scheduled exports): each tick starts it unless the
/// previous run is still going; `nudge` starts it now, or once more right after the run under
/// way; `finish` waits for the one under way.
struct AsyncTickJob: TimerJob {
    let name: String
    let work: @Sendable () async -> Void
    private let running = MutexBox<(task: Task<Void, Never>?, again: Bool)>((nil, false))

    init(name: String, work: @escaping @Sendable () async -> Void) {
        self.name = name
        self.work = work
    }

    func run() throws {
        start(again: false)
    }

    /// Runs the work now, or right after the run under way when there is one (a run asked for
    /// while one goes may have come too late for it: an event it had already read past).
    func nudge() {
        start(again: true)
    }

    private func start(again: Bool) {
        running.update { state in
            guard state.task == nil else {
                state.again = state.again || again
                return
            }
            state.task = Task { [work, running] in
                while true {
                    await work()
                    let more = running.update { state -> Bool in
                        guard state.again else {
                            state.task = nil
                            return false
                        }
                        state.again = false
                        return true
                    }
                    if !more { return }
                }
            }
        }
    }

    func finish() async {
        await running.value.task?.value
    }
}

extension AsyncTickJob {
    /// Every `keyRefreshInterval` (1 s): the keys' last uses written, and the keys reloaded when
    /// another daemon or `linkpulse keys` created or revoked one.
    static func accessKeys(_ keys: AccessKeys, logger: Logger) -> AsyncTickJob {
        AsyncTickJob(name: "access-keys") {
            do {
                try await keys.refresh()
            } catch {
                logger.warning("could not refresh the access keys; the ones loaded last stay in force", metadata: ["error": "\(error)"])
            }
        }
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
