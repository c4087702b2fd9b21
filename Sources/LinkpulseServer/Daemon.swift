import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// The parts of a daemon that are the same whatever its store: the installation's secrets and
/// keys, the ingest queue and its metrics, `/metrics`, the clock, the timers and the log.
public struct DaemonParts: Sendable {
    public var secrets: InstallationSecrets
    /// The keys the daemon accepts (stored ones and those given by flag).
    public var keys: AccessKeys
    public var queue: IngestQueue
    public var metrics: IngestMetrics
    /// Where `/metrics` reads from; nil serves no `/metrics` route.
    public var prometheus: PrometheusCollectorRegistry?
    /// The current time in UTC milliseconds.
    public var now: @Sendable () -> Int64
    /// What runs the timer jobs: nil for Dispatch timers, a test's ticks otherwise.
    public var ticks: ManualTicks?
    /// The countries' and user agents' data events are classified by.
    public var audience: AudienceData
    public var logger: Logger

    public init(
        secrets: InstallationSecrets, keys: AccessKeys, queue: IngestQueue = IngestQueue(), metrics: IngestMetrics = IngestMetrics(),
        prometheus: PrometheusCollectorRegistry? = nil,
        now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        ticks: ManualTicks? = nil, audience: AudienceData? = nil, logger: Logger
    ) {
        self.secrets = secrets
        self.keys = keys
        self.queue = queue
        self.metrics = metrics
        self.prometheus = prometheus
        self.now = now
        self.ticks = ticks
        self.audience = audience ?? .none(logger: logger)
        self.logger = logger
    }
}

/// The one seam between the HTTP side and a store: what every endpoint and the daemon's
/// lifecycle need of it. `SQLiteBackend` and `PostgresBackend` (in `Backends/`, with the
/// command line the only code that names a concrete store) implement it; `buildApplication`
/// builds the same daemon on either.
public protocol DaemonBackend: Sendable {
    /// The parts every daemon has.
    var parts: DaemonParts { get }
    /// Where the ingest writer commits.
    var ingestStore: any IngestStore { get }
    /// Where `/v1/resolve` and `/v1/attributions/{id}` read one event's attribution.
    var answers: any AttributionAnswers { get }
    /// How long `/v1/attributions/{id}` waits for the attribution to reach an event.
    var attributionWait: Duration { get }
    /// The stats' rollups and raw-event pages (the stats API, the exports, the dashboard).
    var statsReader: any StatsSource & RawEventSource { get }
    /// The scheduled exports' ledger.
    var exportLedger: any ExportRecords { get }
    /// The hosted links.
    var links: any LinkRecords { get }
    /// Free disk space as last seen, and the floor ingest keeps (never low where the store
    /// is not on this machine's disk).
    var storage: StorageGuard { get }
    /// The ingest writer's pacer, when ingest is paced to the derived work.
    var pacer: IngestPacer? { get }
    /// The newest quarantined events, newest first, at most `limit`.
    func recentQuarantine(limit: Int) async throws -> [QuarantineRecord]
    /// How far attribution and the rollups are behind the stored events (the gauges of
    /// `/metrics` updated on the way).
    func derivedStatus() async throws -> DerivedStatus
    /// Whether the database answers a read (`/healthz`).
    func isHealthy() async -> Bool
    /// The store's own readiness checks (`database`, and `disk` where it has one); the
    /// daemon adds the stats' lag and any recount.
    func storeChecks() async -> [String: ReadinessCheck]
    /// Counts everything stored so far (`POST /v1/admin/rollup`); returns how many events that
    /// counted or found waiting.
    func countStoredNow() async throws -> Int
    /// Brings the stats up to date before a scheduled export writes its period.
    func bringStatsUpToDate() async throws
    /// Whether this daemon writes the scheduled exports now (one of several on PostgreSQL).
    var writesScheduledExports: Bool { get }
    /// What the store keeps in memory now, for `/metrics` (nil where it keeps nothing worth
    /// reporting: the PostgreSQL store).
    var memoryReport: StoreMemoryReport? { get }
    /// The store's background services: its timer jobs, each made by `timers`.
    func backgroundServices(settings: ServerSettings, timers: Timers) -> [any Service]
    /// Called once the server listens on `port`.
    func serverRunning(port: Int, settings: ServerSettings) async
}

