/// When the ingest writer must wait for the derived work (attribution and rollups) to catch
/// up, so the stats stay fresh under sustained load (`--ingest-pacing`).
///
/// Ingest stores events several times faster than the derived work digests them when both
/// share the machine; without a bound, a sustained burst leaves the stats minutes behind
/// (and the derived files' WALs growing). The rule: a hold **begins** when the stats are more
/// than `lagLimitMs` behind and the backlog of events not yet counted has not shrunk over the
/// last `windowMs`; it **ends** when the stats are back within the limit. So:
/// - a burst shorter than the limit is taken at full speed (the lag never reaches it);
/// - sustained load above what the derived work digests is paced to it: holding frees the
///   CPU the derived work needs, the stats come back within the limit, the hold ends, and
///   the lag stays near the limit rather than settling wherever the load leaves it;
/// - a backlog that is being worked off (after a restart that recounts, a restore, or a
///   burst that has ended) does not begin a hold, however old its oldest event is;
/// - nor does anything before the derived work has counted once since the start: a restart
///   finds the events the last run left uncounted, whose age says nothing about the load, and
///   the first timer pass comes an interval later (holding the writer until then would only
///   slow whoever sends).
/// Pure: fed readings, it says whether to hold; the daemon samples the store.
public struct IngestPacing: Sendable, Equatable {
    /// One reading of the derived work's progress.
    public struct Reading: Sendable, Equatable {
        /// When it was taken, UTC ms.
        public var atMs: Int64
        /// How long the oldest event not yet counted has waited, ms (0: all counted).
        public var lagMs: Int64
        /// Events stored but not yet counted.
        public var backlog: Int64
        /// The seq through which every event is counted.
        public var countedThroughSeq: Int64

        public init(atMs: Int64, lagMs: Int64, backlog: Int64, countedThroughSeq: Int64) {
            self.atMs = atMs
            self.lagMs = lagMs
            self.backlog = backlog
            self.countedThroughSeq = countedThroughSeq
        }
    }

    /// The lag above which sustained ingest is paced.
    public let lagLimitMs: Int64
    /// How long the backlog must fail to shrink, above the limit, before a hold begins.
    public let windowMs: Int64
    /// Readings of the last `windowMs`, oldest first (the one just before the window too).
    private var readings: [Reading] = []
    /// Whether the writer should hold its commits now.
    public private(set) var holding = false
    /// The counted watermark at the first reading: no hold begins before it moves.
    private var countedAtStart: Int64?

    /// - Parameters:
    ///   - lagLimitMs: the stats lag above which ingest is paced (positive).
    ///   - windowMs: how far back "the backlog shrank" looks.
    public init(lagLimitMs: Int64, windowMs: Int64 = 3_000) {
        precondition(lagLimitMs > 0 && windowMs > 0)
        self.lagLimitMs = lagLimitMs
        self.windowMs = windowMs
    }

    /// The default limit for a rollup interval: one and a half intervals. Between two timer
    /// passes the lag climbs to about one interval whatever the load, so a limit at the
    /// interval itself would hold ingest at every ordinary tick.
    public static func standardLagLimitMs(rollupIntervalMs: Int64) -> Int64 {
        max(rollupIntervalMs * 3 / 2, 1_000)
    }

    /// Takes a reading and says whether the writer should hold its commits until the next.
    @discardableResult
    public mutating func observe(_ reading: Reading) -> Bool {
        readings.append(reading)
        if countedAtStart == nil { countedAtStart = reading.countedThroughSeq }
        // Keep the newest reading at or before the window's start, as the comparison point.
        while readings.count > 2, readings[1].atMs <= reading.atMs - windowMs { readings.removeFirst() }
        guard reading.lagMs > lagLimitMs else {
            holding = false
            return false
        }
        // Past the limit: a hold goes on until the lag is back within it. A new one begins
        // only once the derived work has counted since the start, when a reading a whole
        // window old exists (with a shorter history "not shrinking" cannot be told) and the
        // backlog is no smaller than then.
        if !holding, let reference = readings.first, reference.atMs <= reading.atMs - windowMs,
           let countedAtStart, reading.countedThroughSeq > countedAtStart {
            holding = reading.backlog >= reference.backlog
        }
        return holding
    }
}
