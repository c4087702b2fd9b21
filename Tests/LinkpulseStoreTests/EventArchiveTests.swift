import Foundation
import GRDB
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// Events sealed into blocks read back through `event_archive` exactly as they were in
/// `event_rows`: every column, every storage class, for scans, seq and time bounds, point
/// lookups and joins; events out of time order stay in `event_rows`.
@Suite struct EventArchiveTests {
    static let start: Int64 = 1_795_000_000_000

    /// Events of every shape ingest stores: UUID ids in either case and other ids, visitors by
    /// device or keyed, missing and present optional fields, texts from the dictionary.
    static func events(count: Int, seed: UInt64, lateEvery: Int = 0) -> [IngestEvent] {
        var rng = SplitMix64(seed: seed)
        func uuid(_ upper: Bool) -> String {
            let text = UUID().uuidString
            return upper ? text : text.lowercased()
        }
        return (0..<count).map { i in
            let kind: EventKind = [.click, .open, .install, .fallback][Int(rng.next() % 4)]
            var at = start + Int64(i) * 700 + Int64(rng.next() % 500)
            if lateEvery > 0, i % lateEvery == lateEvery - 1 { at -= 3 * 86_400_000 }
            let device: String? = rng.next() % 3 == 0 ? uuid(rng.next() % 5 == 0) : nil
            return IngestEvent(
                id: rng.next() % 7 == 0 ? "order-\(i)" : uuid(rng.next() % 9 == 0), kind: kind, occurredAtMs: at, receivedAtMs: at + Int64(rng.next() % 9_000),
                sentAtMs: rng.next() % 2 == 0 ? at + 5 : nil,
                ref: rng.next() % 6 == 0 ? nil : "ref-\(rng.next() % 40)", campaign: rng.next() % 3 == 0 ? nil : "summer ☀︎ \(rng.next() % 5)",
                source: rng.next() % 2 == 0 ? "email" : nil, medium: nil,
                platform: [.ios, .android, .web, .desktop, .other][Int(rng.next() % 5)], deviceId: device,
                clickId: kind == .install && rng.next() % 2 == 0 ? uuid(false) : nil, deferred: kind == .open ? rng.next() % 2 == 0 : nil,
                url: kind == .click ? "https://example.com/l/\(i)?x=\(rng.next() % 100)" : nil, referrer: nil,
                userAgent: "Agent/\(rng.next() % 4)", ipHash: String(format: "%016llx%016llx", rng.next(), rng.next()),
                visitorId: device ?? (rng.next() % 4 == 0 ? "visitor-\(i % 50)" : "v:" + String(format: "%016llx%016llx", rng.next(), rng.next())),
                osVersion: rng.next() % 2 == 0 ? "17.\(rng.next() % 3)" : nil, appVersion: nil,
                propertiesJSON: rng.next() % 5 == 0 ? #"{"plan":"pro","n":\#(i)}"# : nil, botReason: nil)
        }
    }

    static func rows(_ store: TemporaryStore, _ sql: String, _ arguments: StatementArguments = []) throws -> [[DatabaseValue]] {
        try store.database.events.pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in row.databaseValues.map { $0 } }
        }
    }

    static let everyRow = "SELECT * FROM event_rows UNION ALL SELECT * FROM event_archive ORDER BY seq"

    @Test func theArchiveHasTheColumnsOfTheTable() throws {
        let store = try TemporaryStore()
        let columns = try store.database.events.pool.read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(event_rows)").map { ($0["name"] as String, $0["type"] as String) }
        }
        #expect(columns.map(\.0) == EventArchiveTable.columns.map(\.name))
        #expect(columns.map(\.1) == EventArchiveTable.columns.map(\.type))
    }

    @Test func sealedEventsReadBackExactly() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.events(count: 2_600, seed: 3), quarantine: [])])
        let before = try Self.rows(store, "SELECT * FROM event_rows ORDER BY seq")
        let report = try store.database.events.sealEvents(
            throughSeq: 2_400, beforeMs: .max, policy: SealPolicy(blockRows: 500, slackMs: 3_600_000))
        #expect(report == SealReport(blocks: 4, events: 2_000, leftOut: 0))
        #expect(try Self.rows(store, "SELECT count(*) FROM event_rows") == [[600.databaseValue]])
        #expect(try Self.rows(store, Self.everyRow) == before)
        // Sealing again finds no full block below the limit.
        #expect(try store.database.events.sealEvents(throughSeq: 2_400, beforeMs: .max, policy: SealPolicy(blockRows: 500, slackMs: 3_600_000)) == SealReport())

        // Bounds on seq and time, alone and together, as scans, point lookups and joins.
        let sealed = before.filter { $0[0].int64! <= 2_000 }
        var rng = SplitMix64(seed: 11)
        for _ in 0..<40 {
            let a = Int64(rng.next() % 2_100), b = a + Int64(rng.next() % 900)
            let t0 = Self.start + Int64(rng.next() % 1_600_000), t1 = t0 + Int64(rng.next() % 400_000)
            let inSeqs = sealed.filter { $0[0].int64! > a && $0[0].int64! <= b }.map { $0[0] }
            #expect(try Self.rows(store, "SELECT seq FROM event_archive WHERE seq > ? AND seq <= ?", [a, b]).map { $0[0] } == inSeqs)
            let inTime = sealed.filter { $0[5].int64! >= t0 && $0[5].int64! < t1 }.map { $0[0] }
            #expect(try Self.rows(store, "SELECT seq FROM event_archive WHERE occurred_at_ms >= ? AND occurred_at_ms < ? ORDER BY seq", [t0, t1]).map { $0[0] } == inTime)
            let both: [DatabaseValue] = sealed.filter { (row: [DatabaseValue]) -> Bool in row[0].int64! >= a && row[5].int64! <= t1 }.prefix(7).map { $0[0] }
            #expect(try Self.rows(store, "SELECT seq FROM event_archive WHERE seq >= ? AND occurred_at_ms <= ? ORDER BY seq LIMIT 7", [a, t1]).map { $0[0] } == both)
            let one = before.first { $0[0].int64! == b }
            #expect(try Self.rows(store, "SELECT * FROM event_archive WHERE seq = ?", [b]) == (b <= 2_000 ? one.map { [$0] } ?? [] : []))
        }
        // A join by seq from the hot rows into the sealed ones (the click an install matched).
        let joined = try Self.rows(store, "SELECT r.seq, a.event_id FROM event_rows r JOIN event_archive a ON a.seq = r.seq - 1000 ORDER BY r.seq")
        let hot: [[DatabaseValue]] = before.filter { (row: [DatabaseValue]) -> Bool in row[0].int64! > 2_000 && row[0].int64! <= 3_000 }
        let wanted: [[DatabaseValue]] = hot.map { (row: [DatabaseValue]) -> [DatabaseValue] in [row[0], before[Int(row[0].int64!) - 1_001][1]] }
        #expect(joined == wanted)
        #expect(try Self.rows(store, "SELECT seq FROM event_archive WHERE seq = NULL OR seq > 1e30").isEmpty)
        #expect(try Self.rows(store, "SELECT count(*) FROM event_archive WHERE seq > 10.5 AND seq < 12.5") == [[2.databaseValue]])
    }

    @Test func eventsOutOfTimeOrderStayInTheTable() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.events(count: 1_000, seed: 5, lateEvery: 97), quarantine: [])])
        let before = try Self.rows(store, "SELECT * FROM event_rows ORDER BY seq")
        // The newest row stays in the table (the next seq follows it): three blocks, not four.
        let report = try store.database.events.sealEvents(throughSeq: 1_000, beforeMs: .max, policy: SealPolicy(blockRows: 250, slackMs: 60_000))
        #expect(report == SealReport(blocks: 3, events: 743, leftOut: 7))
        let late = (1...750).filter { $0 % 97 == 0 }.map(Int64.init)
        #expect(try Self.rows(store, "SELECT seq FROM event_rows ORDER BY seq").map { $0[0].int64! } == late + (751...1_000).map(Int64.init))
        #expect(try Self.rows(store, Self.everyRow) == before)
        // Every block spans little more than the time its events were sent over.
        for span in try Self.rows(store, "SELECT latest_ms - earliest_ms FROM event_blocks") {
            #expect(span[0].int64! < 250 * 700 + 60_000)
        }
        // Events not yet old enough wait.
        #expect(try store.database.events.sealEvents(throughSeq: .max, beforeMs: 0) == SealReport())
    }
}

