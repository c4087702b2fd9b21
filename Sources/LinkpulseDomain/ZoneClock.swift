import Foundation

/// Local time in one IANA zone, in UTC milliseconds: local days and hours, their starts, and
/// RFC 3339 with the zone's offset. Never uses the machine's own zone.
///
/// Every offset in use since 2000 is a multiple of 15 minutes, so every local hour and day
/// starts on the 15-minute UTC grid of the rollups (`TimeGrain.quarterHour`).
/// Not thread-safe (it caches the current offset period): make one per request.
public final class ZoneClock {
    public let identifier: String
    let zone: TimeZone
    private var cachedFrom: Int64 = .max
    private var cachedUntil: Int64 = .min
    private var cachedOffset: Int64 = 0

    /// Nil when `identifier` is not an IANA zone name this system knows.
    public init?(identifier: String) {
        guard !identifier.isEmpty, identifier.count <= 64,
              identifier.allSatisfy({ $0.isLetter || $0.isNumber || "/_+-".contains($0) }),
              let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
    }

    /// The zone's offset from UTC at `ms`, in milliseconds.
    public func offsetMs(at ms: Int64) -> Int64 {
        if ms >= cachedFrom && ms < cachedUntil { return cachedOffset }
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        cachedOffset = Int64(zone.secondsFromGMT(for: date)) * 1000
        // Valid until the next transition; from the previous one is unknown, so from here on.
        cachedFrom = ms
        if let next = zone.nextDaylightSavingTimeTransition(after: date) {
            cachedUntil = Int64((next.timeIntervalSince1970 * 1000).rounded())
        } else {
            cachedUntil = .max
        }
        return cachedOffset
    }

    /// The local day number (days since 1970-01-01 in local time) of an instant.
    public func localDay(_ ms: Int64) -> Int64 {
        (ms + offsetMs(at: ms)).quotientAndRemainderFloored(dividingBy: TimeGrain.dayMs).quotient
    }

    /// The local hour number (hours since 1970-01-01T00 in local time) of an instant.
    public func localHour(_ ms: Int64) -> Int64 {
        (ms + offsetMs(at: ms)).quotientAndRemainderFloored(dividingBy: TimeGrain.hourMs).quotient
    }

    /// A number that differs between consecutive local `interval` buckets. An hour is told
    /// apart by its offset too, so the hour repeated when clocks go back is two buckets.
    public func unit(_ interval: SeriesInterval, _ ms: Int64) -> Int64 {
        interval == .day ? localDay(ms) : localHour(ms) &* 8192 &+ offsetMs(at: ms) / 60_000
    }

    /// The first instant of the local bucket that contains `ms`.
    public func startOfUnit(_ interval: SeriesInterval, containing ms: Int64) -> Int64 {
        let target = unit(interval, ms)
        var start = TimeGrain.floor(ms, TimeGrain.quarterHourMs)
        // Walk back on the 15-minute grid while still in the same local unit (≤ 100 steps).
        while unit(interval, start - TimeGrain.quarterHourMs) == target { start -= TimeGrain.quarterHourMs }
        return start
    }

    /// The first instant of a local calendar date (local midnight, or the first instant after
    /// it when a transition skips midnight).
    public func startOfDay(year: Int, month: Int, day: Int) -> Int64 {
        let dayNumber = Int64(Timestamp.daysFromCivil(year: year, month: month, day: day))
        let guess = dayNumber * TimeGrain.dayMs - offsetMs(at: dayNumber * TimeGrain.dayMs)
        return startOfUnit(.day, containing: localDay(guess) >= dayNumber ? guess : guess + TimeGrain.dayMs / 2)
    }

    /// RFC 3339 with this zone's offset at that instant: `2026-11-01T00:00:00+05:30`, UTC as
    /// `+00:00` (milliseconds only when not zero).
    public func format(_ ms: Int64) -> String {
        let offset = offsetMs(at: ms)
        let (seconds, millis) = (ms + offset).quotientAndRemainderFloored(dividingBy: 1000)
        let (days, secondOfDay) = seconds.quotientAndRemainderFloored(dividingBy: 86_400)
        let date = Timestamp.civilFromDays(Int(days))
        let h = Int(secondOfDay / 3600), m = Int(secondOfDay % 3600 / 60), s = Int(secondOfDay % 60)
        var text = "\(Timestamp.pad(date.year, 4))-\(Timestamp.pad(date.month, 2))-\(Timestamp.pad(date.day, 2))"
            + "T\(Timestamp.pad(h, 2)):\(Timestamp.pad(m, 2)):\(Timestamp.pad(s, 2))"
        if millis != 0 { text += ".\(Timestamp.pad(Int(millis), 3))" }
        let offsetMinutes = Int(offset / 60_000)
        text += (offsetMinutes < 0 ? "-" : "+")
            + "\(Timestamp.pad(abs(offsetMinutes) / 60, 2)):\(Timestamp.pad(abs(offsetMinutes) % 60, 2))"
        return text
    }
}

/// The time grains of the rollups, in UTC milliseconds.
public enum TimeGrain {
    public static let quarterHourMs: Int64 = 15 * 60 * 1000
    public static let hourMs: Int64 = 3_600_000
    public static let dayMs: Int64 = 86_400_000

    /// The start of the `length`-long bucket containing `ms`.
    public static func floor(_ ms: Int64, _ length: Int64) -> Int64 {
        ms.quotientAndRemainderFloored(dividingBy: length).quotient * length
    }

    /// The start of the first bucket at or after `ms`.
    public static func ceil(_ ms: Int64, _ length: Int64) -> Int64 {
        let floored = floor(ms, length)
        return floored == ms ? ms : floored + length
    }
}

/// The buckets of a time series.
public enum SeriesInterval: String, Sendable, CaseIterable {
    case hour, day
}
