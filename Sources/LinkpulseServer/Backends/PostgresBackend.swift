import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// The daemon on PostgreSQL (`serve --database postgres://…`): the same API as on SQLite.
/// Any number of daemons may share the database: an id is stored once whichever daemon
/// receives it, and the keys and the hashing secret are the database's, so every daemon takes
/// the same keys and gives a visitor the same id. Attribution and counting run on whichever
/// daemon holds the derived-work lock (`AsyncTickJob.derivedWork`, every `rollupInterval`, and
/// at once for a resolve), and so do the scheduled exports, into that daemon's
/// `--export-dir`, and raw-event retention (`--retention-days`, between its rounds).
public struct PostgresBackend: DaemonBackend {
    public let store: PostgresStore
    public let parts: DaemonParts
    let freshness: DerivedFreshness
    let derivedWork: AsyncTickJob

    /// Wires `store`'s derived work to this daemon: its raw-event retention (when
    /// `--retention-days` deletes) and its wake-ups, which run the derived-work timer job at
    /// once. One backend per store.
    public init(store: PostgresStore, parts: DaemonParts, settings: ServerSettings) {
        self.store = store
        self.parts = parts
        freshness = DerivedFreshness(store: store, now: parts.now)
        derivedWork = AsyncTickJob.derivedWork(store.derived, logger: parts.logger)
        if settings.rawEventRetention.deletes {
            // Never past a period a scheduled raw-event export has still to write.
            let eventJobs = settings.exportJobs.filter(\.exportsRawEvents).map(\.name)
            let now = parts.now
            store.derived.retainRawEvents(every: settings.retentionInterval) { [ledger = store.exportLedger] in
                var pending: Int64?
                for job in eventJobs {
                    if let end = try await ledger.lastExportedPeriod(job: job)?.endMs { pending = min(pending ?? end, end) }
                }
                return settings.rawEventRetention.horizon(nowMs: now(), pendingExportFromMs: pending)
            }
        }
        store.derived.whenWoken { [derivedWork] in derivedWork.nudge() }
    }

    public var ingestStore: any IngestStore { store }
    public var answers: any AttributionAnswers { store }
    public var attributionWait: Duration { .seconds(2) }
    public var statsReader: any StatsSource & RawEventSource { store.stats }
    public var exportLedger: any ExportRecords { store.exportLedger }
    public var links: any LinkRecords { store.links }
    /// The database is not on this machine's disk: ingest never waits for room here.
    public let storage = StorageGuard()
    public var pacer: IngestPacer? { nil }
    /// Every daemon checks; the one doing the derived work writes (see `ExportScheduler`).
    public var writesScheduledExports: Bool { store.derived.isLeading }

    public func recentQuarantine(limit: Int) async throws -> [QuarantineRecord] {
        try await store.events.recentQuarantine(limit: limit)
    }

    public func derivedStatus() async throws -> DerivedStatus {
        try await freshness.read()
    }

    public func isHealthy() async -> Bool {
        await store.isHealthy()
    }

    public func storeChecks() async -> [String: ReadinessCheck] {
        let answers = await store.isHealthy()
        return ["database": .init(ok: answers, detail: answers ? "PostgreSQL answers" : "PostgreSQL does not answer a query")]
    }

    /// Has the daemon doing the derived work (whichever it is) count now; how many events
    /// were waiting. Fails past 60 s.
    public func countStoredNow() async throws -> Int {
        Int(try await store.countStored(timeout: .seconds(60)))
    }

    public func bringStatsUpToDate() async throws {
        _ = try await store.countStored(timeout: .seconds(300))
    }

    public var memoryReport: StoreMemoryReport? { nil }

    public func backgroundServices(settings: ServerSettings, timers: Timers) -> [any Service] {
        var services: [any Service] = [
            timers.every(.seconds(3600), AsyncTickJob.eventMonths(store, now: parts.now, logger: parts.logger)),
            timers.every(settings.rollupInterval, derivedWork),
        ]
        if settings.quarantineRetentionDays > 0 {
            services.append(timers.every(
                settings.retentionInterval,
                AsyncTickJob.quarantineRetention(store, days: settings.quarantineRetentionDays, now: parts.now, logger: parts.logger)))
        }
        return services
    }

    public func serverRunning(port: Int, settings: ServerSettings) async {
        // Its connection hears the derived-work notices from now on, not from the first tick.
        derivedWork.nudge()
        parts.logger.notice("listening", metadata: ["host": "\(settings.host)", "port": "\(port)", "database": "\(store.location)"])
    }
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
    func read() async throws -> DerivedStatus {
        let p = try await store.derivedProgress()
        let nowMs = now()
        let status = DerivedStatus(
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
