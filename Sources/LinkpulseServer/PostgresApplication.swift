import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// The daemon on PostgreSQL (`serve --database postgres://…`): the same API as on SQLite.
///
/// `/v1/events` and the Segment-compatible endpoints (the same validation, quarantine,
/// exactly-once and answers as on SQLite, committed in PostgreSQL by one group-committing writer
/// per daemon), `POST /v1/resolve` (answered within milliseconds: the commit of a resolve wakes
/// the daemon doing attribution), the stats API, the CSV exports and the dashboard (counted from
/// the attributed raw events: `PostgresStatsReader`), `GET /v1/attributions/{id}`, the admin
/// endpoints, `/healthz`, `/readyz`, `/metrics`, `/openapi.json`. Any number of daemons may
/// share the database: an id is stored once whichever daemon receives it, and the keys and the
/// hashing secret are the database's, so every daemon takes the same keys and gives a visitor
/// the same id. Attribution runs on whichever daemon holds the derived-work lock
/// (`AsyncTickJob.derivedWork`, every `rollupInterval`, and at once for a resolve), and so do
/// the scheduled exports, into that daemon's
/// `--export-dir`, and raw-event retention (`--retention-days`, between its rounds).
public func buildPostgresApplication(
    store: PostgresStore, secrets: InstallationSecrets, settings: ServerSettings,
    queue: IngestQueue, metrics: IngestMetrics = IngestMetrics(), prometheus: PrometheusCollectorRegistry?,
    now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
    logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = Router(context: LinkpulseRequestContext.self)
    let ingest = IngestController(
        queue: queue, validator: EventValidator(hasher: KeyedHasher(secret: secrets.hashSecretBytes)), ingestKey: secrets.ingestKey,
        trustProxy: settings.trustProxy, metrics: metrics, storage: StorageGuard(), now: now)
    ingest.addRoutes(to: router)
    SegmentController(ingest: ingest, mapping: settings.segmentMapping).addRoutes(to: router)
    ResolveController(ingest: ingest, answers: store, rate: settings.resolveRate, burst: settings.resolveBurst).addRoutes(to: router)
    let progress = DerivedFreshness(store: store, now: now)
    PostgresHealthController(store: store, freshness: progress, maxLag: settings.maxRollupLag).addRoutes(to: router)
    let stats = StatsService(reader: store.stats, defaultZone: settings.defaultTimeZone, now: now)
    StatsController(stats: stats, readKey: secrets.readKey).addRoutes(to: router)
    let exporter = CSVExporter(stats: stats, reader: store.stats)
    ExportController(exporter: exporter, stats: stats, ledger: store.exportLedger, directory: settings.exportDirectory, readKey: secrets.readKey)
        .addRoutes(to: router)
    AttributionController(answers: store, readKey: secrets.readKey, wait: .seconds(2)).addRoutes(to: router)
    PostgresAdminController(store: store, freshness: progress, readKey: secrets.readKey).addRoutes(to: router)
    QuarantineController(readKey: secrets.readKey) { [events = store.events] in try await events.recentQuarantine(limit: $0) }.addRoutes(to: router)
    DashboardController(assets: settings.dashboardsDirectory.flatMap { try? DashboardAssets.load(from: $0) }).addRoutes(to: router)
    OpenAPIController().addRoutes(to: router)
    if let prometheus { MetricsController(registry: prometheus, refresh: { _ = try? await progress.read() }).addRoutes(to: router) }
    router.add(middleware: MethodNotAllowedMiddleware())
    if settings.rawEventRetention.deletes {
        // Never past a period a scheduled raw-event export has still to write.
        let eventJobs = settings.exportJobs.filter(\.exportsRawEvents).map(\.name)
        store.derived.retainRawEvents(every: settings.retentionInterval) { [ledger = store.exportLedger] in
            var pending: Int64?
            for job in eventJobs {
                if let end = try await ledger.lastExportedPeriod(job: job)?.endMs { pending = min(pending ?? end, end) }
            }
            return settings.rawEventRetention.horizon(nowMs: now(), pendingExportFromMs: pending)
        }
    }
    let derivedWork = AsyncTickJob.derivedWork(store.derived, logger: logger)
    store.derived.whenWoken { derivedWork.nudge() }
    var services: [any Service] = [
        IngestWriterService(queue: queue, database: store, metrics: metrics, logger: logger),
        TimerService(job: AsyncTickJob.eventMonths(store, now: now, logger: logger), every: .seconds(3600), logger: logger),
        TimerService(job: derivedWork, every: settings.rollupInterval, logger: logger),
        TimerService(job: MemoryWatchJob(database: nil), every: settings.diskWatchInterval, logger: logger),
    ]
    if settings.quarantineRetentionDays > 0 {
        services.append(TimerService(
            job: AsyncTickJob.quarantineRetention(store, days: settings.quarantineRetentionDays, now: now, logger: logger),
            every: settings.retentionInterval, logger: logger))
    }
    if !settings.exportJobs.isEmpty {
        // Every daemon checks; the one doing the derived work writes (see ExportScheduler).
        let scheduler = ExportScheduler(
            jobs: settings.exportJobs, directory: settings.exportDirectory, exporter: exporter, ledger: store.exportLedger,
            bringStatsUpToDate: { try await store.countStored(timeout: .seconds(300)) },
            runsHere: { store.derived.isLeading }, now: now, logger: logger)
        ExportFiles.removeStalePartials(in: settings.exportDirectory)
        for job in settings.exportJobs {
            services.append(TimerService(job: ScheduledExportJob(job: job.name, scheduler: scheduler), every: settings.exportCheckInterval, logger: logger))
        }
    }
    return Application(
        router: router,
        server: ConnectionReadBuffers.standard.http1(),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "linkpulse"),
        services: services,
        onServerRunning: { channel in
            // Its connection hears the derived-work notices from now on, not from the first tick.
            derivedWork.nudge()
            let port = channel.localAddress?.port ?? settings.port
            logger.notice("listening", metadata: ["host": "\(settings.host)", "port": "\(port)", "database": "\(store.location)"])
            await onServerRunning(port)
        },
        logger: logger)
}

