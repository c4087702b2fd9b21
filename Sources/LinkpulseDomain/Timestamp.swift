/// Parsing of the two timestamp forms the ingest API accepts: RFC 3339 strings and epoch
/// milliseconds. All results are UTC milliseconds since 1970-01-01T00:00:00Z.
public enum Timestamp {
    /// Parses an RFC 3339 date-time (`2026-11-21T10:07:00Z`, `2026-11-21T15:37:00.250+05:30`).
    /// Fractional seconds beyond milliseconds are truncated; a lowercase `t`/`z` or a space
    /// between date and time are accepted as RFC 3339 allows. Returns nil when malformed.
    public static func parseRFC3339(_ text: String) -> Int64? {
        text.utf8.withContiguousStorageIfAvailable(parseRFC3339) ?? Array(text.utf8).withUnsafeBufferPointer(parseRFC3339)
    }

    /// `parseRFC3339(_:)` of the string's UTF-8 bytes.
    static func parseRFC3339(_ utf8: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard utf8.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= utf8.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                let c = utf8[i]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard let year = digits(0, 4), utf8[4] == 45, let month = digits(5, 2), utf8[7] == 45,
              let day = digits(8, 2), utf8[10] == 84 || utf8[10] == 116 || utf8[10] == 32,
              let hour = digits(11, 2), utf8[13] == 58, let minute = digits(14, 2), utf8[16] == 58,
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var index = 19
        var millis = 0
        if utf8[index] == 46 {  // "."
            index += 1
            var scale = 100
            let start = index
            while index < utf8.count, utf8[index] >= 48, utf8[index] <= 57 {
                millis += Int(utf8[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < utf8.count else { return nil }
        var offsetSeconds = 0
        switch utf8[index] {
        case 90, 122:  // Z z
            index += 1
        case 43, 45:  // + -
            let sign = utf8[index] == 45 ? -1 : 1
            guard let oh = digits(index + 1, 2), utf8.count > index + 3, utf8[index + 3] == 58,
                  let om = digits(index + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            index += 6
        default:
            return nil
        }
        guard index == utf8.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        // A leap second (":60") is folded into the next second, as most systems do.
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * 1000 + Int64(millis)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01 (inverse of `daysFromCivil`).
    public static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Formats UTC milliseconds as RFC 3339 with millisecond precision and a `Z` suffix.
    public static func formatUTC(_ millis: Int64) -> String {
        let (secondsTotal, ms) = millis.quotientAndRemainderFloored(dividingBy: 1000)
        let (days, secondOfDay) = secondsTotal.quotientAndRemainderFloored(dividingBy: 86_400)
        let date = civilFromDays(Int(days))
        let h = Int(secondOfDay / 3600), m = Int(secondOfDay % 3600 / 60), s = Int(secondOfDay % 60)
        return "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))T\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(Int(ms), 3))Z"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

extension Int64 {
    /// Division rounding toward negative infinity, with a remainder that is never negative.
    public func quotientAndRemainderFloored(dividingBy divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = self / divisor
        var r = self % divisor
        if r < 0 { q -= 1; r += divisor }
        return (q, r)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (metrics, Dispatch deadlines, running totals of work).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
