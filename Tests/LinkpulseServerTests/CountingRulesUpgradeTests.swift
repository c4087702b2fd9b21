import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import TestSupport
import Testing

/// An installation counted by earlier `CountingRules` (an organic install without its campaign,
/// opens not split by match type) is counted again when it is upgraded, on both stores, unless
/// retention has deleted raw events (then the rollups of those stay as they are).
@Suite struct CountingRulesUpgradeTests {
    typealias Scenario = AttributionScenarioTests

    /// A click, an install it brought, an organic install with a campaign of its own and an
    /// organic open.
    static var traffic: [[String: Any]] {
        [
            Scenario.event("c1", "click", at: 0, ["ref": "a", "campaign": "spring"]),
            Scenario.event("i1", "install", at: Scenario.minute, ip: "198.51.100.40", ["click_id": "c1"]),
            Scenario.event("i2", "install", at: Scenario.minute, ip: "198.51.100.41", ["campaign": "own"]),
            Scenario.event("o1", "open", at: 2 * Scenario.minute, ip: "198.51.100.42", ["campaign": "own"]),
        ]
    }

    /// What the stats must say of `traffic` by this version's rules.
    static func expectCountedByTheseRules(_ client: some TestClientProtocol) async throws {
        let own = try await Scenario.metrics(client, "campaign=own")
        #expect(own["installs"] == 1 && own["organic"] == 1 && own["opens"] == 1 && own["opens_organic"] == 1, "\(own)")
        let all = try await Scenario.metrics(client, "")
        #expect(all["installs"] == 2 && all["click_id"] == 1 && all["install_rate"] == 1.0 && all["open_rate"] == 0.0, "\(all)")
    }