extension InstallationSecrets {
    /// The installation's keys and hashing secret as the PostgreSQL database holds them: the
    /// first daemon to start stores the ones it generated, every later one takes those. Keys
    /// given by flag or environment take precedence for this daemon and are not stored.
    public static func loadOrCreate(store: PostgresStore, ingestKey: String?, readKey: String?, logger: Logger) async throws -> InstallationSecrets {
        let generated = InstallationSecrets(
            ingestKey: "lpi_" + randomHex(bytes: 16), readKey: "lpr_" + randomHex(bytes: 16), hashSecret: randomHex(bytes: 32))
        let proposed = generated.storedValues
        guard var stored = InstallationSecrets(storedValues: try await store.installationValues(proposing: proposed)) else {
            throw CocoaError(.coderValueNotFound)
        }
        if stored == generated {
            logger.notice(
                "generated access keys; they are kept in the database",
                metadata: [
                    "ingest_key": .string(ingestKey == nil ? stored.ingestKey : "(given)"),
                    "read_key": .string(readKey == nil ? stored.readKey : "(given)"),
                ])
        }
        if let ingestKey, !ingestKey.isEmpty { stored.ingestKey = ingestKey }
        if let readKey, !readKey.isEmpty { stored.readKey = readKey }
        return stored
    }

    /// The keys and the secret as the PostgreSQL store keeps them (`lp_installation`), under
    /// the names `secrets.json` gives them.
    public var storedValues: [String: String] {
        [CodingKeys.ingestKey.rawValue: ingestKey, CodingKeys.readKey.rawValue: readKey, CodingKeys.hashSecret.rawValue: hashSecret]
    }

