import Foundation
import LinkpulseDomain
import Logging
import PostgresNIO
import Synchronization

/// A Linkpulse store in PostgreSQL (`--database postgres://…`), which several daemons may share.
///
/// Owns the connection pool to one database and runs its migrations. Its parts, like those of
/// the SQLite store, are named for what they own: `events` (raw events, their ids and the
/// quarantine; the ingest writer's), `derived` (attribution, written only by the daemon holding
/// the derived-work lock, on a connection of its own), `stats` (reads only) and `exportLedger`
/// (the scheduled exports done). Every call is
/// `async` and blocks no thread: the PostgreSQL client is non-blocking.
public final class PostgresStore: IngestStore, AttributionAnswers {
    public let location: PostgresLocation
    /// Raw events, their ids and the quarantine.
    public let events: PostgresEventStore
    /// Attribution, done by whichever daemon holds the derived-work lock.
    public let derived: PostgresDerivedWork
    /// How far the derived work was when this store opened (after its migrations): a daemon
    /// tells a recount from its everyday backlog by it (`RecountWatch`).
    public var progressAtOpen: PostgresDerivedProgress? { openedAt.withLock { $0 } }
    private let openedAt = Mutex<PostgresDerivedProgress?>(nil)
    /// Stats, counted from the attributed raw events, and the raw-event export's pages.
    public let stats: PostgresStatsReader
    /// The scheduled export periods done and files kept.
    public let exportLedger: PostgresExportLedger
    /// The access keys (their keyed hashes) an operator created, shared by every daemon.
    public let accessKeys: PostgresAccessKeyLedger
    /// The hosted links.
    public let links: PostgresLinkLedger
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger
    private let running: Task<Void, Never>

    /// How long `open` waits for the server before it gives up, unless told otherwise.
    public static let connectTimeout: Duration = .seconds(30)

    private init(location: PostgresLocation, attributionWindowMs: Int64, roundSize: Int, logger: Logger) throws {
        self.location = location
        self.logger = logger
        queries = try PostgresQueries.load()
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        events = PostgresEventStore(client: client, queries: queries, logger: logger)
        stats = PostgresStatsReader(client: client, queries: queries, logger: logger)
        exportLedger = PostgresExportLedger(client: client, queries: queries, logger: logger)
        accessKeys = PostgresAccessKeyLedger(client: client, queries: queries, logger: logger)
        links = PostgresLinkLedger(client: client, queries: queries.links, logger: logger)
        derived = PostgresDerivedWork(
            location: location, queries: queries, attributionWindowMs: attributionWindowMs, roundSize: roundSize, logger: logger)
    }

    /// Connects to the database at `location`, applies the migrations it lacks (one daemon at a
    /// time, whichever starts first) and makes sure the months around `nowMs` have partitions.
    /// Fails after `connectTimeout` when the server does not answer.
    ///
    /// - Parameters:
    ///   - attributionWindowMs: the fingerprint window of attribution, as `--attribution-window`.
    ///   - roundSize: the most events one attribution round (one transaction) takes.
    public static func open(
        _ location: PostgresLocation, logger: Logger, nowMs: Int64, connectTimeout: Duration = connectTimeout,
        attributionWindowMs: Int64 = 7_200_000, roundSize: Int = 10_000
    ) async throws -> PostgresStore {
        let store = try PostgresStore(location: location, attributionWindowMs: attributionWindowMs, roundSize: roundSize, logger: logger)
        do {
            try await withTimeout(connectTimeout, what: "connecting to \(location)") {
                _ = try await store.migrate()
                try await store.ensureEventMonths(aroundMs: nowMs)
                let progress = try await store.derivedProgress()
                store.openedAt.withLock { $0 = progress }
            }
            return store
        } catch {
            // A pool that never connected can take many seconds to wind down (its connection
            // attempts back off): the caller gets the error now, the pool stops on its own.
            Task { await store.close() }
            throw error
        }
    }

    /// Stores the events and quarantine rows of several requests in one transaction: see
    /// `PostgresEventStore.store`.
    public func ingest(_ work: [IngestWork]) async throws -> [[StoredOutcome]] {
        try await events.store(work)
    }

