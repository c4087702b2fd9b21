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

extension DatabaseValue {
    fileprivate var int64: Int64? { Int64.fromDatabaseValue(self) }
}