    /// The secrets `storedValues` gave, or nil when one is missing.
    public init?(storedValues values: [String: String]) {
        guard let ingest = values[CodingKeys.ingestKey.rawValue], let read = values[CodingKeys.readKey.rawValue],
              let secret = values[CodingKeys.hashSecret.rawValue]
        else { return nil }
        self.init(ingestKey: ingest, readKey: read, hashSecret: secret)
    }
}

/// How far the derived work is behind the stored events on PostgreSQL, as `/metrics` gauges read
/// at each scrape, under the SQLite daemon's names: `linkpulse_rollup_lag_seconds` (how long the
/// oldest event the stats do not count yet has waited, 0 when none),
/// `linkpulse_rollup_backlog_events`, `linkpulse_attribution_lag_seconds` and
/// `linkpulse_attribution_backlog_events`; and the admin API's status.
struct DerivedFreshness: Sendable {
    let store: PostgresStore
    let now: @Sendable () -> Int64
    let lag = Gauge(label: "linkpulse_rollup_lag_seconds")
    let backlog = Gauge(label: "linkpulse_rollup_backlog_events")
    let attributionLag = Gauge(label: "linkpulse_attribution_lag_seconds")
    let attributionBacklog = Gauge(label: "linkpulse_attribution_backlog_events")

    /// Reads the progress, updates the gauges and returns it as the admin API shows it.
    @discardableResult
    func read() async throws -> RollupFreshness.Status {
        let p = try await store.derivedProgress()
        let nowMs = now()
        let status = RollupFreshness.Status(
            storedThroughSeq: p.storedThroughSeq, countedThroughSeq: p.rollups.throughSeq, backlogEvents: p.rollups.waitingEvents,
            lagSeconds: p.rollups.lagSeconds(nowMs: nowMs), attributedThroughSeq: p.attribution.throughSeq,
            attributionBacklogEvents: p.attribution.waitingEvents, ingestPacing: nil)
        lag.record(status.lagSeconds)
        backlog.record(Double(status.backlogEvents))
        attributionLag.record(p.attribution.lagSeconds(nowMs: nowMs))
        attributionBacklog.record(Double(status.attributionBacklogEvents))
        return status
    }
}

/// `GET /healthz` and `GET /readyz` of a daemon on PostgreSQL (the same bodies as on SQLite):
/// healthy while the database answers a query; ready when it does and the stats (counted by
/// whichever daemon does the derived work) are less than `maxLag` (`--max-rollup-lag`) behind,
/// else 503 with `Retry-After`.
struct PostgresHealthController: Sendable {
    let store: PostgresStore
    let freshness: DerivedFreshness
    let maxLag: Duration

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("healthz") { _, _ -> Response in
            await store.isHealthy() ? .json(["status": "ok"], status: .ok) : .databaseUnavailable
        }
        router.get("readyz") { _, _ -> Response in
            let answers = await store.isHealthy()
            var checks: [String: HealthController.Readiness.Check] = [
                "database": .init(ok: answers, detail: answers ? "PostgreSQL answers" : "PostgreSQL does not answer a query"),
            ]
            let limit = Double(maxLag.nanoseconds) / 1e9
            if let status = try? await freshness.read() {
                checks["rollup_lag"] = .init(
                    ok: status.lagSeconds <= limit,
                    detail: "\(status.lagSeconds) s behind (\(status.backlogEvents) events waiting), at most \(limit) s (--max-rollup-lag)")
            } else {
                checks["rollup_lag"] = .init(ok: false, detail: "the progress of the rollups could not be read")
            }
            let ready = checks.values.allSatisfy(\.ok)
            let readiness = HealthController.Readiness(status: ready ? "ready" : "not_ready", checks: checks)
            return .json(readiness, status: ready ? .ok : .serviceUnavailable, headers: ready ? [:] : [.retryAfter: "5"])
        }
    }
}

