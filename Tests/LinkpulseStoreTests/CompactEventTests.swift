import Foundation
import GRDB
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// Events stored compactly (`event_rows`, migration 0004) read back through the `events` view
/// exactly as they were sent, whatever form their ids and texts take.
@Suite struct CompactEventTests {
    static let lowerUUID = "3f2a8c1e-7b4d-4e0f-a9c2-1d5e6f708192"
    static let upperUUID = "3F2A8C1E-7B4D-4E0F-A9C2-1D5E6F708192"

    @Test func idsTakeTheirShortestExactForm() {
        #expect(CompactEvent.id(Self.lowerUUID) == .bytes([0x3f, 0x2a, 0x8c, 0x1e, 0x7b, 0x4d, 0x4e, 0x0f, 0xa9, 0xc2, 0x1d, 0x5e, 0x6f, 0x70, 0x81, 0x92]))
        #expect(CompactEvent.id(Self.upperUUID) == .bytes([1, 0x3f, 0x2a, 0x8c, 0x1e, 0x7b, 0x4d, 0x4e, 0x0f, 0xa9, 0xc2, 0x1d, 0x5e, 0x6f, 0x70, 0x81, 0x92]))
        // Mixed case, wrong dashes, wrong length, non-hex: kept as text.
        for text in ["3f2a8c1e-7b4d-4e0f-a9c2-1D5E6F708192", "3f2a8c1e7b4d-4e0f-a9c2-1d5e6f708192-", "e1", "3f2a8c1e-7b4d-4e0f-a9c2-1d5e6f70819g", ""] {
            #expect(CompactEvent.id(text) == .text(text))
        }
        for text in [Self.lowerUUID, Self.upperUUID, "00000000-0000-0000-0000-000000000000"] {
            guard case .bytes(let bytes) = CompactEvent.id(text) else { Issue.record("\(text) not compacted"); continue }
            let back = bytes.withUnsafeBytes { raw in CompactEvent.withIdText(raw) { String(decoding: $0, as: UTF8.self) } }
            #expect(back == text)
        }
    }

