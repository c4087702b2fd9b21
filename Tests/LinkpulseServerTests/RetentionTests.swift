import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import TestSupport
import Testing

/// Raw-event retention (`--retention-days`) with a fake clock: events age out once counted, the
/// stats of whole days (and of every quarter hour) do not change, edges finer than the rollups
/// before the horizon are refused by name, attribution stops matching clicks before it, and the
/// space comes back.
@Suite struct RetentionTests {
    /// Attributes and counts everything stored, and merges the ids into the index, on a thread
    /// of its own (the cooperative pool serves the other tests' daemons).
    static func catchUp(_ database: AppDatabase) async throws {
        try await onThreadOfItsOwn {
            try database.attribution.attributeAll()
            _ = try database.rollups.rollUpAll()
            _ = try database.events.mergeIdIndex()
        }
    }

    /// Merges the ids into the index, then deletes the raw events before `horizonMs`, on a
    /// thread of its own.
    static func prune(_ database: AppDatabase, before horizonMs: Int64) async throws -> RawRetentionOutcome {
        try await onThreadOfItsOwn {
            _ = try database.events.mergeIdIndex()
            return try database.pruneRawEvents(before: horizonMs)
        }
    }

    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000

    /// A GET with the read key (an attribution read still pending is retried).
    func get(_ client: some TestClientProtocol, _ path: String) async throws -> TestResponse {
        try await client.retryingAttributionPending {
            try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
        }
    }

    /// The answers that must not change when raw events go: whole UTC and local days, and a
    /// range on quarter hours, by every dimension and as a daily series.
    func wholeDayAnswers(_ client: some TestClientProtocol) async throws -> [String: String] {
        var answers: [String: String] = [:]
        let range = "from=2026-10-05&to=2026-11-19"
        var paths = [
            "/v1/stats/summary?\(range)", "/v1/stats/summary?\(range)&tz=Asia/Kolkata",
            "/v1/stats/summary?from=2026-10-07T10:15:00Z&to=2026-11-18T23:45:00Z",
            "/v1/stats/timeseries?\(range)&interval=day", "/v1/stats/timeseries?\(range)&interval=day&tz=Asia/Kolkata",
        ]
        for by in StatsDimension.allCases { paths.append("/v1/stats/breakdown?\(range)&by=\(by.rawValue)&limit=1000") }
        for path in paths {
            let response = try await get(client, path)
            #expect(response.status == .ok, "\(path): \(String(buffer: response.body))")
            answers[path] = String(buffer: response.body)
        }
        return answers
    }

