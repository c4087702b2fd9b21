import Foundation
import GRDB
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// The click visitors by dimension value that timer passes write into parts and fold every
/// `RollupStore.visitorPartPasses` passes: whatever is folded or not, a breakdown counts the
/// same visitors as a rebuild that writes the values' days directly.
@Suite struct DimensionDayPartTests {
    static let dayStart: Int64 = 20_400 * 86_400_000

    /// Clicks of batch `batch`: 12 refs, half the visitors shared across batches (so folds must
    /// union, not add) and half new in each, a few bots.
    static func clicks(batch: Int) -> [IngestEvent] {
        (0..<30).map { i in
            IngestEvent(
                id: "b\(batch)-\(i)", kind: .click, occurredAtMs: dayStart + Int64(batch * 30 + i) * 60_000, receivedAtMs: dayStart,
                ref: "r\((batch + i) % 12)", campaign: "c\(i % 3)", platform: i % 3 == 0 ? .android : .ios,
                userAgent: i % 10 == 9 ? "Googlebot/2.1" : nil, visitorId: i % 2 == 0 ? "v\(i % 8)" : "b\(batch)-v\(i)")
        }
    }

    func visitorsByRef(_ store: TemporaryStore) async throws -> [String: Int] {
        // Whole UTC days, no filter: the values' days answer the visitors.
        let query = StatsQuery(fromMs: Self.dayStart, toMs: Self.dayStart + 2 * 86_400_000)
        let byRef = try await store.database.stats.statsCounts(query, grouping: .dimension(.ref), withVisitors: true)
        var visitors: [String: Int] = [:]
        for (key, counts) in byRef { if case .value(let ref) = key { visitors[ref ?? ""] = counts.people.clickVisitors.count } }
        return visitors
    }

    func partPasses(_ store: TemporaryStore) async throws -> Int {
        try await store.database.events.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(DISTINCT pass) FROM agg.dimension_day_parts") ?? 0
        }
    }

    @Test func foldedAndUnfoldedPartsCountWhatARebuildCounts() async throws {
        let store = try TemporaryStore()
        let batches = Int(RollupStore.visitorPartPasses) * 2 + 5
        for batch in 0..<batches {
            _ = try await store.database.ingest([IngestWork(events: Self.clicks(batch: batch), quarantine: [])])
            #expect(try store.database.rollups.rollUp() == 30)
            // Folded at every `visitorPartPasses` passes: never more parts waiting.
            #expect(try await partPasses(store) == (batch + 1) % Int(RollupStore.visitorPartPasses))
        }
        let unfolded = try await partPasses(store)
        #expect(unfolded == 5)
        let byParts = try await visitorsByRef(store)
        #expect(byParts.count == 12)
        // Each batch brings 12 new visitors (15, 3 of them bots) over the 12 refs: the counts
        // grow with every pass, so parts left out or folds lost would show.
        #expect(byParts.values.allSatisfy { $0 > batches }, "\(byParts)")

        try store.database.rollups.resetRollups()
        try store.database.rollups.rollUpAllInParallel()
        #expect(try await partPasses(store) == 0)
        #expect(try await visitorsByRef(store) == byParts)
    }

    @Test func aFoldCutShortIsDoneAgainWithTheSameCounts() async throws {
        let store = try TemporaryStore()
        for batch in 0..<5 {
            _ = try await store.database.ingest([IngestWork(events: Self.clicks(batch: batch), quarantine: [])])
            try store.database.rollups.rollUp()
        }
        let before = try await visitorsByRef(store)
        let rollups = store.database.rollups
        try rollups.queue.inDatabase { db in
            // A fold killed after its slices, before the parts were deleted: every visitor is
            // both in the values' days and in the parts, and counted once.
            let merged = try rollups.mergeVisitorParts(db, through: try derivedWatermark(db, rollups.queries.rollup.state), keysPerSlice: 5)
            // Every value's day of 5 dimensions (19 here), 5 a transaction.
            #expect(merged.keys > 10)
            #expect(merged.slices == (merged.keys + 4) / 5)
        }
        #expect(try await partPasses(store) == 5)
        #expect(try await visitorsByRef(store) == before)
        // The next fold does it all again and deletes the parts.
        try rollups.queue.inDatabase { db in try rollups.foldVisitorParts(db) }
        #expect(try await partPasses(store) == 0)
        #expect(try await visitorsByRef(store) == before)
    }

    /// Passes that count no click write no parts, but count toward the next fold like any
    /// other; a fold starts the count over, so the passes after it do not fold again.
    @Test func passesAfterAFoldCountFromZero() async throws {
        let store = try TemporaryStore()
        let rollups = store.database.rollups
        func passesSinceFold() throws -> Int64 {
            try rollups.queue.inDatabase { db in try Row.fetchOne(db, sql: rollups.queries.rollup.state)?[5] ?? -1 }
        }
        for batch in 0..<(Int(RollupStore.visitorPartPasses) + 6) {
            let opens = (0..<5).map { i in
                IngestEvent(
                    id: "o\(batch)-\(i)", kind: .open, occurredAtMs: Self.dayStart + Int64(batch) * 60_000, receivedAtMs: Self.dayStart,
                    platform: .ios, visitorId: "ov\(i)")
            }
            let events = batch == 0 ? Self.clicks(batch: 0) : opens
            _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
            #expect(try rollups.rollUp() == events.count)
            #expect(try passesSinceFold() == Int64(batch + 1) % RollupStore.visitorPartPasses, "after pass \(batch + 1)")
        }
    }
}
