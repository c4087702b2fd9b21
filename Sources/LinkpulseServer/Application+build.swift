import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// Settings of `linkpulse serve` (flags and `LINKPULSE_…` variables map onto these).
public struct ServerSettings: Sendable {
    public var host: String
    public var port: Int
    public var trustProxy: Bool
    /// Most events that may wait for the writer before ingest answers 503.
    public var queueCapacity: Int
    /// How often the id index job looks at the writer's in-memory id tail.
    public var idIndexInterval: Duration
    /// How many new ids the writer holds in memory before they are merged into the id index.
    public var idMergeThreshold: Int
    /// How often the rollup job runs.
    public var rollupInterval: Duration
    /// The IANA zone stats use when a request names none.
    public var defaultTimeZone: String
    /// Where scheduled exports are written (and served from by `/v1/exports/{name}`).
    public var exportDirectory: URL
    /// The scheduled export jobs (from the exports config file); none by default.
    public var exportJobs: [ExportJob]
    /// How often each export job's timer looks for a due period.
    public var exportCheckInterval: Duration
    /// The dashboard's static files (see `DashboardAssets.locate`); nil serves none.
    public var dashboardsDirectory: URL?
    /// How the Segment-compatible endpoints map messages onto link events.
    public var segmentMapping: SegmentMapping
    /// `/v1/resolve` calls a second each client address may make (0: no limit), and at once.
    public var resolveRate: Double
    public var resolveBurst: Int
    /// How far behind the stored events the stats may be before `/readyz` says not ready.
    public var maxRollupLag: Duration
    /// How often the disk watch reads file sizes and free space (see `DiskWatchJob`).
    public var diskWatchInterval: Duration
    /// Days a quarantined body is kept (0: forever), and how often old ones are looked for.
    public var quarantineRetentionDays: Int
    public var retentionInterval: Duration
    /// How long raw events are kept (`--retention-days`; by default forever).
    public var rawEventRetention: RawEventRetention
    /// When old raw events are sealed into compressed blocks (`--seal-after-days`), and how
    /// often the seal job looks for them.
    public var sealAge: SealAge
    public var sealInterval: Duration
    /// When the ingest writer waits for the derived work (`--ingest-pacing`).
    public var ingestPacing: IngestPacingLimit
    /// How often the daemon writes its keys' last uses and looks for keys created or revoked
    /// elsewhere (another daemon, `linkpulse keys`).
    public var keyRefreshInterval: Duration
    /// The link domains and apps hosted links are served for (`--links-config`); nil: hosted
    /// links are off.
    public var links: LinksConfig?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, trustProxy: Bool = false,
        queueCapacity: Int = 20_000, idIndexInterval: Duration = .milliseconds(500), idMergeThreshold: Int = 100_000,
        rollupInterval: Duration = .seconds(10), defaultTimeZone: String = "UTC",
        exportDirectory: URL = URL(fileURLWithPath: "data/exports", isDirectory: true), exportJobs: [ExportJob] = [],
        exportCheckInterval: Duration = .seconds(15), dashboardsDirectory: URL? = nil,
        segmentMapping: SegmentMapping = SegmentMapping(), resolveRate: Double = 5, resolveBurst: Int = 50,
        maxRollupLag: Duration = .seconds(300), diskWatchInterval: Duration = .seconds(1),
        quarantineRetentionDays: Int = 30, retentionInterval: Duration = .seconds(60),
        rawEventRetention: RawEventRetention = RawEventRetention(days: 0), ingestPacing: IngestPacingLimit = .standard,
        sealAge: SealAge = .standard, sealInterval: Duration = .seconds(10), keyRefreshInterval: Duration = .seconds(1),
        links: LinksConfig? = nil
    ) {
        self.links = links
        self.keyRefreshInterval = keyRefreshInterval
        self.sealAge = sealAge
        self.sealInterval = sealInterval
        self.ingestPacing = ingestPacing
        self.rawEventRetention = rawEventRetention
        self.quarantineRetentionDays = quarantineRetentionDays
        self.retentionInterval = retentionInterval
        self.maxRollupLag = maxRollupLag
        self.diskWatchInterval = diskWatchInterval
        self.segmentMapping = segmentMapping
        self.resolveRate = resolveRate
        self.resolveBurst = resolveBurst
        self.dashboardsDirectory = dashboardsDirectory
        self.exportDirectory = exportDirectory
        self.exportJobs = exportJobs
        self.exportCheckInterval = exportCheckInterval
        self.rollupInterval = rollupInterval
        self.defaultTimeZone = defaultTimeZone
        self.idMergeThreshold = idMergeThreshold
        self.host = host
        self.port = port
        self.trustProxy = trustProxy
        self.queueCapacity = queueCapacity
        self.idIndexInterval = idIndexInterval
    }
}

