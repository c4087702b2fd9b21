import Dispatch
import LinkpulseDomain
import Synchronization

/// One wait that ends at the first of several causes: whoever calls `wake(_:)` first decides
/// how it ended, later calls change nothing. The waiter awaits it (`wait(atMost:timedOut:)`);
/// the parts that can end the wait (a released hold, an urgent request, an attributed event)
/// each hold the same `Wakeup` and wake it. Nothing polls: a wait costs a continuation and, while
/// it lasts, one Dispatch timer for its deadline (cancelled when the wait ends first; no task
/// of the cooperative pool is spent on it, since resolves wait thousands of times a second).
public final class Wakeup<Reason: Sendable>: Sendable {
    private struct State {
        var reason: Reason?
        var continuation: CheckedContinuation<Reason, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Ends the wait with `reason`, unless it has already ended; a wake before the wait begins
    /// ends it as soon as it begins. Returns whether this call ended it.
    @discardableResult
    public func wake(_ reason: Reason) -> Bool {
        let (woke, continuation) = state.withLock { state -> (Bool, CheckedContinuation<Reason, Never>?) in
            guard state.reason == nil else { return (false, nil) }
            state.reason = reason
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(returning: reason)
        return woke
    }

    /// How the wait ended, once it has: at once when it already has.
    public var reason: Reason? { state.withLock { $0.reason } }

    /// Waits until a `wake`, or `limit` (which wakes it with `timedOut`). Call it once.
    public func wait(atMost limit: Duration, timedOut: Reason) async -> Reason {
        if let reason { return reason }
        let deadline = DispatchWorkItem { [self] in wake(timedOut) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(limit.nanoseconds)), execute: deadline)
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Reason? in
                if let reason = state.reason { return reason }
                state.continuation = continuation
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}
