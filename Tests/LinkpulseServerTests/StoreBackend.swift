import Foundation
import Hummingbird
import HummingbirdTesting
import LinkpulseServer
import LinkpulseStore
import Logging
import Synchronization
import TestSupport
import Testing

/// Where the daemon of a test keeps its data, for the HTTP tests that must hold on both stores:
/// a throw-away SQLite installation (one daemon, through the router), or two daemons in this
/// process on one fresh database of the test PostgreSQL cluster, each with its own store,
/// ingest writer and derived work, serving real HTTP on loopback, the test's requests going to
/// them in turn as a round-robin load balancer would send them.
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// What a test may look at besides HTTP: the store's answers and a row count.
    struct Probe: Sendable {
        let backend: StoreBackend
        /// The seq of an event id, as the store answers it.
        let answers: any AttributionAnswers
        let countRows: @Sendable (_ sqlite: String, _ postgres: String) throws -> Int
        /// Waits until every event stored so far is attributed.
        let settle: @Sendable () async throws -> Void
        /// The SQLite installation's data directory (nil on PostgreSQL).
        var directory: URL? = nil

        /// The count `sqlite` gives on SQLite's events database, or `postgres` on PostgreSQL.
        func count(sqlite: String, postgres: String) throws -> Int {
            try countRows(sqlite, postgres)
        }
    }

    /// Runs `body` against a fresh installation on this backend (`name` names its PostgreSQL
    /// database), with `settings` (the SQLite default's rollup timer waits an hour: see
    /// `TestInstallation.application`), changed for each daemon (0, 1) by `perDaemon`, and the
    /// clock `now` when given. `live` serves real HTTP on SQLite too. `postgresURL` names an
    /// existing PostgreSQL database to use instead of a fresh one (a test that starts daemons
    /// on it again). `audience` is the countries' and user agents' data (none by default).
    func test(
        _ name: String, settings: ServerSettings = ServerSettings(port: 0, rollupInterval: .seconds(3600), ingestPacing: .off),
        now: (@Sendable () -> Int64)? = nil, live: Bool = false, postgresURL: String? = nil, audience: AudienceData? = nil,
        perDaemon: (@Sendable (inout ServerSettings, Int) -> Void)? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, Probe) async throws -> Void
    ) async throws {
        switch self {
        case .sqlite:
            let installation = try TestInstallation()
            defer { installation.remove() }
            let attribution = installation.database.attribution
            let probe = Probe(
                backend: self, answers: StoredAttributions(events: installation.database.events, attribution: attribution),
                countRows: { sql, _ in try installation.count(sql) }, settle: { await attribution.settled() }, directory: installation.directory)
            var settings = settings
            perDaemon?(&settings, 0)
            let app = installation.application(installation.dependencies(now: now, audience: audience), settings: settings)
            try await app.test(live ? .live : .router) { client in try await body(client, probe) }
        case .postgres:
            let cluster = try PostgresTestCluster.shared.get()
            let url = try postgresURL ?? cluster.makeDatabase(name)
            let database = String(url.split(separator: "/").last!)
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            var stores: [PostgresStore] = []
            do {
                for _ in 0..<2 {
                    let store = try await PostgresStore.open(
                        try PostgresLocation(url: url), logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000), connectTimeout: .seconds(180))
                    stores.append(store)
                    _ = try await store.installationValues(proposing: TestInstallation.secrets.storedValues)
                }
                let apps = stores.enumerated().map { index, store in
                    var settings = settings
                    perDaemon?(&settings, index)
                    let keys = AccessKeys(
                        store: store.accessKeys, hashSecret: TestInstallation.secrets.hashSecretBytes, configured: TestInstallation.configuredKeys)
                    let parts = DaemonParts(
                        secrets: TestInstallation.secrets, keys: keys, queue: IngestQueue(capacity: 50_000),
                        now: now ?? { Int64(Date().timeIntervalSince1970 * 1000) }, audience: audience, logger: logger)
                    return buildApplication(backend: PostgresBackend(store: store, parts: parts, settings: settings), settings: settings)
                }
                let store = stores[0]
                let probe = Probe(
                    backend: self, answers: store,
                    countRows: { _, sql in Int(try cluster.psql(sql, database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 },
                    settle: { try await store.countStored(timeout: .seconds(60)) })
                try await apps[0].test(.live) { a in
                    try await apps[1].test(.live) { b in
                        try await body(AlternatingClient([a, b]), probe)
                    }
                }
            } catch {
                for store in stores { await store.close() }
                throw error
            }
            for store in stores { await store.close() }
        }
    }
}

/// Sends each request to the next of its clients in turn.
final class AlternatingClient: TestClientProtocol {
    let clients: [any TestClientProtocol]
    private let next = Atomic<Int>(0)

    init(_ clients: [any TestClientProtocol]) {
        self.clients = clients
    }

    var port: Int? { clients.first?.port }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        let index = next.add(1, ordering: .relaxed).oldValue % clients.count
        return try await clients[index].executeRequest(uri: uri, method: method, headers: headers, body: body)
    }
}
