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
        var commitWaiting = false
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
    public var commitWaiting: Bool { state.withLock { $0.commitWaiting } }

    /// Whether commits wait now.
    public var holding: Bool { state.withLock { !$0.stopped && $0.pacing.holding } }

    /// Feeds one reading to the rule; returns whether it holds now, and whether it did before.
    @discardableResult
    func observe(_ reading: IngestPacing.Reading) -> (before: Bool, now: Bool) {
        let result = state.withLock { state -> (Bool, Bool) in
            let before = state.pacing.holding
            return (before, state.pacing.observe(reading))
        }
        holdingGauge.record(result.1 ? 1 : 0)
        return result
    }

    /// Releases any hold for good (at shutdown, so the writer drains at full speed).
    func stop() {
        state.withLock { $0.stopped = true }
        holdingGauge.record(0)
    }

    /// Waits while the pacing holds, at most `maxHold`, and no longer once `cutShort` says so;
    /// returns how long it waited. Sleeps in short steps (a task sleep, nothing blocked), so a
    /// release is seen within 10 ms.
    func waitWhileHolding(unless cutShort: () -> Bool = { false }) async -> Duration {
        guard holding else { return .zero }
        let start = ContinuousClock.now
        state.withLock { $0.commitWaiting = true }
        while holding, !cutShort(), ContinuousClock.now - start < maxHold {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let waited = ContinuousClock.now - start
        state.withLock {
            $0.held += waited
            $0.commitWaiting = false
        }
        heldSeconds.increment(by: waited.seconds)
        return waited
    }
}

/// Every quarter of a second: reads how far the stats are behind and feeds it to the pacer,
/// logging when pacing begins (at most once a minute) so an operator sees why ingest slowed.
public struct IngestPacingJob: TimerJob {
    public let name = "ingest-pacing"
    let rollups: RollupStore
    let pacer: IngestPacer
    let now: @Sendable () -> Int64
    let logger: Logger
    private let lastNotice = MutexBox<Int64?>(nil)

    public init(rollups: RollupStore, pacer: IngestPacer, now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.rollups = rollups
        self.pacer = pacer
        self.now = now
        self.logger = logger
    }

    public func run() throws {
        let progress = try rollups.rollupProgressBlocking()
        let at = now()
        let lagMs = Int64((progress.lagSeconds(nowMs: at) * 1000).rounded())
        let change = pacer.observe(.init(
            atMs: at, lagMs: lagMs, backlog: progress.backlog, countedThroughSeq: progress.countedThroughSeq,
            attributedThroughSeq: progress.attributedThroughSeq, countingMs: rollups.passTime.milliseconds,
            attributingMs: rollups.attributionRoundTime.milliseconds))
        guard change.now, !change.before else { return }
        var announce = false
        lastNotice.update { last in
            if let previous = last, at - previous < 60_000 { return }
            last = at
            announce = true
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
