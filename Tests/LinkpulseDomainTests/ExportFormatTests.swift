import Foundation
import LinkpulseDomain
import Testing

@Suite struct CSVRowsTests {
    static func line(_ build: (inout CSVRows) -> Void) -> String {
        var csv = CSVRows()
        build(&csv)
        return String(decoding: csv.bytes, as: UTF8.self)
    }

    @Test func quotesOnlyWhatNeedsQuotingAndEndsRowsWithCRLF() {
        #expect(Self.line { $0.row(["plain", nil, "", "a,b", "say \"hi\"", "two\nlines"]) }
            == "plain,,,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n")
        #expect(Self.line { $0.row(["emoji 🚀", "עברית"]) } == "emoji 🚀,עברית\r\n")
    }

    @Test func formulaTriggersGetALeadingQuote() {
        #expect(Self.line { $0.row(["=HYPERLINK(\"http://x\")"]) } == "\"'=HYPERLINK(\"\"http://x\"\")\"\r\n")
        #expect(Self.line { $0.row(["+1", "-1", "@SUM(A1)", "\tx", "\rx", "'quoted", "a=b"]) }
            == "'+1,'-1,'@SUM(A1),'\tx,\"'\rx\",''quoted,a=b\r\n")
        for value in ["=1", "+1", "-1", "@x", "\tx", "'x", "x"] {
            var csv = CSVRows()
            csv.text(value)
            let cell = String(decoding: csv.bytes, as: UTF8.self)
            #expect(CSVRows.restoreText(cell) == value)
        }
    }

    @Test func numbersRatesAndTimestamps() {
        #expect(Self.line {
            $0.integer(0); $0.integer(-42); $0.integer(1_234_567)
            $0.rate(nil); $0.rate(0.125); $0.rate(2.0 / 3.0); $0.rate(1); $0.rate(0.00004)
            $0.endRow()
        } == "0,-42,1234567,,0.1250,0.6667,1.0000,0.0000\r\n")
        let kolkata = ZoneClock(identifier: "Asia/Kolkata")!
        let utc = ZoneClock(identifier: "UTC")!
        let ms = Timestamp.parseRFC3339("2026-11-21T08:33:07.250Z")!
        #expect(Self.line { $0.timestamp(ms, clock: kolkata); $0.timestamp(nil, clock: utc); $0.timestamp(ms - 250, clock: utc); $0.endRow() }
            == "\(kolkata.format(ms)),,\(utc.format(ms - 250))\r\n")
        #expect(kolkata.format(ms) == "2026-11-21T14:03:07.250+05:30")
    }
}

