import Foundation
import GRDB
import LinkpulseDomain
import Logging
import Synchronization

/// The raw events and their dedupe: the events database (`linkpulse.sqlite`: events, their
/// text dictionary, the quarantine, the installation's identity) and the id index
/// (`linkpulse-ids.sqlite`) beside it. The ingest writer is its only writer of events; the
/// id index merge job is the only writer of the index. Every other part reads the events
/// through it.
public final class EventStore: Sendable {
    /// The data directory the files live in.
    public let directory: URL
    /// The events database: one writer (ingest, retention, the export ledger, the access keys) and readers.
    /// Its connections attach the id index ("ids"), the attribution ("attr") and the rollups
    /// ("agg"), so that the readers of answers join them in one snapshot. Its readers also
    /// serve the derived work its events: an attribution round's page (`attributionPage`), a
    /// rollup pass's count (`RollupStore.count`).
    let pool: DatabasePool
    let idIndex: DatabaseQueue
    /// A connection used only to checkpoint the WAL, so the writer never stalls on it.
    let checkpointer: DatabaseQueue
    let queries: SQLQueries
    let logger: Logger
    /// The ingest writer's in-memory ids not yet merged into the on-disk index.
    let tail = Mutex(IdTail())
    /// The ingest writer's cache of the events' text dictionary (`event_texts`).
    let dictionary = Mutex(EventDictionary())
    /// Which keys the on-disk id index may hold (see `IdFilter`). Complete only once
    /// `filterPending` is false: read it after `ensureIdFilter()`.
    let filter = Mutex(IdFilter(capacity: 0))
    /// Whether the filter was left to be built at its first use (see `IdFilterBuild`); held
    /// while it is built, so it is built once and nobody reads it half-built.
    let filterPending = Mutex(false)
    /// The id index merge in progress, if any (see `mergeIdIndexStep`).
    let mergeRound = Mutex<MergeRound?>(nil)
    /// The id index's watermark as last written by a merge (merges run one at a time).
    let indexedThrough = Mutex<Int64>(0)
    /// How many keys each level of the id index holds, as merges and folds left them.
    let idLevels = Mutex(IdIndexLevels(main: 0, recent: 0))
    /// The fold of the recent level into the main one in progress, if any (see `foldStep`).
    let foldRound = Mutex<FoldRound?>(nil)
    /// The store's tuned sizes and times (the id index's folds and slices, the WAL restarts).
    let tuning: SQLiteTuning
    /// Held by a merge step: steps run one at a time, whichever thread asked.
    let mergeSteps = Mutex(())
    /// The thread merge steps run on while the writer's tail is within its bound: at the
    /// rollups' low priority, since a step rewrites many of the index's leaves and the handlers
    /// come first (measured on 16 M events: single-event ingest at 64 connections 18,400–20,600
    /// requests/s against 14,900–18,300 with merges at normal priority).
    let idMergeThread = StoreThread(name: "linkpulse.ids", nice: 10)
    let idMergeRequests: CoalescedWork
    /// The same steps at normal priority, once the tail has outgrown its bound: a load that
    /// leaves no idle CPU would otherwise grow it, and the writer's memory, without end.
    let idMergeUrgentThread = StoreThread(name: "linkpulse.ids.urgent")
    let idMergeUrgentRequests: CoalescedWork
    /// Set by `checkpoint` when the WAL is past its limit: the ingest writer then copies it to
    /// the end between two commits (`resetWALIfWanted`), and its next commit starts it over.
    let walRestartWanted = Atomic<Bool>(false)
    /// When the ingest writer last tried to finish a checkpoint for a WAL restart.
    let lastRestartAttempt = Mutex(ContinuousClock.now)
    let lastIngestFailed = Mutex(false)
    /// How far back raw events are kept (set by retention).
    let rawHorizon = RawEventHorizon()

    init(
        directory: URL, pool: DatabasePool, idIndex: DatabaseQueue, checkpointer: DatabaseQueue, tuning: SQLiteTuning, queries: SQLQueries,
        logger: Logger
    ) {
        self.directory = directory
        self.tuning = tuning
        self.pool = pool
        self.idIndex = idIndex
        self.checkpointer = checkpointer
        self.queries = queries
        self.logger = logger
        idMergeRequests = CoalescedWork(on: idMergeThread, coversRunning: true)
        idMergeUrgentRequests = CoalescedWork(on: idMergeUrgentThread, coversRunning: true)
    }

    /// At open: loads the raw-event horizon, ties the id index to this database and catches it
    /// up, and loads the writer's tail; builds the id filter now or leaves it to its first use.
    func prepare(tailLimit: Int, idFilter: IdFilterBuild) throws {
        try loadRawHorizon()
        try prepareIdIndex(tailLimit: tailLimit, idFilter: idFilter)
    }

    /// Whether the events database answers a trivial read.
    public func isHealthy() async -> Bool {
        let sql = queries.installation.health
        return (try? await pool.read { db in try Int.fetchOne(db, sql: sql) }) == 1
    }

    /// Whether the last ingest commit failed (cleared by the next one that succeeds).
    public var ingestFailing: Bool { lastIngestFailed.withLock { $0 } }

