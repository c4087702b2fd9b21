/// How long raw events are kept (`--retention-days`), and the horizon that gives: raw events
/// that happened before it are deleted once they are counted; their rollups stay forever.
public struct RawEventRetention: Sendable, Equatable {
    /// Days raw events are kept; 0 keeps them forever (the default).
    public var days: Int

    public init(days: Int) {
        self.days = days
    }

    /// Whether raw events are ever deleted.
    public var deletes: Bool { days > 0 }

    /// The horizon at `nowMs` (UTC ms): the start of the UTC day `days` days back, or earlier
    /// when a scheduled raw-event export still has to write a period that begins before it
    /// (`pendingExportFromMs`, the start of its next period): an export never misses a period
    /// because retention went first. Nil when nothing is deleted.
    public func horizon(nowMs: Int64, pendingExportFromMs: Int64? = nil) -> Int64? {
        guard deletes else { return nil }
        var horizon = TimeGrain.floor(nowMs - Int64(days) * TimeGrain.dayMs, TimeGrain.dayMs)
        if let pending = pendingExportFromMs { horizon = min(horizon, TimeGrain.floor(pending, TimeGrain.dayMs)) }
        return horizon
    }
}
