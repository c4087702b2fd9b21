import ArgumentParser
import CSystemTuning
import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging
import Metrics
import Prometheus

/// `linkpulse serve`: the ingest daemon. Works with no configuration at all.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the daemon (the default command).")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var postgres: DatabaseOption

    @Option(help: "Address to listen on (LINKPULSE_HOST).")
    var host: String = Environment.string("host") ?? "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one (LINKPULSE_PORT).")
    var port: Int = Environment.int("port") ?? 8080

    @Option(help: "An ingest key this daemon accepts besides the stored ones (`linkpulse keys`); never stored (LINKPULSE_INGEST_KEY).")
    var ingestKey: String? = Environment.string("ingest-key")

    @Option(help: "A read key this daemon accepts besides the stored ones; never stored (LINKPULSE_READ_KEY).")
    var readKey: String? = Environment.string("read-key")

    @Option(help: "An admin key this daemon accepts besides the stored ones; never stored (LINKPULSE_ADMIN_KEY).")
    var adminKey: String? = Environment.string("admin-key")

    /// The keys given by flag, by kind.
    var configuredKeys: [AccessKind: String] {
        [.ingest: ingestKey, .read: readKey, .admin: adminKey].compactMapValues { $0.flatMap { $0.isEmpty ? nil : $0 } }
    }

    @Option(help: "full: an acknowledged event survives power loss; normal: survives a crash of the process but maybe not of the machine (LINKPULSE_DURABILITY).")
    var durability: String = Environment.string("durability") ?? "full"

    @Flag(inversion: .prefixedNo, help: "Take the client address from X-Forwarded-For, set by a reverse proxy in front (LINKPULSE_TRUST_PROXY).")
    var trustProxy: Bool = Environment.bool("trust-proxy") ?? false

    @Option(help: "Most events that may wait for the writer before ingest answers 503 (LINKPULSE_QUEUE_CAPACITY).")
    var queueCapacity: Int = Environment.int("queue-capacity") ?? 20_000

    @Option(help: "Most request-body bytes ingest parses, validates or stores at once, e.g. 2MiB; past it ingest answers 503 without parsing the body (LINKPULSE_MAX_INGEST_INFLIGHT).")
    var maxIngestInflight: String = Environment.string("max-ingest-inflight") ?? "2MiB"

    @Option(help: "New event ids held in memory before they are merged into the id index (LINKPULSE_ID_MERGE_THRESHOLD).")
    var idMergeThreshold: Int = Environment.int("id-merge-threshold") ?? 100_000

    @Option(help: "Resolve calls a second each client address may make, sustained; 0 turns the limit off (LINKPULSE_RESOLVE_RATE).")
    var resolveRate: Double = Environment.string("resolve-rate").flatMap(Double.init) ?? 5

    @Option(help: "Resolve calls a client address may make at once after a quiet spell (LINKPULSE_RESOLVE_BURST).")
    var resolveBurst: Int = Environment.int("resolve-burst") ?? 50

    @Option(help: "Free space the data directory's filesystem keeps: below it ingest answers 503 insufficient_storage until there is room. A size (1GiB, 500MB), a share (5%), or both: the smaller applies; 0 turns it off (LINKPULSE_MIN_FREE_DISK).")
    var minFreeDisk: String = Environment.string("min-free-disk") ?? "1GiB,5%"

    @Option(help: "Days raw events are kept: older ones are deleted once counted, and the rollups keep their numbers (stats stay exact to 15 minutes before that; events.csv and --rebuild need the raw events). 0, the default, keeps them forever (LINKPULSE_RETENTION_DAYS).")
    var retentionDays: Int = Environment.int("retention-days") ?? 0

    @OptionGroup var seal: SealOptions

    @Option(help: "How often retention looks for raw events and quarantined bodies past their time, e.g. 1m (LINKPULSE_RETENTION_INTERVAL).")
    var retentionInterval: String = Environment.string("retention-interval") ?? "1m"

    @Option(help: "Days a quarantined body is kept before it is deleted; 0 keeps them forever (LINKPULSE_QUARANTINE_RETENTION_DAYS).")
    var quarantineRetentionDays: Int = Environment.int("quarantine-retention-days") ?? 30

    @Option(help: "How far behind the stored events the stats may be before /readyz answers 503, e.g. 5m (LINKPULSE_MAX_ROLLUP_LAG).")
    var maxRollupLag: String = Environment.string("max-rollup-lag") ?? "5m"

    @Option(help: "When sustained ingest waits for the rollups so the stats stay fresh: auto (the default: once the stats are 1.2 rollup intervals behind, or would take longer than that to catch up, and not catching up), a lag such as 30s, or off (ingest at full speed; the stats catch up after the load) (LINKPULSE_INGEST_PACING).")
    var ingestPacing: String = Environment.string("ingest-pacing") ?? "auto"

    @Option(help: "Default IANA time zone of the stats API (LINKPULSE_TIMEZONE).")
    var timezone: String = Environment.string("timezone") ?? "UTC"

    @Option(help: "How often new events are rolled up, e.g. 10s (LINKPULSE_ROLLUP_INTERVAL; default 10s; with --database, how often the daemon doing the derived work looks for new events to attribute and count, default 1s).")
    var rollupInterval: String? = Environment.string("rollup-interval")

    @OptionGroup var attribution: AttributionOptions

    @Option(help: "Scheduled exports: a JSON file of export jobs, see ops/exports.example.json (LINKPULSE_EXPORTS_CONFIG).")
    var exportsConfig: String? = Environment.string("exports-config")

    @Option(help: "Directory of scheduled export files; default <data-dir>/exports (LINKPULSE_EXPORT_DIR).")
    var exportDir: String? = Environment.string("export-dir")

    @Flag(help: "Demo mode: serve a separate demo database (<data-dir>/demo), filled with a month of generated traffic on first use, and print the dashboard's address with its key.")
    var demo = false

    /// How many events the demo generates (smaller in tests).
    @Option(help: .hidden)
    var demoEvents: Int = DemoData.profile.events

    @Option(help: "Segment-compatible ingest: a JSON file of extra event names and link domains, see ops/segment.example.json (LINKPULSE_SEGMENT_CONFIG).")
    var segmentConfig: String? = Environment.string("segment-config")

    @Option(help: "Hosted links: a JSON file of the link domains and apps, see ops/links.example.json (LINKPULSE_LINKS_CONFIG).")
    var linksConfig: String? = Environment.string("links-config")

    @Option(help: "Folder of the dashboard's files; found without it when started from the repository (LINKPULSE_DASHBOARDS_DIR).")
    var dashboardsDir: String? = Environment.string("dashboards-dir")

    @Option(help: "Countries: an MMDB file (GeoLite2, DB-IP Lite), or the geoip file of Debian's tor-geoipdb with its geoip6 beside it; default: Tor's files where ops/install-deps.sh or the tor package put them; off: none (LINKPULSE_GEOIP). Loaded again on SIGHUP.")
    var geoip: String? = Environment.string("geoip")

    @Option(help: "User agents: uap-core's regexes.yaml; default /usr/share/uap-core/regexes.yaml, from Debian's uap-core; off: none (LINKPULSE_USER_AGENTS). Loaded again on SIGHUP.")
    var userAgents: String? = Environment.string("user-agents")

    @Option(help: "How often export jobs look for a due period, e.g. 15s (LINKPULSE_EXPORT_CHECK_INTERVAL).")
    var exportCheckInterval: String = Environment.string("export-check-interval") ?? "15s"

    /// The export jobs of `--exports-config`; none without it.
    func exportJobs() throws -> [ExportJob] {
        guard let exportsConfig else { return [] }
        guard let data = FileManager.default.contents(atPath: exportsConfig) else {
            throw ValidationError("--exports-config: cannot read \(exportsConfig).")
        }
        do {
            return try ExportConfig.parse(data, defaultZone: timezone).jobs
        } catch {
            throw ValidationError("--exports-config \(exportsConfig): \(error)")
        }
    }

    /// The Segment mapping of `--segment-config`; the standard one without it.
    func segmentMapping() throws -> SegmentMapping {
        guard let segmentConfig else { return SegmentMapping() }
        guard let data = FileManager.default.contents(atPath: segmentConfig) else {
            throw ValidationError("--segment-config: cannot read \(segmentConfig).")
        }
        do {
            return try SegmentMapping.parse(data)
        } catch {
            throw ValidationError("--segment-config \(segmentConfig): \(error)")
        }
    }

    /// The hosted links' domains and apps of `--links-config`; nil (links off) without it.
    func links() throws -> LinksConfig? {
        guard let linksConfig else { return nil }
        guard let data = FileManager.default.contents(atPath: linksConfig) else {
            throw ValidationError("--links-config: cannot read \(linksConfig).")
        }
        do {
            return try LinksConfig(json: data)
        } catch {
            throw ValidationError("--links-config \(linksConfig): \(error)")
        }
    }

    mutating func validate() throws {
        _ = try exportJobs()
        _ = try segmentMapping()
        _ = try links()
        guard let check = DurationText.milliseconds(exportCheckInterval), check >= 100 else {
            throw ValidationError("--export-check-interval must be a duration of at least 100ms, such as 15s.")
        }
        guard ZoneClock(identifier: timezone) != nil else {
            throw ValidationError("--timezone must be an IANA time zone name such as UTC or Asia/Kolkata, not \"\(timezone)\".")
        }
        guard FreeSpaceMinimum(parsing: minFreeDisk) != nil else {
            throw ValidationError("--min-free-disk must be a size such as 1GiB or 500MB, a share such as 5%, both as 1GiB,5%, or 0; not \"\(minFreeDisk)\".")
        }
        guard let lag = DurationText.milliseconds(maxRollupLag), lag >= 1000 else {
            throw ValidationError("--max-rollup-lag must be a duration of at least 1s, such as 5m.")
        }
        guard let interval = DurationText.milliseconds(rollupInterval ?? "10s"), interval >= 100 else {
            throw ValidationError("--rollup-interval must be a duration of at least 100ms, such as 10s or 1m.")
        }
        guard pacingLimit != nil else {
            throw ValidationError("--ingest-pacing must be auto, off, or a lag of at least 1s such as 30s; not \"\(ingestPacing)\".")
        }
        guard let every = DurationText.milliseconds(retentionInterval), every >= 1000 else {
            throw ValidationError("--retention-interval must be a duration of at least 1s, such as 1m.")
        }
        try Environment.validate(
            ints: ["port", "queue-capacity", "id-merge-threshold", "resolve-burst", "quarantine-retention-days", "retention-days"], bools: ["trust-proxy"],
            choices: ["durability": Durability.allCases.map(\.rawValue)])
        guard Durability(rawValue: durability) != nil else {
            throw ValidationError("--durability must be full or normal.")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
        guard queueCapacity > 0 else { throw ValidationError("--queue-capacity must be positive.") }
        guard let inflight = FreeSpaceMinimum.size(maxIngestInflight), inflight > 0 else {
            throw ValidationError("--max-ingest-inflight must be a size such as 2MiB or 500KB, not \"\(maxIngestInflight)\".")
        }
        guard idMergeThreshold > 0 else { throw ValidationError("--id-merge-threshold must be positive.") }
        if let text = Environment.string("resolve-rate"), Double(text) == nil {
            throw ValidationError("LINKPULSE_RESOLVE_RATE must be a number of calls a second, such as 1 or 0.5 (0 turns the limit off).")
        }
        guard resolveRate.isFinite, resolveRate >= 0 else { throw ValidationError("--resolve-rate must be 0 (off) or a positive number of calls a second.") }
        guard resolveBurst > 0 else { throw ValidationError("--resolve-burst must be positive.") }
        guard quarantineRetentionDays >= 0 else { throw ValidationError("--quarantine-retention-days must be 0 (keep forever) or a number of days.") }
        guard retentionDays >= 0 else { throw ValidationError("--retention-days must be 0 (keep raw events forever) or a number of days.") }
    }

    /// `--ingest-pacing` read: nil when it is none of auto, off or a lag of at least 1 s.
    var pacingLimit: IngestPacingLimit? {
        switch ingestPacing.lowercased() {
        case "auto": return .standard
        case "off", "0": return .off
        default:
            guard let ms = DurationText.milliseconds(ingestPacing), ms >= 1000 else { return nil }
            return .lag(.milliseconds(ms))
        }
    }

    func run() async throws {
        // glibc gives each thread that allocates its own malloc arena by default (up to eight
        // per core); the daemon's many short-lived allocations then leave memory stranded in
        // each. Two arenas keep RSS about 10 MB lower under load at no measurable cost.
        // Blocks of 1 MiB and more (a rollup pass's cell tables and tuples, a merge's id
        // filter) get pages of their own, given back when the pass frees them: by default glibc
        // raises that bound to the largest block freed so far, and a pass's megabytes then stay
        // in the heap after it (see docs/performance.md, Ingest).
        _ = linkpulse_tune_malloc(2, 1 << 20)
        let logger = storage.bootstrapLogging()
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let audience = try await loadAudienceData(logger: logger)

        if let location = postgres.location {
            try await runOnPostgres(location, logger: logger, registry: registry, audience: audience)
            return
        }
        let dataURL = demo ? storage.dataURL.appending(path: "demo") : storage.dataURL
        let claim = try DataDirectoryLock(directory: dataURL)
        defer { withExtendedLifetime(claim) {} }
        let secrets = try InstallationSecrets.loadOrCreate(directory: dataURL, logger: logger)
        let durability = Durability(rawValue: durability) ?? .full
        let database = try await AppDatabase.open(
            directory: dataURL, durability: durability, attributionWindowMs: attribution.windowMs, logger: logger)
        logger.info(
            "database open",
            metadata: ["data_dir": "\(dataURL.path)", "durability": "\(durability.rawValue)"])
        if demo { try await DemoData.fillIfEmpty(database, events: demoEvents, secrets: secrets, audience: audience, logger: logger) }
        let keys = AccessKeys(store: database.accessKeys, hashSecret: secrets.hashSecretBytes, configured: configuredKeys)
        try await keys.prepare(
            keptInClear: secrets.keptInClear, forgetClearCopies: { try InstallationSecrets(hashSecret: secrets.hashSecret).save(directory: dataURL) },
            logger: logger)
        // The demo's dashboard link signs in with a read key made for it at each start.
        let demoKey: String? = if demo { try await DemoData.dashboardKey(keys) } else { nil }

        let deps = AppDependencies(
            database: database, secrets: InstallationSecrets(hashSecret: secrets.hashSecret), keys: keys, queue: IngestQueue(capacity: queueCapacity, inFlightByteLimit: Int(FreeSpaceMinimum.size(maxIngestInflight) ?? 2 << 20)),
            storage: StorageGuard(minimum: FreeSpaceMinimum(parsing: minFreeDisk) ?? .standard, directory: dataURL, logger: logger), prometheus: registry,
            audience: audience, logger: logger)
        let settings = try serverSettings(dataURL: dataURL, defaultRollupMs: 10_000)
        if let folder = settings.dashboardsDirectory {
            logger.info("dashboard", metadata: ["files": "\(folder.path)"])
        } else {
            logger.warning("dashboard files not found; /dashboard/ answers 404 (pass --dashboards-dir)")
        }
        if !settings.exportJobs.isEmpty {
            logger.info("scheduled exports", metadata: [
                "jobs": "\(settings.exportJobs.map(\.name).joined(separator: ","))", "dir": "\(settings.exportDirectory.path)",
            ])
        }
        let host = self.host
        let app = buildApplication(backend: SQLiteBackend(deps, settings: settings), settings: settings) { port in
            guard let readKey = demoKey else { return }
            let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
            print("\nLinkpulse demo is running. Open the dashboard (the link signs you in):\n  http://\(shown):\(port)/dashboard/#key=\(readKey)\n")
            fflush(nil)  // all streams: stdout is fully buffered when redirected
        }
        try await app.runService()
        try await database.shutDown()
        logger.notice("stopped")
    }
}

