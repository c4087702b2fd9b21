import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// The daemon on SQLite (`linkpulse serve`, the default): one process owns the data directory.
/// Its store commits ingest, follows the commits with attribution on its own threads, counts on
/// a rollup timer, and keeps its files small (checkpoints, sealing, retention, id merges); the
/// timer jobs here only trigger that work.
public struct SQLiteBackend: DaemonBackend {
    public let deps: AppDependencies
    public let pacer: IngestPacer?
    let freshness: RollupFreshness

    public init(_ deps: AppDependencies, settings: ServerSettings) {
        self.deps = deps
        let intervalMs = settings.rollupInterval.nanoseconds / 1_000_000
        pacer = settings.ingestPacing.lagLimitMs(rollupInterval: settings.rollupInterval).map {
            IngestPacer(pacing: IngestPacing(lagLimitMs: $0, rateWindowMs: IngestPacing.standardRateWindowMs(rollupIntervalMs: intervalMs)))
        }
        freshness = RollupFreshness(rollups: deps.database.rollups, pacer: pacer, progressAtOpen: deps.database.progressAtOpen, now: deps.parts.now)
    }

    public var parts: DaemonParts { deps.parts }
    public var ingestStore: any IngestStore { deps.database }
    public var answers: any AttributionAnswers { StoredAttributions(events: deps.database.events, attribution: deps.database.attribution) }
    public var attributionWait: Duration { .seconds(1) }
    public var statsReader: any StatsSource & RawEventSource { deps.database.stats }
    public var exportLedger: any ExportRecords { deps.database.exportLedger }
    public var links: any LinkRecords { deps.database.links }
    public var storage: StorageGuard { deps.storage }
    public var writesScheduledExports: Bool { true }

    public func recentQuarantine(limit: Int) async throws -> [QuarantineRecord] {
        try await deps.database.events.recentQuarantine(limit: limit)
    }

    public func derivedStatus() async throws -> DerivedStatus {
        try await freshness.read()
    }

    public func isHealthy() async -> Bool {
        await deps.database.events.isHealthy()
    }

    public func storeChecks() async -> [String: ReadinessCheck] {
        let events = deps.database.events
        let answers = await events.isHealthy()
        let (writable, failing) = (events.eventsFileWritable, events.ingestFailing)
        var checks: [String: ReadinessCheck] = [:]
        checks["database"] = .init(
            ok: answers && writable && !failing,
            detail: !answers ? "the events database does not answer a read"
                : !writable ? "the events database file is not writable"
                : failing ? "the last commit failed (see the log)" : "answers and takes commits")
        if let disk = deps.storage.reading {
            checks["disk"] = .init(ok: !disk.low, detail: "\(disk.freeBytes) bytes free, \(disk.requiredBytes) required (--min-free-disk)")
        } else {
            checks["disk"] = .init(ok: true, detail: "not watched")
        }
        return checks
    }

    /// A count of everything stored now, on the derived-work loop's thread; how many events it counted.
    public func countStoredNow() async throws -> Int {
        try await RollupJob(rollups: deps.database.rollups, logger: deps.parts.logger).runNow()
    }

    public func bringStatsUpToDate() async throws {
        _ = try await deps.database.rollups.rollUpStoredSoFar()
    }

    public var memoryReport: StoreMemoryReport? { deps.database.memoryReport }

    /// The store's timer jobs. Also asks the attribution to list its recent clicks now, so that
    /// the first resolve after a start does not wait for it.
    public func backgroundServices(settings: ServerSettings, timers: Timers) -> [any Service] {
        let database = deps.database
        let logger = deps.parts.logger
        database.attribution.listRecentClicksSoon()
        var services: [any Service] = [
            timers.every(settings.idIndexInterval, IdIndexJob(events: database.events, threshold: settings.idMergeThreshold, logger: logger)),
            timers.every(.seconds(1), CheckpointJob(database: database, logger: logger)),
            timers.every(settings.retentionInterval, RetentionJob(
                database: database, quarantineDays: settings.quarantineRetentionDays, rawEvents: settings.rawEventRetention,
                rawEventExports: settings.exportJobs.filter(\.exportsRawEvents).map(\.name),
                now: deps.parts.now, logger: logger)),
            timers.every(settings.rollupInterval, RollupJob(rollups: database.rollups, logger: logger)),
            timers.every(settings.sealInterval, SealJob(database: database, age: settings.sealAge, now: deps.parts.now, logger: logger)),
        ]
        if let pacer {
            services.append(timers.every(AsyncTickJob.ingestPacingInterval, AsyncTickJob.ingestPacing(rollups: database.rollups, pacer: pacer, now: deps.parts.now, logger: logger)))
        }
        return services
    }

    public func serverRunning(port: Int, settings: ServerSettings) async {
        deps.parts.logger.notice("listening", metadata: ["host": "\(settings.host)", "port": "\(port)"])
    }
}

/// Everything a daemon on SQLite is wired from: the store, the disk guard and the parts every
/// daemon has. The executable builds it from real parts; tests build it the same way over a
/// temporary data directory.
public struct AppDependencies: Sendable {
    public var database: AppDatabase
    /// The free-space guard of the data directory, and the floor ingest keeps.
    public var storage: StorageGuard
    /// The parts every daemon has, whatever its store.
    public var parts: DaemonParts

    /// - Parameter configuredKeys: keys given by flag, by kind (used when `keys` is nil, which
    ///   makes the table over the database's stored keys).
    public init(
        database: AppDatabase, secrets: InstallationSecrets, keys: AccessKeys? = nil, configuredKeys: [AccessKind: String] = [:],
        queue: IngestQueue = IngestQueue(),
        metrics: IngestMetrics = IngestMetrics(), storage: StorageGuard = StorageGuard(),
        prometheus: PrometheusCollectorRegistry? = nil,
        now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        ticks: ManualTicks? = nil, audience: AudienceData? = nil,
        logger: Logger = Logger(label: "linkpulse")
    ) {
        self.database = database
        self.storage = storage
        parts = DaemonParts(
            secrets: secrets,
            keys: keys ?? AccessKeys(store: database.accessKeys, hashSecret: secrets.hashSecretBytes, configured: configuredKeys, now: now),
            queue: queue, metrics: metrics, prometheus: prometheus, now: now, ticks: ticks, audience: audience, logger: logger)
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

    /// Reads the progress, updates the gauges and returns it.
    func read() async throws -> DerivedStatus {
        let progress = try await rollups.rollupProgress()
        let status = DerivedStatus(
            nowMs: now(), storedThroughSeq: progress.storedThroughSeq, countedThroughSeq: progress.countedThroughSeq,
            backlogEvents: progress.backlog, oldestUncountedReceivedAtMs: progress.oldestUncountedReceivedAtMs,
            attributedThroughSeq: progress.attributedThroughSeq, attributionBacklogEvents: progress.attributionBacklog,
            ingestPacing: pacer.map { DerivedStatus.Pacing(
                holding: $0.holding, commitWaiting: $0.commitWaiting, lagLimitSeconds: Double($0.lagLimitMs) / 1000, heldSeconds: $0.heldTotal.seconds) },
            recounts: recounts)
        lag.record(status.lagSeconds)
        backlog.record(Double(status.backlogEvents))
        attributionBacklog.record(Double(status.attributionBacklogEvents))
        return status
    }
}