    @Test func sqliteRollupsOfEarlierRulesAreCountedAgainAtOpen() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await Self.storeAndCountTraffic(in: installation)
        // As a version before them left it: rules 1 recorded, and counts that differ (none here).
        try Self.changeRollupFile(of: installation, "UPDATE rollup_state SET counting_rules = 1; DELETE FROM cube_parts; DELETE FROM cube_blocks; DELETE FROM rollups")
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? reopened.close() }
        try reopened.rollups.rollUpAll()
        let query = StatsQuery(fromMs: Scenario.t0 - 86_400_000, toMs: Scenario.t0 + 86_400_000)
        let byCampaign = try await reopened.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: false)
        #expect(byCampaign[.value("own")]?.people.installsOrganic == 1 && byCampaign[.value("own")]?.people.opensOrganic == 1)
        #expect(byCampaign[.value("spring")]?.people.installsClickId == 1)
        #expect(try Self.rollupFileValue(of: installation, "SELECT counting_rules FROM rollup_state") == CountingRules.version)
    }

    /// A daemon started on rollups that start over (here: an upgrade) says so: `/readyz` is
    /// not ready and the admin API names the events left, until the recount is done.
    @Test func aDaemonCountingAgainIsNotReadyAndSaysHowMuchIsLeft() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await Self.storeAndCountTraffic(in: installation)
        try Self.changeRollupFile(of: installation, "UPDATE rollup_state SET counting_rules = 1")
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? reopened.close() }
        try await Self.daemon(on: reopened, of: installation).test(.router) { client in
            let read: HTTPFields = [.authorization: "Bearer \(TestInstallation.readKey)"]
            let counting = try await client.execute(uri: "/readyz", method: .get)
            let readiness = try JSONSerialization.jsonObject(with: Data(buffer: counting.body)) as? [String: Any]
            let recount = (readiness?["checks"] as? [String: Any])?["recount"] as? [String: Any]
            #expect(counting.status == .serviceUnavailable && recount?["ok"] as? Bool == false, "\(String(buffer: counting.body))")
            let status = try JSONSerialization.jsonObject(with: Data(buffer: try await client.execute(uri: "/v1/admin/rollup", method: .get, headers: read).body)) as? [String: Any]
            #expect(status?["recount_remaining_events"] as? Int == 4, "\(String(describing: status))")
            _ = try await Scenario.rollUp(client)
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            let done = try JSONSerialization.jsonObject(with: Data(buffer: try await client.execute(uri: "/v1/admin/rollup", method: .get, headers: read).body)) as? [String: Any]
            #expect(done?["recount_remaining_events"] is NSNull, "\(String(describing: done))")
            try await Self.expectCountedByTheseRules(client)
        }
    }

    /// An installation of the version before the install referrer was kept (events migration
    /// 0009) opens, migrates and counts: its derived files' connections, which attached the
    /// events database before it was migrated, read the new schema.
    @Test func anInstallationOfTheVersionBeforeTheInstallReferrerColumnUpgrades() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await Self.storeAndCountTraffic(in: installation)
        // Back to 0008: without the column, with the events view of migration 0006.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let blocks = try String(contentsOf: repository.appending(path: "queries/migrations/0006_event_blocks.sql"), encoding: .utf8)
        let oldView = String(blocks[blocks.range(of: "CREATE VIEW events AS")!.lowerBound...])
        var config = Configuration()
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let events = try DatabaseQueue(path: installation.directory.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        try await events.write { db in
            try db.execute(sql: "DROP VIEW events; ALTER TABLE event_rows DROP COLUMN install_referrer")
            try db.execute(sql: oldView)
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = '0009_install_referrer'")
        }
        try events.close()
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? reopened.close() }
        try await Self.daemon(on: reopened, of: installation).test(.router) { client in
            try await Scenario.send([Scenario.event("i9", "install", at: 3 * Scenario.minute, ip: "198.51.100.43", ["install_referrer": "lp_click=c1"])], client)
            #expect(try await Scenario.rollUp(client) == 1)
            let all = try await Scenario.metrics(client, "")
            #expect(all["installs"] == 3 && all["install_referrer"] == 1, "\(all)")
        }
    }

    @Test func sqliteRollupsOfDeletedRawEventsStayAsCounted() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await Self.storeAndCountTraffic(in: installation)
        try Self.changeRollupFile(of: installation, "UPDATE rollup_state SET counting_rules = 1; DELETE FROM cube_parts; DELETE FROM cube_blocks; DELETE FROM rollups")
        // Retention deleted raw events (a horizon is recorded): nothing can be counted again.
        let events = try DatabaseQueue(path: installation.directory.appending(path: AppDatabase.eventsFileName).path)
        try await events.write { db in try db.execute(sql: "INSERT INTO installation (name, value) VALUES ('raw_horizon_ms', '0')") }
        try events.close()
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? reopened.close() }
        try reopened.rollups.rollUpAll()
        #expect(try reopened.rollups.rolledThroughSeq() == 4)
        #expect(try Self.rollupFileValue(of: installation, "SELECT count(*) FROM cube_parts") == 0)
        #expect(try Self.rollupFileValue(of: installation, "SELECT counting_rules FROM rollup_state") == CountingRules.version)
    }

    @Test func postgresMigrationCountsTheRollupsAgain() async throws {
        let cluster = try PostgresTestCluster.shared.get()
        let url = try cluster.makeDatabase("counting_rules")
        let database = String(url.split(separator: "/").last!)
        // The derived work's timer at PostgreSQL's default (1 s) as well as its nudges.
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(1), ingestPacing: .off)
        try await StoreBackend.postgres.test("counting_rules", settings: settings, postgresURL: url) { client, _ in
            try await Scenario.send(Self.traffic, client)
            _ = try await Scenario.rollUp(client)
            try await Self.expectCountedByTheseRules(client)
        }
        // As the database was before migration 0009: no opens by match, organic attributions
        // without their campaign, and rollups counted by those rules (altered here to tell).
        try cluster.psql(
            """
            ALTER TABLE lp_rollups DROP COLUMN opens_install_referrer, DROP COLUMN opens_click_id, DROP COLUMN opens_ref,
                DROP COLUMN opens_fingerprint, DROP COLUMN opens_organic;
            UPDATE lp_attributions SET campaign = NULL WHERE match_type = 'organic';
            UPDATE lp_rollups SET installs_organic = 0;
            DELETE FROM lp_migrations WHERE name = '0009_opens_by_match';
            """, database: database)
        try await StoreBackend.postgres.test("counting_rules", settings: settings, postgresURL: url) { client, _ in
            _ = try await Scenario.rollUp(client)
            try await Self.expectCountedByTheseRules(client)
        }
    }

    /// Stores `traffic` through a daemon on `installation`, counts it (checking it is counted
    /// by this version's rules), and closes the installation's database.
    static func storeAndCountTraffic(in installation: TestInstallation) async throws {
        try await installation.application().test(.router) { client in
            try await Scenario.send(Self.traffic, client)
            #expect(try await Scenario.rollUp(client) == 4)
            try await Self.expectCountedByTheseRules(client)
        }
        try installation.database.close()
    }

    /// The daemon `serve` builds on `database`, opened again on `installation`'s directory.
    static func daemon(
        on database: AppDatabase, of installation: TestInstallation,
        settings: ServerSettings = ServerSettings(port: 0, rollupInterval: .seconds(3600), ingestPacing: .off)
    ) -> some ApplicationProtocol {
        let deps = AppDependencies(
            database: database, secrets: TestInstallation.secrets, configuredKeys: TestInstallation.configuredKeys, queue: IngestQueue(capacity: 1_000),
            now: { Int64(Date().timeIntervalSince1970 * 1000) }, logger: installation.logger)
        return buildApplication(backend: SQLiteBackend(deps, settings: settings), settings: settings)
    }

    static func changeRollupFile(of installation: TestInstallation, _ sql: String) throws {
        let rollups = try DatabaseQueue(path: installation.directory.appending(path: AppDatabase.rollupFileName).path)
        try rollups.write { db in try db.execute(sql: sql) }
        try rollups.close()
    }

    static func rollupFileValue(of installation: TestInstallation, _ sql: String) throws -> Int? {
        let rollups = try DatabaseQueue(path: installation.directory.appending(path: AppDatabase.rollupFileName).path)
        defer { try? rollups.close() }
        return try rollups.read { db in try Int.fetchOne(db, sql: sql) }
    }
}