/// The stats lag past which sustained ingest is paced (`--ingest-pacing`; see `IngestPacing`).
public enum IngestPacingLimit: Sendable, Equatable {
    /// One and a half rollup intervals (`auto`, the default).
    case standard
    /// Never pace: ingest at full speed, the stats catch up after the load.
    case off
    /// A lag of its own.
    case lag(Duration)

    /// The limit in ms for a rollup interval; nil when off.
    func lagLimitMs(rollupInterval: Duration) -> Int64? {
        switch self {
        case .standard: IngestPacing.standardLagLimitMs(rollupIntervalMs: rollupInterval.nanoseconds / 1_000_000)
        case .off: nil
        case .lag(let lag): max(lag.nanoseconds / 1_000_000, 1)
        }
    }
}

/// Everything the application is wired from. The executable builds it from real parts; tests
/// build it the same way over a temporary data directory.
public struct AppDependencies: Sendable {
    public var database: AppDatabase
    public var secrets: InstallationSecrets
    /// The keys the daemon accepts (stored ones and those given by flag).
    public var keys: AccessKeys
    public var queue: IngestQueue
    public var metrics: IngestMetrics
    /// Free disk space as the disk watch last saw it, and the floor ingest keeps.
    public var storage: StorageGuard
    /// Where `/metrics` reads from; nil serves no `/metrics` route.
    public var prometheus: PrometheusCollectorRegistry?
    /// The current time in UTC milliseconds.
    public var now: @Sendable () -> Int64
    /// What runs the timer jobs: nil for Dispatch timers, a test's ticks otherwise.
    public var ticks: ManualTicks?
    public var logger: Logger

    /// - Parameter configuredKeys: keys given by flag, by kind (used when `keys` is nil, which
    ///   makes the table over the database's stored keys).
    public init(
        database: AppDatabase, secrets: InstallationSecrets, keys: AccessKeys? = nil, configuredKeys: [AccessKind: String] = [:],
        queue: IngestQueue = IngestQueue(),
        metrics: IngestMetrics = IngestMetrics(), storage: StorageGuard = StorageGuard(),
        prometheus: PrometheusCollectorRegistry? = nil,
        now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        ticks: ManualTicks? = nil,
        logger: Logger = Logger(label: "linkpulse")
    ) {
        self.logger = logger
        self.ticks = ticks
        self.database = database
        self.secrets = secrets
        self.keys = keys ?? AccessKeys(store: database.accessKeys, hashSecret: secrets.hashSecretBytes, configured: configuredKeys, now: now)
        self.queue = queue
        self.metrics = metrics
        self.storage = storage
        self.prometheus = prometheus
        self.now = now
    }
}

