import CSystemTuning
import Foundation
import Synchronization

/// A thread the store owns for blocking work (SQLite passes, file I/O), fed through `async`
/// calls that resume through a continuation: callers never block a cooperative thread, and no
/// semaphore bridges Dispatch and `async` code. Work runs one item at a time, in order. Other
/// modules use it for their own blocking work (the export files).
public final class StoreThread: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false
    private var finished = false

    /// Starts the thread. With a positive `nice`, the thread runs at that lower priority (for
    /// background work that must yield to ingest under load).
    public init(name: String, nice: Int32 = 0) {
        let thread = Thread { [self] in loop(nice: nice) }
        thread.name = name
        thread.start()
    }

    private func loop(nice: Int32) {
        if nice > 0 { _ = linkpulse_nice_this_thread(nice) }
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Queues `body` without waiting for it; false when the thread is stopping.
    @discardableResult
    func enqueue(_ body: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(body)
        condition.signal()
        return true
    }

    /// Runs `body` on the thread and returns its result to the awaiting caller.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let queued = enqueue { continuation.resume(with: Result { try body() }) }
            if !queued { continuation.resume(throwing: StoreError.closed) }
        }
    }

    /// Lets the queued work finish, then ends the thread. Blocks the caller until then: for
    /// `AppDatabase.close()`, which runs at shutdown on a thread of its own.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}

/// Requests for one kind of work on a `StoreThread` that coalesce: a request made while an
/// earlier one is pending adds nothing. Pending means queued, and, with `coversRunning`, also
/// running (the rollup timer: a tick during a run is dropped); without it, a request made while
/// the work runs queues the next run (the attribution follower: a commit landing during a round
/// must be attributed too).
final class CoalescedWork: Sendable {
    let thread: StoreThread
    let coversRunning: Bool
    private let pending = Mutex(false)

    init(on thread: StoreThread, coversRunning: Bool) {
        self.thread = thread
        self.coversRunning = coversRunning
    }

    /// Queues `body` unless a request is pending; false when nothing was queued.
    @discardableResult
    func request(once body: @escaping @Sendable () -> Void) -> Bool {
        request(repeating: { body(); return false })
    }

    /// Queues `body` unless a request is pending; false when nothing was queued. While `body`
    /// returns true (work left), it is queued again, behind whatever the thread was given
    /// meanwhile; with `coversRunning` the request stays pending all along, so requests made
    /// between two rounds add nothing.
    @discardableResult
    func request(repeating body: @escaping @Sendable () -> Bool) -> Bool {
        let fresh = pending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard fresh else { return false }
        let queued = enqueueRound(body)
        if !queued { pending.withLock { $0 = false } }
        return queued
    }

    private func enqueueRound(_ body: @escaping @Sendable () -> Bool) -> Bool {
        thread.enqueue { [self] in
            if coversRunning {
                if body(), enqueueRound(body) { return }
                pending.withLock { $0 = false }
            } else {
                pending.withLock { $0 = false }
                if body() { request(repeating: body) }
            }
        }
    }
}
