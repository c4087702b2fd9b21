import AsyncHTTPClient
import Foundation
import GRDB
import LinkpulseDomain
import LinkpulseStore
import Logging
import TestSupport
import Testing

/// `linkpulse copy --from DIR --to postgres://…`: a SQLite installation moved over, the real
/// binary against a real PostgreSQL.
@Suite struct PostgresCopyTests {
    /// A connection of the test's own that reads the events view (sealed events included).
    static var readsEvents: Configuration {
        var config = Configuration()
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        return config
    }

    @Test func aCopiedInstallationHasEveryEventOnceInOrderItsKeysAndTheSameAttribution() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let generated = try LiveHTTP.command(["generate", "--data-dir", data.path, "--events", "6000", "--days", "3", "--refs", "40", "--seed", "7"])
        #expect(generated.status == 0, "\(generated.output)")
        // Keys: one in use, one revoked, and one an older version kept in clear in secrets.json.
        _ = try LiveHTTP.createKey(.ingest, in: data, name: "app")
        _ = try LiveHTTP.createKey(.read, in: data, name: "old BI")
        let secretsFile = data.appending(path: "secrets.json")
        var secrets = try JSONDecoder().decode([String: String].self, from: Data(contentsOf: secretsFile))
        secrets["ingest_key"] = "lpi_kept_in_clear"
        try JSONEncoder().encode(secrets).write(to: secretsFile)
        // Two rejected events, as the quarantine keeps them.
        let sqlite = try DatabaseQueue(path: data.appending(path: "linkpulse.sqlite").path, configuration: Self.readsEvents)
        try await sqlite.write { db in
            for index in 0..<2 {
                try db.execute(
                    sql: "INSERT INTO quarantine (received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [1_795_255_620_000 + Int64(index), index, "missing_field", "type", "`type` is required.", #"{"id":"q\#(index)"}"#, 0, "curl/8"])
            }
            // The export history: a job with one file kept, another whose files retention removed.
            try db.execute(sql: "INSERT INTO export_jobs VALUES ('daily', 1795219200000, 1795305600000, 1795306200000), ('hourly', 1795302000000, 1795305600000, 1795305900000)")
            try db.execute(sql: "INSERT INTO export_files VALUES ('daily_2026-11-20.csv', 'daily', 1795219200000, 1795305600000, '2026-11-20', 12, 345, 1795306200000)")
            try db.execute(sql: "UPDATE access_keys SET revoked_at_ms = 1795306200000 WHERE name = 'old BI'")
            // Hosted links: one live with its deep link, one deleted.
            try db.execute(sql: """
                INSERT INTO links (ref, app, url, campaign, deep_link, ios_preview, created_at_ms, updated_at_ms, deleted_at_ms)
                VALUES ('spring', 'shop', 'https://example.com/spring', 'spring', '{"value":"sale-1"}', 0, 1795306200000, 1795306200000, NULL),
                       ('gone', 'shop', 'https://example.com/gone', NULL, NULL, 1, 1795306200000, 1795306200000, 1795306300000)
                """)
        }
        let (cluster, url, name) = try PostgresDaemonTests.database("copy")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let store = try await PostgresStore.open(try PostgresLocation(url: url), logger: logger, nowMs: 0, connectTimeout: .seconds(180))

        // A first run stops after two commits; the command goes on from there.
        let partial = try await InstallationCopy.copy(from: data, to: store, batch: 1000, maxBatches: 2, logger: logger)
        #expect(partial.events == 2000)
        let copy = try LiveHTTP.command(["copy", "--from", data.path, "--to", url, "--batch", "1500"])
        #expect(copy.status == 0, "\(copy.output)")
        let again = try LiveHTTP.command(["copy", "--from", data.path, "--to", url])
        #expect(again.status == 0 && again.output.contains("copied 0 events"), "\(again.output)")

        // Every event, in SQLite's order, field by field (read here with SQL of the test's own).
        let columns = "event_id, type, occurred_at_ms, received_at_ms, sent_at_ms, ref, campaign, source, medium, platform, device_id, click_id, url, referrer, user_agent, ip_hash, visitor_id, os_version, app_version, properties, bot_reason"
        let fromSQLite = try await sqlite.read { db in
            try Row.fetchAll(db, sql: "SELECT \(columns) FROM events ORDER BY seq").map { row in
                row.databaseValues.map { value -> String in
                    switch value.storage {
                    case .null: "∅"
                    case .int64(let number): "\(number)"
                    case .double(let number): "\(number)"
                    case .string(let text): text
                    case .blob(let bytes): "\(bytes.count) bytes"
                    }
                }.joined(separator: "|")
            }
        }
        let copied = try await store.events.events(afterSeq: 0, limit: 100_000).map { _, e -> String in
            let values: [Any?] = [
                e.id, e.kind.rawValue, e.occurredAtMs, e.receivedAtMs, e.sentAtMs, e.ref, e.campaign, e.source, e.medium, e.platform.rawValue,
                e.deviceId, e.clickId, e.url, e.referrer, e.userAgent, e.ipHash, e.visitorId, e.osVersion, e.appVersion, e.propertiesJSON, e.botReason,
            ]
            return values.map { $0.map { "\($0)" } ?? "∅" }.joined(separator: "|")
        }
        #expect(fromSQLite.count > 5000)
        #expect(copied.count == fromSQLite.count)
        #expect(zip(copied, fromSQLite).filter { $0 != $1 }.isEmpty, "every event as SQLite holds it, in its order")
        #expect(try await store.events.recentQuarantine(limit: 10).map(\.rawText) == [#"{"id":"q1"}"#, #"{"id":"q0"}"#])
        #expect(try await store.exportLedger.exportFiles() == [ExportFileRecord(
            name: "daily_2026-11-20.csv", job: "daily", periodStartMs: 1_795_219_200_000, periodEndMs: 1_795_305_600_000, periodLabel: "2026-11-20",
            rows: 12, bytes: 345, createdAtMs: 1_795_306_200_000)])
        #expect(try await store.exportLedger.lastExportedPeriod(job: "daily")! == (1_795_219_200_000, 1_795_305_600_000))
        #expect(try await store.exportLedger.lastExportedPeriod(job: "hourly")! == (1_795_302_000_000, 1_795_305_600_000))

        let values = try cluster.psql("SELECT key || '=' || value FROM lp_installation WHERE key IN ('ingest_key', 'read_key', 'hash_secret') ORDER BY key", database: name)
        #expect(values.split(separator: "\n") == ["hash_secret=\(secrets["hash_secret"]!)"], "the hashing secret, and no key in clear")
        let keys = try cluster.psql("SELECT name || '=' || kind || '=' || coalesce(revoked_at_ms::text, '-') FROM lp_access_keys ORDER BY name", database: name)
        #expect(keys.split(separator: "\n") == ["app=ingest=-", "ingest key of before=ingest=-", "old BI=read=1795306200000"], "the stored keys as they stand")
        let digests = try await DatabaseQueue(path: data.appending(path: "linkpulse.sqlite").path, configuration: Self.readsEvents).read { db in
            try String.fetchAll(db, sql: "SELECT digest FROM access_keys ORDER BY name")
        }
        let copiedDigests = try cluster.psql("SELECT digest FROM lp_access_keys WHERE name <> 'ingest key of before' ORDER BY name", database: name)
        #expect(copiedDigests.split(separator: "\n").map(String.init) == digests, "the same hashes: the same secrets work")
        let links = try cluster.psql(
            "SELECT ref || '=' || coalesce(campaign, '-') || '=' || coalesce(deep_link, '-') || '=' || ios_preview::text || '=' || coalesce(deleted_at_ms::text, '-') FROM lp_links ORDER BY ref",
            database: name)
        #expect(links.split(separator: "\n") == ["gone=-=-=true=1795306300000", #"spring=spring={"value":"sale-1"}=false=-"#], "the links as they stand")

        // Attribution on PostgreSQL reaches SQLite's answers (compared by event id).
        let sqliteAnswers = try await DatabaseQueue(path: data.appending(path: "linkpulse-attribution.sqlite").path, configuration: Self.readsEvents).read { db in
            try db.execute(sql: "ATTACH DATABASE ? AS ev", arguments: [data.appending(path: "linkpulse.sqlite").path])
            return try Row.fetchAll(db, sql: """
                SELECT e.event_id, a.match_type, c.event_id FROM attribution a JOIN ev.events e ON e.seq = a.seq
                LEFT JOIN ev.events c ON c.seq = a.matched_click_seq ORDER BY a.seq
                """).map { "\($0[0] as String) \(MatchType(code: $0[1])!.rawValue) \(($0[2] as String?) ?? "∅")" }
        }
        let idsBySeq = Dictionary(uniqueKeysWithValues: try await store.events.events(afterSeq: 0, limit: 100_000).map { ($0.seq, $0.event.id) })
        let postgresAnswers = try await store.attributions(afterSeq: 0, limit: 100_000).map {
            "\(idsBySeq[$0.seq]!) \($0.match.rawValue) \($0.clickSeq.map { idsBySeq[$0]! } ?? "∅")"
        }
        #expect(sqliteAnswers.count > 1000)
        #expect(postgresAnswers == sqliteAnswers, "the same answers on both stores")

        // Into a database that holds other keys, a copy is refused before it copies anything.
        let (_, otherURL, _) = try PostgresDaemonTests.database("copy_refused")
        let other = try await PostgresStore.open(try PostgresLocation(url: otherURL), logger: logger, nowMs: 0, connectTimeout: .seconds(180))
        _ = try await other.installationValues(proposing: ["hash_secret": "00"])
        let refused = try LiveHTTP.command(["copy", "--from", data.path, "--to", otherURL])
        #expect(refused.status != 0 && refused.output.contains("already holds another hashing secret"), "\(refused.output)")
        #expect(try await other.events.events(afterSeq: 0, limit: 1).isEmpty)
        await other.close()
        await store.close()
    }

    /// The same events (a SQLite installation and its copy): the stats API of the SQLite daemon
    /// and of two daemons on PostgreSQL give the same answers, whole days and edges within
    /// hours, in UTC and in a zone half an hour off, with filters; so does
    /// `/v1/attributions/{id}` for single events.
    @Test func statsOnPostgresAreTheSQLiteDaemonsAnswersForTheSameEvents() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-copy-stats-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let generated = try LiveHTTP.command(["generate", "--data-dir", data.path, "--events", "5000", "--days", "3", "--refs", "30", "--seed", "9"])
        #expect(generated.status == 0, "\(generated.output)")
        // A read key of the SQLite installation, which the copy carries to PostgreSQL.
        let readKey = try LiveHTTP.keys(data).read
        let (_, url, _) = try PostgresDaemonTests.database("copy_stats")
        let copy = try LiveHTTP.command(["copy", "--from", data.path, "--to", url])
        #expect(copy.status == 0, "\(copy.output)")
        let sqlite = try DaemonProcess(dataDirectory: data)
        let (a, b, directories) = try PostgresDaemonTests.twoDaemons(url)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer {
            for daemon in [sqlite, a, b] { _ = daemon.terminate() }
            for directory in directories { try? FileManager.default.removeItem(at: directory) }
        }
        let day: Int64 = 86_400_000
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func date(_ ms: Int64) -> String {
            let f = DateFormatter()
            f.dateFormat = "yyyy-MM-dd"
            f.timeZone = TimeZone(identifier: "UTC")
            return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
        }
        func instant(_ ms: Int64) -> String {
            let f = ISO8601DateFormatter()
            return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
        }
        let days = "from=\(date(now - 4 * day))&to=\(date(now + day))"
        // Edges inside 15-minute buckets: the SQLite daemon answers them from raw events.
        let edges = "from=\(instant(now - 2 * day - 7 * 60_000))&to=\(instant(now - 5 * 3_600_000 + 11 * 60_000))"
        // Whole months around the events (PostgreSQL reads its month rows there).
        let monthStart = { (ms: Int64, offset: Int) -> Int64 in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let start = calendar.dateInterval(of: .month, for: Date(timeIntervalSince1970: Double(ms) / 1000))!.start
            return Int64(calendar.date(byAdding: .month, value: offset, to: start)!.timeIntervalSince1970 * 1000)
        }
        let months = "from=\(date(monthStart(now - 2 * day, -1)))&to=\(date(monthStart(now, 2) - day))"
        // The month of the events up to two days ago: after the 16th, most of a month, which
        // PostgreSQL counts as the month's row less its other days (some of them with events).
        let mostOfMonth = "from=\(date(monthStart(now - 2 * day, 0)))&to=\(date(now - 2 * day))"
        let paths = [
            "/v1/stats/summary?\(months)",
            "/v1/stats/breakdown?\(mostOfMonth)&by=ref&limit=100",
            "/v1/stats/summary?\(mostOfMonth)&campaign=campaign_3",
            "/v1/stats/breakdown?\(mostOfMonth)&by=platform",
            "/v1/stats/breakdown?\(months)&by=ref&limit=20&sort=clicks",
            "/v1/stats/breakdown?\(months)&by=campaign&tz=Asia/Kolkata",
            "/v1/stats/summary?\(days)&tz=UTC",
            "/v1/stats/summary?\(edges)",
            "/v1/stats/summary?\(days)&tz=Asia/Kolkata&include_bots=true",
            "/v1/stats/breakdown?\(days)&by=ref&limit=50",
            "/v1/stats/breakdown?\(edges)&by=campaign",
            "/v1/stats/breakdown?\(days)&by=platform&tz=Asia/Kolkata",
            "/v1/stats/breakdown?\(days)&by=source",
            "/v1/stats/timeseries?\(days)&interval=day&tz=Asia/Kolkata",
            "/v1/stats/timeseries?\(edges)&interval=hour",
            // Filtered: by one link dimension (PostgreSQL reads its rows of that dimension), by
            // platform, and by two dimensions or by one and grouped by another (raw events there).
            "/v1/stats/summary?\(days)&ref=r1",
            "/v1/stats/breakdown?\(days)&by=campaign&campaign=campaign_1&tz=Asia/Kolkata",
            "/v1/stats/timeseries?\(days)&interval=hour&platform=ios",
            "/v1/stats/breakdown?\(edges)&by=platform&platform=android",
            "/v1/stats/breakdown?\(days)&by=ref&campaign=campaign_2",
            "/v1/stats/summary?\(days)&ref=r2&platform=android&include_bots=true",
        ]
        var compared = 0
        for (index, path) in paths.enumerated() {
            let fromSQLite = try await LiveHTTP.send(http, sqlite.baseURL + path, method: .GET, key: readKey)
            let fromPostgres = try await LiveHTTP.send(http, [a, b][index % 2].baseURL + path, method: .GET, key: readKey)
            #expect(fromSQLite.status == 200, "\(path): \(fromSQLite.body)")
            // When each daemon answered aside (`counted_through`, `lag_seconds`), the same answer.
            let sqliteJSON = try Self.withoutFreshness(fromSQLite.body)
            let postgresJSON = try Self.withoutFreshness(fromPostgres.body)
            #expect(sqliteJSON != nil && sqliteJSON == postgresJSON, "\(path)\nSQLite: \(fromSQLite.body.prefix(600))\nPostgreSQL: \(fromPostgres.body.prefix(600))")
            if sqliteJSON != nil && sqliteJSON == postgresJSON { compared += 1 }
        }
        #expect(compared == paths.count)

        // `linkpulse export --database` writes what the SQLite daemon's /v1/export.csv sends.
        let csvOut = data.appending(path: "by-ref.csv")
        let exported = try LiveHTTP.command([
            "export", "--database", url, "--by", "ref", "--from", date(now - 4 * day), "--to", date(now + day), "--out", csvOut.path,
        ])
        #expect(exported.status == 0, "\(exported.output)")
        let fromSQLiteCSV = try await LiveHTTP.send(
            http, sqlite.baseURL + "/v1/export.csv?by=ref&from=\(date(now - 4 * day))&to=\(date(now + day))", method: .GET, key: readKey)
        let csv = (try? String(contentsOf: csvOut, encoding: .utf8)) ?? ""
        #expect(csv.count > 100 && csv == fromSQLiteCSV.body, "\(csv.prefix(300))")

        // How single events were attributed, in /v1/resolve's words, alike on both stores.
        let sample = try await DatabaseQueue(path: data.appending(path: "linkpulse.sqlite").path, configuration: Self.readsEvents).read { db in
            try String.fetchAll(db, sql: "SELECT event_id FROM events WHERE type <> 'click' ORDER BY seq DESC LIMIT 40")
        } + ["no-such-event"]
        for (index, id) in sample.enumerated() {
            let path = "/v1/attributions/\(id)"
            let fromSQLite = try await LiveHTTP.send(http, sqlite.baseURL + path, method: .GET, key: readKey)
            let fromPostgres = try await LiveHTTP.send(http, [a, b][index % 2].baseURL + path, method: .GET, key: readKey)
            #expect(fromSQLite.status == (id == "no-such-event" ? 404 : 200) && fromPostgres.status == fromSQLite.status, "\(path): \(fromPostgres.body)")
            // When each daemon answered aside (`counted_through`, `lag_seconds`), the same answer.
            let sqliteJSON = try Self.withoutFreshness(fromSQLite.body)
            let postgresJSON = try Self.withoutFreshness(fromPostgres.body)
            #expect(sqliteJSON == postgresJSON, "\(path)\nSQLite: \(fromSQLite.body)\nPostgreSQL: \(fromPostgres.body)")
        }
        // The answers count something: installs attributed to links.
        let summary = try await LiveHTTP.send(http, a.baseURL + "/v1/stats/summary?\(days)", method: .GET, key: readKey)
        #expect(summary.body.contains("\"installs\":") && !summary.body.contains("\"installs\":0,"), "\(summary.body)")
        try await http.shutdown()
    }

    /// A stats answer without what says when it was counted, to compare two daemons' answers.
    static func withoutFreshness(_ body: String) throws -> NSDictionary? {
        guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else { return nil }
        return object.filter { $0.key != "counted_through" && $0.key != "lag_seconds" } as NSDictionary
    }
}