/// The router with every route of the daemon.
///
/// - Parameter pacer: the ingest writer's pacer, when pacing is on: `/v1/admin/rollup` reports it.
public func buildRouter(_ deps: AppDependencies, settings: ServerSettings, pacer: IngestPacer? = nil) -> Router<LinkpulseRequestContext> {
    let ingest = IngestController(
        queue: deps.queue,
        validator: EventValidator(hasher: KeyedHasher(secret: deps.secrets.hashSecretBytes), linkDomains: Set(settings.links?.domains ?? [])),
        trustProxy: settings.trustProxy,
        metrics: deps.metrics,
        storage: deps.storage,
        now: deps.now
    )
    let answers = StoredAttributions(events: deps.database.events, attribution: deps.database.attribution)
    let freshness = RollupFreshness(rollups: deps.database.rollups, pacer: pacer, progressAtOpen: deps.database.progressAtOpen, now: deps.now)
    let stats = StatsService(
        reader: deps.database.stats, defaultZone: settings.defaultTimeZone, now: deps.now, freshness: { try? await freshness.read().freshness })
    let routes = DaemonRoutes(
        ingest: ingest, keys: deps.keys, answers: answers, attributionWait: .seconds(1),
        stats: stats, exports: CSVExporter(stats: stats, reader: deps.database.stats), exportLedger: deps.database.exportLedger,
        recentQuarantine: { [events = deps.database.events] in try await events.recentQuarantine(limit: $0) },
        links: deps.database.links, logger: deps.logger,
        refreshGauges: { _ = try? await freshness.read() })
    return routes.router(settings: settings, prometheus: deps.prometheus) { router, gates in
        HealthController(events: deps.database.events, storage: deps.storage, freshness: freshness, maxRollupLag: settings.maxRollupLag)
            .addRoutes(to: router)
        AdminController(database: deps.database, rollup: RollupJob(rollups: deps.database.rollups, logger: deps.logger), freshness: freshness)
            .addRoutes(to: router.group().add(middleware: gates.read))
    }
}

/// The routes both backends serve alike, each group behind the key middleware of the kind it
/// needs; a backend adds its own health and admin routes through `router`'s closure.
struct DaemonRoutes: Sendable {
    let ingest: IngestController
    let keys: AccessKeys
    let answers: any AttributionAnswers
    let attributionWait: Duration
    let stats: StatsService
    let exports: CSVExporter
    let exportLedger: any ExportRecords
    let recentQuarantine: @Sendable (Int) async throws -> [QuarantineRecord]
    let links: any LinkRecords
    let logger: Logger
    /// Brings the gauges read from the store up to date before a `/metrics` scrape.
    let refreshGauges: @Sendable () async -> Void

    func router(
        settings: ServerSettings, prometheus: PrometheusCollectorRegistry?,
        backendRoutes: (Router<LinkpulseRequestContext>, AccessGates) -> Void
    ) -> Router<LinkpulseRequestContext> {
        let router = Router(context: LinkpulseRequestContext.self)
        let gates = AccessGates(keys: keys)
        // Ingest: public keys that ship inside apps (CORS outside the key check).
        ingest.addRoutes(to: router, access: gates.ingest)
        SegmentController(ingest: ingest, mapping: settings.segmentMapping).addRoutes(to: router, keys: keys)
        ResolveController(ingest: ingest, answers: answers, links: links, rate: settings.resolveRate, burst: settings.resolveBurst)
            .addRoutes(to: router, access: gates.ingest)
        // Read: stats, exports, attributions, the quarantine.
        let read = router.group().add(middleware: gates.read)
        AttributionController(answers: answers, wait: attributionWait).addRoutes(to: read)
        QuarantineController(recent: recentQuarantine).addRoutes(to: read)
        StatsController(stats: stats).addRoutes(to: read)
        ExportController(exporter: exports, stats: stats, ledger: exportLedger, directory: settings.exportDirectory).addRoutes(to: read)
        // Admin: the keys; and the key a request carries, for any kind.
        KeysController(keys: keys).addRoutes(admin: router.group().add(middleware: gates.admin), anyKey: router.group().add(middleware: gates.anyKey))
        // Links: read with a read key, managed with an admin key; served on the link domains.
        LinksController(links: links, config: settings.links, stats: stats, now: ingest.now)
            .addRoutes(read: router.group().add(middleware: gates.read), admin: router.group().add(middleware: gates.admin))
        if let config = settings.links {
            HostedLinkController(links: links, config: config, ingest: ingest, logger: logger).addRoutes(to: router)
        }
        backendRoutes(router, gates)
        // Public: the dashboard's files, the API's description, metrics for a scraper.
        DashboardController(assets: settings.dashboardsDirectory.flatMap { try? DashboardAssets.load(from: $0) }).addRoutes(to: router)
        OpenAPIController().addRoutes(to: router)
        if let prometheus {
            MetricsController(registry: prometheus, refresh: refreshGauges).addRoutes(to: router)
        }
        router.add(middleware: MethodNotAllowedMiddleware())
        return router
    }
}