extension Serve {
    /// The countries' and user agents' data, loaded before the daemon listens (a file named by
    /// flag that cannot be read stops the start; a default one that is missing is logged).
    func loadAudienceData(logger: Logger) async throws -> AudienceData {
        let audience = AudienceData(paths: AudienceData.Paths(geoip: geoip, userAgents: userAgents), logger: logger)
        do {
            try await audience.loadOffThePool()
        } catch {
            throw ValidationError("\(error)")
        }
        return audience
    }

    /// The daemon's settings from its options, one place for both stores (on PostgreSQL the
    /// SQLite-only ones, such as the id index's merge threshold, go unused). Exports go to
    /// `--export-dir`, else `exports` in `dataURL`; `--rollup-interval` defaults to
    /// `defaultRollupMs`.
    func serverSettings(dataURL: URL, defaultRollupMs: Int64) throws -> ServerSettings {
        ServerSettings(
            host: host, port: port, trustProxy: trustProxy, queueCapacity: queueCapacity,
            idMergeThreshold: idMergeThreshold,
            rollupInterval: .milliseconds(rollupInterval.flatMap(DurationText.milliseconds) ?? defaultRollupMs), defaultTimeZone: timezone,
            exportDirectory: exportDir.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? dataURL.appending(path: "exports"),
            exportJobs: try exportJobs(),
            exportCheckInterval: .milliseconds(DurationText.milliseconds(exportCheckInterval) ?? 15_000),
            dashboardsDirectory: DashboardAssets.locate(explicit: dashboardsDir),
            segmentMapping: try segmentMapping(), resolveRate: resolveRate, resolveBurst: resolveBurst,
            maxRollupLag: .milliseconds(DurationText.milliseconds(maxRollupLag) ?? 300_000),
            quarantineRetentionDays: quarantineRetentionDays,
            retentionInterval: .milliseconds(DurationText.milliseconds(retentionInterval) ?? 60_000),
            rawEventRetention: RawEventRetention(days: retentionDays), ingestPacing: pacingLimit ?? .standard,
            sealAge: seal.age, links: try links())
    }

