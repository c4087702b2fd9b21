import Dispatch
import LinkpulseDomain
import Synchronization

/// One Dispatch timer for many deadlines: armed for the earliest pending one, it calls
/// `expire` when it fires, which ends the waits past their deadline and returns the next
/// deadline (the timer is armed again for it) or nil (it rests). It fires only at deadlines,
/// never to look: a wait that ends first costs nothing here, so thousands of waits a second
/// (resolves) cost a timer arming each time the timer rests, not a timer each.
final class DeadlineTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer
    /// The deadline the timer is armed for; nil while it rests.
    private let armed = Mutex<ContinuousClock.Instant?>(nil)
    /// What the timer calls when it fires (see `init`).
    private let expire = Mutex<(@Sendable () -> ContinuousClock.Instant?)?>(nil)

    init(label: String) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        source.setEventHandler { [weak self] in self?.fired() }
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    /// Sets what the timer calls when it fires: it ends the waits past their deadline and
    /// returns the earliest deadline left, nil when none.
    func onFire(_ expire: @escaping @Sendable () -> ContinuousClock.Instant?) {
        self.expire.withLock { $0 = expire }
    }

    private func fired() {
        armed.withLock { $0 = nil }
        if let next = expire.withLock({ $0 })?() { arm(by: next) }
    }

    deinit { source.cancel() }

    /// Makes the timer fire at `deadline` at the latest.
    func arm(by deadline: ContinuousClock.Instant) {
        let earlier = armed.withLock { armed -> Bool in
            guard armed.map({ deadline < $0 }) ?? true else { return false }
            armed = deadline
            return true
        }
        guard earlier else { return }
        let left = max(deadline - ContinuousClock.now, .zero)
        source.schedule(deadline: .now() + .nanoseconds(Int(left.nanoseconds)), leeway: .milliseconds(5))
    }
}
