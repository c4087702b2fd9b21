import Foundation
import GRDB
import LinkpulseDomain
import CSystemTuning
import Logging
import Synchronization

/// SQLite keeps memory statistics behind one process-wide mutex taken on every allocation;
/// Linkpulse never reads them (about 10% of the writer's time). Turned off once, before the
/// first connection opens; harmless when SQLite was already initialised.
private let sqliteTuned: Void = {
    _ = linkpulse_sqlite_disable_memstatus()
}()

/// How hard a commit works to survive a crash.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: an acknowledged event survives `kill -9` and power loss.
    case full
    /// `synchronous=NORMAL`: survives `kill -9`; the last commits before a power loss may be lost.
    case normal
}

/// The only owner of SQLite in Linkpulse, and the composition of its parts, each named for
/// what it owns and with one writer:
/// - `events` (`EventStore`): the raw events and their dedupe (`linkpulse.sqlite`, the id
///   index `linkpulse-ids.sqlite`), written by the ingest writer;
/// - `attribution` (`AttributionStore`): every event's attribution (`linkpulse-attribution.sqlite`),
///   written by the attribution follower after each commit;
/// - `rollups` (`RollupStore`): the conversion counts (`linkpulse-rollups.sqlite`), written
///   by the rollup job;
/// - `stats` (`StatsReader`): the reads behind every stats answer and raw-event export;
/// - `exportLedger` (`ExportLedger`): the scheduled export periods done and files kept;
/// - `accessKeys` (`AccessKeyLedger`): the access keys, as keyed hashes.
/// - `links` (`LinkLedger`): the hosted links.
///
/// Data flows one way: events → attribution → rollups → stats. This type opens the files in
/// order, runs their migrations, ties each derived file to the events database (recomputing
/// what does not fit), and holds what spans the parts: ingest (a commit, then the follower
/// woken), retention, checkpoints and closing.
public final class AppDatabase: IngestStore {
    /// File names under the data directory.
    public static let eventsFileName = "linkpulse.sqlite"
    public static let idIndexFileName = "linkpulse-ids.sqlite"
    public static let rollupFileName = "linkpulse-rollups.sqlite"
    public static let attributionFileName = "linkpulse-attribution.sqlite"
    /// Present while `linkpulse rollup --rebuild` writes a rollup file it made anew without
    /// waiting for the disk (`RollupStore.rollUpAllInParallel(unsynced:)`): a rollup file found
    /// beside it, once no other process holds the directory, may be torn and is counted again.
    public static let rebuildMarkerFileName = "linkpulse-rollups.rebuilding"

    /// The raw events and their dedupe.
    public let events: EventStore
    /// Every event's attribution, decided once in store order.
    public let attribution: AttributionStore
    /// The conversion counts.
    public let rollups: RollupStore
    /// The reads behind stats answers and raw-event exports.
    public let stats: StatsReader
    /// Which scheduled export periods are done and which files are in place.
    public let exportLedger: ExportLedger
    /// The access keys (their keyed hashes) an operator created.
    public let accessKeys: AccessKeyLedger
    /// The hosted links.
    public let links: LinkLedger
    /// How far the rollups were when the installation was opened (after any start over at
    /// open): a daemon tells a recount from its everyday backlog by it (`RecountWatch`).
    public var progressAtOpen: RollupProgress { openedAt.withLock { $0 } }
    private let openedAt = Mutex(RollupProgress(storedThroughSeq: 0, countedThroughSeq: 0, attributedThroughSeq: 0, oldestUncountedReceivedAtMs: nil))
    /// The store's tuned sizes and times.
    public let tuning: SQLiteTuning
    let queries: SQLQueries
    let logger: Logger

    /// The data directory the files live in.
    public var directory: URL { events.directory }

