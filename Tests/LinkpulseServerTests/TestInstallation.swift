import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging
import NIOCore
import TestSupport

/// A throw-away Linkpulse installation: its own data directory, database and known keys,
/// wired through the same builders as the daemon.
struct TestInstallation {
    static let ingestKey = "lpi_test_ingest_key"
    static let readKey = "lpr_test_read_key"
    static let adminKey = "lpa_test_admin_key"
    /// The keys every test daemon takes, as if given by flag.
    static let configuredKeys: [AccessKind: String] = [.ingest: ingestKey, .read: readKey, .admin: adminKey]
    static let secrets = InstallationSecrets(hashSecret: String(repeating: "ab", count: 32))

    let directory: URL
    let database: AppDatabase
    let logger: Logger

    init(durability: Durability = .normal) throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-test-\(UUID().uuidString)")
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        self.logger = logger
        database = try AppDatabase(directory: directory, durability: durability, logger: logger)
    }

    var hasher: KeyedHasher { KeyedHasher(secret: Self.secrets.hashSecretBytes) }

    /// - Parameter ticks: the timers a test drives (`ManualTicks.tick`); nil for Dispatch timers.
    func dependencies(
        queueCapacity: Int = 50_000, now: (@Sendable () -> Int64)? = nil, ticks: ManualTicks? = nil, audience: AudienceData? = nil
    ) -> AppDependencies {
        AppDependencies(
            database: database, secrets: Self.secrets, configuredKeys: Self.configuredKeys, queue: IngestQueue(capacity: queueCapacity),
            now: now ?? { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }, ticks: ticks, audience: audience, logger: logger)
    }

    /// The daemon as `serve` builds it. By default its rollup timer waits an hour, so that a
    /// test's own `/v1/admin/rollup` calls count exactly what was sent since the last one (a
    /// tick in between would count it first, on a slow machine), and ingest is not paced (the
    /// test drives the rollups; with a fake clock that jumps days, the stats would look days
    /// behind and every commit would wait); tests of the timer or of pacing pass their own
    /// `settings`.
    func application(
        _ deps: AppDependencies? = nil, settings: ServerSettings = ServerSettings(port: 0, rollupInterval: .seconds(3600), ingestPacing: .off)
    ) -> some ApplicationProtocol {
        buildApplication(backend: SQLiteBackend(deps ?? dependencies(), settings: settings), settings: settings)
    }

    /// A read-only view of the events database, as an operator's tool would open it (with the
    /// sealed events' table, `AppDatabase.prepareEventsReader`).
    func reader() throws -> DatabaseQueue {
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        return try DatabaseQueue(path: directory.appending(path: AppDatabase.eventsFileName).path, configuration: config)
    }

    func count(_ sql: String) throws -> Int {
        try reader().read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    /// When the traffic `storeGeneratedTraffic` makes ends (and is received).
    static let generatedTrafficEnd = Timestamp.parseRFC3339("2026-11-20T00:00:00Z")!

    /// Stores generated traffic through the real ingest code (as `linkpulse generate` does),
    /// ending at `generatedTrafficEnd`.
    func storeGeneratedTraffic(events: Int, days: Int, refs: Int, campaigns: Int, seed: UInt64) async throws -> GeneratedTraffic.Outcome {
        try await GeneratedTraffic.write(
            TrafficProfile(events: events, days: days, refs: refs, campaigns: campaigns, seed: seed, endMs: Self.generatedTrafficEnd),
            into: database, secrets: Self.secrets, receivedAtMs: Self.generatedTrafficEnd)
    }

    func remove() {
        try? database.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The decoded ingest answer.
struct IngestAnswer: Decodable, Equatable {
    struct Problem: Decodable, Equatable {
        var index: Int
        var code: String
        var field: String?
        var message: String
    }
    var accepted: Int
    var duplicates: Int
    var rejected: Int
    var errors: [Problem]
}

struct ErrorAnswer: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
    }
    var error: Detail
}

extension TestResponse {
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(buffer: body))
    }
}

extension TestClientProtocol {
    /// Sends a request as a client told to retry does: while it is answered `503
    /// attribution_pending` (an event read moments after its `2xx`, before the follower's round,
    /// which a loaded machine can delay past the request's wait), it is sent again after its
    /// `Retry-After`, for up to a minute.
    func retryingAttributionPending(_ send: () async throws -> TestResponse) async throws -> TestResponse {
        var response = try await send()
        // Asked again as `Retry-After` says: a second.
        let pending = { (response: TestResponse) in
            response.status == .serviceUnavailable && String(buffer: response.body).contains(#""attribution_pending""#)
        }
        try await eventually(within: .seconds(60), every: .seconds(1)) {
            if pending(response) { response = try await send() }
            return !pending(response)
        }
        return response
    }

    /// POSTs a body to `/v1/events` with the ingest key.
    func postEvents(
        _ body: String, contentType: String = "application/json", headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentType: contentType]
        headers.append(contentsOf: extra)
        return try await execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: body))
    }
}