    /// The seq of the event stored under exactly this id, or nil.
    public func storedSeq(ofEventId id: String) async throws -> Int64? {
        try await events.storedSeq(ofEventId: id)
    }

    /// The stored event `seq` with its attribution, waiting up to `wait` while the daemon doing
    /// the derived work (this one or another) has not reached it: woken by its notice of the
    /// round that did, then read again from the database, which has the last word. A notice
    /// this daemon missed (its derived-work connection was down) costs at most `recheck`.
    public func attributedEvent(seq: Int64, wait: Duration) async throws -> AttributedEventRead {
        let deadline = ContinuousClock.now + wait
        while true {
            // The seq was stored (it came from a commit or from lp_event_ids): no row means
            // retention deleted it.
            guard let (event, through) = try await readAttributedEvent(seq: seq) else { return .expired }
            if through >= seq { return .attributed(event) }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .pending }
            derived.progress.advance(to: through)
            _ = await derived.progress.wait(for: seq, timeout: min(left, Self.recheck))
        }
    }

    /// How long an answer waits for a notice before it reads the watermark again.
    static let recheck: Duration = .milliseconds(250)

    /// One read of `answer/attributed_event.sql`: the event and the attribution watermark.
    func readAttributedEvent(seq: Int64) async throws -> (AttributedEvent, through: Int64)? {
        for try await row in try await client.execute(AttributedEventStatement(seq: seq), logger: logger) {
            let c = row.makeRandomAccess()
            typealias A = PostgresAttributedEventColumn
            let clickId = try c[A.clickEventId].decode(String?.self)
            let click = try clickId.map { id in
                AnsweredClick(
                    id: id, occurredAtMs: try c[A.clickOccurredAtMs].decode(Int64.self), url: try c[A.clickUrl].decode(String?.self),
                    properties: try c[A.clickProperties].decode(String?.self),
                    dimensions: LinkDimensions(
                        ref: try c[A.clickRef].decode(String?.self), campaign: try c[A.clickCampaign].decode(String?.self),
                        source: try c[A.clickSource].decode(String?.self), medium: try c[A.clickMedium].decode(String?.self)))
            }
            let event = AttributedEvent(
                seq: seq, kind: CompactEvent.kind(code: Int64(try c[A.type].decode(Int16.self))), isBot: try c[A.bot].decode(Bool.self),
                isResolve: try c[A.resolve].decode(Bool.self),
                own: LinkDimensions(
                    ref: try c[A.ref].decode(String?.self), campaign: try c[A.campaign].decode(String?.self),
                    source: try c[A.source].decode(String?.self), medium: try c[A.medium].decode(String?.self)),
                url: try c[A.url].decode(String?.self), properties: try c[A.properties].decode(String?.self),
                match: try c[A.matchType].decode(String?.self).flatMap(MatchType.init(rawValue:)), click: click,
                candidates: try c[A.candidates].decode(Int32?.self).map(Int.init), firstResolveSeq: try c[A.firstResolveSeq].decode(Int64?.self))
            return (event, try c[A.attributedThroughSeq].decode(Int64.self))
        }
        return nil
    }

    /// How far attribution and the rollups have come, for `/metrics`, `/readyz` and the admin API.
    public func derivedProgress() async throws -> PostgresDerivedProgress {
        let rows = try await client.query(queries.attribution.progress.query(), logger: logger)
        for try await (attributed, counted, stored, waiting, oldest, uncounted, oldestUncounted) in rows.decode(
            (Int64, Int64, Int64, Int64, Int64?, Int64, Int64?).self) {
            return PostgresDerivedProgress(
                storedThroughSeq: stored,
                attribution: .init(throughSeq: attributed, waitingEvents: waiting, oldestWaitingReceivedMs: oldest),
                rollups: .init(throughSeq: counted, waitingEvents: uncounted, oldestWaitingReceivedMs: oldestUncounted))
        }
        throw PostgresStoreError.notMigrated
    }

    /// Has the daemon doing the derived work (this one or another) run now, and waits at most
    /// `timeout` until it has attributed and counted every event stored when called (`POST
    /// /v1/admin/rollup`, scheduled exports, `linkpulse export`). Returns how many events were
    /// waiting; throws `PostgresStoreError.timedOut` when they were not all counted in time.
    @discardableResult
    public func countStored(timeout: Duration) async throws -> Int64 {
        let start = try await derivedProgress()
        guard start.rollups.waitingEvents > 0 else { return 0 }
        try await client.query(queries.attribution.notify.query(["payload": PostgresDerivedWork.wakeNotice]), logger: logger)
        derived.counted.advance(to: start.rollups.throughSeq)
        let deadline = ContinuousClock.now + timeout
        while true {
            _ = await derived.counted.wait(for: start.storedThroughSeq, timeout: min(deadline - ContinuousClock.now, Self.recheck * 4))
            let now = try await derivedProgress()
            if now.rollups.throughSeq >= start.storedThroughSeq { return start.rollups.waitingEvents }
            guard ContinuousClock.now < deadline else {
                throw PostgresStoreError.notCounted(after: timeout)
            }
        }
    }

    /// Up to `limit` stored answers of attribution with a seq above `afterSeq`, in seq order.
    public func attributions(afterSeq: Int64, limit: Int) async throws -> [PostgresAttributionRecord] {
        let rows = try await client.query(queries.attribution.attributionsAfter.query(["after_seq": afterSeq, "limit": Int64(limit)]), logger: logger)
        var records: [PostgresAttributionRecord] = []
        typealias C = PostgresAttributionColumn
        for try await c in rows.byName() {
            guard let match = MatchType(rawValue: try c.decode(C.matchType)) else { continue }
            records.append(PostgresAttributionRecord(
                seq: try c.decode(C.seq), match: match, clickSeq: try c.decode(C.matchedClickSeq),
                candidates: try c.decode(C.candidates, as: Int32?.self).map(Int.init)))
        }
        return records
    }

    /// Stops the derived work (freeing its lock) and the connection pool; waits until their
    /// connections are closed.
    public func close() async {
        await derived.stop()
        running.cancel()
        await running.value
    }

    /// Applies the migrations not applied yet, in one transaction under an advisory lock, and
    /// returns their names. When several daemons start at once, one applies them and the
    /// others wait for it and find nothing left to do.
    public func migrate() async throws -> [String] {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(queries.schema.lock.query(), logger: logger)
            try await connection.query(queries.schema.createMigrations.query(), logger: logger)
            var applied: Set<String> = []
            for try await name in try await connection.query(queries.schema.applied.query(), logger: logger).decode(String.self) {
                applied.insert(name)
            }
            var names: [String] = []
            for migration in queries.migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(queries.schema.record.query(["name": migration.name]), logger: logger)
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
            queries.schema.ensureEventMonths.query(["from_ms": aroundMs - 31 * dayMs, "to_ms": aroundMs + 62 * dayMs]), logger: logger)
        var created = 0
        for try await count in rows.decode(Int32.self) { created = Int(count) }
        return created
    }

    /// The id this database was given when it was created.
    public func databaseId() async throws -> String? {
        for try await id in try await client.query(queries.schema.databaseId.query(), logger: logger).decode(String.self) {
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
            try await client.query(queries.schema.keepInstallationValue.query(["key": key, "value": value]), logger: logger)
        }
        return try await installationValues(matching: Set(proposed.keys))
    }

    /// Deletes the stored installation values under `keys` (the access keys older versions
    /// kept in clear, once they are stored as keyed hashes).
    public func forgetInstallationValues(_ keys: [String]) async throws {
        for key in keys {
            try await client.query(queries.schema.forgetInstallationValue.query(["key": key]), logger: logger)
        }
    }

    /// The stored installation values under `keys` (those that have one).
    public func installationValues(matching keys: Set<String>) async throws -> [String: String] {
        var stored: [String: String] = [:]
        for try await c in try await client.query(queries.schema.installationValues.query(), logger: logger).byName() {
            let key: String = try c.decode(PostgresInstallationValueColumn.key)
            if keys.contains(key) { stored[key] = try c.decode(PostgresInstallationValueColumn.value) }
        }
        return stored
    }

    /// Whether the server answers a query now (for `/healthz`).
    public func isHealthy() async -> Bool {
        do {
            _ = try await Self.withTimeout(.seconds(5), what: "a health check") {
                try await self.client.query(self.queries.schema.ping.query(), logger: self.logger)
            }
            return true
        } catch {
            return false
        }
    }

    /// Runs `body`, failing with `PostgresStoreError.timedOut` when it takes longer than
    /// `limit`. At the limit `body` is cancelled and not waited for (a connection attempt may
    /// take a while to notice).
    static func withTimeout<T: Sendable>(_ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = TimeoutRace<T>()
        return try await withCheckedThrowingContinuation { continuation in
            race.start(
                continuation,
                work: Task { do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) } },
                timer: Task {
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    race.finish(.failure(PostgresStoreError.timedOut(what: what, after: limit)))
                })
        }
    }
}