/// Every reader of raw events answers exactly as before once most events are sealed: stats
/// with edges finer than the rollups, the raw-event export in time order, the answers to apps,
/// the events view and dedupe; so do a replay of attribution and a rebuild of the rollups from
/// the sealed events, and retention deleting sealed events.
@Suite struct SealedReadersTests {
    static let day: Int64 = 86_400_000
    static let end: Int64 = 1_795_000_000_000  // when the generated traffic ends
    static let start = end - 10 * day

    struct Snapshot: Equatable {
        var stats: [[StatsGroupKey: CountsByAudience]] = []
        var exportPages: [[Int64]] = []
        var exportBytes: [[UInt8]] = []
        var answers: [AttributedEventRead] = []
        var view: [[DatabaseValue]] = []
    }

    static func snapshot(_ store: TemporaryStore, answersEvery: Int = 5) async throws -> Snapshot {
        var snapshot = Snapshot()
        // Ranges with edges off the 15-minute grid (raw events), whole days, and a daily series.
        let ranges: [(Int64, Int64)] = [
            (start + 7 * 60_000 + 13_000, end - 3 * 60_000), (start + day, start + 4 * day),
            (start + 2 * day + 3_600_000 + 1_234, start + 2 * day + 5 * 3_600_000 + 77_000),
        ]
        for (from, to) in ranges {
            let query = StatsQuery(fromMs: from, toMs: to, includeBots: true)
            for grouping: StatsGrouping in [.none, .dimension(.ref), .dimension(.campaign), .buckets(Array(stride(from: from, to: to, by: Int64.Stride(day))))] {
                snapshot.stats.append(try await store.database.stats.statsCounts(query, grouping: grouping, withVisitors: true))
            }
        }
        // The export of a range, in pages (time order, then what was stored meanwhile).
        let export = RawEventQuery(fromMs: start + 3 * day + 11_111, toMs: end)
        var cursor: RawEventCursor? = try await store.database.stats.rawEventCursor(for: export)
        while let at = cursor {
            let (page, next) = try await store.database.stats.rawEventsPage(export, cursor: at, limit: 700)
            snapshot.exportPages.append(page.integers + page.ends.map(Int64.init))
            snapshot.exportBytes.append(page.bytes)
            cursor = next
        }
        let answers = StoredAttributions(events: store.database.events, attribution: store.database.attribution)
        let newest = try store.database.events.maxSeq()
        for seq in stride(from: 1, through: newest, by: answersEvery) {
            snapshot.answers.append(try await answers.attributedEvent(seq: seq, wait: .seconds(5)))
        }
        snapshot.view = try EventArchiveTests.rows(store, "SELECT * FROM events ORDER BY seq")
        return snapshot
    }