/// The whole daemon on `backend`: the routes, the ingest writer, the store's background
/// services and the scheduled exports. On SIGTERM/SIGINT the HTTP server stops accepting and
/// finishes in-flight requests first, then the timers stop, then the writer drains its queue.
public func buildApplication(
    backend: some DaemonBackend, settings: ServerSettings, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let parts = backend.parts
    let timers = Timers(ticks: parts.ticks, logger: parts.logger)
    var services: [any Service] = [
        IngestWriterService(queue: parts.queue, database: backend.ingestStore, metrics: parts.metrics, pacer: backend.pacer, logger: parts.logger),
    ]
    services += backend.backgroundServices(settings: settings, timers: timers)
    services.append(timers.every(settings.keyRefreshInterval, AsyncTickJob.accessKeys(parts.keys, logger: parts.logger)))
    if parts.audience.paths != nil { services.append(AudienceReloadService(data: parts.audience)) }
    if !settings.exportJobs.isEmpty {
        let scheduler = exportScheduler(backend: backend, settings: settings)
        ExportFiles.removeStalePartials(in: settings.exportDirectory)
        for job in settings.exportJobs {
            services.append(timers.every(settings.exportCheckInterval, AsyncTickJob.scheduledExport(job.name, scheduler: scheduler)))
        }
    }
    return Application(
        router: buildRouter(backend: backend, settings: settings),
        server: ConnectionReadBuffers.standard.http1(),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "linkpulse"),
        services: services,
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? settings.port
            await backend.serverRunning(port: port, settings: settings)
            await onServerRunning(port)
        },
        logger: parts.logger)
}

/// The scheduler of the configured export jobs, reading through a stats service like the API's.
public func exportScheduler(backend: some DaemonBackend, settings: ServerSettings) -> ExportScheduler {
    let stats = StatsService(reader: backend.statsReader, defaultZone: settings.defaultTimeZone, now: backend.parts.now)
    return ExportScheduler(
        jobs: settings.exportJobs, directory: settings.exportDirectory,
        exporter: CSVExporter(stats: stats, reader: backend.statsReader), ledger: backend.exportLedger,
        bringStatsUpToDate: { try await backend.bringStatsUpToDate() }, runsHere: { backend.writesScheduledExports },
        now: backend.parts.now, logger: backend.parts.logger)
}

/// The router with every route of the daemon, each group behind the key middleware of the
/// kind it needs.
public func buildRouter(backend: some DaemonBackend, settings: ServerSettings) -> Router<LinkpulseRequestContext> {
    let parts = backend.parts
    let ingest = IngestController(
        queue: parts.queue,
        validator: EventValidator(
            hasher: KeyedHasher(secret: parts.secrets.hashSecretBytes), userAgents: parts.audience.classifier, countries: parts.audience.countries,
            linkDomains: Set(settings.links?.domains ?? [])),
        trustProxy: settings.trustProxy, metrics: parts.metrics, storage: backend.storage, now: parts.now)
    let stats = StatsService(
        reader: backend.statsReader, defaultZone: settings.defaultTimeZone, now: parts.now,
        freshness: { try? await backend.derivedStatus().freshness })
    let router = Router(context: LinkpulseRequestContext.self)
    let gates = AccessGates(keys: parts.keys)
    let read = router.group().add(middleware: gates.read)
    let admin = router.group().add(middleware: gates.admin)
    // Ingest: public keys that ship inside apps (CORS outside the key check).
    ingest.addRoutes(to: router, access: gates.ingest)
    SegmentController(ingest: ingest, mapping: settings.segmentMapping).addRoutes(to: router, keys: parts.keys)
    ResolveController(ingest: ingest, answers: backend.answers, links: backend.links, rate: settings.resolveRate, burst: settings.resolveBurst)
        .addRoutes(to: router, access: gates.ingest)
    // Read: stats, exports, attributions, the quarantine, the derived work's progress.
    AttributionController(answers: backend.answers, wait: backend.attributionWait).addRoutes(to: read)
    QuarantineController(recent: { try await backend.recentQuarantine(limit: $0) }).addRoutes(to: read)
    StatsController(stats: stats).addRoutes(to: read)
    ExportController(exporter: CSVExporter(stats: stats, reader: backend.statsReader), stats: stats, ledger: backend.exportLedger, directory: settings.exportDirectory)
        .addRoutes(to: read)
    AdminController(backend: backend).addRoutes(to: read)
    // Admin: the keys; and the key a request carries, for any kind.
    KeysController(keys: parts.keys).addRoutes(admin: admin, anyKey: router.group().add(middleware: gates.anyKey))
    // Links: read with a read key, managed with an admin key; served on the link domains.
    LinksController(links: backend.links, config: settings.links, stats: stats, now: parts.now).addRoutes(read: read, admin: admin)
    if let config = settings.links {
        HostedLinkController(links: backend.links, config: config, ingest: ingest, logger: parts.logger).addRoutes(to: router)
    }
    // Public: health for load balancers, the dashboard's files, the API's description,
    // metrics for a scraper.
    HealthController(backend: backend, maxRollupLag: settings.maxRollupLag).addRoutes(to: router)
    DashboardController(assets: settings.dashboardsDirectory.flatMap { try? DashboardAssets.load(from: $0) }).addRoutes(to: router)
    OpenAPIController().addRoutes(to: router)
    if let prometheus = parts.prometheus {
        let memory = MemoryGauges(store: { backend.memoryReport })
        let disk = DiskGauges(storage: backend.storage)
        let userAgents = AudienceGauges(classifier: parts.audience.classifier)
        MetricsController(registry: prometheus, refresh: {
            memory.record()
            disk.record()
            userAgents.record()
            _ = try? await backend.derivedStatus()
        }).addRoutes(to: router)
    }
    router.add(middleware: MethodNotAllowedMiddleware())
    return router
}

