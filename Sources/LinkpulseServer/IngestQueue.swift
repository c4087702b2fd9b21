import LinkpulseStore
import Synchronization

/// The bounded hand-off between ingest handlers and the writer.
///
/// Handlers `submit` a request's work and wait; the writer `take`s everything pending at once
/// and commits it in one transaction (group commit), so many concurrent requests share one
/// fsync. When more than `capacity` events wait, `submit` fails at once with `.full` (the
/// handler answers 503 with Retry-After) instead of letting latency and memory grow.
public final class IngestQueue: Sendable {
    public enum Failure: Error, Equatable {
        /// Too many events are waiting for the writer.
        case full
        /// The daemon is shutting down and no longer takes work.
        case closed
    }

    /// A submission waiting for the writer.
    public struct Pending: Sendable {
        public let work: IngestWork
        /// Whether somebody waits for the answer (a `/v1/resolve`: an app; a hosted link's tap:
        /// a person): decided once, at submission, so neither the queue nor the pacer looks
        /// through the events again (the store does once per commit, for the seqs of the
        /// resolves it stored).
        public let urgent: Bool
        let continuation: CheckedContinuation<[StoredOutcome], any Error>

        /// Hands the writer's answer back to the waiting handler.
        public func finish(_ result: Result<[StoredOutcome], any Error>) {
            continuation.resume(with: result)
        }
    }

    struct State {
        var pending: [Pending] = []
        var pendingEvents = 0
        /// Whether a pending submission carries a `/v1/resolve` (an app waits for its answer).
        var urgentPending = false
        /// Called once at the next urgent submission (see `onUrgentSubmission`).
        var urgentWatcher: (@Sendable () -> Void)?
        var writer: CheckedContinuation<Void, Never>?
        var closed = false
        var handedOut = 0
    }

    /// Most events (valid plus quarantined) that may wait for the writer at once.
    public let capacity: Int
    /// Most request-body bytes parsed, validated or waiting for the writer at once.
    public let inFlightByteLimit: Int
    private let state = Mutex(State())
    private let bytesInFlight = Atomic<Int>(0)

    /// - Parameters:
    ///   - capacity: most events that may wait for the writer.
    ///   - inFlightByteLimit: most body bytes in ingest's hands at once (see `admit(bytes:)`).
    public init(capacity: Int = 20_000, inFlightByteLimit: Int = 2 << 20) {
        self.capacity = capacity
        self.inFlightByteLimit = inFlightByteLimit
    }

    /// Takes a place for one ingest request once its body is read, or says there is none:
    /// past `inFlightByteLimit` bytes of bodies being parsed, validated or stored, the handler
    /// answers 503 at once, without parsing anything. Under overload the CPU then goes to the
    /// requests that will be stored, and their latency stays bounded (measured: without it,
    /// batches at 1.3x capacity were acknowledged after 1.2 s at the median,
    /// ops/bench/overload.sh). Bytes, not requests: 2 MiB is some 7,000 single events (a burst
    /// of them is taken) but only some 75 batches of 100 (tens of milliseconds of the writer).
    /// The body is read first, so a slow client (a phone on a poor network) never holds a place
    /// while it uploads. A request alone is always taken, however large. Every `true` must be
    /// paired with one `leave(bytes:)` of the same size.
    public func admit(bytes: Int) -> Bool {
        let total = bytesInFlight.add(bytes, ordering: .relaxed).newValue
        if total <= inFlightByteLimit || total == bytes { return true }
        bytesInFlight.subtract(bytes, ordering: .relaxed)
        return false
    }

    /// Gives back the place `admit(bytes:)` took.
    public func leave(bytes: Int) {
        bytesInFlight.subtract(bytes, ordering: .relaxed)
    }

    /// How many events wait for the writer now.
    public var depth: Int { state.withLock { $0.pendingEvents } }

    /// How many submissions the writer has taken since the start.
    public var handedOut: Int { state.withLock { $0.handedOut } }

    /// Queues a request's work and returns, per valid event, what the writer made of it, once
    /// it is committed. Throws `Failure.full` / `.closed` without queueing, or the writer's error.
    public func submit(_ work: IngestWork) async throws -> [StoredOutcome] {
        let size = max(1, work.events.count + work.quarantine.count)
        return try await withCheckedThrowingContinuation { continuation in
            let (refusal, writer, watcher) = state.withLock { state -> (Failure?, CheckedContinuation<Void, Never>?, (@Sendable () -> Void)?) in
                if state.closed { return (.closed, nil, nil) }
                // One oversized submission is let through when nothing else waits.
                if state.pendingEvents > 0, state.pendingEvents + size > capacity { return (.full, nil, nil) }
                let pending = Pending(work: work, urgent: work.personWaiting || work.events.contains(where: \.isResolve), continuation: continuation)
                state.pending.append(pending)
                state.pendingEvents += size
                var watcher: (@Sendable () -> Void)?
                if pending.urgent {
                    state.urgentPending = true
                    swap(&watcher, &state.urgentWatcher)
                }
                let writer = state.writer
                state.writer = nil
                return (nil, writer, watcher)
            }
            if let refusal {
                continuation.resume(throwing: refusal)
            } else {
                watcher?()
                writer?.resume()
            }
        }
    }

    /// Everything pending, waiting until there is something; nil once closed and drained.
    /// Only the writer calls this, from one task.
    public func take() async -> [Pending]? {
        while true {
            let batch: [Pending]? = state.withLock { state in
                if !state.pending.isEmpty { return Self.takeAll(&state) }
                return state.closed ? [] : nil
            }
            if let batch { return batch.isEmpty ? nil : batch }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.pending.isEmpty || state.closed { return true }
                    state.writer = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Everything pending now, possibly nothing; never waits. Only the writer calls this.
    public func takeIfAny() -> [Pending] {
        state.withLock { Self.takeAll(&$0) }
    }

    /// Calls `watcher` once, at the next urgent submission (a resolve, a link's tap), or at
    /// once when one is already pending: the writer ends a pacing hold with it, since somebody
    /// waits for that answer. Only the writer calls this; the writer's next `take` drops a
    /// watcher not called by then.
    public func onUrgentSubmission(_ watcher: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.urgentPending { return true }
            state.urgentWatcher = watcher
            return false
        }
        if now { watcher() }
    }

    private static func takeAll(_ state: inout State) -> [Pending] {
        let batch = state.pending
        state.handedOut += batch.count
        state.pending = []
        state.pendingEvents = 0
        state.urgentPending = false
        state.urgentWatcher = nil
        return batch
    }

    /// Stops taking new work; what is already queued is still handed to the writer.
    public func close() {
        let writer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            let writer = state.writer
            state.writer = nil
            return writer
        }
        writer?.resume()
    }
}