    /// The daemon on PostgreSQL (see `PostgresBackend`). Several
    /// daemons may run on one database; each keeps nothing under `--data-dir`.
    func runOnPostgres(_ location: PostgresLocation, logger: Logger, registry: PrometheusCollectorRegistry, audience: AudienceData) async throws {
        // Options of what does not run on PostgreSQL yet are refused, not silently ignored.
        if demo { throw ValidationError("--demo runs on SQLite only; leave out --database.") }
        if seal.sealAfterDays != nil {
            throw ValidationError("--seal-after-days seals SQLite's raw events; PostgreSQL keeps its own (leave it out with --database).")
        }
        let store = try await PostgresStore.open(
            location, logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000), attributionWindowMs: attribution.windowMs)
        do {
            let secrets = try await InstallationSecrets.loadOrCreate(store: store, logger: logger)
            logger.info("database open", metadata: ["database": "\(location)"])
            let keys = AccessKeys(store: store.accessKeys, hashSecret: secrets.hashSecretBytes, configured: configuredKeys)
            try await keys.prepare(
                keptInClear: secrets.keptInClear,
                forgetClearCopies: { try await store.forgetInstallationValues(Array(InstallationSecrets.clearKeyNames.values)) }, logger: logger)
            let settings = try serverSettings(dataURL: storage.dataURL, defaultRollupMs: 1_000)
            let queue = IngestQueue(capacity: queueCapacity, inFlightByteLimit: Int(FreeSpaceMinimum.size(maxIngestInflight) ?? 2 << 20))
            let parts = DaemonParts(secrets: secrets, keys: keys, queue: queue, prometheus: registry, audience: audience, logger: logger)
            try await buildApplication(backend: PostgresBackend(store: store, parts: parts, settings: settings), settings: settings).runService()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        logger.notice("stopped")
    }
}