/// The two sides of `PostgresStore.withTimeout`: whichever finishes first answers, and both
/// tasks are then cancelled.
private final class TimeoutRace<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, result: Result<T, any Error>?, tasks: [Task<Void, Never>])>((nil, nil, []))

    func start(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            state.tasks = [work, timer]
            guard let result = state.result else {
                state.continuation = continuation
                return nil
            }
            return result
        }
        if let early {
            continuation.resume(with: early)
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard state.result == nil else { return (nil, []) }
            state.result = result
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: result)
        for task in tasks { task.cancel() }
    }
}

/// `answer/attributed_event.sql` as a prepared statement: each pooled connection prepares it
/// once and keeps its plan. Planned afresh each time, it cost more than all the rest of a
/// resolve on the server (it reads two rows of the partitioned events table; measured: 0.35 ms
/// of planning a call, two calls a resolve).
struct AttributedEventStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static let name = "linkpulse_attributed_event"
    static let statement = PostgresStatement(
        named: (try? SQLQueries.text("postgres/answer/attributed_event.sql")) ?? "SELECT 'answer/attributed_event.sql is missing'")
    static let sql = statement.sql
    let seq: Int64

    func makeBindings() throws -> PostgresBindings {
        try Self.statement.query(["seq": seq]).binds
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// How far the derived work has come on PostgreSQL.
public struct PostgresDerivedProgress: Sendable, Equatable {
    /// The seq of the newest stored event.
    public var storedThroughSeq: Int64
    /// Attribution, and the rollups (what stats count; never ahead of attribution).
    public var attribution: Stage
    public var rollups: Stage

    /// One step of the derived work.
    public struct Stage: Sendable, Equatable {
        /// Every event with a seq up to this one is done.
        public var throughSeq: Int64
        /// Stored events not done yet (counted up to 1,000,000).
        public var waitingEvents: Int64
        /// When the oldest of them was received, UTC ms; nil when none waits.
        public var oldestWaitingReceivedMs: Int64?

        /// How long the oldest waiting event has waited at `nowMs`, seconds (0 when none waits).
        public func lagSeconds(nowMs: Int64) -> Double {
            oldestWaitingReceivedMs.map { Double(max(0, nowMs - $0)) / 1000 } ?? 0
        }
    }
}

/// What went wrong talking to PostgreSQL, in words an operator can act on.
public enum PostgresStoreError: Error, CustomStringConvertible {
    case timedOut(what: String, after: Duration)
    case notMigrated
    /// The daemon doing the derived work did not count what was stored in time.
    case notCounted(after: Duration)
    /// A statement was given values for names it lacks, or none for names it has (or a name
    /// twice): a mistake in the code that runs it.
    case parameters(missing: [String], unknown: [String], statement: String)

    public var description: String {
        switch self {
        case .timedOut(let what, let after):
            "gave up \(what) after \(after.components.seconds) s: is the server running and the URL right?"
        case .notCounted(let after):
            "the daemon doing the derived work did not count the stored events within \(after.components.seconds) s: is one running (every daemon on the database takes its turn), or is it far behind (GET /v1/admin/rollup)?"
        case .notMigrated:
            "the database lacks Linkpulse's tables: run linkpulse migrate --database …"
        case .parameters(let missing, let unknown, let statement):
            "a statement was bound wrongly (missing: \(missing), unknown or repeated: \(unknown)): \(statement)"
        }
    }
}
