import Foundation
import TestSupport
import Testing

/// `linkpulse migrate --database postgres://…`, the real binary against a real PostgreSQL.
@Suite struct PostgresCommandTests {
    @Test func migrateCreatesTheSchemaOnceWhenTwoRunAtOnce() async throws {
        let cluster = try PostgresTestCluster.shared.get()
        let url = try cluster.makeDatabase("migrate_cli")
        let database = String(url.split(separator: "/").last!)
        async let first = Task.detached { try LiveHTTP.command(["migrate", "--database", url]) }.value
        async let second = Task.detached { try LiveHTTP.command(["migrate", "--database", url]) }.value
        for run in try await [first, second] {
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("database is up to date"), "\(run.output)")
        }
        let applied = try cluster.psql("SELECT count(*) FROM lp_migrations", database: database).trimmingCharacters(in: .whitespacesAndNewlines)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.queries.appending(path: "postgres/migrations").path).filter { $0.hasSuffix(".sql") }
        #expect(applied == "\(files.count)")
        let tables = try cluster.psql(
            "SELECT string_agg(t, ',' ORDER BY t) FROM unnest(ARRAY['lp_events','lp_event_ids','lp_quarantine','lp_installation']) t WHERE to_regclass(t) IS NOT NULL",
            database: database)
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "lp_event_ids,lp_events,lp_installation,lp_quarantine")

        let again = try LiveHTTP.command(["migrate", "--database", url])
        #expect(again.status == 0 && !again.output.contains("applied migration"), "nothing left to apply: \(again.output)")
    }

    @Test func aDatabaseURLThatCannotBeReadIsRefusedWithoutShowingItsPassword() throws {
        let wrongScheme = try LiveHTTP.command(["migrate", "--database", "mysql://app@db/lp"])
        #expect(wrongScheme.status != 0 && wrongScheme.output.contains("must start with postgres://"), "\(wrongScheme.output)")
        let broken = try LiveHTTP.command(["migrate", "--database", "postgres://app:hunter2@db host/lp"])
        #expect(broken.status != 0 && broken.output.contains("app:***@"), "\(broken.output)")
        #expect(!broken.output.contains("hunter2"))
    }

    /// Options of what does not run on PostgreSQL yet are refused, not silently ignored.
    @Test func serveOnPostgresRefusesTheDemo() throws {
        let url = try PostgresTestCluster.shared.get().makeDatabase("refused_options")
        let run = try LiveHTTP.command(["serve", "--port", "0", "--database", url, "--demo"])
        #expect(run.status != 0 && run.output.contains("SQLite only"), "\(run.output)")
        let sealing = try LiveHTTP.command(["serve", "--port", "0", "--database", url, "--seal-after-days", "3"])
        #expect(sealing.status != 0 && sealing.output.contains("--seal-after-days seals SQLite"), "\(sealing.output)")
    }

    /// The package's `queries/` folder.
    static var queries: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: "queries")
    }
}