/// The demo database's traffic: a month of generated events ending now, made once.
enum DemoData {
    static let profile = (events: 250_000, days: 30, refs: 2_000, campaigns: 12)

    static func fillIfEmpty(_ database: AppDatabase, events: Int, secrets: InstallationSecrets, audience: AudienceData, logger: Logger) async throws {
        guard try database.events.maxSeq() == 0 else {
            logger.info("demo database already filled; delete its folder to start over")
            return
        }
        print("Filling the demo database with a month of generated traffic (\(events) events)…")
        fflush(nil)  // all streams: stdout is fully buffered when redirected
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let start = ContinuousClock.now
        _ = try await GeneratedTraffic.write(
            TrafficProfile(events: events, days: profile.days, refs: profile.refs, campaigns: profile.campaigns, seed: 2026, endMs: now),
            into: database, secrets: secrets, receivedAtMs: now, audience: audience)
        try await database.rollups.rollUpNow()
        print("Done in \(ContinuousClock.now - start).")
        fflush(nil)  // all streams: stdout is fully buffered when redirected
    }

    /// The key the demo's dashboard link carries: a read key made at this start, the one of the
    /// start before revoked (the link is printed, so each start shows a new one).
    static func dashboardKey(_ keys: AccessKeys) async throws -> String {
        let name = "demo dashboard"
        for old in try await keys.list() where old.name == name && old.revokedAtMs == nil {
            _ = try await keys.revoke(id: old.id)
        }
        return try await keys.create(kind: .read, name: name).secret
    }
}

