import Foundation
import LinkpulseDomain
import Logging
import PostgresNIO

/// A Linkpulse store in PostgreSQL (`--database postgres://…`), which several daemons may share.
///
/// Owns the connection pool to one database and runs its migrations. Its parts, like those of
/// the SQLite store, are named for what they own: `events` (raw events, their ids and the
/// quarantine). Every call is `async` and blocks no thread: the PostgreSQL client is
/// non-blocking.
public final class PostgresStore: IngestStore {
    public let location: PostgresLocation
    /// Raw events, their ids and the quarantine.
    public let events: PostgresEventStore
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger
    private let running: Task<Void, Never>

    /// How long `open` waits for the server before it gives up, unless told otherwise.
    public static let connectTimeout: Duration = .seconds(30)

    private init(location: PostgresLocation, logger: Logger) throws {
        self.location = location
        self.logger = logger
        queries = try PostgresQueries.load()
        var configuration = location.clientConfiguration
        // A 2xx means committed: whatever the server's default, this session waits for the flush.
        configuration.options.additionalStartupParameters.append(("synchronous_commit", "on"))
        configuration.options.additionalStartupParameters.append(("TimeZone", "UTC"))
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        events = PostgresEventStore(client: client, queries: queries, logger: logger)
    }

    /// Connects to the database at `location`, applies the migrations it lacks (one daemon at a
    /// time, whichever starts first) and makes sure the months around `nowMs` have partitions.
    /// Fails after `connectTimeout` when the server does not answer.
    public static func open(
        _ location: PostgresLocation, logger: Logger, nowMs: Int64, connectTimeout: Duration = connectTimeout
    ) async throws -> PostgresStore {
        let store = try PostgresStore(location: location, logger: logger)
        do {
            try await withTimeout(connectTimeout, what: "connecting to \(location)") {
                _ = try await store.migrate()
                try await store.ensureEventMonths(aroundMs: nowMs)
            }
            return store
        } catch {
            await store.close()
            throw error
        }
    }

    /// Stores the events and quarantine rows of several requests in one transaction: see
    /// `PostgresEventStore.store`.
    public func ingest(_ work: [IngestWork]) async throws -> [[StoredOutcome]] {
        try await events.store(work)
    }

    /// Stops the connection pool; waits until its connections are closed.
    public func close() async {
        running.cancel()
        await running.value
    }

    /// Applies the migrations not applied yet, in one transaction under an advisory lock, and
    /// returns their names. When several daemons start at once, one applies them and the
    /// others wait for it and find nothing left to do.
    public func migrate() async throws -> [String] {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: queries.schema.lock), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: queries.schema.createMigrations), logger: logger)
            var applied: Set<String> = []
            for try await name in try await connection.query(PostgresQuery(unsafeSQL: queries.schema.applied), logger: logger).decode(String.self) {
                applied.insert(name)
            }
            var names: [String] = []
            for migration in queries.migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(Self.query(queries.schema.record, migration.name), logger: logger)
                logger.notice("applied migration", metadata: ["migration": "\(migration.name)"])
                names.append(migration.name)
            }
            return names
        }
    }

    /// Creates the month partitions of raw events from the month before `aroundMs` through two
    /// months after it (those that do not exist yet); returns how many it created. Each daemon
    /// calls it at start and once a day.
    @discardableResult
    public func ensureEventMonths(aroundMs: Int64) async throws -> Int {
        let dayMs: Int64 = 86_400_000
        let rows = try await client.query(
            Self.query(queries.schema.ensureEventMonths, aroundMs - 31 * dayMs, aroundMs + 62 * dayMs), logger: logger)
        var created = 0
        for try await count in rows.decode(Int32.self) { created = Int(count) }
        return created
    }

    /// The id this database was given when it was created.
    public func databaseId() async throws -> String? {
        for try await id in try await client.query(PostgresQuery(unsafeSQL: queries.schema.databaseId), logger: logger).decode(String.self) {
            return id
        }
        return nil
    }

    /// The installation's stored values (access keys, hashing secret) for `proposed`'s keys:
    /// each proposed value is stored unless its key holds one already, and the stored one is
    /// returned. Every daemon proposes values of its own at start; the first one stored wins,
    /// so all daemons on one database end up with the same keys and visitor ids.
    public func installationValues(proposing proposed: [String: String]) async throws -> [String: String] {
        for (key, value) in proposed.sorted(by: { $0.key < $1.key }) {
            try await client.query(Self.query(queries.schema.keepInstallationValue, key, value), logger: logger)
        }
        var stored: [String: String] = [:]
        for try await (key, value) in try await client.query(PostgresQuery(unsafeSQL: queries.schema.installationValues), logger: logger)
            .decode((String, String).self) where proposed[key] != nil {
            stored[key] = value
        }
        return stored
    }

    /// Whether the server answers a query now (for `/healthz`).
    public func isHealthy() async -> Bool {
        do {
            try await Self.withTimeout(.seconds(5), what: "a health check") {
                try await self.client.query(PostgresQuery(unsafeSQL: self.queries.schema.ping), logger: self.logger)
            }
            return true
        } catch {
            return false
        }
    }

    /// `sql` with `values` bound as $1, $2, … in order.
    static func query(_ sql: String, _ values: any PostgresDynamicTypeEncodable...) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    /// Runs `body`, failing with `PostgresStoreError.timedOut` when it takes longer than `limit`.
    static func withTimeout<T: Sendable>(_ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw PostgresStoreError.timedOut(what: what, after: limit)
            }
            return result
        }
    }
}

/// What went wrong talking to PostgreSQL, in words an operator can act on.
public enum PostgresStoreError: Error, CustomStringConvertible {
    case timedOut(what: String, after: Duration)

    public var description: String {
        switch self {
        case .timedOut(let what, let after):
            "gave up \(what) after \(after.components.seconds) s: is the server running and the URL right?"
        }
    }
}