/// The whole daemon: HTTP plus its background services (the ingest writer, the id index job).
/// On SIGTERM/SIGINT the HTTP server stops accepting and finishes in-flight requests first,
/// then the timers stop, then the writer drains its queue.
public func buildApplication(
    _ deps: AppDependencies, settings: ServerSettings, logger: Logger,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let intervalMs = settings.rollupInterval.nanoseconds / 1_000_000
    let pacer = settings.ingestPacing.lagLimitMs(rollupInterval: settings.rollupInterval).map {
        IngestPacer(pacing: IngestPacing(lagLimitMs: $0, rateWindowMs: IngestPacing.standardRateWindowMs(rollupIntervalMs: intervalMs)))
    }
    deps.database.attribution.listRecentClicksSoon()
    let timers = Timers(ticks: deps.ticks, logger: logger)
    var services: [any Service] = [
        IngestWriterService(queue: deps.queue, database: deps.database, metrics: deps.metrics, pacer: pacer, logger: logger),
        timers.every(settings.idIndexInterval, IdIndexJob(events: deps.database.events, threshold: settings.idMergeThreshold, logger: logger)),
        timers.every(.seconds(1), CheckpointJob(database: deps.database)),
        timers.every(settings.diskWatchInterval, DiskWatchJob(events: deps.database.events, storage: deps.storage, logger: logger)),
        timers.every(settings.diskWatchInterval, MemoryWatchJob(database: deps.database)),
        timers.every(settings.retentionInterval, RetentionJob(
            database: deps.database, quarantineDays: settings.quarantineRetentionDays, rawEvents: settings.rawEventRetention,
            rawEventExports: settings.exportJobs.filter(\.exportsRawEvents).map(\.name),
            now: deps.now, logger: logger)),
        timers.every(settings.rollupInterval, RollupJob(rollups: deps.database.rollups, budget: settings.rollupInterval, logger: logger)),
        timers.every(settings.sealInterval, SealJob(database: deps.database, age: settings.sealAge, now: deps.now, logger: logger)),
        timers.every(settings.keyRefreshInterval, AsyncTickJob.accessKeys(deps.keys, logger: logger)),
    ]
    if let pacer {
        services.append(timers.every(
            IngestPacingJob.interval, IngestPacingJob(rollups: deps.database.rollups, pacer: pacer, now: deps.now, logger: logger)))
    }
    if !settings.exportJobs.isEmpty {
        let scheduler = exportScheduler(deps, settings: settings, logger: logger)
        ExportFiles.removeStalePartials(in: settings.exportDirectory)
        for job in settings.exportJobs {
            services.append(timers.every(settings.exportCheckInterval, ScheduledExportJob(job: job.name, scheduler: scheduler)))
        }
    }
    return Application(
        router: buildRouter(deps, settings: settings, pacer: pacer),
        server: ConnectionReadBuffers.standard.http1(),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "linkpulse"),
        services: services,
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? settings.port
            logger.notice("listening", metadata: ["host": "\(settings.host)", "port": "\(port)"])
            await onServerRunning(port)
        },
        logger: logger
    )
}

/// The scheduler of the configured export jobs, reading through the same stats service as the API.
public func exportScheduler(_ deps: AppDependencies, settings: ServerSettings, logger: Logger) -> ExportScheduler {
    let stats = StatsService(reader: deps.database.stats, defaultZone: settings.defaultTimeZone, now: deps.now)
    return ExportScheduler(
        jobs: settings.exportJobs, directory: settings.exportDirectory,
        exporter: CSVExporter(stats: stats, reader: deps.database.stats), ledger: deps.database.exportLedger,
        bringStatsUpToDate: { [rollups = deps.database.rollups] in _ = try await rollups.rollUpStoredSoFar() }, now: deps.now, logger: logger)
}