/// `linkpulse migrate`: creates or upgrades the database files, then exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the database, then exit.",
        discussion: "With --database, the PostgreSQL database at that URL (safe while other daemons start or run on it); without, the SQLite files under --data-dir.")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var postgres: DatabaseOption

    func run() async throws {
        let logger = storage.bootstrapLogging()
        if let location = postgres.location {
            let store = try await PostgresStore.open(location, logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000))
            await store.close()
            logger.notice("database is up to date", metadata: ["database": "\(location)"])
            return
        }
        let database = try AppDatabase(directory: storage.dataURL, logger: logger)
        try database.close()
        logger.notice("database is up to date", metadata: ["data_dir": "\(storage.dataURL.path)"])
    }
}

/// `linkpulse rollup`: attributes and rolls up every new event (or, with `--rebuild`, recounts
/// all of them; with `--reattribute`, attributes them again first), then exits. Safe beside a
/// running `serve`.
struct Rollup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Attribute and roll up new events now, then exit.")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var attribution: AttributionOptions
    @OptionGroup var seal: SealOptions

    @Flag(help: "Forget all rollups and count every event again from the raw events and their attribution.")
    var rebuild = false

    @Flag(help: "Forget all attribution (and rollups) and replay every event through the attribution rules in store order (for example after changing --attribution-window; without a change the answers come out the same).")
    var reattribute = false

    @Option(help: "Events per pass (each pass is one transaction, written while the next is counted on another core; bigger passes rewrite the day blocks fewer times and hold more in memory).")
    var batch: Int = 500_000

    mutating func validate() throws {
        guard batch > 0 else { throw ValidationError("--batch must be positive.") }
    }

    func run() async throws {
        let logger = storage.bootstrapLogging()
        let start = ContinuousClock.now
        // With no daemon on the directory, a recount starts from new derived files instead of
        // emptying the old ones, and writes them without waiting for the disk, a marker beside
        // them until the end (the lock is held until then, so no daemon starts meanwhile).
        let claim = rebuild || reattribute ? try? DataDirectoryLock(directory: storage.dataURL) : nil
        let discarded = try claim.map { _ in
            try AppDatabase.discardDerivedFiles(in: storage.dataURL, attribution: reattribute)
        } ?? false
        let database = try AppDatabase(
            directory: storage.dataURL, attributionWindowMs: attribution.windowMs, tuning: .command, idFilter: .atFirstUse, logger: logger)
        if discarded {
            logger.info("derived files started over", metadata: ["attribution": "\(reattribute)"])
            try AppDatabase.markUnsyncedRebuild(in: storage.dataURL)
        }
        if reattribute { try database.resetAttribution() }
        if rebuild {
            try database.rollups.resetRollups()
            logger.info("rollups reset", metadata: ["took": "\(ContinuousClock.now - start)"])
        }
        let attributed = try database.attribution.attributeAllInBulk()
        let counting = ContinuousClock.now
        if attributed > 0 {
            logger.notice("attributed", metadata: ["events": "\(attributed)", "took": "\(counting - start)"])
        }
        let processed = try database.rollups.rollUpAllInParallel(batch: batch, unsynced: discarded)
        logger.info("counted", metadata: ["events": "\(processed)", "took": "\(ContinuousClock.now - counting)"])
        let sealing = ContinuousClock.now
        let sealed = try database.sealOldEvents(nowMs: Int64(Date().timeIntervalSince1970 * 1000), age: seal.age)
        if sealed.blocks > 0 {
            logger.info("sealed", metadata: ["events": "\(sealed.events)", "blocks": "\(sealed.blocks)", "took": "\(ContinuousClock.now - sealing)"])
        }
        try database.close()
        if discarded { try AppDatabase.clearUnsyncedRebuild(in: storage.dataURL) }
        withExtendedLifetime(claim) {}
        logger.notice("rolled up", metadata: ["events": "\(processed)", "rebuild": "\(rebuild)", "took": "\(ContinuousClock.now - counting)"])
        print("{\"processed\":\(processed)}")
    }
}

