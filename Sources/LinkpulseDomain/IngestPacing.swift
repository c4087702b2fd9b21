/// When the ingest writer must wait for the derived work (attribution and rollups) to catch
/// up, so the stats stay fresh under sustained load (`--ingest-pacing`).
///
/// Ingest stores events several times faster than the derived work digests them when both
/// share the machine; without a bound, a sustained burst leaves the stats minutes behind
/// (and the derived files' WALs growing). Two measures of "behind": the **lag** (how long the
/// oldest uncounted event has waited) and the **catch-up time** (how long the stats would take
/// to catch up if the load stopped now: for attribution and for counting each, its backlog at
/// the rate it got through events per millisecond of its own working time lately; the slower
/// of the two). The rule: a hold **begins**
/// when either is past the limit and the backlog has not shrunk over the last `windowMs`;
/// it **ends** when both are back within it. So:
/// - a burst the derived work digests within the limit is taken at full speed;
/// - sustained load above what the derived work digests is paced to it: holding frees the
///   CPU the derived work needs, the stats come back within the limit, the hold ends, and
///   the lag stays near its limit rather than settling wherever the load leaves it;
/// - the catch-up time bounds the backlog itself, early: the lag only crosses the limit once
///   the oldest uncounted event has waited that long, and a backlog built up meanwhile took
///   its whole catch-up time on top (lag peaks near twice the limit in 10-minute soaks,
///   while the derived work, starved of CPU by ingest at full speed, fell a million events
///   behind). So the lag's peaks stay closer to the limit (about 1.6 times it in those
///   soaks), and the stats catch up within about the limit after any load stops;
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
        /// The seq through which every event is attributed (at or past `countedThroughSeq`).
        public var attributedThroughSeq: Int64
        /// How long the rollup passes have worked in all, ms (a running total).
        public var countingMs: Int64
        /// How long the attribution rounds have worked in all, ms (a running total).
        public var attributingMs: Int64

        /// Events stored but not yet attributed (part of `backlog`).
        public var attributionBacklog: Int64 { max(countedThroughSeq + backlog - attributedThroughSeq, 0) }

        public init(
            atMs: Int64, lagMs: Int64, backlog: Int64, countedThroughSeq: Int64, attributedThroughSeq: Int64, countingMs: Int64,
            attributingMs: Int64
        ) {
            self.atMs = atMs
            self.lagMs = lagMs
            self.backlog = backlog
            self.countedThroughSeq = countedThroughSeq
            self.attributedThroughSeq = attributedThroughSeq
            self.countingMs = countingMs
            self.attributingMs = attributingMs
        }
    }

    /// The lag, and the catch-up time, above which sustained ingest is paced.
    public let lagLimitMs: Int64
    /// How far back the counting rate is measured: long enough to span several passes and the
    /// attribution rounds between them (a rate over one pass would swing from zero to the
    /// pass's own speed), and a whole number of rollup intervals (see `standardRateWindowMs`).
    public let rateWindowMs: Int64
    /// How long the backlog must fail to shrink, above the limit, before a hold begins.
    public let windowMs: Int64
    /// Readings of the last `windowMs`, oldest first (the one just before the window too).
    private var readings: [Reading] = []
    /// Whether the writer should hold its commits now.
    public private(set) var holding = false
    /// The counted watermark at the first reading: no hold begins before it moves.
    private var countedAtStart: Int64?
    /// Readings of the last `rateWindowMs` during which the backlog never ran dry, oldest
    /// first: the rates are measured over them (a window that starts on an idle stretch would
    /// see nothing counted until the first pass of a new load).
    private var withBacklog: [Reading] = []

    /// - Parameters:
    ///   - lagLimitMs: the stats lag, and the catch-up time, above which ingest is paced
    ///     (positive).
    ///   - windowMs: how far back "the backlog shrank" looks.
    ///   - rateWindowMs: how far back the counting rate is measured.
    public init(lagLimitMs: Int64, windowMs: Int64 = 3_000, rateWindowMs: Int64 = 20_000) {
        precondition(lagLimitMs > 0 && windowMs > 0 && rateWindowMs > 0)
        self.lagLimitMs = lagLimitMs
        self.windowMs = windowMs
        self.rateWindowMs = rateWindowMs
    }

    /// The default limit for a rollup interval: one interval and a fifth. Between two timer
    /// passes the lag climbs to about one interval whatever the load, so a limit at the
    /// interval itself would hold ingest at every ordinary tick; the fifth leaves a pass of
    /// fresh events its time. Under sustained load the lag's peaks stay well above the limit:
    /// with one and a half intervals, 10-minute soaks peaked at 2.2–2.3 intervals (p99), past
    /// the target of two; with one and a fifth, at 1.9 and 2.1 in two runs.
    public static func standardLagLimitMs(rollupIntervalMs: Int64) -> Int64 {
        max(rollupIntervalMs * 6 / 5, 1_000)
    }

    /// The rate window for a rollup interval: two intervals. Under light load a timer pass
    /// counts everything once an interval, and a window of whole intervals holds as many
    /// passes as intervals, so the rate it measures is the ingest rate and the catch-up time
    /// at most one interval. A window of one and a half intervals may hold one pass where
    /// the backlog has grown for nearly two, and put the catch-up time at the limit.
    public static func standardRateWindowMs(rollupIntervalMs: Int64) -> Int64 {
        max(rollupIntervalMs * 2, 2_000)
    }

    /// How long the derived work would take to get through the backlog of the newest reading,
    /// ms: attribution's backlog at the events it attributed per millisecond it worked over the
    /// last `rateWindowMs`, counting's likewise, whichever is longer. Nil until a whole window
    /// of readings with a backlog exists (a rate over less says little); `Int64.max` when one
    /// of them, with a backlog, got through nothing in it.
    ///
    /// Per millisecond *worked*, not elapsed: under sustained load the derived work works all
    /// the time and the two are the same; under light load it idles between timer passes, and
    /// what it got through per elapsed millisecond is only the arrival rate. Measured that way,
    /// a step from light to heavy load looked like a backlog that would take minutes to count
    /// and held ingest for seconds (single-event ingest p99 960 ms at 64 connections after a
    /// minute at one, with the rollups counting 30,000 events a second).
    public var catchUpMs: Int64? {
        guard let first = withBacklog.first, let last = withBacklog.last, last.atMs - first.atMs >= rateWindowMs else { return nil }
        let attributing = Self.workMs(
            backlog: last.attributionBacklog, done: last.attributedThroughSeq - first.attributedThroughSeq,
            worked: last.attributingMs - first.attributingMs)
        let counting = Self.workMs(
            backlog: last.backlog, done: last.countedThroughSeq - first.countedThroughSeq, worked: last.countingMs - first.countingMs)
        return max(attributing, counting)
    }

    /// How long `backlog` events take at `done` events per `worked` ms: 0 without a backlog,
    /// `Int64.max` when nothing was done.
    static func workMs(backlog: Int64, done: Int64, worked: Int64) -> Int64 {
        guard backlog > 0 else { return 0 }
        guard done > 0 else { return Int64.max }
        let ms = Double(backlog) * Double(max(worked, 0)) / Double(done)
        return ms >= Double(Int64.max) ? Int64.max : Int64(ms)
    }

    /// Drops the readings older than `window` before `newest`, but keeps the newest one at or
    /// before the window's start, as the comparison point.
    private static func keep(_ readings: inout [Reading], within window: Int64, of newest: Reading) {
        while readings.count > 2, readings[1].atMs <= newest.atMs - window { readings.removeFirst() }
    }

    /// Takes a reading and says whether the writer should hold its commits until the next.
    @discardableResult
    public mutating func observe(_ reading: Reading) -> Bool {
        readings.append(reading)
        if countedAtStart == nil { countedAtStart = reading.countedThroughSeq }
        Self.keep(&readings, within: windowMs, of: reading)
        // The rate is measured only while there was something to count throughout.
        if reading.backlog > 0 {
            withBacklog.append(reading)
            Self.keep(&withBacklog, within: rateWindowMs, of: reading)
        } else {
            withBacklog.removeAll()
        }
        let pastCatchUp = (catchUpMs ?? 0) > lagLimitMs
        guard reading.lagMs > lagLimitMs || pastCatchUp else {
            holding = false
            return false
        }
        // Past the limit: a hold goes on until both are back within it. A new one begins
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