/// `GET /healthz`: the process is alive (200 `{"status":"ok"}` once the database answers a
/// read, else 503). `GET /readyz`: it should be sent traffic: the events database answers and
/// is writable (its file, and the last commit did not fail), the disk is above
/// `--min-free-disk`, and the stats are less than `--max-rollup-lag` behind. 200
/// `{"status":"ready","checks":{…}}`, else 503 `{"status":"not_ready",…}` with `Retry-After`;
/// each check says `ok` and what it saw. Neither needs a key (load balancers and systemd
/// probe them); neither says more than the state of the process.
struct HealthController: Sendable {
    let events: EventStore
    let storage: StorageGuard
    let freshness: RollupFreshness
    let maxRollupLag: Duration

    struct Readiness: Codable, Equatable {
        struct Check: Codable, Equatable {
            var ok: Bool
            var detail: String
        }
        var status: String
        var checks: [String: Check]
    }

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("healthz") { _, _ -> Response in
            if await events.isHealthy() {
                return .json(["status": "ok"], status: .ok)
            }
            return .databaseUnavailable
        }
        router.get("readyz") { _, _ -> Response in
            let readiness = await readiness()
            let ready = readiness.status == "ready"
            return .json(readiness, status: ready ? .ok : .serviceUnavailable, headers: ready ? [:] : [.retryAfter: "5"])
        }
    }

    func readiness() async -> Readiness {
        var checks: [String: Readiness.Check] = [:]
        let answers = await events.isHealthy()
        let (writable, failing) = (events.eventsFileWritable, events.ingestFailing)
        checks["database"] = .init(
            ok: answers && writable && !failing,
            detail: !answers ? "the events database does not answer a read"
                : !writable ? "the events database file is not writable"
                : failing ? "the last commit failed (see the log)" : "answers and takes commits")
        if let disk = storage.reading {
            checks["disk"] = .init(
                ok: !disk.low, detail: "\(disk.freeBytes) bytes free, \(disk.requiredBytes) required (--min-free-disk)")
        } else {
            checks["disk"] = .init(ok: true, detail: "not measured yet")
        }
        let limit = Double(maxRollupLag.nanoseconds) / 1e9
        if let status = try? await freshness.read() {
            checks["rollup_lag"] = .init(
                ok: status.lagSeconds <= limit, detail: "\(status.lagSeconds) s behind, at most \(limit) s (--max-rollup-lag)")
            checks["recount"] = .recount(status.recountRemainingEvents)
        } else {
            checks["rollup_lag"] = .init(ok: false, detail: "the rollup progress could not be read")
        }
        return Readiness(status: checks.values.allSatisfy(\.ok) ? "ready" : "not_ready", checks: checks)
    }
}

/// Operator endpoints, behind a read key middleware. `GET /v1/admin/quarantine?limit=N` lists the
/// newest rejected events with their reasons and (scrubbed) raw text.
struct AdminController: Sendable {
    let database: AppDatabase
    let rollup: RollupJob
    let freshness: RollupFreshness

    struct RollupResponse: Codable {
        var processed: Int
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        // Runs a rollup pass now, off the cooperative threads, and answers when it is done.
        router.post("v1/admin/rollup") { request, _ -> Response in
            let job = rollup
            do {
                let processed = try await job.runNow()
                return .json(RollupResponse(processed: processed), status: .ok)
            } catch {
                return .error(.serviceUnavailable, code: "rollup_failed", message: "The rollup pass failed (\(error)); try again shortly.", headers: [.retryAfter: "5"])
            }
        }
        // How far the stats are behind the stored events (also in /metrics).
        router.get("v1/admin/rollup") { request, _ -> Response in
            guard let status = try? await freshness.read() else { return .databaseUnavailable }
            return .json(status, status: .ok)
        }
    }
}