    @Test func visitorsAreStoredByWhatTheyAre() {
        #expect(CompactEvent.visitor("dev-1", deviceId: "dev-1") == nil)
        #expect(CompactEvent.visitor("v:00112233445566778899aabbccddeeff", deviceId: nil)
            == .bytes([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]))
        #expect(CompactEvent.visitor("v:00112233445566778899AABBCCDDEEFF", deviceId: nil) == .text("v:00112233445566778899AABBCCDDEEFF"))
        #expect(CompactEvent.visitor("someone", deviceId: "other") == .text("someone"))
        let bytes: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]
        let text = bytes.withUnsafeBytes { raw in CompactEvent.withVisitorText(raw) { String(decoding: $0, as: UTF8.self) } }
        #expect(text == "v:00112233445566778899aabbccddeeff")
    }

    /// Events of every shape: UUID ids in both cases, text ids that look like numbers, device
    /// visitors and keyed ones, every optional field present or not, repeated texts and links.
    static func sampleEvents() -> [IngestEvent] {
        let base: Int64 = 1_795_255_620_000
        return [
            IngestEvent(
                id: lowerUUID, kind: .click, occurredAtMs: base, receivedAtMs: base + 1_234, sentAtMs: base + 1_000,
                ref: "r1", campaign: "spring", source: "email", medium: "newsletter", platform: .ios,
                url: "https://go.example.com/p/r1?c=spring", referrer: "https://mail.example.com/", userAgent: "Mozilla/5.0 (iPhone)",
                ipHash: "00112233445566778899aabbccddeeff", visitorId: "v:ffeeddccbbaa99887766554433221100"),
            IngestEvent(
                id: upperUUID, kind: .install, occurredAtMs: base + 60_000, receivedAtMs: base + 59_000, sentAtMs: nil,
                ref: "r1", platform: .android, deviceId: "A1B2C3D4-0000-1111-2222-333344445555", clickId: lowerUUID, deferred: true,
                userAgent: "Mozilla/5.0 (iPhone)", ipHash: "00112233445566778899aabbccddeeff",
                visitorId: "A1B2C3D4-0000-1111-2222-333344445555", osVersion: "14", appVersion: "5.2.0",
                propertiesJSON: #"{"deep_link_value":"shoes","n":1}"#),
            IngestEvent(
                id: "12345", kind: .open, occurredAtMs: base - 5, receivedAtMs: base, platform: .web,
                deviceId: "device 7", clickId: "not-a-uuid", deferred: false, visitorId: "device 7"),
            IngestEvent(
                id: "e-with-text-visitor", kind: .fallback, occurredAtMs: base, receivedAtMs: base, ref: "r1", campaign: "spring",
                source: "email", medium: "newsletter", platform: .desktop, ipHash: "not hex", visitorId: "someone else",
                botReason: "preview:slack"),
            IngestEvent(
                id: "3f2a8c1e-7b4d-4e0f-a9c2-1D5E6F708192", kind: .click, occurredAtMs: base, receivedAtMs: base,
                campaign: "only-campaign", platform: .other, url: "https://go.example.com/p/r1?c=spring", visitorId: "v:short"),
        ]
    }

    @Test func theEventsViewGivesBackEveryFieldAsSent() async throws {
        let store = try TemporaryStore()
        let events = Self.sampleEvents()
        let outcomes = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        #expect(outcomes[0].allSatisfy { $0 != .duplicate })
        // Through a read-only connection of its own, as an operator's tool would read it.
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let reader = try DatabaseQueue(path: store.directory.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        let stored = try await reader.read { db in try Self.readBack(db) }
        #expect(stored == events)
        // Dictionary texts are stored once each, however often events repeat them.
        #expect(try store.count("SELECT count(*) FROM event_texts WHERE value = 'Mozilla/5.0 (iPhone)'") == 1)
        #expect(try store.count("SELECT count(*) FROM event_texts") == 4)  // one user agent, two versions, one bot reason
        // A duplicate of a compacted id is still found.
        let again = try await store.database.ingest([IngestWork(events: [events[0], events[1], events[2]], quarantine: [])])
        #expect(again[0] == [.duplicate, .duplicate, .duplicate])
    }

    @Test func theRawEventExportDecodesTheStoredFormsItself() async throws {
        // The export reads event_rows as stored and decodes in Swift: the same text as the view.
        let store = try TemporaryStore()
        let events = Self.sampleEvents()
        _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        let (page, _) = try await store.database.stats.rawEventsPage(
            RawEventQuery(fromMs: 0, toMs: .max), cursor: try await store.database.stats.rawEventCursor(for: RawEventQuery(fromMs: 0, toMs: .max)), limit: 100)
        #expect(page.count == events.count)
        func text(_ row: Int, _ column: RawEventColumn) -> String? {
            page.withText(row: row, RawEventPage.textColumns.firstIndex(of: column)!) { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        let exported = (0..<page.count).map { row in
            [text(row, .eventId), text(row, .type), text(row, .platform), text(row, .deviceId), text(row, .clickId),
             text(row, .visitorId), text(row, .userAgent), text(row, .botReason)]
        }
        let byId = Dictionary(uniqueKeysWithValues: events.map { ($0.id, $0) })
        for row in exported {
            let e = try #require(byId[row[0] ?? ""], "exported id \(row[0] ?? "nil") was not sent")
            #expect(row == [e.id, e.kind.rawValue, e.platform.rawValue, e.deviceId, e.clickId, e.visitorId, e.userAgent, e.botReason])
        }
        // The platform filter compares codes.
        var android = RawEventQuery(fromMs: 0, toMs: .max)
        android.filters.platform = .android
        let (filtered, _) = try await store.database.stats.rawEventsPage(android, cursor: try await store.database.stats.rawEventCursor(for: android), limit: 100)
        #expect(filtered.count == 1)
    }

    @Test func migrationCompactsAnExistingEventsTable() async throws {
        // An events database as the previous release left it (migrations 0001–0003, the old
        // events table), filled through its own insert, then opened by this release.
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-compact-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = try DatabaseQueue(path: directory.appending(path: AppDatabase.eventsFileName).path)
        var migrator = DatabaseMigrator()
        for migration in SQLQueries.files(under: "migrations/") where migration.name < "0004" {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        try migrator.migrate(old)
        let events = Self.sampleEvents()
        try await old.write { db in
            for e in events {
                try db.execute(sql: """
                    INSERT INTO events (event_id, id_key, type, occurred_at_ms, received_at_ms, sent_at_ms, ref, campaign, source,
                        medium, platform, device_id, click_id, deferred, url, referrer, user_agent, ip_hash, visitor_id, os_version,
                        app_version, properties, bot, bot_reason)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [
                        e.id, EventIdKey.of(e.id), e.kind.rawValue, e.occurredAtMs, e.receivedAtMs, e.sentAtMs, e.ref, e.campaign,
                        e.source, e.medium, e.platform.rawValue, e.deviceId, e.clickId, e.deferred, e.url, e.referrer, e.userAgent,
                        e.ipHash, e.visitorId, e.osVersion, e.appVersion, e.propertiesJSON, e.isBot, e.botReason,
                    ])
            }
        }
        try old.close()
        let store = try TemporaryStore(directory: directory)
        let stored = try await store.database.events.pool.read { db in try Self.readBack(db) }
        #expect(stored == events)
        #expect(try store.count("SELECT count(*) FROM event_rows WHERE typeof(event_id) = 'blob'") == 2)
        // The id index was rebuilt from the compacted ids: every one is a duplicate now.
        let again = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        #expect(again[0].allSatisfy { $0 == .duplicate })
    }

    static func readBack(_ db: Database) throws -> [IngestEvent] {
        try Row.fetchAll(db, sql: """
            SELECT event_id, type, occurred_at_ms, received_at_ms, sent_at_ms, ref, campaign, source, medium, platform,
                   device_id, click_id, deferred, url, referrer, user_agent, ip_hash, visitor_id, os_version, app_version,
                   properties, bot_reason, typeof(event_id)
            FROM events ORDER BY seq
            """).map { row in
            #expect(row[22] as String != "integer")
            return IngestEvent(
                id: row[0], kind: EventKind(rawValue: row[1])!, occurredAtMs: row[2], receivedAtMs: row[3], sentAtMs: row[4],
                ref: row[5], campaign: row[6], source: row[7], medium: row[8], platform: Platform(rawValue: row[9])!,
                deviceId: row[10], clickId: row[11], deferred: row[12], url: row[13], referrer: row[14], userAgent: row[15],
                ipHash: row[16], visitorId: row[17], osVersion: row[18], appVersion: row[19], propertiesJSON: row[20],
                botReason: row[21])
        }
    }
}