/// When old raw events are sealed into compressed blocks, shared by `serve`, `rollup` and
/// `generate`.
struct SealOptions: ParsableArguments {
    @Option(help: "Days after they happened that raw events are sealed: moved, once counted, into compressed blocks of about a thousand (about a third of their size; every field kept, read back by exports, stats and recounts as before). 0 never seals; 2 when not given. SQLite only (LINKPULSE_SEAL_AFTER_DAYS).")
    var sealAfterDays: Int? = Environment.int("seal-after-days")

    mutating func validate() throws {
        guard (sealAfterDays ?? 0) >= 0 else { throw ValidationError("--seal-after-days must be 0 (never seal) or a number of days.") }
    }

    var age: SealAge { sealAfterDays.map { SealAge(days: $0) } ?? .standard }
}

/// The attribution window option, shared by `serve` and `rollup`.
struct AttributionOptions: ParsableArguments {
    @Option(help: "How long before an install or open a click may be to match it by fingerprint, e.g. 2h (LINKPULSE_ATTRIBUTION_WINDOW).")
    var attributionWindow: String = Environment.string("attribution-window") ?? "2h"

    var windowMs: Int64 { DurationText.milliseconds(attributionWindow) ?? 7_200_000 }

    mutating func validate() throws {
        guard let ms = DurationText.milliseconds(attributionWindow), ms > 0, ms <= 30 * 86_400_000 else {
            throw ValidationError("--attribution-window must be a duration from 1s to 30d, such as 2h or 90m.")
        }
    }
}

/// Durations as people write them: `500ms`, `10s`, `5m`, `2h`, `1d`, or plain seconds.
enum DurationText {
    static func milliseconds(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast(suffix.count)), value >= 0 else { return nil }
            return value * scale
        }
        return Int64(text).map { $0 * 1000 }
    }
}
