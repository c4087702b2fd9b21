import CSystemTuning
import LinkpulseDomain
import Synchronization

/// How long one part of the derived work (attribution rounds, rollup passes) has worked in
/// all since the process started: wall-clock time inside its units of work, less the time
/// their thread waited for a CPU (see `measure`).
///
/// Why: the ingest pacing estimates how long the derived work would take to count a backlog
/// from what it counted per unit of *working* time. What it counted per unit of elapsed time
/// is only the arrival rate whenever it had time to spare, which made a step up in load look
/// like a backlog that would take minutes to count (see `IngestPacing.catchUpMs`).
public final class WorkTime: Sendable {
    private let nanoseconds = Atomic<Int64>(0)

    init() {}

    /// Runs `body` and adds how long it took, less the time its thread waited for a CPU.
    ///
    /// Why less that wait: the derived work runs at low priority, and while ingest takes both
    /// cores its units stretch in wall-clock time without doing more. Counted in, a rollup pass
    /// of 20,000 events at one-connection ingest on 10 M events put counting's rate near 3
    /// events a millisecond, and a step up in load looked like a backlog of 35,600 events that
    /// would take 13 s (held ingest up to 0.9 s), which the next pass counted in 0.34 s. Time
    /// blocked on the disk still counts: a held writer does not make the disk faster.
    func measure<T>(_ body: () throws -> T) rethrows -> T {
        let start = ContinuousClock.now
        let waitedBefore = linkpulse_thread_runqueue_wait_ns()
        defer {
            let elapsed = (ContinuousClock.now - start).nanoseconds
            let waitedAfter = linkpulse_thread_runqueue_wait_ns()
            let waited = waitedBefore >= 0 && waitedAfter >= waitedBefore ? Int64(waitedAfter - waitedBefore) : 0
            nanoseconds.add(max(elapsed - waited, 0), ordering: .relaxed)
        }
        return try body()
    }

    /// The time worked so far, in milliseconds.
    public var milliseconds: Int64 { nanoseconds.load(ordering: .relaxed) / 1_000_000 }
}