/// `POST /v1/admin/rollup` and `GET /v1/admin/rollup` (read key) of a daemon on PostgreSQL, in
/// the words of the SQLite daemon's. The POST has the daemon doing the derived work (whichever
/// it is) run now and answers once every event stored when it was called is counted
/// (`processed`: how many were waiting), or 503 when that takes longer than 60 s.
struct PostgresAdminController: Sendable {
    let store: PostgresStore
    let freshness: DerivedFreshness
    let readKey: String

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.post("v1/admin/rollup") { request, _ -> Response in
            guard AccessKey.check(request, expected: readKey) else { return .unauthorizedRead }
            do {
                let waiting = try await store.countStored(timeout: .seconds(60))
                return .json(AdminController.RollupResponse(processed: Int(waiting)), status: .ok)
            } catch {
                return .error(.serviceUnavailable, code: "rollup_failed", message: "The stored events could not all be counted yet (\(error)); try again shortly.", headers: [.retryAfter: "5"])
            }
        }
        router.get("v1/admin/rollup") { request, _ -> Response in
            guard AccessKey.check(request, expected: readKey) else { return .unauthorizedRead }
            guard let status = try? await freshness.read() else { return .databaseUnavailable }
            return .json(status, status: .ok)
        }
    }
}

/// A timer job whose work is `async` (the PostgreSQL store's): each tick starts it unless the
/// previous run is still going; `nudge` starts it now, or once more right after the run under
/// way; `finish` waits for the one under way.
struct AsyncTickJob: TimerJob {
    let name: String
    let work: @Sendable () async -> Void
    private let running = MutexBox<(task: Task<Void, Never>?, again: Bool)>((nil, false))

    init(name: String, work: @escaping @Sendable () async -> Void) {
        self.name = name
        self.work = work
    }

    func run() throws {
        start(again: false)
    }

    /// Runs the work now, or right after the run under way when there is one (a run asked for
    /// while one goes may have come too late for it: an event it had already read past).
    func nudge() {
        start(again: true)
    }

    private func start(again: Bool) {
        running.update { state in
            guard state.task == nil else {
                state.again = state.again || again
                return
            }
            state.task = Task { [work, running] in
                while true {
                    await work()
                    let more = running.update { state -> Bool in
                        guard state.again else {
                            state.task = nil
                            return false
                        }
                        state.again = false
                        return true
                    }
                    if !more { return }
                }
            }
        }
    }

    func finish() async {
        await running.value.task?.value
    }
}

extension AsyncTickJob {
    /// At each rollup interval (1 s by default on PostgreSQL), and when nudged: this daemon's
    /// turn at the derived work (attribution). It leads when it holds the lock, else it stands
    /// by and takes over when the leader's session ends.
    static func derivedWork(_ derived: PostgresDerivedWork, logger: Logger) -> AsyncTickJob {
        AsyncTickJob(name: "derived-work") {
            do {
                try await derived.tick()
            } catch {
                logger.warning("derived work failed; its connection is closed and it will try again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Every retention interval, on the daemon doing the derived work: the quarantined events
    /// older than `days` go (`--quarantine-retention-days`).
    static func quarantineRetention(_ store: PostgresStore, days: Int, now: @escaping @Sendable () -> Int64, logger: Logger) -> AsyncTickJob {
        AsyncTickJob(name: "quarantine-retention") {
            guard store.derived.isLeading else { return }
            do {
                let deleted = try await store.events.deleteQuarantine(receivedBefore: now() - Int64(days) * TimeGrain.dayMs)
                if deleted > 0 { logger.info("deleted old quarantined events", metadata: ["count": "\(deleted)"]) }
            } catch {
                logger.warning("could not delete old quarantined events", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Once an hour: the month partitions of raw events exist from last month to two months ahead.
    static func eventMonths(_ store: PostgresStore, now: @escaping @Sendable () -> Int64, logger: Logger) -> AsyncTickJob {
        AsyncTickJob(name: "event-months") {
            do {
                let created = try await store.ensureEventMonths(aroundMs: now())
                if created > 0 { logger.info("created month partitions of raw events", metadata: ["count": "\(created)"]) }
            } catch {
                logger.warning("could not create month partitions of raw events", metadata: ["error": "\(error)"])
            }
        }
    }
}
