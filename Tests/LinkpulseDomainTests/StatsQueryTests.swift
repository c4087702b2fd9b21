import Foundation
import LinkpulseDomain
import Testing

@Suite struct ZoneClockTests {
    static func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }

    @Test func localDaysStartOnTheQuarterHourGrid() {
        let kolkata = ZoneClock(identifier: "Asia/Kolkata")!
        #expect(kolkata.startOfDay(year: 2026, month: 11, day: 1) == Self.ms("2026-10-31T18:30:00Z"))
        let kathmandu = ZoneClock(identifier: "Asia/Kathmandu")!
        #expect(kathmandu.startOfDay(year: 2026, month: 11, day: 1) == Self.ms("2026-10-31T18:15:00Z"))
        #expect(kathmandu.format(Self.ms("2026-10-31T18:15:00Z")) == "2026-11-01T00:00:00+05:45")
        let stJohns = ZoneClock(identifier: "America/St_Johns")!
        #expect(stJohns.format(stJohns.startOfDay(year: 2026, month: 12, day: 1)) == "2026-12-01T00:00:00-03:30")
    }

    @Test func daylightSavingDaysHaveTwentyThreeAndTwentyFiveHours() {
        let newYork = ZoneClock(identifier: "America/New_York")!
        let spring = newYork.startOfDay(year: 2026, month: 3, day: 8), after = newYork.startOfDay(year: 2026, month: 3, day: 9)
        #expect(after - spring == 23 * 3_600_000)
        let fall = newYork.startOfDay(year: 2026, month: 11, day: 1), next = newYork.startOfDay(year: 2026, month: 11, day: 2)
        #expect(next - fall == 25 * 3_600_000)
        #expect(newYork.format(fall) == "2026-11-01T00:00:00-04:00")
        #expect(newYork.format(next) == "2026-11-02T00:00:00-05:00")
        // The repeated hour 01:00 is two different hourly buckets.
        #expect(newYork.unit(.hour, Self.ms("2026-11-01T05:30:00Z")) != newYork.unit(.hour, Self.ms("2026-11-01T06:30:00Z")))
        #expect(newYork.startOfUnit(.hour, containing: Self.ms("2026-11-01T06:30:00Z")) == Self.ms("2026-11-01T06:00:00Z"))
    }

    @Test func unknownZonesAreRefused() {
        #expect(ZoneClock(identifier: "Mars/Olympus") == nil)
        #expect(ZoneClock(identifier: "") == nil)
        #expect(ZoneClock(identifier: "../etc/passwd") == nil)
    }
}

@Suite struct StatsQueryTests {
    let now = Timestamp.parseRFC3339("2026-11-22T12:00:00Z")!

    func parse(_ parameters: [String: String]) throws(ParameterError) -> StatsQuery {
        try StatsQuery.parse(parameters, defaultZone: "UTC", nowMs: now)
    }

    @Test func datesAreLocalAndToIsInclusive() throws {
        let q = try parse(["from": "2026-11-01", "to": "2026-11-07", "tz": "Asia/Kolkata"])
        #expect(q.fromMs == Timestamp.parseRFC3339("2026-10-31T18:30:00Z"))
        #expect(q.toMs == Timestamp.parseRFC3339("2026-11-07T18:30:00Z"))
        #expect(q.toMs - q.fromMs == 7 * 86_400_000)
    }

    @Test func defaultsToTheLastSevenDays() throws {
        let q = try parse([:])
        #expect(q.toMs == now && q.fromMs == now - 7 * 86_400_000)
        #expect(q.zone == "UTC" && !q.includeBots && q.filters == StatsFilters())
    }

