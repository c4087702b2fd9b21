import LinkpulseDomain
import Testing

/// The rollup cells a round adds to (the rows of PostgreSQL), computed without a database.
@Suite struct RollupCellsTests {
    static let t: Int64 = 1_795_255_620_000  // 2026-11-22T07:27:00Z

    static func event(_ kind: EventKind, ref: String?, campaign: String?, platform: Platform, bot: Bool = false, visitor: String, match: MatchType? = nil) -> CountedEvent {
        CountedEvent(
            kind: kind, platform: platform, isBot: bot, deferred: false, visitorHash: VisitorSketch.hash(visitor),
            dimensions: LinkDimensions(ref: ref, campaign: campaign), match: match)
    }

    static func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }

    @Test func eachEventCountsInItsHourAndDayOnceByEveryDimension() {
        var cells = RollupCells()
        cells.add(Self.event(.click, ref: "spring", campaign: "launch", platform: .ios, visitor: "v1"), occurredAtMs: Self.t)
        cells.add(Self.event(.click, ref: "spring", campaign: nil, platform: .android, visitor: "v2"), occurredAtMs: Self.t + 60_000)
        cells.add(Self.event(.install, ref: "spring", campaign: "launch", platform: .ios, visitor: "v1", match: .clickId), occurredAtMs: Self.t + 3_600_000)
        cells.add(Self.event(.click, ref: "spring", campaign: "launch", platform: .ios, bot: true, visitor: "b"), occurredAtMs: Self.t)

        let hour = Int16(RollupGrain.hour.rawValue), day = Int16(RollupGrain.day.rawValue)
        let hourStart = TimeGrain.floor(Self.t, TimeGrain.hourMs), dayStart = TimeGrain.floor(Self.t, TimeGrain.dayMs)
        func counts(_ d: RollupCells.Dimension, _ grain: Int16, _ bucket: Int64, _ value: String, platform: Int16 = -1, bot: Bool = false) -> ConversionCounts? {
            cells.counts[RollupCells.Key(dimension: d.rawValue, grain: grain, bucketMs: bucket, value: value, platform: platform, bot: bot)]
        }
        // By ref over the day: two clicks by two visitors and the install, people only.
        let springDay = try! #require(counts(.ref, day, dayStart, "spring"))
        #expect(springDay.events == 3 && springDay.clicks == 2 && springDay.installsClickId == 1 && springDay.clickVisitors.count == 2)
        // The hour of the clicks, and the next hour of the install, apart.
        #expect(counts(.ref, hour, hourStart, "spring")?.clicks == 2)
        #expect(counts(.ref, hour, hourStart + TimeGrain.hourMs, "spring")?.installs == 1)
        // A missing campaign is the value ''.
        #expect(counts(.campaign, day, dayStart, "")?.clicks == 1 && counts(.campaign, day, dayStart, "launch")?.events == 2)
        // In all, by platform; the link dimensions' rows have none.
        #expect(counts(.all, day, dayStart, "", platform: Int16(Platform.ios.code))?.events == 2)
        #expect(counts(.all, day, dayStart, "", platform: Int16(Platform.android.code))?.events == 1)
        // Bots in rows of their own.
        #expect(counts(.ref, day, dayStart, "spring", bot: true)?.clicks == 1)
        // People: the month, the day and the clicks' hour 7 rows each (two platforms, two
        // campaigns), the install's hour 5; the bot: 5 in each of its month, day and hour; and
        // in each of these cells' buckets one row of each audience dimension (all unknown here).
        #expect(cells.counts.count == 7 + 7 + 7 + 5 + 15 + 6 * (3 + 1 + 3))
        #expect(counts(.ref, RollupCells.Grain.month.rawValue, Self.ms("2026-11-01T00:00:00Z"), "spring")?.events == 3)

        // A stored row adds to its cell; a stored row of a cell the round does not touch is not one.
        let key = RollupCells.Key(dimension: 1, grain: day, bucketMs: dayStart, value: "spring", platform: -1, bot: false)
        var stored = ConversionCounts()
        stored.clicks = 5
        stored.events = 5
        stored.clickVisitors.insert(hash: VisitorSketch.hash("v1"))
        stored.clickVisitors.insert(hash: VisitorSketch.hash("v9"))
        cells.merge(stored: stored, into: key)
        #expect(cells.counts[key]?.clicks == 7 && cells.counts[key]?.clickVisitors.count == 3)
        let before = cells.counts.count
        cells.merge(stored: stored, into: RollupCells.Key(dimension: 1, grain: day, bucketMs: 0, value: "other", platform: -1, bot: false))
        #expect(cells.counts.count == before)
    }

    /// Whole UTC days of a stats answer read month rows for the whole months among them.
    @Test func wholeMonthsAmongTheDaysReadMonthRows() {
        #expect(RollupRows.days(from: Self.ms("2026-11-15T00:00:00Z"), to: Self.ms("2027-02-10T00:00:00Z")) == [
            .rows(.day, from: Self.ms("2026-11-15T00:00:00Z"), to: Self.ms("2026-12-01T00:00:00Z")),
            .rows(.month, from: Self.ms("2026-12-01T00:00:00Z"), to: Self.ms("2027-02-01T00:00:00Z")),
            .rows(.day, from: Self.ms("2027-02-01T00:00:00Z"), to: Self.ms("2027-02-10T00:00:00Z")),
        ])
        #expect(RollupRows.days(from: Self.ms("2026-11-01T00:00:00Z"), to: Self.ms("2026-12-01T00:00:00Z")) == [
            .rows(.month, from: Self.ms("2026-11-01T00:00:00Z"), to: Self.ms("2026-12-01T00:00:00Z")),
        ])
        #expect(RollupRows.days(from: Self.ms("2026-11-02T00:00:00Z"), to: Self.ms("2026-11-30T00:00:00Z")) == [
            .rows(.day, from: Self.ms("2026-11-02T00:00:00Z"), to: Self.ms("2026-11-30T00:00:00Z")),
        ])
        // Most of a month, where asked: the month less its other days.
        #expect(RollupRows.days(from: Self.ms("2026-10-28T00:00:00Z"), to: Self.ms("2026-11-29T00:00:00Z"), subtracting: true) == [
            .rows(.day, from: Self.ms("2026-10-28T00:00:00Z"), to: Self.ms("2026-11-01T00:00:00Z")),
            .mostOfMonth(from: Self.ms("2026-11-01T00:00:00Z"), to: Self.ms("2026-11-29T00:00:00Z")),
        ])
        #expect(RollupCells.Grain.month.bucket(Self.ms("2028-02-29T23:59:59Z")) == Self.ms("2028-02-01T00:00:00Z"))
        #expect(RollupCells.Grain.nextMonth(Self.ms("2026-12-01T00:00:00Z")) == Self.ms("2027-01-01T00:00:00Z"))
    }

    /// An install a click brought counts under that click's audience (its own user agent is
    /// the app's); a click, a bot and an organic install under their own.
    @Test func anAttributedInstallCountsUnderItsClicksAudience() {
        let browser = CountedAudience(country: "DE", device: "phone", os: "iOS", browser: "Instagram", referrerHost: "l.instagram.com", language: "de")
        let app = CountedAudience(country: "AT", device: "phone", os: "iOS", browser: "", referrerHost: "", language: "")
        func counted(_ kind: EventKind, bot: Bool = false, _ match: MatchType?, click: CountedAudience?) -> CountedAudience {
            CountedEvent(
                kind: kind, platform: .ios, isBot: bot, deferred: false, visitorHash: 1, own: LinkDimensions(), match: match, click: nil,
                ownAudience: app, clickAudience: click
            ).audience
        }
        for match in [MatchType.clickId, .installReferrer, .ref, .fingerprint] {
            #expect(counted(.install, match, click: browser) == browser, "\(match)")
            #expect(counted(.open, match, click: browser) == browser, "\(match)")
            #expect(counted(.install, match, click: nil) == app, "no click found: its own, \(match)")
        }
        #expect(counted(.install, .organic, click: browser) == app)
        #expect(counted(.install, bot: true, .clickId, click: browser) == app)
        #expect(counted(.click, nil, click: browser) == app)

        var cells = RollupCells(dimensions: RollupCells.Dimension.audience)
        var install = Self.event(.install, ref: "spring", campaign: "launch", platform: .ios, visitor: "v1", match: .clickId)
        install.audience = browser
        cells.add(install, occurredAtMs: Self.t)
        let day = RollupCells.Grain.day.rawValue, dayStart = TimeGrain.floor(Self.t, TimeGrain.dayMs)
        for (dimension, value) in [(RollupCells.Dimension.country, "DE"), (.device, "phone"), (.os, "iOS"), (.browser, "Instagram"),
                                   (.referrerHost, "l.instagram.com"), (.language, "de")] {
            let key = RollupCells.Key(dimension: dimension.rawValue, grain: day, bucketMs: dayStart, value: value, platform: -1, bot: false)
            #expect(cells.counts[key]?.installsClickId == 1, "\(dimension)")
        }
        // Rows per dimension, never a cross product, and only the dimensions asked for.
        #expect(cells.counts.count == 6 * 3)
    }

    /// Audience filters and groupings read the rows of their dimension, as link ones do.
    @Test func anAudienceQuestionReadsItsDimensionsRows() throws {
        let from = Self.ms("2026-11-01T00:00:00Z"), to = Self.ms("2026-12-01T00:00:00Z")
        func rows(_ filters: StatsFilters, _ grouping: StatsGrouping) -> RollupRows? {
            RollupRows(plan: StatsPlan(query: StatsQuery(fromMs: from, toMs: to, filters: filters), grouping: grouping))
        }
        let byCountry = try #require(rows(StatsFilters(), .dimension(.country)))
        #expect(byCountry.dimension == .country && byCountry.value == nil && byCountry.key == "value")
        #expect(byCountry.pieces == [.rows(.month, from: from, to: to)])
        let phones = try #require(rows(StatsFilters(audience: [.device: "phone"]), .none))
        #expect(phones.dimension == .device && phones.value == "phone")
        let phonesByDevice = try #require(rows(StatsFilters(audience: [.device: "phone"]), .dimension(.device)))
        #expect(phonesByDevice.value == "phone")
        // Two dimensions at once: from the raw events.
        #expect(rows(StatsFilters(campaign: "launch"), .dimension(.country)) == nil)
        #expect(rows(StatsFilters(audience: [.country: "DE", .os: "iOS"]), .none) == nil)
        #expect(rows(StatsFilters(platform: .ios), .dimension(.browser)) == nil)
    }

    /// Both stores refuse an answer that would count raw events retention has deleted: an edge
    /// finer than the rows they keep (an hour on PostgreSQL, a day on SQLite) names the parameter
    /// to move; a question no rows answer names its start.
    @Test func bothStoresRefuseAnAnswerCountedFromDeletedRawEvents() throws {
        let from = Self.ms("2026-11-02T06:00:00Z"), to = Self.ms("2026-11-29T06:00:00Z")
        let query = StatsQuery(fromMs: from, toMs: to)
        let plan = StatsPlan(query: query, grouping: .dimension(.country))
        let byDay = try #require(RollupRows(plan: plan, hourRows: false))
        let byHour = try #require(RollupRows(plan: plan))
        let (before, after) = (Self.ms("2026-11-03T00:00:00Z"), Self.ms("2026-11-02T00:00:00Z"))
        #expect(throws: ParameterError.finerThanKeptByDay("from", horizonMs: before)) { try RollupRows.refuseRawReads(byDay, of: query, before: before) }
        try RollupRows.refuseRawReads(byHour, of: query, before: before)
        try RollupRows.refuseRawReads(byDay, of: query, before: after)
        #expect(throws: ParameterError.countedFromRawEvents(horizonMs: before, what: "A question filtered by two dimensions, or grouped by one and filtered by another,")) {
            try RollupRows.refuseRawReads(nil, of: query, before: before)
        }
        try RollupRows.refuseRawReads(nil, of: query, before: from)
        let quarter = StatsQuery(fromMs: from + 60_000, toMs: to)
        let finerThanAQuarter = try #require(RollupRows(plan: StatsPlan(query: quarter, grouping: .dimension(.country))))
        #expect(throws: ParameterError.finerThanKept("from", horizonMs: before)) { try RollupRows.refuseRawReads(finerThanAQuarter, of: quarter, before: before) }
    }

    /// Most of a month reads the month's row less its other days (then drops what netted to
    /// nothing), and its visitors from its own days; a breakdown's second pass reads only the
    /// visitors of its page; the edges finer than the rows kept read raw events.
    @Test func bothStoresReadMostOfAMonthAsTheMonthLessItsOtherDays() throws {
        let from = Self.ms("2026-11-02T00:00:00Z"), to = Self.ms("2026-11-29T06:00:00Z")
        let plan = StatsPlan(query: StatsQuery(fromMs: from, toMs: to), grouping: .dimension(.country))
        let rows = try #require(RollupRows(plan: plan, hourRows: false))
        let (m, day, edge) = (Self.ms("2026-11-01T00:00:00Z"), Self.ms("2026-11-29T00:00:00Z"), Self.ms("2026-12-01T00:00:00Z"))
        let counts = rows.reads(withVisitors: true, asksKeys: false, visitorsOnly: false)
        #expect(counts.dropsNetted)
        #expect(counts.reads == [
            .rows(.month, from: m, to: edge, counting: .add, visitors: false, onlyAskedKeys: false),
            .rows(.day, from: m, to: from, counting: .subtract, visitors: false, onlyAskedKeys: false),
            .rows(.day, from: day, to: edge, counting: .subtract, visitors: false, onlyAskedKeys: false),
            .rows(.day, from: from, to: day, counting: .none, visitors: true, onlyAskedKeys: false),
            .raw(from: day, to: to),
        ])
        let page = rows.reads(withVisitors: true, asksKeys: true, visitorsOnly: true)
        #expect(!page.dropsNetted)
        #expect(page.reads == [
            .rows(.day, from: from, to: day, counting: .none, visitors: true, onlyAskedKeys: true),
            .raw(from: day, to: to),
        ])
        let withHours = try #require(RollupRows(plan: plan))
        #expect(withHours.reads(withVisitors: false, asksKeys: false, visitorsOnly: false).reads.last
            == .rows(.hour, from: day, to: to, counting: .add, visitors: false, onlyAskedKeys: false))
        // A value seen only in the days taken away netted to nothing.
        var (one, minusOne) = (ConversionCounts(), ConversionCounts())
        (one.events, one.clicks, minusOne.events, minusOne.clicks) = (1, 1, -1, -1)
        var gone = CountsByAudience(), kept = CountsByAudience()
        gone.add(one, isBot: false)
        gone.add(minusOne, isBot: false)
        kept.add(one, isBot: false)
        #expect(Array(RollupRows.droppingNetted([.value("DE"): gone, .value("FR"): kept]).keys) == [.value("FR")])
    }
}
