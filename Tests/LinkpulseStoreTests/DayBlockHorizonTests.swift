import Foundation
import GRDB
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// Breakdowns over whole days come from dimension blocks, whose levels above one day hold only
/// the days behind the horizon (see `DayBlocks`). Whatever order days arrive in, fresh, merged up
/// or late, every range must count exactly what the events say.
@Suite struct DayBlockHorizonTests {
    static let day: Int64 = 86_400_000
    static let firstDay: Int64 = 20_400  // days since 1970-01-01, a multiple of 8

    static func clicks(day: Int64, ref: String, count: Int, tag: String) -> [IngestEvent] {
        (0..<count).map {
            IngestEvent(
                id: "\(tag)-\(day)-\(ref)-\($0)", kind: .click, occurredAtMs: day * Self.day + Int64($0) * 1_000,
                receivedAtMs: day * Self.day, ref: ref, platform: .ios, visitorId: "v\($0)")
        }
    }

    static let ranges: [(Int64, Int64)] = [
        (0, 28), (0, 1), (1, 19), (2, 3), (3, 18), (17, 22), (19, 20), (8, 16), (5, 21), (22, 25), (16, 26), (24, 28),
    ]

    /// Readers keep decoded blocks and day parts by their tag (`CubeSumsCache`): every range is
    /// asked after every pass, so sums cached before a late event rewrote a block, before the
    /// horizon moved, or before a rebuild must never be served for the new content.
    @Test func everyRangeCountsExactlyAsDaysArriveFreshMergedAndLate() async throws {
        let store = try TemporaryStore()
        var expected: [Int64: [String: Int]] = [:]  // day → ref → clicks
        func check(_ when: String) async throws {
            for (from, to) in Self.ranges {
                let query = StatsQuery(fromMs: (Self.firstDay + from) * Self.day, toMs: (Self.firstDay + to) * Self.day)
                let counts = try await store.database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: false)
                var got: [String: Int] = [:]
                for (key, value) in counts {
                    if case .value(let ref?) = key, value.people.clicks > 0 { got[ref] = value.people.clicks }
                }
                var want: [String: Int] = [:]
                for day in (Self.firstDay + from)..<(Self.firstDay + to) {
                    for (ref, n) in expected[day] ?? [:] { want[ref, default: 0] += n }
                }
                #expect(got == want, "days [\(from), \(to)) \(when)")
            }
        }
        func send(_ events: [IngestEvent], batch: Int = 150) async throws {
            _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
            for e in events { expected[e.occurredAtMs / Self.day, default: [:]][e.ref!, default: 0] += 1 }
            try store.database.rollups.rollUpAll(batch: batch)
            try await check("after \(events.count) events")
        }
        // Twenty days in order, a pass or so each (the horizon moves along), then late events
        // for days long merged up and for days still only in one-day blocks.
        for offset in 0..<20 {
            let day = Self.firstDay + Int64(offset)
            try await send(Self.clicks(day: day, ref: "r\(offset % 3)", count: 40 + offset, tag: "a")
                + Self.clicks(day: day, ref: "common", count: 7, tag: "a"))
        }
        try await send(Self.clicks(day: Self.firstDay + 2, ref: "late", count: 11, tag: "b")
            + Self.clicks(day: Self.firstDay + 19, ref: "late", count: 5, tag: "b")
            + Self.clicks(day: Self.firstDay + 9, ref: "r0", count: 3, tag: "b"))
        try await send(Self.clicks(day: Self.firstDay + 21, ref: "new", count: 4, tag: "c"))
        // Six days in one pass: days that enter and leave the one-day-only horizon in it.
        var burst: [IngestEvent] = []
        for offset in 22..<28 { burst += Self.clicks(day: Self.firstDay + Int64(offset), ref: "burst\(offset % 2)", count: 9, tag: "d") }
        try await send(burst, batch: 10_000)
        #expect(store.database.rollups.cubeSums.usage.count > 0, "breakdowns over whole days keep decoded sums")

        // A rebuild writes every block and part anew, in other passes: the same answers.
        try store.database.rollups.resetRollups()
        try store.database.rollups.rollUpAll(batch: 333)
        try await check("after a rebuild")
    }
}