    @Test func malformedParametersNameThemselves() {
        let cases: [([String: String], String)] = [
            (["from": "yesterday"], "from"), (["tz": "Nowhere/City"], "tz"),
            (["from": "2026-11-05", "to": "2026-11-01"], "from"),
            (["from": "2024-01-01", "to": "2026-01-01"], "to"), (["platform": "toaster"], "platform"),
            (["include_bots": "maybe"], "include_bots"), (["from": "2026-02-30"], "from"),
        ]
        for (parameters, name) in cases {
            #expect(throws: ParameterError.self) { try parse(parameters) }
            do { _ = try parse(parameters) } catch { #expect(error.parameter == name, "\(parameters)") }
        }
        let stats = try! parse([:])
        for (parameters, name) in [(["by": "color"], "by"), (["by": "ref", "sort": "1;DROP"], "sort"), (["by": "ref", "order": "up"], "order"),
                                   (["by": "ref", "limit": "1001"], "limit"), (["by": "ref", "limit": "0"], "limit"), (["by": "ref", "offset": "-1"], "offset")] {
            do { _ = try BreakdownQuery.parse(parameters, stats: stats); Issue.record("\(parameters) accepted") } catch { #expect(error.parameter == name) }
        }
        do { _ = try SeriesInterval.parse(["interval": "week"], stats: stats); Issue.record("week accepted") } catch { #expect(error.parameter == "interval") }
        // A CSV time series has no rows to page, but a wrong paging value is still refused
        // (the fuzzer sent offset=-14910192 with interval=day), and a right one is accepted.
        for (parameters, name) in [(["interval": "day", "offset": "-14910192"], "offset"), (["interval": "day", "sort": "x"], "sort"),
                                   (["interval": "day", "limit": "0"], "limit"), (["interval": "day", "order": "up"], "order")] {
            do { _ = try ExportContent.parseStats(parameters, query: stats); Issue.record("\(parameters) accepted") } catch { #expect(error.parameter == name) }
        }
        #expect(throws: Never.self) { try ExportContent.parseStats(["interval": "day", "offset": "0", "limit": "5", "sort": "installs"], query: stats) }
    }
}

/// The audience filters as the API takes them.
@Suite struct AudienceFilterTests {
    static let now: Int64 = 1_795_255_620_000

    @Test func audienceFiltersAreReadInTheFormTheStatsWrite() throws {
        let q = try StatsQuery.parse(
            ["country": "de", "device": "Phone", "os": "iOS", "browser": "Samsung Internet", "referrer_host": "WWW.Example.com", "language": "DE"],
            defaultZone: "UTC", nowMs: Self.now)
        #expect(q.filters.audience == [.country: "DE", .device: "phone", .os: "iOS", .browser: "Samsung Internet", .referrerHost: "www.example.com", .language: "de"])
        #expect(!q.filters.onlyPlatform)
        #expect(BreakdownQuery.parse_(["by": "referrer_host"], q)?.by == .referrerHost)
    }

    @Test func wrongAudienceValuesAreNamed() {
        for (name, value) in [("country", "Germany"), ("country", "D1"), ("device", "watch"), ("os", "")] {
            do {
                _ = try StatsQuery.parse([name: value], defaultZone: "UTC", nowMs: Self.now)
                Issue.record("\(name)=\(value) was taken")
            } catch {
                #expect(error.parameter == name, "\(error)")
            }
        }
    }

    @Test func theRawEventsAreNotFilteredByAudience() throws {
        let q = try StatsQuery.parse(["country": "DE"], defaultZone: "UTC", nowMs: Self.now)
        #expect(throws: ParameterError.self) { try ExportContent.parseEvents(["country": "DE"], query: q) }
        #expect(!QueryParameterNames.eventsExport.contains("country") && QueryParameterNames.breakdown.contains("referrer_host"))
    }
}

extension BreakdownQuery {
    /// `parse`, nil when it throws.
    static func parse_(_ parameters: [String: String], _ stats: StatsQuery) -> BreakdownQuery? {
        try? parse(parameters, stats: stats)
    }
}

/// Which names an endpoint takes, and how a refused one is told.
@Suite struct QueryParameterNamesTests {
    @Test func aNameTheEndpointLacksIsRefusedWithTheClosestOne() {
        #expect(throws: Never.self) { try QueryParameterNames.refuseUnknown(["campaign", "key", "from"], known: QueryParameterNames.summary) }
        do {
            try QueryParameterNames.refuseUnknown(["from", "campain", "colour"], known: QueryParameterNames.summary)
            Issue.record("campain was taken")
        } catch {
            #expect(error.parameter == "campain")
            #expect(error.message.hasPrefix("`campain` is not a parameter here. Did you mean `campaign`?"))
            #expect(error.message.contains("`include_bots`, `language`, `medium`"))
        }
        do {
            try QueryParameterNames.refuseUnknown(["colour"], known: QueryParameterNames.summary)
        } catch {
            #expect(!error.message.contains("Did you mean"), "\(error.message)")
        }
        do {
            try QueryParameterNames.refuseUnknown(["limit"], known: [])
        } catch {
            #expect(error.message.hasSuffix("This endpoint takes no query parameters."))
        }
    }

    @Test func typosOfOneEditAreRecognised() {
        for (typo, meant) in [("srot", "sort"), ("limt", "limit"), ("ofset", "offset"), ("tzz", "tz"), ("include_bot", "include_bots")] {
            do {
                try QueryParameterNames.refuseUnknown([typo], known: QueryParameterNames.breakdown)
                Issue.record("\(typo) was taken")
            } catch {
                #expect(error.message.contains("Did you mean `\(meant)`?"), "\(typo): \(error.message)")
            }
        }
    }
}
