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

/// The only owner of SQLite in Linkpulse: the events database (`linkpulse.sqlite`, WAL, one
/// writer and a pool of readers) and the files derived from it, each with one writer: the id
/// index (`linkpulse-ids.sqlite`), the attribution (`linkpulse-attribution.sqlite`, written by
/// the attribution follower) and the rollups (`linkpulse-rollups.sqlite`, the rollup job).
///
/// Opening it runs migrations, verifies that the id index belongs to this database (rebuilding
/// it when not), catches the index up, and loads the writer's in-memory id tail.
public final class AppDatabase: Sendable {
    /// File names under the data directory.
    public static let eventsFileName = "linkpulse.sqlite"
    public static let idIndexFileName = "linkpulse-ids.sqlite"
    public static let rollupFileName = "linkpulse-rollups.sqlite"
    public static let attributionFileName = "linkpulse-attribution.sqlite"

    /// The data directory the files live in.
    public let directory: URL
    let pool: DatabasePool
    let idIndex: DatabaseQueue
    /// A connection used only to checkpoint the WAL, so the writer never stalls on it.
    let checkpointer: DatabaseQueue
    /// The rollup job's connection: the rollup file as main, the events database ("ev"), the
    /// id index ("ids") and the attribution file ("attr") attached. Only the rollup job writes
    /// the rollup file.
    let rollupQueue: DatabaseQueue
    /// The attribution follower's connection: the attribution file as main, the events
    /// database ("ev") and the id index ("ids") attached. Only the follower writes it.
    let attributionQueue: DatabaseQueue
    /// How long before an install or open a click may be to match it by fingerprint.
    let attributionWindowMs: Int64
    /// The attribution rules, applied by the follower to every event in store order.
    let attributor: Attributor
    /// How many click index entries the follower holds in memory (see `RecentClicks`).
    let recentClickCapacity: Int
    /// The memory half of the click indexes as the last committed round left it (only the
    /// follower's rounds use it, one at a time).
    let recentClicksKept = Mutex<RecentClicks?>(nil)
    /// How far attribution has come, for callers waiting for an answer.
    let attributionProgress = AttributionProgress()
    /// How far attribution had come when a timer pass last saw it move, and when (see
    /// `rollUp(maxEvents:attributing:)`).
    let attributionLastMoved = Mutex((through: Int64(-1), at: ContinuousClock.now))
    /// When the attribution file's WAL was last checkpointed (its commits never do it).
    let attributionCheckpointed = Mutex(ContinuousClock.now)
    let queries: SQLQueries
    /// Which scheduled export periods are done and which files are in place.
    public let exportLedger: ExportLedger
    /// The reads behind stats answers and raw-event exports.
    public let stats: StatsReader
    let tail: Mutex<IdTail>
    /// The ingest writer's cache of the events' text dictionary (`event_texts`).
    let dictionary = Mutex(EventDictionary())
    /// Which keys the on-disk id index may hold (see `IdFilter`).
    let filter: Mutex<IdFilter>
    /// The id index merge in progress, if any (see `mergeIdIndexStep`).
    let mergeRound: Mutex<MergeRound?>
    /// Told by `checkpoint` when the WAL should start over; the ingest writer prepares that
    /// between commits, and the derived readers wait for it (see `WALGate`).
    let walGate = WALGate()
    /// The same for the attribution file's WAL: the follower (its only writer) prepares the
    /// restart between rounds; the rollup passes, its long readers, wait at it.
    let attributionGate = WALGate()
    /// The id index's watermark as last written by a merge (merges run one at a time).
    let indexedThrough: Mutex<Int64>
    /// The thread every rollup pass of this process runs on, at low priority (ingest first).
    let rollupThread = StoreThread(name: "linkpulse.rollup", nice: 10)
    /// The thread the attribution follower runs on, woken after each commit, at the rollups'
    /// low priority: under a load that takes every core, ingest comes first (measured: at nice 5
    /// it cost batched ingest a quarter of its throughput) and attribution catches up after.
    let attributionThread = StoreThread(name: "linkpulse.attribution", nice: 10)
    /// Attribution rounds asked for by commits (a commit during a round queues the next one).
    let attributionRequests: CoalescedWork
    /// The same rounds at normal priority, run only when a caller waits for an answer (an app's
    /// first launch): it then comes before the load, not after it (measured: resolve p99 at 64
    /// connections 2.2 s with the follower alone, 40 ms with this thread). A thread's priority
    /// can be lowered but not raised again without privileges, hence a thread of its own.
    let urgentAttributionThread = StoreThread(name: "linkpulse.attribution.urgent", nice: 0)
    let urgentAttributionRequests: CoalescedWork
    /// Rollup runs asked for by the timer (a tick during a run adds nothing).
    let rollupRequests: CoalescedWork
    /// The link tuples of the rollup file, cached (shared by the rollup job and the readers).
    let linkTuples = LinkTuples()
    /// Decoded sums of cube blocks and day parts for breakdowns over long ranges (a 90-day
    /// range of 10,000 refs needs about 15 MB of them).
    let cubeSums = CubeSumsCache(limitBytes: 32 << 20)
    let logger: Logger