/// A bucket that pass after pass touches (the current quarter hour, hour and day under steady
/// traffic) gains a part a pass; small parts are merged once there are enough, large ones left
/// as they are. Whatever the parts, the counts and unique visitors are exact.
@Suite struct CubePartMergeTests {
    @Test func aBucketTouchedByManyPassesStaysExactAndFewParted() async throws {
        let store = try TemporaryStore()
        let start: Int64 = 20_400 * 86_400_000 + 3_600_000  // the start of a quarter hour
        var clicks = 0
        for pass in 0..<(CubePart.mergeAt * 2 + 3) {
            // Same refs, some visitors again: merged cells must add counts and union visitors.
            let events = (0..<20).map { i in
                IngestEvent(
                    id: "p\(pass)-\(i)", kind: .click, occurredAtMs: start + Int64(pass * 20 + i) * 1_000, receivedAtMs: start,
                    ref: "r\(i % 4)", campaign: "c\(i % 2)", platform: i % 3 == 0 ? .android : .ios, visitorId: "v\((pass * 20 + i) % 50)")
            }
            _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
            clicks += events.count
            #expect(try store.database.rollups.rollUpAll() == events.count)
        }
        let parts = try await store.database.events.pool.read { db in
            try Int.fetchAll(db, sql: "SELECT count(*) FROM agg.cube_parts WHERE grain = ?1 GROUP BY bucket", arguments: [RollupGrain.quarterHour.rawValue])
        }
        #expect(!parts.isEmpty && parts.allSatisfy { $0 < CubePart.mergeAt }, "\(parts)")
        // Filtered, so the cubes answer (not the rows by platform), at each grain.
        for (from, to) in [(start, start + 900_000), (start - 3_600_000, start + 3_600_000), (start - 3_600_000, start + 86_400_000)] {
            let query = StatsQuery(fromMs: from, toMs: to, filters: StatsFilters(campaign: "c0"))
            let byRef = try await store.database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
            #expect(byRef[.value("r0")]?.people.clicks == clicks / 4)
            #expect(byRef[.value("r2")]?.people.clicks == clicks / 4)
            #expect(byRef[.value("r1")] == nil)
            // r0 and r2 are the even positions: visitors v0, v2, … v48.
            let all = try await store.database.stats.statsCounts(query, grouping: .none, withVisitors: true)
            #expect(all[.all]?.people.clicks == clicks / 2)
            #expect(all[.all]?.people.clickVisitors.count == 25)
        }
    }

    @Test func aLargePartIsLeftAsItIsWhileSmallOnesMerge() async throws {
        let store = try TemporaryStore()
        let start: Int64 = 20_400 * 86_400_000 + 3_600_000  // the start of a quarter hour
        func clicks(_ tag: String, count: Int, refs: Int) -> [IngestEvent] {
            (0..<count).map { i in
                IngestEvent(
                    id: "\(tag)-\(i)", kind: .click, occurredAtMs: start + Int64(i % 800) * 1_000, receivedAtMs: start,
                    ref: "\(tag)-r\(i % refs)", platform: .ios, visitorId: "v\(i)")
            }
        }
        // One pass of 60,000 cells of two clicks each: a 15-minute part over `CubePart.mergeBytes`.
        _ = try await store.database.ingest([IngestWork(events: clicks("big", count: 120_000, refs: 60_000), quarantine: [])])
        try store.database.rollups.rollUpAll(batch: 200_000)
        func parts() async throws -> [(id: Int64, bytes: Int)] {
            try await store.database.events.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT id, length(entries) FROM agg.cube_parts WHERE grain = ?1 ORDER BY id", arguments: [RollupGrain.quarterHour.rawValue])
                    .map { ($0[0], $0[1]) }
            }
        }
        let large = try #require(try await parts().first)
        #expect(large.bytes >= CubePart.mergeBytes)
        for pass in 0..<(CubePart.mergeAt + 2) {
            _ = try await store.database.ingest([IngestWork(events: clicks("small\(pass)", count: 10, refs: 3), quarantine: [])])
            try store.database.rollups.rollUpAll()
        }
        let after = try await parts()
        #expect(after.first?.id == large.id && after.first?.bytes == large.bytes, "the large part is never rewritten")
        #expect(after.count < CubePart.mergeAt + 1, "the small parts were merged: \(after.map(\.bytes))")
        let query = StatsQuery(fromMs: start, toMs: start + 900_000, filters: StatsFilters(ref: "small3-r1"))
        #expect(try await store.database.stats.statsCounts(query, grouping: .none, withVisitors: false)[.all]?.people.clicks == 3)
        // Grouped by ref, so every cell of every part is read: nothing lost, nothing twice.
        let byRef = try await store.database.stats.statsCounts(
            StatsQuery(fromMs: start, toMs: start + 900_000, filters: StatsFilters(platform: .ios)), grouping: .dimension(.ref), withVisitors: false)
        #expect(byRef.values.reduce(0) { $0 + $1.people.clicks } == 120_000 + 10 * (CubePart.mergeAt + 2))
    }
}
