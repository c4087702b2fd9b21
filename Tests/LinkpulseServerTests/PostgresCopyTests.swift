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
    @Test func aCopiedInstallationHasEveryEventOnceInOrderItsKeysAndTheSameAttribution() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-copy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let generated = try LiveHTTP.command(["generate", "--data-dir", data.path, "--events", "6000", "--days", "3", "--refs", "40", "--seed", "7"])
        #expect(generated.status == 0, "\(generated.output)")
        // Two rejected events, as the quarantine keeps them.
        let sqlite = try DatabaseQueue(path: data.appending(path: "linkpulse.sqlite").path)
        try await sqlite.write { db in
            for index in 0..<2 {
                try db.execute(
                    sql: "INSERT INTO quarantine (received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [1_795_255_620_000 + Int64(index), index, "missing_field", "type", "`type` is required.", #"{"id":"q\#(index)"}"#, 0, "curl/8"])
            }
        }
        let (cluster, url, name) = try PostgresDaemonTests.database("copy")
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let store = try await PostgresStore.open(try PostgresLocation(url: url), logger: logger, nowMs: 0)

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

        let secrets = try JSONDecoder().decode([String: String].self, from: Data(contentsOf: data.appending(path: "secrets.json")))
        let keys = try cluster.psql("SELECT key || '=' || value FROM lp_installation WHERE key IN ('ingest_key', 'read_key', 'hash_secret') ORDER BY key", database: name)
        #expect(keys.split(separator: "\n") == ["hash_secret=\(secrets["hash_secret"]!)", "ingest_key=\(secrets["ingest_key"]!)", "read_key=\(secrets["read_key"]!)"])

        // Attribution on PostgreSQL reaches SQLite's answers (compared by event id).
        let sqliteAnswers = try await DatabaseQueue(path: data.appending(path: "linkpulse-attribution.sqlite").path).read { db in
            try db.execute(sql: "ATTACH DATABASE ? AS ev", arguments: [data.appending(path: "linkpulse.sqlite").path])
            return try Row.fetchAll(db, sql: """
                SELECT e.event_id, a.match_type, c.event_id FROM attribution a JOIN ev.events e ON e.seq = a.seq
                LEFT JOIN ev.events c ON c.seq = a.matched_click_seq ORDER BY a.seq
                """).map { "\($0[0] as String) \($0[1] as String) \(($0[2] as String?) ?? "∅")" }
        }
        let idsBySeq = Dictionary(uniqueKeysWithValues: try await store.events.events(afterSeq: 0, limit: 100_000).map { ($0.seq, $0.event.id) })
        let postgresAnswers = try await store.attributions(afterSeq: 0, limit: 100_000).map {
            "\(idsBySeq[$0.seq]!) \($0.match.rawValue) \($0.clickSeq.map { idsBySeq[$0]! } ?? "∅")"
        }
        #expect(sqliteAnswers.count > 1000)
        #expect(postgresAnswers == sqliteAnswers, "the same answers on both stores")

        // Into a database that holds other keys, a copy is refused before it copies anything.
        let (_, otherURL, _) = try PostgresDaemonTests.database("copy_refused")
        let other = try await PostgresStore.open(try PostgresLocation(url: otherURL), logger: logger, nowMs: 0)
        _ = try await other.installationValues(proposing: ["ingest_key": "lpi_x", "read_key": "lpr_x", "hash_secret": "00"])
        let refused = try LiveHTTP.command(["copy", "--from", data.path, "--to", otherURL])
        #expect(refused.status != 0 && refused.output.contains("already holds other keys"), "\(refused.output)")
        #expect(try await other.events.events(afterSeq: 0, limit: 1).isEmpty)
        await other.close()
        await store.close()
    }
}