/// One check of `/readyz`: whether it passes, and what it saw.
public struct ReadinessCheck: Codable, Equatable, Sendable {
    public var ok: Bool
    public var detail: String

    public init(ok: Bool, detail: String) {
        self.ok = ok
        self.detail = detail
    }

    /// Not ready while a recount runs: its stats would answer short (zeros after a restore).
    static func recount(_ remaining: Int64?) -> Self {
        guard let remaining else { return .init(ok: true, detail: "no recount running") }
        return .init(
            ok: false,
            detail: "counting again the events stored before the rollups started over (a restore, an upgrade, a rebuild): \(remaining) left")
    }
}

/// `GET /healthz`: the process is alive (200 `{"status":"ok"}` once the database answers a
/// read, else 503). `GET /readyz`: it should be sent traffic: the store's own checks (the
/// database answers and takes commits; on SQLite, the disk is above `--min-free-disk`), and
/// the stats are less than `--max-rollup-lag` behind with no recount running. 200
/// `{"status":"ready","checks":{…}}`, else 503 `{"status":"not_ready",…}` with `Retry-After`;
/// each check says `ok` and what it saw. Neither needs a key (load balancers and systemd
/// probe them); neither says more than the state of the process.
struct HealthController<Backend: DaemonBackend>: Sendable {
    let backend: Backend
    let maxRollupLag: Duration

    struct Readiness: Codable, Equatable {
        var status: String
        var checks: [String: ReadinessCheck]
    }

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("healthz") { _, _ -> Response in
            await backend.isHealthy() ? .json(["status": "ok"], status: .ok) : .databaseUnavailable
        }
        router.get("readyz") { _, _ -> Response in
            let readiness = await readiness()
            let ready = readiness.status == "ready"
            return .json(readiness, status: ready ? .ok : .serviceUnavailable, headers: ready ? [:] : [.retryAfter: "5"])
        }
    }

    func readiness() async -> Readiness {
        var checks = await backend.storeChecks()
        checks["audience_data"] = backend.parts.audience.readiness
        let limit = Double(maxRollupLag.nanoseconds) / 1e9
        if let status = try? await backend.derivedStatus() {
            checks["rollup_lag"] = .init(
                ok: status.lagSeconds <= limit,
                detail: "\(status.lagSeconds) s behind (\(status.backlogEvents) events waiting), at most \(limit) s (--max-rollup-lag)")
            checks["recount"] = .recount(status.recountRemainingEvents)
        } else {
            checks["rollup_lag"] = .init(ok: false, detail: "the progress of the rollups could not be read")
        }
        return Readiness(status: checks.values.allSatisfy(\.ok) ? "ready" : "not_ready", checks: checks)
    }
}

/// `POST /v1/admin/rollup` and `GET /v1/admin/rollup`, behind a read key. The POST counts
/// everything stored when it was called and answers once that is done (`processed`: how
/// many events it counted or found waiting), or 503 when that failed; the GET says how far
/// the stats are behind the stored events (also in `/metrics`).
struct AdminController<Backend: DaemonBackend>: Sendable {
    let backend: Backend

    struct RollupResponse: Codable {
        var processed: Int
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.post("v1/admin/rollup") { _, _ -> Response in
            do {
                return .json(RollupResponse(processed: try await backend.countStoredNow()), status: .ok)
            } catch {
                return .error(
                    .serviceUnavailable, code: "rollup_failed", message: "The stored events could not all be counted yet (\(error)); try again shortly.",
                    headers: [.retryAfter: "5"])
            }
        }
        router.get("v1/admin/rollup") { _, _ -> Response in
            guard let status = try? await backend.derivedStatus() else { return .databaseUnavailable }
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
    /// Brings the gauges read at a scrape up to date before it (the memory gauges, the SQLite
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
