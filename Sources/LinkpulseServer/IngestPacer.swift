import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Synchronization

/// Paces the ingest writer to what the derived work digests (see `IngestPacing`): the pacing
/// job feeds it readings of the stats' lag; the writer asks it, before each commit, whether
/// to wait. A wait lasts until the hold is released or `maxHold` has passed, so ingest never
/// stops outright whatever happens to the derived work (a pass that fails, another process
/// holding the rollups): at worst every commit waits `maxHold` and takes everything queued
/// meanwhile. Handlers keep their requests while the writer waits (their answers are later,
/// not refused); past the queue's limits they answer 503 with Retry-After, as at any overload.
public final class IngestPacer: Sendable {
    /// The longest one commit waits.
    public let maxHold: Duration
    private let state: Mutex<State>
    let holdingGauge = Gauge(label: "linkpulse_ingest_pacing")
    let heldSeconds = FloatingPointCounter(label: "linkpulse_ingest_paced_seconds_total")

    struct State {
        var pacing: IngestPacing
        var stopped = false
        var held = Duration.zero
        /// The commit's wait in progress, woken by a release.
        var waiting: Wakeup<HoldEnded>?
    }

    /// How a commit's wait for a pacing hold ended.
    public enum HoldEnded: Sendable, Equatable {
        /// The hold was released (the stats caught up, or the pacer stopped).
        case released
        /// Somebody waits for a request queued meanwhile (a resolve, a link's tap).
        case urgent
        /// `maxHold` passed.
        case maxHold
    }

    /// - Parameters:
    ///   - pacing: the rule, with its lag limit.
    ///   - maxHold: the longest one commit waits for a hold to be released.
    public init(pacing: IngestPacing, maxHold: Duration = .seconds(1)) {
        self.state = Mutex(State(pacing: pacing))
        self.maxHold = maxHold
    }

    /// The lag above which ingest is paced, ms.
    public var lagLimitMs: Int64 { state.withLock { $0.pacing.lagLimitMs } }

    /// How long commits have waited in all since the start.
    public var heldTotal: Duration { state.withLock { $0.held } }

    /// How long the stats would take to catch up if the load stopped now, ms (see
    /// `IngestPacing.catchUpMs`).
    public var catchUpMs: Int64? { state.withLock { $0.pacing.catchUpMs } }

    /// Whether a commit is waiting now.
    public var commitWaiting: Bool { state.withLock { $0.waiting != nil } }

    /// Whether commits wait now.
    public var holding: Bool { state.withLock { !$0.stopped && $0.pacing.holding } }

    /// Feeds one reading to the rule; returns whether it holds now, and whether it did before.
    /// A release wakes the commit waiting.
    @discardableResult
    func observe(_ reading: IngestPacing.Reading) -> (before: Bool, now: Bool) {
        let (before, now, waiting) = state.withLock { state in
            let before = state.pacing.holding
            let now = state.pacing.observe(reading)
            return (before, now, now ? nil : state.waiting)
        }
        waiting?.wake(.released)
        holdingGauge.record(now ? 1 : 0)
        return (before, now)
    }

    /// Releases any hold for good (at shutdown, so the writer drains at full speed).
    func stop() {
        let waiting = state.withLock { state in
            state.stopped = true
            return state.waiting
        }
        waiting?.wake(.released)
        holdingGauge.record(0)
    }

    /// Waits while the pacing holds, at most `maxHold`; returns how long it waited. `wakeup`
    /// ends it early too: the writer hands it to the queue, which wakes it with `.urgent` when a
    /// request somebody waits for arrives.
    func waitWhileHolding(_ wakeup: Wakeup<HoldEnded> = Wakeup()) async -> Duration {
        let start = ContinuousClock.now
        let registered = state.withLock { state in
            guard !state.stopped, state.pacing.holding, state.waiting == nil else { return false }
            state.waiting = wakeup
            return true
        }
        guard registered else { return .zero }
        _ = await wakeup.wait(atMost: maxHold, timedOut: .maxHold)
        let waited = ContinuousClock.now - start
        state.withLock {
            $0.held += waited
            $0.waiting = nil
        }
        heldSeconds.increment(by: waited.seconds)
        return waited
    }
}