/// `GET /v1/admin/quarantine?limit=N` (behind a read key middleware): the newest rejected events with their reasons
/// and (scrubbed) raw text, from whichever store `recent` reads.
struct QuarantineController: Sendable {
    /// The newest quarantined events, newest first, at most the given number.
    let recent: @Sendable (Int) async throws -> [QuarantineRecord]

    struct QuarantineResponse: Codable {
        var events: [QuarantineRecord]
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.get("v1/admin/quarantine") { request, _ -> Response in
            let parameters: [String: String]
            do throws(ParameterError) { parameters = try request.queryParameters(known: QueryParameterNames.quarantine) } catch {
                return .badParameter(error)
            }
            let limitText = parameters["limit"] ?? "100"
            guard let limit = Int(limitText), (1...1000).contains(limit) else {
                return .error(.badRequest, code: "invalid_parameter", message: "`limit` must be a whole number from 1 to 1000.", parameter: "limit")
            }
            do {
                return .json(QuarantineResponse(events: try await recent(limit)), status: .ok)
            } catch {
                return .databaseUnavailable
            }
        }
    }
}

extension Response {
    /// 503 with `Retry-After`: the database did not answer (busy, locked, disk trouble).
    static var databaseUnavailable: Response {
        .error(.serviceUnavailable, code: "database_unavailable", message: "The database does not answer; try again shortly.", headers: [.retryAfter: "5"])
    }

    /// 400 `invalid_parameter` naming the query parameter to change and how.
    static func badParameter(_ error: ParameterError) -> Response {
        .error(.badRequest, code: "invalid_parameter", message: error.message, parameter: error.parameter)
    }

}