    /// Opens (creating when missing) the databases under `directory`.
    /// - Parameters:
    ///   - durability: the `synchronous` level of every connection to the events database.
    ///   - attributionWindowMs: the fingerprint attribution window (rule 3), in milliseconds.
    ///   - tuning: the store's tuned sizes and times (`.command` for a command that has the
    ///     machine to itself).
    ///   - idFilter: when the id filter is built (at open, or at its first use: `IdFilterBuild`).
    public init(
        directory: URL, durability: Durability = .full, attributionWindowMs: Int64 = 2 * 3_600_000,
        tuning: SQLiteTuning = .daemon, idFilter: IdFilterBuild = .atOpen, logger: Logger
    ) throws {
        _ = sqliteTuned
        self.tuning = tuning
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.logger = logger
        let queries = try SQLQueries.load()
        self.queries = queries

        let eventsPath = directory.appending(path: Self.eventsFileName).path
        let idIndexPath = directory.appending(path: Self.idIndexFileName).path
        let rollupPath = directory.appending(path: Self.rollupFileName).path
        let attributionPath = directory.appending(path: Self.attributionFileName).path

        let connection = queries.connection
        try Self.createEventsFileIfNew(at: eventsPath, connection)
        // The id index file first: every events connection attaches it.
        var idConfig = Configuration()
        idConfig.busyMode = .timeout(10)
        idConfig.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: connection.wal)
            try db.execute(sql: connection.durabilityNormal)
        }
        let idIndex = try DatabaseQueue(path: idIndexPath, configuration: idConfig)
        try Self.migrate(idIndex, with: queries.idIndexMigrations)
        Self.compactIfLargelyFree(idIndex, connection, logger: logger)

        // The attribution file next, alone on its connection (its rounds read the events
        // through the event store): the rollup job and every events connection attach it.
        let attributionConfig = Self.derivedFileConfiguration(cacheKiB: tuning.pageCaches.attributionKiB, connection, checkpointsElsewhere: true)
        let attributionQueue = try DatabaseQueue(path: attributionPath, configuration: attributionConfig)
        try Self.migrate(attributionQueue, with: queries.attributionMigrations)
        Self.compactIfLargelyFree(attributionQueue, connection, logger: logger)
        let attributionCheckpointer = try DatabaseQueue(
            path: attributionPath,
            configuration: Self.derivedFileConfiguration(cacheKiB: 256, connection, checkpointsElsewhere: true))

        // The rollup file next, alone on its connection too (its passes count on an events
        // reader): every events connection attaches it. One an unsynced rebuild left unfinished
        // is started over first.
        try Self.discardUnfinishedRebuild(in: directory, logger: logger)
        let rollupConfig = Self.derivedFileConfiguration(cacheKiB: tuning.pageCaches.rollupKiB, connection, sketches: true)
        let rollupQueue = try DatabaseQueue(path: rollupPath, configuration: rollupConfig)
        try Self.migrate(rollupQueue, with: queries.rollupMigrations)

        var config = Configuration()
        config.busyMode = .timeout(10)
        config.maximumReaderCount = 2
        let synchronous = connection.durability(durability)
        config.prepareDatabase { db in
            try db.execute(sql: synchronous)
            // Checkpoints run on their own connection (see EventStore.checkpoint), not inside a commit.
            try db.execute(sql: connection.noAutocheckpoint)
            try db.execute(sql: connection.journalSizeLimit)
            // Small caches on the writer only: the readers answer stats and resolves from the
            // attached files.
            let attachedKiB = db.configuration.readonly ? nil : tuning.pageCaches.attachedKiB
            try connection.attach(db, path: idIndexPath, as: "ids", cacheKiB: attachedKiB)
            try connection.attach(db, path: rollupPath, as: "agg", cacheKiB: attachedKiB)
            try connection.attach(db, path: attributionPath, as: "attr", cacheKiB: attachedKiB)
            SketchFunctions.register(in: db)
            CompactEvent.register(in: db)
            try EventArchiveTable.register(in: db, statements: queries.archive.table)
        }
        let pool = try DatabasePool(path: eventsPath, configuration: config)
        // GRDB turns WAL on in the pool's writer after `prepareDatabase`, and sets
        // `synchronous=NORMAL` with it: without this the writer, the one connection that
        // commits acknowledged events, never synced its commits under `--durability full`.
        try pool.writeWithoutTransaction { db in try db.execute(sql: synchronous) }
        var checkpointConfig = Configuration()
        checkpointConfig.busyMode = .timeout(10)
        checkpointConfig.prepareDatabase { db in
            try db.execute(sql: synchronous)
            try db.execute(sql: connection.journalSizeLimit)
        }
        let checkpointer = try DatabaseQueue(path: eventsPath, configuration: checkpointConfig)
        try Self.migrate(pool, with: queries.migrations)
        try pool.write { db in try queries.prepareEventStatements(db) }

        events = EventStore(
            directory: directory, pool: pool, idIndex: idIndex, checkpointer: checkpointer, tuning: tuning, queries: queries,
            logger: logger)
        attribution = AttributionStore(
            queue: attributionQueue, checkpointer: attributionCheckpointer, events: events, windowMs: attributionWindowMs,
            tuning: tuning, queries: queries, logger: logger)
        rollups = RollupStore(queue: rollupQueue, events: events, attribution: attribution, tuning: tuning, queries: queries, logger: logger)
        stats = StatsReader(pool: pool, queries: queries, linkTuples: rollups.linkTuples, cubeSums: rollups.cubeSums, rawHorizon: events.rawHorizon)
        exportLedger = ExportLedger(pool: pool, queries: queries.export)
        accessKeys = AccessKeyLedger(pool: pool, queries: queries.keys)
        links = LinkLedger(pool: pool, queries: queries.links)
        try events.prepare(tailLimit: tuning.tailLimit, idFilter: idFilter)
        try attribution.prepareAttribution()
        try rollups.prepareRollups()
        let progress = try rollups.rollupProgressBlocking()
        openedAt.withLock { $0 = progress }
    }

    /// `init` for async callers (`serve`): opening migrates the files and catches the id index
    /// up, seconds on a large installation, so it runs on a thread of its own, never on the
    /// cooperative pool.
    public static func open(
        directory: URL, durability: Durability = .full, attributionWindowMs: Int64 = 2 * 3_600_000, logger: Logger
    ) async throws -> AppDatabase {
        try await onThreadOfItsOwn(named: "linkpulse.open") {
            try AppDatabase(directory: directory, durability: durability, attributionWindowMs: attributionWindowMs, logger: logger)
        }
    }

    /// `close` for async callers: it waits for the derived work's threads, so it runs on a
    /// thread of its own.
    public func shutDown() async throws {
        try await Self.onThreadOfItsOwn(named: "linkpulse.close") { [self] in try close() }
    }

    /// Runs `body` on a new thread and resumes the caller with its result.
    static func onThreadOfItsOwn<T: Sendable>(named name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = name
            thread.start()
        }
    }

    /// Deletes the derived files a recount is about to start over (the rollup file, and with
    /// `attribution` the attribution file too), before the caller opens the installation:
    /// instant, where emptying them row by row took 3–4.5 s of a 10 M-event rebuild (SQLite
    /// walks every page it frees, overflow chains included). They are made again at open and
    /// filled by the recount. Returns false, deleting nothing, when retention has deleted raw
    /// events (the rollups hold the only counts of those: the recount is refused at open, as
    /// before). The caller must hold the directory's `DataDirectoryLock` until the files are
    /// open again, so that no daemon has them open meanwhile.
    public static func discardDerivedFiles(in directory: URL, attribution: Bool) throws -> Bool {
        let eventsPath = directory.appending(path: eventsFileName).path
        if FileManager.default.fileExists(atPath: eventsPath) {
            var config = Configuration()
            config.readonly = true
            let events = try DatabaseQueue(path: eventsPath, configuration: config)
            let horizonSQL = try SQLQueries.load().retention.rawHorizon
            let horizon = try events.read { db in try Int64.fetchOne(db, sql: horizonSQL) }
            try events.close()
            if horizon != nil { return false }
        }
        for name in attribution ? [rollupFileName, attributionFileName] : [rollupFileName] {
            try removeDatabaseFile(named: name, in: directory)
        }
        return true
    }

    /// Deletes a database file with its WAL and shared-memory index, those that exist.
    static func removeDatabaseFile(named name: String, in directory: URL) throws {
        for suffix in ["", "-wal", "-shm"] {
            let path = directory.appending(path: name + suffix).path
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Before a rebuild writes a rollup file made anew without waiting for the disk: puts the
    /// marker that has it counted again should the machine stop first, on disk for sure
    /// (the file and the directory entry flushed).
    public static func markUnsyncedRebuild(in directory: URL) throws {
        let marker = directory.appending(path: rebuildMarkerFileName)
        try Data("\(getpid())\n".utf8).write(to: marker)
        try Durably.flush(marker)
        try Durably.flush(directory)
    }

    /// After the rebuild's rollup file is closed (its last checkpoint synced): the marker goes.
    public static func clearUnsyncedRebuild(in directory: URL) throws {
        let path = directory.appending(path: rebuildMarkerFileName).path
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        try Durably.flush(directory)
    }

    /// Deletes the rollup file (and the marker) when the marker of an unsynced rebuild is there
    /// and no other live process holds the directory: the rebuild that left it ended before its
    /// last synced checkpoint, and the file may be torn. This process holding the directory
    /// (`serve`, or the rebuild command itself) counts as no other.
    static func discardUnfinishedRebuild(in directory: URL, logger: Logger) throws {
        let marker = directory.appending(path: rebuildMarkerFileName).path
        guard FileManager.default.fileExists(atPath: marker) else { return }
        if DataDirectoryLock.isHeld(in: directory), DataDirectoryLock.holderProcessId(in: directory) != getpid() { return }
        logger.warning("a rollup rebuild did not finish; counting the rollups again")
        try removeDatabaseFile(named: rollupFileName, in: directory)
        try FileManager.default.removeItem(atPath: marker)
    }

    /// Creates a new events database with incremental auto-vacuum, so that retention can give
    /// the space of deleted events back (see `releaseFreePages`). It has to be set before the
    /// file's first page is written, which turning WAL on already does. A file that exists
    /// with content is left as it is.
    static func createEventsFileIfNew(at path: String, _ connection: ConnectionQueries) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard size == nil || size == 0 else { return }
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: connection.autoVacuumIncremental)
            _ = try String.fetchOne(db, sql: connection.wal)
        }
        try queue.close()
    }

    /// The connection settings of a derived file (attribution, rollups), written by one thread
    /// of this process and maybe by a command beside it: WAL, `synchronous=NORMAL` (derived
    /// state is rebuilt after a power loss if need be), a WAL truncated back to 64 MiB after
    /// checkpoints, a cache of `cacheKiB`, nothing attached (the derived work reads the events
    /// on an events reader). Another process's pass (`linkpulse rollup` beside `serve`) may
    /// hold the lock a while. With `checkpointsElsewhere`, its commits never checkpoint (see
    /// `AttributionStore.checkpoint(_:)`).
    static func derivedFileConfiguration(
        cacheKiB: Int, _ connection: ConnectionQueries, sketches: Bool = false, checkpointsElsewhere: Bool = false
    ) -> Configuration {
        var config = Configuration()
        config.busyMode = .timeout(120)
        config.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: connection.wal)
            try db.execute(sql: connection.durabilityNormal)
            try db.execute(sql: connection.journalSizeLimit)
            try db.execute(sql: connection.cacheSize(kib: cacheKiB))
            if checkpointsElsewhere { try db.execute(sql: connection.noAutocheckpoint) }
            if sketches { SketchFunctions.register(in: db) }
        }
        return config
    }

    /// Applies the migrations of one file that it has not had yet, in order.
    static func migrate(_ writer: some DatabaseWriter, with migrations: [(name: String, sql: String)]) throws {
        var migrator = DatabaseMigrator()
        for migration in migrations {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        try migrator.migrate(writer)
    }

    /// Vacuums a file at open when more than a quarter of its pages (and over 4 MiB) are free:
    /// after a migration that copied its tables (the id index's 0003, the attribution file's
    /// 0005), or retention's deletes. Derived files are not made with incremental vacuum (the
    /// attribution file becomes one at its first reset), so those pages would otherwise stay
    /// in the file until rows filled them again. Only space is at stake: a vacuum that fails
    /// (another process has the file open and busy) is tried again at the next open.
    static func compactIfLargelyFree(_ queue: DatabaseQueue, _ connection: ConnectionQueries, logger: Logger) {
        do {
            try queue.inDatabase { db in
                guard let row = try Row.fetchOne(db, sql: connection.pageCounts), let free: Int = row[PageCountsColumn.freePages],
                      let pages: Int = row[PageCountsColumn.pages],
                      free > 1_024, free * 4 > pages else { return }
                try db.execute(sql: connection.vacuum)
                logger.notice("vacuumed a file with many free pages", metadata: ["file": "\(queue.path)", "free_pages": "\(free)", "pages": "\(pages)"])
            }
        } catch {
            logger.notice("a file with many free pages keeps them until the next start", metadata: ["file": "\(queue.path)", "error": "\(error)"])
        }
    }

    /// Runs the migrations of every file and returns (nothing else): for `linkpulse migrate`.
    public static func migrate(directory: URL, logger: Logger) throws {
        _ = try AppDatabase(directory: directory, logger: logger)
    }

    /// Stores the events and quarantine rows of several requests in one transaction (see
    /// `EventStore.store`) and wakes the attribution follower for them: an install's answer is
    /// readable moments after its acknowledgement (woken from the writer's thread, right after
    /// the commit). A commit with a resolve in it has an app waiting for that answer: its round
    /// runs at normal priority, and reads that answer even if it runs before the app's handler
    /// begins to wait (`AttributionProgress.expect`). Only the ingest writer (and `generate`)
    /// call it.
    public func ingest(_ work: [IngestWork]) async throws -> [[StoredOutcome]] {
        let carriesResolve = work.contains(where: { $0.events.contains(where: \.isResolve) })
        return try await events.store(work) { [attribution] outcomes in
            if carriesResolve {
                attribution.progress.expect(Self.storedResolves(work, outcomes))
                attribution.followCommitsUrgently()
            } else {
                attribution.followCommits()
            }
        }
    }

    /// The seqs under which `work`'s resolves were stored now (not the ones stored before).
    static func storedResolves(_ work: [IngestWork], _ outcomes: [[StoredOutcome]]) -> [Int64] {
        var seqs: [Int64] = []
        for (item, itemOutcomes) in zip(work, outcomes) {
            for (event, outcome) in zip(item.events, itemOutcomes) where event.isResolve {
                if case .stored(let seq) = outcome { seqs.append(seq) }
            }
        }
        return seqs
    }

    /// Forgets every attribution and the rollups counted from them, so that the follower
    /// replays the events in store order (`linkpulse rollup --rebuild --reattribute`).
    public func resetAttribution() throws {
        try attribution.reset()
        try rollups.resetRollups()
    }

    /// The checkpoint job's pass (every second in the daemon): the events WAL, then the
    /// attribution file's (its commits never checkpoint), each asked to start over past
    /// `restartPages` (`SQLiteTuning.walRestartBytes` unless a test asks otherwise), each on
    /// its checkpointer's own GRDB queue. Returns the events WAL's size in pages and how many
    /// were copied.
    @discardableResult
    public func checkpoint(restartPages: Int? = nil) async throws -> (walPages: Int, checkpointed: Int) {
        let restartPages = restartPages ?? tuning.walRestartPages
        try await attribution.checkpoint(restartPages: restartPages)
        return try await events.checkpoint(restartPages: restartPages)
    }

    /// Runs `step` on the derived-work loop's thread (`DerivedWork`), a turn at a time between
    /// its rounds, until it returns false (nothing left) or throws; `ended` is told then, or
    /// when the store closes first. When housekeeping of the same `name` is due already, that
    /// one goes on and `ended` is told when it ends. Returns at once: a timer only triggers.
    public func housekeepingSoon(
        _ name: String, step: @escaping @Sendable () throws -> Bool, ended: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        attribution.choreSoon(DerivedWork.Chore(name: name, step: step, ended: ended))
    }

    /// `housekeepingSoon`, awaited: returns when the housekeeping has ended.
    public func housekeeping(_ name: String, step: @escaping @Sendable () throws -> Bool) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            housekeepingSoon(name, step: step) { continuation.resume(with: $0) }
        }
    }

    /// Closes every connection, the derived work first (it stops between two rounds and waits
    /// for the next start), leaving no large WAL behind (a command such as `generate` writes
    /// gigabytes into them). The object must not be used afterwards.
    public func close() throws {
        // Every part is told first: a run would otherwise start a new pass meanwhile.
        attribution.beginClosing()
        rollups.beginClosing()
        attribution.stopThreads()
        events.stopThreads()
        let truncate = queries.truncateWAL
        try attribution.close(truncating: truncate)
        try rollups.close(truncating: truncate)
        try events.close(truncating: truncate)
    }
}

/// What the SQLite store keeps in memory and bounds, for the memory gauges of `/metrics`.
public struct StoreMemoryReport: Sendable {
    /// The memory half of the click indexes, and its bound.
    public var recentClickEntries: Int
    public var recentClickCapacity: Int
    /// The link tuples (ref, campaign, source, medium) known to the rollups.
    public var linkTuples: Int
    /// The ids stored since the last merge into the id index.
    public var idTail: Int
}

extension AppDatabase {
    /// What the store keeps in memory now.
    public var memoryReport: StoreMemoryReport {
        let entries = attribution.recentClickEntries
        return StoreMemoryReport(
            recentClickEntries: entries.held, recentClickCapacity: entries.capacity, linkTuples: rollups.linkTuplesKnown, idTail: events.idTailCount)
    }
}
