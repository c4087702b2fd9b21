/// When a scheduled export runs and which stretch of time each run covers.
///
/// A `daily` job covers one local calendar day of its zone (23 or 25 hours on DST days) and
/// runs `delay` after that day ends (`"at": "02:00"` → 02:00 the next day); an `hourly` job
/// covers one local hour and runs `delay` after it (`"at": ":05"`). Periods are identified by
/// their first instant, so "the last period done" is one number.
public struct ExportSchedule: Sendable, Equatable {
    public enum Cadence: String, Sendable, Codable, CaseIterable {
        case hourly, daily

        var interval: SeriesInterval { self == .hourly ? .hour : .day }
    }

    public var cadence: Cadence
    /// How long after a period ends its export runs, in ms (less than one period).
    public var delayMs: Int64
    /// The IANA zone whose days or hours the periods are.
    public var zone: String

    public init(cadence: Cadence, delayMs: Int64, zone: String) {
        self.cadence = cadence; self.delayMs = delayMs; self.zone = zone
    }

    /// One period: [startMs, endMs) in UTC ms, with its local label.
    public struct Period: Sendable, Equatable {
        public var startMs: Int64
        public var endMs: Int64
        /// `2026-11-21` (daily) or `2026-11-21T14` (hourly), in the schedule's zone; the hour
        /// repeated when clocks go back is labelled with its offset (`2026-11-01T01-0500`).
        public var label: String
    }

    /// Reads `"HH:MM"` (daily) or `":MM"` (hourly) as the delay after a period's end.
    public static func delay(parsing text: String, cadence: Cadence) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 2, let minutes = Int(parts[1]), (0..<60).contains(minutes) else { return nil }
        switch cadence {
        case .hourly:
            guard parts[0].isEmpty else { return nil }
            return Int64(minutes) * 60_000
        case .daily:
            guard parts[0].count == 2, let hours = Int(parts[0]), (0..<24).contains(hours) else { return nil }
            return Int64(hours * 60 + minutes) * 60_000
        }
    }

    /// The period that contains `ms`.
    public func period(containing ms: Int64) -> Period {
        let clock = ZoneClock(identifier: zone)!
        let start = clock.startOfUnit(cadence.interval, containing: ms)
        return period(startingAt: start, clock: clock)
    }

    /// The period right after `period`.
    public func period(after period: Period) -> Period {
        self.period(containing: period.endMs)
    }

    /// The newest period whose run time (`end + delay`) is at or before `nowMs`.
    public func latestDue(nowMs: Int64) -> Period {
        let current = period(containing: nowMs - delayMs)
        return period(containing: current.startMs - 1)
    }

    /// The periods to run now, oldest first: those after `lastDone` that are due. A job that
    /// never ran starts with the latest due period only. After a long downtime at most
    /// `limit` periods are run (the newest ones; older files would fall to retention at once).
    public func duePeriods(after lastDoneStartMs: Int64?, nowMs: Int64, limit: Int) -> (periods: [Period], skipped: Int) {
        let latest = latestDue(nowMs: nowMs)
        guard let lastDoneStartMs else { return ([latest], 0) }
        guard lastDoneStartMs < latest.startMs else { return ([], 0) }
        var periods: [Period] = []
        var skipped = 0
        var next = period(after: period(containing: lastDoneStartMs))
        while next.startMs <= latest.startMs {
            periods.append(next)
            if periods.count > limit {
                periods.removeFirst()
                skipped += 1
            }
            next = period(after: next)
        }
        return (periods, skipped)
    }

    private func period(startingAt start: Int64, clock: ZoneClock) -> Period {
        // The next unit starts at the first 15-minute step where the local unit changes
        // (every IANA offset is a multiple of 15 minutes).
        let unit = clock.unit(cadence.interval, start)
        var end = start + TimeGrain.quarterHourMs
        while clock.unit(cadence.interval, end) == unit { end += TimeGrain.quarterHourMs }
        let local = clock.format(start)  // 2026-11-21T14:00:00+05:30
        let label: String
        switch cadence {
        case .daily:
            label = String(local.prefix(10))
        case .hourly:
            let hour = String(local.prefix(13))
            // A local hour that happens twice (clocks going back) needs its offset to be unique.
            let repeated = clock.format(start - TimeGrain.hourMs).prefix(13) == hour[...]
                || clock.format(end).prefix(13) == hour[...]
            label = repeated ? hour + String(local.suffix(6).filter { $0 != ":" }) : hour
        }
        return Period(startMs: start, endMs: end, label: label)
    }
}
