/// How fresh an answer counted from the rollups is, as every stats and export answer says it:
/// every event received before `countedThroughMs` is counted in it.
public struct Freshness: Sendable, Equatable {
    /// Every stored event received before this instant (UTC ms) is counted.
    public var countedThroughMs: Int64
    /// How long the oldest stored event not yet counted has waited, in seconds (0 when every
    /// stored event is counted).
    public var lagSeconds: Double
    /// While the rollups count again events they had counted (a recount: after a restore, an
    /// upgrade, a rebuild), how many are left; nil when no recount runs.
    public var recountRemainingEvents: Int64?

    /// The freshness at `nowMs` of rollups whose oldest uncounted event was received at
    /// `oldestUncountedReceivedAtMs` (nil: every stored event is counted).
    public init(nowMs: Int64, oldestUncountedReceivedAtMs: Int64?, recountRemainingEvents: Int64? = nil) {
        countedThroughMs = min(oldestUncountedReceivedAtMs ?? nowMs, nowMs)
        lagSeconds = Double(nowMs - countedThroughMs) / 1000
        self.recountRemainingEvents = recountRemainingEvents
    }
}

/// Tells a recount of the rollups from their everyday backlog: a recount counts events stored
/// before the rollups started over, seen either when the store opened (a daemon started on a
/// restored copy, or after an upgrade that counts again, finds its rollups behind what is
/// stored) or later as the counted seq going back (`linkpulse rollup --rebuild` beside the
/// daemon). It runs until the rollups reach the newest event stored then; what is stored after
/// that is the everyday backlog, which `lag_seconds` measures.
public struct RecountWatch: Sendable {
    /// The seq a running recount must count through; nil when none runs.
    public private(set) var targetSeq: Int64?
    private var lastCountedSeq: Int64

    /// The watch of a store that, when it opened, had stored through `storedThroughSeq` and
    /// counted through `countedThroughSeq`.
    public init(storedThroughSeq stored: Int64, countedThroughSeq counted: Int64) {
        targetSeq = counted < stored ? stored : nil
        lastCountedSeq = counted
    }

    /// Takes one reading; returns how many events the running recount has left, nil when none runs.
    public mutating func observe(storedThroughSeq stored: Int64, countedThroughSeq counted: Int64) -> Int64? {
        if counted < lastCountedSeq, counted < stored { targetSeq = max(targetSeq ?? 0, stored) }
        lastCountedSeq = counted
        guard let target = targetSeq else { return nil }
        if counted >= target {
            targetSeq = nil
            return nil
        }
        return target - counted
    }
}