@Suite struct ExportScheduleTests {
    static func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }

    @Test func dailyPeriodsAreLocalDaysRunAfterTheirDelay() {
        let schedule = ExportSchedule(cadence: .daily, delayMs: 2 * 3_600_000, zone: "Europe/Berlin")
        // 01:59 Berlin on Nov 22: Nov 21 is not due until 02:00.
        #expect(schedule.latestDue(nowMs: Self.ms("2026-11-22T00:59:00Z")).label == "2026-11-20")
        let due = schedule.latestDue(nowMs: Self.ms("2026-11-22T01:00:00Z"))
        #expect(due.label == "2026-11-21")
        #expect(due.startMs == Self.ms("2026-11-20T23:00:00Z"))
        #expect(due.endMs == Self.ms("2026-11-21T23:00:00Z"))
        // The autumn DST day lasts 25 hours.
        let october = schedule.period(containing: Self.ms("2026-10-25T12:00:00Z"))
        #expect(october.label == "2026-10-25")
        #expect(october.endMs - october.startMs == 25 * 3_600_000)
    }

    @Test func catchUpRunsEachMissedPeriodOnceAndNothingTwice() {
        let schedule = ExportSchedule(cadence: .daily, delayMs: 10 * 60_000, zone: "UTC")
        let now = Self.ms("2026-11-22T09:00:00Z")
        // Never ran: only the latest finished day.
        #expect(schedule.duePeriods(after: nil, nowMs: now, limit: 30).periods.map(\.label) == ["2026-11-21"])
        // Last done Nov 18: Nov 19, 20, 21, oldest first.
        let last = schedule.period(containing: Self.ms("2026-11-18T05:00:00Z"))
        #expect(schedule.duePeriods(after: last.startMs, nowMs: now, limit: 30).periods.map(\.label) == ["2026-11-19", "2026-11-20", "2026-11-21"])
        // Up to date: nothing.
        let latest = schedule.latestDue(nowMs: now)
        #expect(schedule.duePeriods(after: latest.startMs, nowMs: now, limit: 30).periods.isEmpty)
        // More missed than kept: the newest `limit`, the rest counted as skipped.
        let limited = schedule.duePeriods(after: last.startMs, nowMs: now, limit: 2)
        #expect(limited.periods.map(\.label) == ["2026-11-20", "2026-11-21"])
        #expect(limited.skipped == 1)
    }

    @Test func hourlyPeriodsLabelTheRepeatedHourWithItsOffset() {
        let schedule = ExportSchedule(cadence: .hourly, delayMs: 5 * 60_000, zone: "America/New_York")
        let first = schedule.period(containing: Self.ms("2026-11-01T05:30:00Z"))
        let second = schedule.period(after: first)
        #expect(first.label == "2026-11-01T01-0400")
        #expect(second.label == "2026-11-01T01-0500")
        #expect(schedule.period(after: second).label == "2026-11-01T02")
        let kolkata = ExportSchedule(cadence: .hourly, delayMs: 5 * 60_000, zone: "Asia/Kolkata")
        let due = kolkata.latestDue(nowMs: Self.ms("2026-11-21T08:35:00Z"))  // 14:05 local
        #expect(due.label == "2026-11-21T13")
        #expect(due.startMs == Self.ms("2026-11-21T07:30:00Z"))
    }

    @Test func runTimesParse() {
        #expect(ExportSchedule.delay(parsing: "02:30", cadence: .daily) == Int64(150 * 60_000))
        #expect(ExportSchedule.delay(parsing: ":05", cadence: .hourly) == Int64(5 * 60_000))
        for bad in ["2:30", "24:00", "02:60", ":05", "x"] { #expect(ExportSchedule.delay(parsing: bad, cadence: .daily) == nil) }
        for bad in ["05", "01:05", ":5", ":60"] { #expect(ExportSchedule.delay(parsing: bad, cadence: .hourly) == nil) }
    }

    @Test func configFileIsCheckedJobByJob() throws {
        let example = try Data(contentsOf: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "ops/exports.example.json"))
        let config = try ExportConfig.parse(example, defaultZone: "UTC")
        #expect(config.jobs.map(\.name) == ["daily-by-ref", "daily-by-campaign", "hourly-events"])
        let period = config.jobs[0].schedule.latestDue(nowMs: Self.ms("2026-11-22T06:00:00Z"))
        #expect(config.jobs[0].fileName(for: period) == "daily-by-ref_2026-11-21.csv.gz")
        #expect(config.jobs[1].fileName(for: period) == "daily-by-campaign_2026-11-21.csv")

        let bad: [(String, String)] = [
            (#"{"jobs":[{"name":"../x","period":"daily","query":{"by":"ref"}}]}"#, "name"),
            (#"{"jobs":[{"name":"a","period":"weekly","query":{"by":"ref"}}]}"#, "period"),
            (#"{"jobs":[{"name":"a","period":"daily","at":"25:00","query":{"by":"ref"}}]}"#, "at"),
            (#"{"jobs":[{"name":"a","period":"daily","timezone":"Mars/Base","query":{"by":"ref"}}]}"#, "timezone"),
            (#"{"jobs":[{"name":"a","period":"daily","query":{"by":"color"}}]}"#, "query.by"),
            (#"{"jobs":[{"name":"a","period":"daily","query":{"by":"ref","from":"2026-01-01"}}]}"#, "query.from"),
            (#"{"jobs":[{"name":"a","period":"daily"}]}"#, "query"),
            (#"{"jobs":[{"name":"a","period":"daily","events":true},{"name":"a","period":"hourly","events":true}]}"#, "twice"),
        ]
        for (json, fragment) in bad {
            #expect(throws: ExportConfig.Problem.self) { try ExportConfig.parse(Data(json.utf8), defaultZone: "UTC") }
            do {
                _ = try ExportConfig.parse(Data(json.utf8), defaultZone: "UTC")
            } catch {
                #expect(error.description.contains(fragment), "\(error.description)")
            }
        }
    }
}