/// `GET /metrics`: Prometheus text exposition of every metric (no refs or campaigns as labels).
/// The rollup freshness gauges are read from the database at each scrape, so they are exact
/// whenever they are looked at, not as of the last rollup pass.
struct MetricsController: Sendable {
    let registry: PrometheusCollectorRegistry
    /// Brings the gauges read from the store up to date before each scrape (the SQLite
    /// store's rollup freshness, the PostgreSQL store's attribution progress).
    let refresh: @Sendable () async -> Void

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("metrics") { _, _ -> Response in
            await refresh()
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            bytes = MetricHelp.annotate(bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}

/// How far the stats are behind the stored events, as `/metrics` gauges and the admin API's
/// answer: `linkpulse_rollup_lag_seconds` (how long the oldest event not yet counted has
/// waited; 0 when every stored event is counted), `linkpulse_rollup_backlog_events` and
/// `linkpulse_attribution_backlog_events` (stored, not yet attributed: the part of the backlog
/// that waits for the attribution follower rather than the rollup timer).
struct RollupFreshness: Sendable {
    let rollups: RollupStore
    let pacer: IngestPacer?
    let now: @Sendable () -> Int64
    let lag = Gauge(label: "linkpulse_rollup_lag_seconds")
    let backlog = Gauge(label: "linkpulse_rollup_backlog_events")
    let attributionBacklog = Gauge(label: "linkpulse_attribution_backlog_events")
    let recounts: RecountTracker

    init(rollups: RollupStore, pacer: IngestPacer?, progressAtOpen: RollupProgress, now: @escaping @Sendable () -> Int64) {
        self.rollups = rollups
        self.pacer = pacer
        self.now = now
        recounts = RecountTracker(storedThroughSeq: progressAtOpen.storedThroughSeq, countedThroughSeq: progressAtOpen.countedThroughSeq)
    }

    struct Status: Encodable {
        var storedThroughSeq: Int64
        var countedThroughSeq: Int64
        var backlogEvents: Int64
        /// How long the oldest uncounted event has waited (`freshness`).
        var lagSeconds: Double { freshness.lagSeconds }
        /// Every stored event received before this instant (RFC 3339, UTC) is counted.
        var countedThrough: String { Timestamp.formatUTC(freshness.countedThroughMs) }
        /// While a recount runs (`RecountWatch`), the events it has left; nil otherwise.
        var recountRemainingEvents: Int64? { freshness.recountRemainingEvents }
        var attributedThroughSeq: Int64
        var attributionBacklogEvents: Int64
        /// Whether ingest is paced now, past which lag, and for how long it has waited in all;
        /// nil with `--ingest-pacing off`.
        var ingestPacing: Pacing?
        /// What every stats and export answer says of its freshness.
        var freshness: Freshness

        enum CodingKeys: String, CodingKey {
            case storedThroughSeq = "stored_through_seq", countedThroughSeq = "counted_through_seq"
            case backlogEvents = "backlog_events", lagSeconds = "lag_seconds", countedThrough = "counted_through"
            case recountRemainingEvents = "recount_remaining_events"
            case attributedThroughSeq = "attributed_through_seq", attributionBacklogEvents = "attribution_backlog_events"
            case ingestPacing = "ingest_pacing"
        }

        /// The status at `nowMs` of rollups counted through `countedThroughSeq` of the events
        /// stored through `storedThroughSeq`, `recounts` taking the reading.
        init(
            nowMs: Int64, storedThroughSeq: Int64, countedThroughSeq: Int64, backlogEvents: Int64, oldestUncountedReceivedAtMs: Int64?,
            attributedThroughSeq: Int64, attributionBacklogEvents: Int64, ingestPacing: Pacing?, recounts: RecountTracker
        ) {
            freshness = Freshness(
                nowMs: nowMs, oldestUncountedReceivedAtMs: oldestUncountedReceivedAtMs,
                recountRemainingEvents: recounts.observe(storedThroughSeq: storedThroughSeq, countedThroughSeq: countedThroughSeq))
            self.storedThroughSeq = storedThroughSeq
            self.countedThroughSeq = countedThroughSeq
            self.backlogEvents = backlogEvents
            self.attributedThroughSeq = attributedThroughSeq
            self.attributionBacklogEvents = attributionBacklogEvents
            self.ingestPacing = ingestPacing
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(storedThroughSeq, forKey: .storedThroughSeq)
            try c.encode(countedThroughSeq, forKey: .countedThroughSeq)
            try c.encode(backlogEvents, forKey: .backlogEvents)
            try c.encode(lagSeconds, forKey: .lagSeconds)
            try c.encode(countedThrough, forKey: .countedThrough)
            try c.encode(recountRemainingEvents, forKey: .recountRemainingEvents)
            try c.encode(attributedThroughSeq, forKey: .attributedThroughSeq)
            try c.encode(attributionBacklogEvents, forKey: .attributionBacklogEvents)
            try c.encodeIfPresent(ingestPacing, forKey: .ingestPacing)
        }
    }

    struct Pacing: Codable {
        var holding: Bool
        var commitWaiting: Bool
        var lagLimitSeconds: Double
        var heldSeconds: Double

        enum CodingKeys: String, CodingKey {
            case holding, commitWaiting = "commit_waiting", lagLimitSeconds = "lag_limit_seconds", heldSeconds = "held_seconds"
        }
    }

    /// Reads the progress, updates the gauges and returns it.
    func read() async throws -> Status {
        let progress = try await rollups.rollupProgress()
        let status = Status(
            nowMs: now(), storedThroughSeq: progress.storedThroughSeq, countedThroughSeq: progress.countedThroughSeq,
            backlogEvents: progress.backlog, oldestUncountedReceivedAtMs: progress.oldestUncountedReceivedAtMs,
            attributedThroughSeq: progress.attributedThroughSeq, attributionBacklogEvents: progress.attributionBacklog,
            ingestPacing: pacer.map { Pacing(
                holding: $0.holding, commitWaiting: $0.commitWaiting, lagLimitSeconds: Double($0.lagLimitMs) / 1000, heldSeconds: $0.heldTotal.seconds) },
            recounts: recounts)
        lag.record(status.lagSeconds)
        backlog.record(Double(status.backlogEvents))
        attributionBacklog.record(Double(status.attributionBacklogEvents))
        return status
    }
}