    /// Opens (creating when missing) the databases under `directory`.
    /// - Parameters:
    ///   - durability: the `synchronous` level of every connection to the events database.
    ///   - tailLimit: at start, merge into the id index until at most this many ids remain in memory.
    ///   - attributionWindowMs: the fingerprint attribution window (rule 3), in milliseconds.
    ///   - recentClickEntries: how many click index entries attribution keeps in memory (two a
    ///     click, 16–24 bytes each; older clicks are looked up on disk).
    public init(
        directory: URL, durability: Durability = .full, tailLimit: Int = 200_000,
        attributionWindowMs: Int64 = 2 * 3_600_000, recentClickEntries: Int = 1_000_000, logger: Logger
    ) throws {
        _ = sqliteTuned
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.logger = logger
        self.directory = directory
        let queries = try SQLQueries.load()
        self.queries = queries

        let eventsPath = directory.appending(path: Self.eventsFileName).path
        let idIndexPath = directory.appending(path: Self.idIndexFileName).path
        let rollupPath = directory.appending(path: Self.rollupFileName).path
        let attributionPath = directory.appending(path: Self.attributionFileName).path
        self.attributionWindowMs = attributionWindowMs
        attributor = Attributor(windowMs: attributionWindowMs)
        recentClickCapacity = recentClickEntries
        attributionRequests = CoalescedWork(on: attributionThread, coversRunning: false)
        urgentAttributionRequests = CoalescedWork(on: urgentAttributionThread, coversRunning: false)
        rollupRequests = CoalescedWork(on: rollupThread, coversRunning: true)

        try Self.createEventsFileIfNew(at: eventsPath)
        // The id index file first: every events connection attaches it.
        var idConfig = Configuration()
        idConfig.busyMode = .timeout(10)
        idConfig.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        idIndex = try DatabaseQueue(path: idIndexPath, configuration: idConfig)
        try Self.migrate(idIndex, with: queries.idIndexMigrations)

        // The attribution file next: the rollup job and every events connection attach it.
        let attributionConfig = Self.derivedFileConfiguration(
            cacheKiB: Self.attributionCacheKiB, attaching: [("ev", eventsPath), ("ids", idIndexPath)], checkpointsElsewhere: true)
        attributionQueue = try DatabaseQueue(path: attributionPath, configuration: attributionConfig)
        try Self.migrate(attributionQueue, with: queries.attributionMigrations)

        // The rollup file next: every events connection attaches it too.
        // 16 MiB of cache: the daemon shares its memory with ingest.
        let rollupConfig = Self.derivedFileConfiguration(
            cacheKiB: 16384, attaching: [("ev", eventsPath), ("ids", idIndexPath), ("attr", attributionPath)], sketches: true)
        rollupQueue = try DatabaseQueue(path: rollupPath, configuration: rollupConfig)
        try Self.migrate(rollupQueue, with: queries.rollupMigrations)

        var config = Configuration()
        config.busyMode = .timeout(10)
        config.maximumReaderCount = 2
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            // Checkpoints run on their own connection (see checkpoint()), not inside a commit.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            try db.execute(sql: "ATTACH DATABASE ? AS ids", arguments: [idIndexPath])
            try db.execute(sql: "ATTACH DATABASE ? AS agg", arguments: [rollupPath])
            try db.execute(sql: "ATTACH DATABASE ? AS attr", arguments: [attributionPath])
            SketchFunctions.register(in: db)
            CompactEvent.register(in: db)
        }
        pool = try DatabasePool(path: eventsPath, configuration: config)
        var checkpointConfig = Configuration()
        checkpointConfig.busyMode = .timeout(10)
        checkpointConfig.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            try db.execute(sql: "ATTACH DATABASE ? AS attr", arguments: [attributionPath])
        }
        checkpointer = try DatabaseQueue(path: eventsPath, configuration: checkpointConfig)
        try Self.migrate(pool, with: queries.migrations)
        try pool.write { db in try queries.prepareEventStatements(db) }
        exportLedger = ExportLedger(pool: pool, queries: queries.export)
        stats = StatsReader(pool: pool, queries: queries, linkTuples: linkTuples, cubeSums: cubeSums, rawHorizon: rawHorizon)

        tail = Mutex(IdTail())
        filter = Mutex(IdFilter(capacity: 0))
        mergeRound = Mutex(nil)
        indexedThrough = Mutex(0)
        try loadRawHorizon()
        try prepareIdIndex(tailLimit: tailLimit)
        try prepareAttribution()
        try prepareRollups()
    }

    /// Creates a new events database with incremental auto-vacuum, so that retention can give
    /// the space of deleted events back (see `releaseFreePages`). It has to be set before the
    /// file's first page is written, which turning WAL on already does. A file that exists
    /// with content is left as it is.
    static func createEventsFileIfNew(at path: String) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard size == nil || size == 0 else { return }
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
    }

    /// The attribution connection's page cache in the daemon.
    static let attributionCacheKiB = 8192

    /// The connection settings of a derived file (attribution, rollups), written by one thread
    /// of this process and maybe by a command beside it: WAL, `synchronous=NORMAL` (derived
    /// state is rebuilt after a power loss if need be), a WAL truncated back to 64 MiB after
    /// checkpoints, a cache of `cacheKiB`, the other files attached under their schema names.
    /// Another process's pass (`linkpulse rollup` beside `serve`) may hold the lock a while.
    /// With `checkpointsElsewhere`, its commits never checkpoint (see `checkpointAttribution`).
    static func derivedFileConfiguration(
        cacheKiB: Int, attaching files: [(schema: String, path: String)], sketches: Bool = false, checkpointsElsewhere: Bool = false
    ) -> Configuration {
        var config = Configuration()
        config.busyMode = .timeout(120)
        config.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA journal_size_limit = 67108864")
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            if checkpointsElsewhere { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            for file in files { try db.execute(sql: "ATTACH DATABASE ? AS \(file.schema)", arguments: [file.path]) }
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

    /// Runs the migrations of every file and returns (nothing else): for `linkpulse migrate`.
    public static func migrate(directory: URL, logger: Logger) throws {
        _ = try AppDatabase(directory: directory, logger: logger)
    }

    /// Whether the events database answers a trivial read.
    public func isHealthy() async -> Bool {
        let sql = queries.installation.health
        return (try? await pool.read { db in try Int.fetchOne(db, sql: sql) }) == 1
    }

    /// A deferred write transaction on the events database (see `DatabasePool.writeDeferred`).
    func writeEvents<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeDeferred(body)
    }

    /// Whether the last ingest commit failed (cleared by the next one that succeeds).
    public var ingestFailing: Bool { lastIngestFailed.withLock { $0 } }
    let lastIngestFailed = Mutex(false)
    /// The raw-event horizon (see `rawHorizonMs`), as last recorded.
    let rawHorizon = RawEventHorizon()

    /// The sizes of the installation's files and the free space beside them.
    public func diskUsage() throws -> DiskUsage {
        try DiskUsage.read(directory: directory)
    }

    /// Whether the events database file can still be written (a filesystem remounted
    /// read-only, or permissions changed under the daemon, say no).
    public var eventsFileWritable: Bool {
        access(directory.appending(path: Self.eventsFileName).path, W_OK) == 0
    }

    /// The highest seq stored (0 when empty).
    public func maxSeq() throws -> Int64 {
        let sql = queries.installation.maxSeq
        return try pool.read { db in try Int64.fetchOne(db, sql: sql) ?? 0 }
    }

    /// Copies committed pages from the WAL into the database file without blocking the writer
    /// or readers (a passive checkpoint). SQLite only starts a WAL over when a checkpoint has
    /// reached its end and no reader still reads an older snapshot, which beside constant
    /// writes and back-to-back derived reads never happens by itself; so past `restartPages`
    /// it tells the `WALGate`: the writer finishes the job between two commits (see
    /// `resetWALIfWanted`), where only the last few frames are left to copy, and the derived
    /// readers step aside while an old snapshot of theirs is in the way. Synchronous; run it
    /// from the checkpoint timer. Returns the WAL's size in pages and how many were copied.
    @discardableResult
    public func checkpoint(restartPages: Int = 4096) throws -> (walPages: Int, checkpointed: Int) {
        try checkpointer.inDatabase { db in
            let attribution = try checkpointAttribution(db, schema: "attr")
            attributionGate.measured(pages: attribution.walPages, checkpointed: attribution.checkpointed, limit: restartPages)
            let row = try Row.fetchOne(db, sql: "PRAGMA main.wal_checkpoint(PASSIVE)")
            let (pages, done): (Int, Int) = (row?[1] ?? 0, row?[2] ?? 0)
            walGate.measured(pages: pages, checkpointed: done, limit: restartPages)
            return (pages, done)
        }
    }

    /// Checkpoints the attribution file's WAL (PASSIVE: never waits for its writer), on `db`
    /// where it is attached as `schema`. The follower commits after every ingest commit; had
    /// each commit checkpointed when the WAL filled, every few hundred rounds would have paid
    /// for writing pages back and a flush (measured: a third of the resolve throughput). The
    /// daemon's checkpoint job calls it every second; the follower itself only when
    /// nothing has for `followerAfter` (a command such as `linkpulse rollup` has no job).
    /// Returns the WAL's frames and how many of them are copied back.
    @discardableResult
    func checkpointAttribution(_ db: Database, schema: String) throws -> (walPages: Int, checkpointed: Int) {
        let row = try Row.fetchOne(db, sql: "PRAGMA \(schema).wal_checkpoint(PASSIVE)")
        attributionCheckpointed.withLock { $0 = ContinuousClock.now }
        return (row?[1] ?? 0, row?[2] ?? 0)
    }

    /// How long the follower lets its WAL grow without a checkpoint before it runs one itself.
    static let followerCheckpointAfter: Duration = .seconds(5)

    /// On the writer's connection, between transactions, while a restart is wanted: a passive
    /// checkpoint that no commit can overtake. Once it reaches the WAL's end the gate opens, and
    /// the commit that follows starts the WAL over (the derived readers that step aside hold
    /// no older snapshot; readers that begin now read the database file only).
    func resetWALIfWanted(_ db: Database) {
        guard walGate.restartWanted else { return }
        // While an old snapshot keeps the copy short, every attempt copies (and flushes) what
        // it can on ingest's own time: at most one attempt every `restartAttemptSpacing`.
        let now = ContinuousClock.now
        guard lastRestartAttempt.withLock({ last in
            guard now - last >= Self.restartAttemptSpacing else { return false }
            last = now
            return true
        }), let row = try? Row.fetchOne(db, sql: "PRAGMA main.wal_checkpoint(PASSIVE)") else { return }
        let (pages, done): (Int, Int) = (row[1] ?? 0, row[2] ?? 0)
        if done >= pages { walGate.restartPrepared() }
    }

    /// When the ingest writer last tried to finish a checkpoint for a WAL restart.
    let lastRestartAttempt = Mutex(ContinuousClock.now)
    static let restartAttemptSpacing: Duration = .milliseconds(50)

    /// Set when `close` begins: the attribution follower and the rollup passes stop between
    /// two rounds instead of working a backlog off first (it waits for them at the next start).
    let closing = Mutex(false)

    /// Closes every connection. The object must not be used afterwards.
    public func close() throws {
        closing.withLock { $0 = true }
        walGate.restartPrepared()
        attributionGate.restartPrepared()
        attributionThread.stop()
        urgentAttributionThread.stop()
        rollupThread.stop()
        // Leave no large WAL behind (a command such as `generate` writes gigabytes into them).
        let truncate = queries.truncateWAL
        _ = try? checkpointer.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        _ = try? attributionQueue.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        _ = try? rollupQueue.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        _ = try? idIndex.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        try checkpointer.close()
        try attributionQueue.close()
        try rollupQueue.close()
        try pool.close()
        try idIndex.close()
    }
}