    @Test func rawEventsAgeOutAndEveryWholeDayAnswerStaysTheSame() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        _ = try await installation.storeGeneratedTraffic(events: 40_000, days: 45, refs: 60, campaigns: 6, seed: 15)
        let end = TestInstallation.generatedTrafficEnd
        let clock = Locked<Int64>(end + Self.hour)
        let database = installation.database
        try await Self.catchUp(database)
        // An install that will expire, to be resent later.
        let expiredId = try installation.reader().inDatabase { db in
            try String.fetchOne(db, sql: "SELECT event_id FROM events WHERE type = 'install' ORDER BY occurred_at_ms LIMIT 1")
        }!
        let stored = try installation.count("SELECT count(*) FROM event_rows")
        let pagesBefore = try installation.count("PRAGMA page_count")
        let deps = installation.dependencies(now: { clock.withLock { $0 } })
        try await installation.application(deps).test(.router) { client in
            let before = try await wholeDayAnswers(client)
            let edgeBefore = try await get(client, "/v1/stats/summary?from=2026-10-07T10:07:00Z&to=2026-10-09")
            #expect(edgeBefore.status == .ok)

            // Kept: 20 days back from the fake clock, from the start of that UTC day.
            let job = RetentionJob(
                database: database, quarantineDays: 30, rawEvents: RawEventRetention(days: 20), now: { clock.withLock { $0 } },
                logger: installation.logger)
            try await job.runNow()
            let horizon = try #require(database.events.rawHorizonMs)
            #expect(horizon == Timestamp.parseRFC3339("2026-10-31T00:00:00Z")!)
            let left = try installation.count("SELECT count(*) FROM event_rows")
            let old = try installation.count("SELECT count(*) FROM event_rows WHERE occurred_at_ms < \(horizon)")
            #expect(left < stored * 6 / 10, "about 25 of 45 days went: \(left) of \(stored) left")
            // What is left before the horizon is only clicks a kept event is counted under.
            #expect(try installation.count("""
                SELECT count(*) FROM event_rows e WHERE e.occurred_at_ms < \(horizon)
                AND (e.type != 0 OR NOT EXISTS (SELECT 1 FROM attr.attribution a WHERE a.matched_click_seq = e.seq))
                """, attachingAttribution: true) == 0)
            #expect(old < 200, "\(old) pinned clicks")

            // Every whole-day and quarter-hour answer is unchanged.
            let after = try await wholeDayAnswers(client)
            for (path, answer) in before { #expect(after[path] == answer, "\(path) changed") }

            // A finer edge before the horizon is refused, naming the parameter and the grain.
            let refused = try await get(client, "/v1/stats/summary?from=2026-10-07T10:07:00Z&to=2026-10-09")
            #expect(refused.status == .badRequest)
            let error = try JSONSerialization.jsonObject(with: Data(buffer: refused.body)) as? [String: Any]
            let detail = error?["error"] as? [String: Any]
            #expect(detail?["code"] as? String == "invalid_parameter" && detail?["parameter"] as? String == "from")
            #expect((detail?["message"] as? String)?.contains("15 minutes") == true)
            let end = try await get(client, "/v1/stats/breakdown?by=ref&from=2026-10-07&to=2026-10-09T08:05:00Z")
            #expect(end.status == .badRequest && String(buffer: end.body).contains(#""parameter":"to""#))
            // After the horizon, fine edges are still answered from the raw events.
            #expect(try await get(client, "/v1/stats/summary?from=2026-11-02T10:07:00Z&to=2026-11-03T01:01:00Z").status == .ok)
            // events.csv returns only what is kept, and says so.
            let csv = try await get(client, "/v1/events.csv?from=2026-10-20&to=2026-11-01")
            #expect(csv.status == .badRequest && String(buffer: csv.body).contains("events.csv can return events from"))
            #expect(try await get(client, "/v1/events.csv?from=2026-10-31&to=2026-11-01").status == .ok)

            // An expired event sent again is still a duplicate: counted once, as before.
            let resent = try await client.postEvents(#"{"id":"\#(expiredId)","type":"install","platform":"ios"}"#)
            #expect(try resent.decode(IngestAnswer.self).duplicates == 1)
            let read = try await get(client, "/v1/attributions/\(expiredId)")
            #expect(read.status == .notFound && String(buffer: read.body).contains(#""code":"expired""#))
        }
        // Recounting from what is left is refused: the rollups hold the only complete numbers.
        #expect(throws: StoreError.self) { try database.rollups.resetRollups() }
        #expect(throws: StoreError.self) { try database.resetAttribution() }
        // The space comes back: the file shrinks once its free pages are released.
        _ = try database.events.releaseFreePages(reserveBytes: 0)
        #expect(try installation.count("PRAGMA freelist_count") == 0)
        #expect(try installation.count("PRAGMA page_count") < pagesBefore * 7 / 10)
        // A second run finds nothing more to delete.
        let again = try await onThreadOfItsOwn { try database.pruneRawEvents(before: Timestamp.parseRFC3339("2026-10-31T00:00:00Z")!) }
        #expect(again.deletedEvents == 0)
    }

    @Test func attributionStopsMatchingClicksBeforeTheHorizonAndKeepsThoseItCounts() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let now = Timestamp.parseRFC3339("2026-11-20T12:00:00Z")!
        let clock = Locked<Int64>(now)
        let deps = installation.dependencies(now: { clock.withLock { $0 } })
        @Sendable func event(_ id: String, _ type: String, at ms: Int64, ip: String, _ extra: [String: Any] = [:]) -> [String: Any] {
            var o: [String: Any] = ["id": id, "type": type, "timestamp": ms, "ip": ip, "platform": "ios", "user_agent": SentEvent.personAgent]
            for (k, v) in extra { o[k] = v }
            return o
        }
        try await installation.application(deps).test(.router) { client in
            try await AttributionScenarioTests.send([
                // Old click, old install matched to it: both expire.
                event("c-old", "click", at: now - 30 * Self.day, ip: "198.51.100.1", ["ref": "a", "campaign": "gone"]),
                event("i-old", "install", at: now - 30 * Self.day + Self.hour, ip: "198.51.100.2", ["click_id": "c-old"]),
                // Old click, recent install matched to it: the click must stay for the install.
                event("c-kept", "click", at: now - 25 * Self.day, ip: "198.51.100.3", ["ref": "b", "campaign": "kept"]),
                event("i-new", "install", at: now - 5 * Self.day + 7 * Self.minute, ip: "198.51.100.4", ["click_id": "c-kept"]),
            ], client)
            #expect(try await AttributionScenarioTests.rollUp(client) == 4)
            // With nothing old enough to delete, nothing is recorded and nothing is refused.
            let none = try await Self.prune(installation.database, before: now - 60 * Self.day)
            #expect(none.deletedEvents == 0)
            #expect(installation.database.events.rawHorizonMs == nil)
            // A range whose start is a raw edge after the horizon, counting i-new under c-kept's link.
            let edge = "/v1/stats/breakdown?by=campaign&from=2026-11-15T12:05:00Z&to=2026-11-20T12:00:00Z"
            let before = String(buffer: try await get(client, edge).body)
            #expect(before.contains(#""key":"kept""#) && before.contains(#""installs":1"#), "\(before)")

            let outcome = try await Self.prune(installation.database, before: now - 20 * Self.day)
            #expect(outcome.deletedEvents == 2 && outcome.keptClicks == 1)
            #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 'c-kept'") == 1)
            #expect(String(buffer: try await get(client, edge).body) == before)

            // New events no longer match clicks before the horizon, by id or by ref.
            try await AttributionScenarioTests.send([
                event("i-late", "install", at: now, ip: "198.51.100.5", ["click_id": "c-kept"]),
                event("o-late", "open", at: now, ip: "198.51.100.6", ["ref": "b"]),
            ], client)
            let late = try JSONSerialization.jsonObject(with: Data(buffer: try await get(client, "/v1/attributions/i-late").body)) as? [String: Any]
            #expect((late?["attribution"] as? [String: Any])?["match_type"] as? String == "organic")
            let open = try JSONSerialization.jsonObject(with: Data(buffer: try await get(client, "/v1/attributions/o-late").body)) as? [String: Any]
            let openAttribution = open?["attribution"] as? [String: Any]
            #expect(openAttribution?["match_type"] as? String == "ref" && openAttribution?["campaign"] as? String == nil)

            // Once the install that kept it has gone too, the click goes.
            #expect(try await AttributionScenarioTests.rollUp(client) == 2)
            let later = try await Self.prune(installation.database, before: now - 4 * Self.day)
            #expect(later.deletedEvents == 2 && later.keptClicks == 0)
            #expect(try installation.count("SELECT count(*) FROM events WHERE event_id IN ('c-kept', 'i-new')") == 0)
        }
    }
}

extension RetentionTests {
    /// After retention, a backup (the real command, beside the open database) carries the
    /// derived files, and the restored installation answers exactly what the original did.
    @Test func aBackupAfterRetentionCarriesTheRollupsAndRestoresEveryAnswer() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-retained-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let (file, restored) = (root.appending(path: "retained.backup"), root.appending(path: "restored"))
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try InstallationSecrets.write(try JSONEncoder().encode(TestInstallation.secrets), directory: installation.directory)
        _ = try await installation.storeGeneratedTraffic(events: 20_000, days: 40, refs: 40, campaigns: 4, seed: 16)
        let database = installation.database
        try await Self.catchUp(database)
        let outcome = try await onThreadOfItsOwn { try database.pruneRawEvents(before: Timestamp.parseRFC3339("2026-11-01T00:00:00Z")!) }
        #expect(outcome.deletedEvents > 5_000)
        let clock = Locked<Int64>(TestInstallation.generatedTrafficEnd + Self.hour)
        let answered = Locked<[String: String]>([:])
        try await installation.application(installation.dependencies(now: { clock.withLock { $0 } })).test(.router) { client in
            let answers = try await wholeDayAnswers(client)
            answered.withLock { $0 = answers }
        }
        let original = answered.withLock { $0 }

        let backup = try LiveHTTP.command(["backup", "--data-dir", installation.directory.path, "--out", file.path])
        #expect(backup.status == 0 && backup.output.contains("keep them with it"), "\(backup.output)")
        #expect(try installation.count("SELECT count(*) FROM installation WHERE name LIKE 'retention_hold%'") == 0, "the hold is lifted")
        for suffix in ["rollups", "attribution", "ids"] {
            #expect(FileManager.default.fileExists(atPath: StoreBackup.derivedFile(file, suffix: suffix).path), "\(suffix)")
        }
        let restore = try LiveHTTP.command(["restore", file.path, "--data-dir", restored.path])
        #expect(restore.status == 0 && restore.output.contains("go on from them"), "\(restore.output)")

        // Opening it must not start anything over (that would be refused: raw events are gone).
        let copy = try AppDatabase(directory: restored, logger: installation.logger)
        defer { try? copy.close() }
        #expect(copy.events.rawHorizonMs == Timestamp.parseRFC3339("2026-11-01T00:00:00Z")!)
        let deps = AppDependencies(
            database: copy, secrets: TestInstallation.secrets, configuredKeys: TestInstallation.configuredKeys, queue: IngestQueue(capacity: 1_000),
            now: { clock.withLock { $0 } }, logger: installation.logger)
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600))
        try await buildApplication(backend: SQLiteBackend(deps, settings: settings), settings: settings)
            .test(.router) { client in
                let answers = try await wholeDayAnswers(client)
                for (path, answer) in original { #expect(answers[path] == answer, "\(path) differs after the restore") }
            }

        // Without its derived files the backup is refused: the counts before the horizon are in them.
        try FileManager.default.removeItem(at: StoreBackup.derivedFile(file, suffix: "rollups"))
        let incomplete = try LiveHTTP.command(["restore", file.path, "--data-dir", root.appending(path: "again").path])
        #expect(incomplete.status != 0 && incomplete.output.contains("needs them all"), "\(incomplete.output)")
    }
}

extension RetentionTests {
    /// A derived file lost after retention cannot be recounted: the start is refused, saying
    /// why and what to do, instead of counting less than the rollups held.
    @Test func aStartThatWouldRecountWhatRetentionDeletedIsRefused() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        _ = try await installation.storeGeneratedTraffic(events: 3_000, days: 40, refs: 10, campaigns: 2, seed: 17)
        let database = installation.database
        try await Self.catchUp(database)
        let outcome = try await onThreadOfItsOwn { try database.pruneRawEvents(before: TestInstallation.generatedTrafficEnd - 20 * Self.day) }
        #expect(outcome.deletedEvents > 0)
        try database.close()
        try FileManager.default.removeItem(at: installation.directory.appending(path: AppDatabase.rollupFileName))
        #expect {
            _ = try AppDatabase(directory: installation.directory, logger: installation.logger)
        } throws: { error in
            "\(error)".contains("retention (--retention-days) has deleted the raw events before")
        }
    }
}

extension TestInstallation {
    /// `count(_:)` with the attribution file attached as `attr`.
    func count(_ sql: String, attachingAttribution: Bool) throws -> Int {
        let queue = try reader()
        return try queue.inDatabase { db in
            try db.execute(sql: "ATTACH DATABASE ? AS attr", arguments: [directory.appending(path: AppDatabase.attributionFileName).path])
            return try Int.fetchOne(db, sql: sql) ?? -1
        }
    }
}
