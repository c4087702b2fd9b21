import LinkpulseDomain
import Synchronization

/// How long one part of the derived work (attribution rounds, rollup passes) has worked in
/// all since the process started, wall-clock time inside its units of work.
///
/// Why: the ingest pacing estimates how long the derived work would take to count a backlog
/// from what it counted per unit of *working* time. What it counted per unit of elapsed time
/// is only the arrival rate whenever it had time to spare, which made a step up in load look
/// like a backlog that would take minutes to count (see `IngestPacing.catchUpMs`).
public final class WorkTime: Sendable {
    private let nanoseconds = Atomic<Int64>(0)

    init() {}

    /// Runs `body` and adds how long it took.
    func measure<T>(_ body: () throws -> T) rethrows -> T {
        let start = ContinuousClock.now
        defer { nanoseconds.add((ContinuousClock.now - start).nanoseconds, ordering: .relaxed) }
        return try body()
    }

    /// The time worked so far, in milliseconds.
    public var milliseconds: Int64 { nanoseconds.load(ordering: .relaxed) / 1_000_000 }
}
