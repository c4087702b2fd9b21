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
    store: PostgresStore, secrets: InstallationSecrets, keys: AccessKeys, settings: ServerSettings,
    queue: IngestQueue, metrics: IngestMetrics = IngestMetrics(), prometheus: PrometheusCollectorRegistry?,
    now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
    ticks: ManualTicks? = nil, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let ingest = IngestController(
        queue: queue, validator: EventValidator(hasher: KeyedHasher(secret: secrets.hashSecretBytes), linkDomains: Set(settings.links?.domains ?? [])),
        trustProxy: settings.trustProxy, metrics: metrics, storage: StorageGuard(), now: now)
    let progress = DerivedFreshness(store: store, now: now)
    let stats = StatsService(
        reader: store.stats, defaultZone: settings.defaultTimeZone, now: now, freshness: { try? await progress.read().freshness })
    let exporter = CSVExporter(stats: stats, reader: store.stats)
    let routes = DaemonRoutes(
        ingest: ingest, keys: keys, answers: store, attributionWait: .seconds(2), stats: stats, exports: exporter,
        exportLedger: store.exportLedger, recentQuarantine: { [events = store.events] in try await events.recentQuarantine(limit: $0) },
        links: store.links, logger: logger,
        refreshGauges: { _ = try? await progress.read() })
    let router = routes.router(settings: settings, prometheus: prometheus) { router, gates in
        PostgresHealthController(store: store, freshness: progress, maxLag: settings.maxRollupLag).addRoutes(to: router)
        PostgresAdminController(store: store, freshness: progress).addRoutes(to: router.group().add(middleware: gates.read))
    }
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
    let timers = Timers(ticks: ticks, logger: logger)
    var services: [any Service] = [
        IngestWriterService(queue: queue, database: store, metrics: metrics, logger: logger),
        timers.every(.seconds(3600), AsyncTickJob.eventMonths(store, now: now, logger: logger)),
        timers.every(settings.rollupInterval, derivedWork),
        timers.every(settings.diskWatchInterval, MemoryWatchJob(database: nil)),
        timers.every(settings.keyRefreshInterval, AsyncTickJob.accessKeys(keys, logger: logger)),
    ]
    if settings.quarantineRetentionDays > 0 {
        services.append(timers.every(
            settings.retentionInterval, AsyncTickJob.quarantineRetention(store, days: settings.quarantineRetentionDays, now: now, logger: logger)))
    }
    if !settings.exportJobs.isEmpty {
        // Every daemon checks; the one doing the derived work writes (see ExportScheduler).
        let scheduler = ExportScheduler(
            jobs: settings.exportJobs, directory: settings.exportDirectory, exporter: exporter, ledger: store.exportLedger,
            bringStatsUpToDate: { try await store.countStored(timeout: .seconds(300)) },
            runsHere: { store.derived.isLeading }, now: now, logger: logger)
        ExportFiles.removeStalePartials(in: settings.exportDirectory)
        for job in settings.exportJobs {
            services.append(timers.every(settings.exportCheckInterval, ScheduledExportJob(job: job.name, scheduler: scheduler)))
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
    /// The installation's hashing secret as the PostgreSQL database holds it: the first daemon
    /// to start stores the one it generated, every later one takes it. Access keys an older
    /// version kept there in clear come back in `keptInClear` (see `AccessKeys.prepare`, and
    /// `PostgresStore.forgetInstallationValues` for their removal).
    public static func loadOrCreate(store: PostgresStore, logger: Logger) async throws -> InstallationSecrets {
        let proposed = InstallationSecrets(hashSecret: randomHex(bytes: 32))
        guard let stored = InstallationSecrets(storedValues: try await store.installationValues(proposing: proposed.storedValues)) else {
            throw CocoaError(.coderValueNotFound)
        }
        if stored.hashSecret == proposed.hashSecret { logger.info("generated the installation's hashing secret; it is kept in the database") }
        let clear = try await store.installationValues(matching: Set(clearKeyNames.values))
        return InstallationSecrets(hashSecret: stored.hashSecret, keptInClear: clearKeyNames.compactMapValues { clear[$0] })
    }

    /// The installation values under which older versions kept the generated keys in clear.
    public static let clearKeyNames: [AccessKind: String] = [.ingest: CodingKeys.ingestKey.rawValue, .read: CodingKeys.readKey.rawValue]

    /// The hashing secret as the PostgreSQL store keeps it (`lp_installation`), under the name
    /// `secrets.json` gives it.
    public var storedValues: [String: String] {
        [CodingKeys.hashSecret.rawValue: hashSecret]
    }

    /// The secrets `storedValues` gave, or nil when the hashing secret is missing.
    public init?(storedValues values: [String: String]) {
        guard let secret = values[CodingKeys.hashSecret.rawValue] else { return nil }
        self.init(hashSecret: secret)
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
    let recounts: RecountTracker

    init(store: PostgresStore, now: @escaping @Sendable () -> Int64) {
        self.store = store
        self.now = now
        let atOpen = store.progressAtOpen
        recounts = RecountTracker(storedThroughSeq: atOpen?.storedThroughSeq ?? 0, countedThroughSeq: atOpen?.rollups.throughSeq ?? 0)
    }

    /// Reads the progress, updates the gauges and returns it as the admin API shows it.
    @discardableResult
    func read() async throws -> RollupFreshness.Status {
        let p = try await store.derivedProgress()
        let nowMs = now()
        let status = RollupFreshness.Status(
            nowMs: nowMs, storedThroughSeq: p.storedThroughSeq, countedThroughSeq: p.rollups.throughSeq, backlogEvents: p.rollups.waitingEvents,
            oldestUncountedReceivedAtMs: p.rollups.oldestWaitingReceivedMs, attributedThroughSeq: p.attribution.throughSeq,
            attributionBacklogEvents: p.attribution.waitingEvents, ingestPacing: nil, recounts: recounts)
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
                checks["recount"] = .recount(status.recountRemainingEvents)
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

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.post("v1/admin/rollup") { request, _ -> Response in
            do {
                let waiting = try await store.countStored(timeout: .seconds(60))
                return .json(AdminController.RollupResponse(processed: Int(waiting)), status: .ok)
            } catch {
                return .error(.serviceUnavailable, code: "rollup_failed", message: "The stored events could not all be counted yet (\(error)); try again shortly.", headers: [.retryAfter: "5"])
            }
        }
        router.get("v1/admin/rollup") { request, _ -> Response in
            guard let status = try? await freshness.read() else { return .databaseUnavailable }
            return .json(status, status: .ok)
        }
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