    @Test func everyReaderAnswersTheSameOnceEventsAreSealed() async throws {
        let store = try TemporaryStore()
        var generator = TrafficGenerator(TrafficProfile(events: 8_000, days: 10, refs: 40, campaigns: 5, seed: 21, endMs: Self.end))
        let validator = EventValidator(hasher: KeyedHasher(secret: Array(repeating: 7, count: 32)))
        let facts = RequestFacts(receivedAtMs: Self.end, clientIP: nil, userAgent: nil)
        var sent: [IngestEvent] = []
        while case let payloads = generator.next(1_000), !payloads.isEmpty {
            let events = payloads.compactMap { try? validator.validate($0, request: facts).get() }
            sent += events
            _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        }
        var database = store.database
        try await offThePool { [database] in
            _ = try database.attribution.attributeAllInBulk()
            _ = try database.rollups.rollUpAll()
        }
        let before = try await Self.snapshot(store)
        let matched = before.answers.filter { read in
            if case .attributed(let event) = read { return event.click != nil }
            return false
        }
        #expect(matched.count > 100, "answers with a matched click: \(matched.count)")

        let report = try await offThePool { [database] in try database.sealOldEvents(nowMs: Self.end + Self.day, age: SealAge(days: 1)) }
        let hot = try EventArchiveTests.rows(store, "SELECT count(*) FROM event_rows")[0][0].int64!
        #expect(report.events > 6_000 && hot < 1_500, "\(report), \(hot) left in event_rows")
        #expect(try await Self.snapshot(store) == before)

        // A recount reads the sealed events: the same answers and counts.
        try await offThePool { [database] in
            try database.resetAttribution()
            try database.rollups.resetRollups()
            _ = try database.attribution.attributeAllInBulk()
            _ = try database.rollups.rollUpAll()
        }
        #expect(try await Self.snapshot(store) == before)

        // Sent again, every event is a duplicate (sealed ids are found through the id index).
        try store.reopen()
        database = store.database
        let again = try await store.database.ingest([IngestWork(events: Array(sent.suffix(3_000)), quarantine: [])])
        #expect(again[0].allSatisfy { $0 == .duplicate })

        // Retention deletes sealed events like the others: whole days keep their counts, and
        // nothing before the horizon is left, in event_rows or in a block.
        let horizon = Self.start + 4 * Self.day
        let days = StatsQuery(fromMs: (Self.start / Self.day + 1) * Self.day, toMs: Self.end / Self.day * Self.day, includeBots: true)
        let daily = try await store.database.stats.statsCounts(days, grouping: .dimension(.ref), withVisitors: false)
        let pruned = try await offThePool { [database] in
            _ = try database.events.mergeIdIndex()  // retention waits for the id index
            return try database.pruneRawEvents(before: horizon, batch: 500)
        }
        #expect(pruned.deletedEvents > 2_000)
        #expect(try await store.database.stats.statsCounts(days, grouping: .dimension(.ref), withVisitors: false) == daily)
        let left = try EventArchiveTests.rows(store, "SELECT seq, type FROM events WHERE occurred_at_ms < ?", [horizon])
        #expect(left.count == pruned.keptClicks && left.allSatisfy { $0[1] == "click".databaseValue })
        #expect(try EventArchiveTests.rows(store, "SELECT count(*) FROM event_blocks WHERE row_count = 0") == [[0.databaseValue]])
    }
}

/// Runs blocking store work on a Dispatch thread, so that a test never holds one of the few
/// threads of the cooperative pool, which every test of the process shares (the in-process
/// daemons of other tests answer on them).
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

extension DatabaseValue {
    fileprivate var int64: Int64? { Int64.fromDatabaseValue(self) }
}
