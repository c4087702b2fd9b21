import Testing
@testable import LinkpulseDomain

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2026-11-21T10:07:00Z", Int64(1_795_255_620_000)),
        ("2026-11-21T10:07:00.250Z", 1_795_255_620_250),
        ("2026-11-21T15:37:00+05:30", 1_795_255_620_000),
        ("2026-11-21T04:22:00-05:45", 1_795_255_620_000),
        ("2026-11-21t10:07:00z", 1_795_255_620_000),
        ("2026-11-21 10:07:00Z", 1_795_255_620_000),
        ("2026-11-21T10:07:00.123456789Z", 1_795_255_620_123),
        ("1970-01-01T00:00:00Z", 0),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
    ])
    func parsesRFC3339(text: String, expected: Int64) {
        #expect(Timestamp.parseRFC3339(text) == expected)
    }

    @Test(arguments: [
        "", "2026-11-21", "2026-11-21T10:07Z", "2026-11-21T10:07:00", "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:07:00+0530", "2026-11-21T10:07:00.Z",
        "2026-11-21T10:07:00Zjunk", "1732184820000", "２０２６-11-21T10:07:00Z",
    ])
    func rejectsMalformed(text: String) {
        #expect(Timestamp.parseRFC3339(text) == nil)
    }

    @Test func formatsAndRoundTrips() {
        for millis: Int64 in [0, 1_795_255_620_250, 951_782_400_000, 4_102_444_799_999] {
            let text = Timestamp.formatUTC(millis)
            #expect(Timestamp.parseRFC3339(text) == millis, "\(text)")
        }
        #expect(Timestamp.formatUTC(1_795_255_620_250) == "2026-11-21T10:07:00.250Z")
    }

    @Test func civilDaysAreInverse() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = Timestamp.civilFromDays(days)
            #expect(Timestamp.daysFromCivil(year: date.year, month: date.month, day: date.day) == days)
        }
    }
}