    /// The sizes of the installation's files and the free space beside them.
    public func diskUsage() throws -> DiskUsage {
        try DiskUsage.read(directory: directory)
    }

    /// Whether the events database file can still be written (a filesystem remounted
    /// read-only, or permissions changed under the daemon, say no).
    public var eventsFileWritable: Bool {
        access(directory.appending(path: AppDatabase.eventsFileName).path, W_OK) == 0
    }

    /// The highest seq stored (0 when empty).
    public func maxSeq() throws -> Int64 {
        let sql = queries.installation.maxSeq
        return try pool.read { db in try Int64.fetchOne(db, sql: sql) ?? 0 }
    }

    /// The installation's identity, which every derived file records to know it belongs here.
    func databaseId() throws -> String {
        let sql = queries.installation.databaseId
        return try pool.read { db in try String.fetchOne(db, sql: sql) ?? "" }
    }

    /// The id of the event stored under `seq`; nil for seq 0 or none.
    func eventId(at seq: Int64) throws -> String? {
        guard seq > 0 else { return nil }
        return try pool.read { db in try String.fetchOne(db, sql: queries.eventIdAtSeq, arguments: ["seq": seq]) }
    }

    /// Why a derived file's state (its owner database id, watermark and the id of the event
    /// at the watermark) does not fit the events database, or nil when it does: it belongs to
    /// another database, claims events that do not exist, or names another event at its
    /// watermark (an events database restored from another copy).
    func mismatch(databaseId owner: String, watermark: Int64, eventIdAtWatermark: String?) throws -> String? {
        if owner != (try databaseId()) { return "it belongs to another database" }
        if watermark > (try maxSeq()) { return "it counts events the database does not hold (an older copy?)" }
        if eventIdAtWatermark != (try eventId(at: watermark)) {
            return "the database holds another event at its watermark (restored from another copy?)"
        }
        return nil
    }

    /// Copies committed pages of the events WAL into the database file without blocking the
    /// writer or readers (a passive checkpoint). SQLite only starts a WAL over at a commit that
    /// finds every frame copied and no reader on an older snapshot, which beside commits every
    /// few milliseconds never happens by itself; so past `restartPages` it asks the writer to
    /// finish the job between two commits (`resetWALIfWanted`), where only the last few frames
    /// are left to copy. Readers hold the events' snapshot only briefly (the derived work reads
    /// them a page at a time, `attributionPage`), so no one waits for the restart. Runs on the
    /// checkpointer's own GRDB queue. Returns the WAL's size in pages and how many were copied.
    @discardableResult
    func checkpoint(restartPages: Int) async throws -> (walPages: Int, checkpointed: Int) {
        try await checkpointer.writeWithoutTransaction { [queries] db in
            let row = try Row.fetchOne(db, sql: queries.connection.checkpointPassive)
            let (pages, done): (Int, Int) = (row?[WALCheckpointColumn.log] ?? 0, row?[WALCheckpointColumn.checkpointed] ?? 0)
            self.walRestartWanted.store(pages > restartPages, ordering: .relaxed)
            return (pages, done)
        }
    }

    /// On the writer's connection, between transactions, while a restart is wanted: a passive
    /// checkpoint that no commit can overtake. Once it reaches the WAL's end, the commit that
    /// follows starts the WAL over (readers that begin now read the database file only).
    func resetWALIfWanted(_ db: Database) {
        guard walRestartWanted.load(ordering: .relaxed) else { return }
        // While an old snapshot keeps the copy short, every attempt copies (and flushes) what
        // it can on ingest's own time: at most one attempt every `SQLiteTuning.restartAttemptSpacing`.
        let now = ContinuousClock.now
        guard lastRestartAttempt.withLock({ last in
            guard now - last >= tuning.restartAttemptSpacing else { return false }
            last = now
            return true
        }), let row = try? Row.fetchOne(db, sql: queries.connection.checkpointPassive) else { return }
        let (pages, done): (Int, Int) = (row[WALCheckpointColumn.log] ?? 0, row[WALCheckpointColumn.checkpointed] ?? 0)
        if done >= pages { walRestartWanted.store(false, ordering: .relaxed) }
    }

    /// Lets the merge steps asked for finish, then ends the merge threads (at shutdown).
    func stopThreads() {
        idMergeThread.stop()
        idMergeUrgentThread.stop()
    }

    /// Saves the id filter for the next open (`saveIdFilter`), truncates the WALs and closes the
    /// connections (at shutdown, once nothing else uses them).
    func close(truncating truncate: String) throws {
        saveIdFilter()
        _ = try? checkpointer.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        _ = try? idIndex.inDatabase { db in try Row.fetchOne(db, sql: truncate) }
        try checkpointer.close()
        try pool.close()
        try idIndex.close()
    }
}

/// The watermark (second column) of a derived file's state query's single row; 0 without a row.
func derivedWatermark(_ db: Database, _ stateSQL: String) throws -> Int64 {
    try Row.fetchOne(db.cachedStatement(sql: stateSQL)).map { $0[DerivedStateColumn.throughSeq] as Int64 } ?? 0
}
