import Foundation
import GRDB
import Synchronization
import LinkpulseDomain

/// What one run of raw-event retention did.
public struct RawRetentionOutcome: Sendable, Equatable {
    /// The raw-event horizon after the run, UTC ms: events before it may be gone.
    public var horizonMs: Int64
    /// Raw events deleted.
    public var deletedEvents = 0
    /// Clicks before the horizon kept because an event still kept is counted under their link.
    public var keptClicks = 0
    /// Pages the events database gave back to the filesystem.
    public var releasedPages = 0
}

extension AppDatabase {
    /// Deletes the raw events that happened before `horizonMs` and are counted in the rollups,
    /// in transactions of at most `batch` events (ingest commits between them), and gives the
    /// space back. Synchronous: never run it on the cooperative pool (the daemon runs it a step
    /// a turn on the derived-work loop, see `rawRetentionRun`).
    ///
    /// Until there is a raw event to delete, nothing is recorded and nothing changes. Then, in
    /// order, so that no reader ever counts from a half-deleted range:
    /// 1. the horizon is recorded (it never moves back): stats refuse raw edges before it, and
    ///    the attribution follower stops matching clicks before it;
    /// 2. the follower's round in progress, which may still have matched such a click, ends;
    /// 3. batch by batch, oldest first, below the rollups', attribution's and id index's
    ///    watermarks and a running backup's hold (an id still only in the writer's memory must
    ///    reach the index before its row can go, or a resend would be taken for new): the
    ///    attributions of the batch's events go, then the events, except the clicks an event
    ///    still kept was attributed to (their link is read from their row; they go with the
    ///    last such event);
    /// 4. the on-disk click indexes drop what is before the horizon, and free pages past a
    ///    reserve are released (new installations are created with incremental auto-vacuum;
    ///    older ones reuse the free pages instead, so their file stops growing).
    public func pruneRawEvents(before horizonMs: Int64, batch: Int = 2_000) throws -> RawRetentionOutcome {
        var run = try rawRetentionRun(before: horizonMs, batch: batch)
        while try run.step() {}
        return run.outcome
    }

    /// `pruneRawEvents` a bounded step at a time (the daemon's retention runs so, between the
    /// derived work's rounds): records the horizon and ends the round in progress now (1 and 2);
    /// each `step` then deletes one batch, or, after the last, does 4.
    public func rawRetentionRun(before horizonMs: Int64, batch: Int = 2_000) throws -> RawRetentionRun {
        // Nothing to delete yet: no horizon, so nothing is refused that still could be answered.
        guard let horizon = try events.recordRawHorizon(horizonMs) else { return RawRetentionRun(nothingBefore: horizonMs) }
        try attribution.adoptRawHorizon()
        let belowSeq = try events.retentionBoundSeq(nowMs: Int64(Date().timeIntervalSince1970 * 1000))
        return RawRetentionRun(database: self, horizon: horizon, belowSeq: belowSeq, batch: batch)
    }
}

/// One run of raw-event retention, a batch a step (see `AppDatabase.rawRetentionRun`).
public struct RawRetentionRun: Sendable {
    private var database: AppDatabase?
    private let horizon: Int64
    private let belowSeq: Int64
    private let batch: Int
    private var cursor = (ms: Int64.min, seq: Int64.min)
    private var keptClicks: [Int64] = []
    private var batchesLeft: Bool
    /// What the run has done so far.
    public private(set) var outcome: RawRetentionOutcome

    /// A run with nothing to do: no raw event before `horizonMs` yet.
    init(nothingBefore horizonMs: Int64) {
        (database, horizon, belowSeq, batch, batchesLeft) = (nil, horizonMs, 0, 0, false)
        outcome = RawRetentionOutcome(horizonMs: horizonMs)
    }

    init(database: AppDatabase, horizon: Int64, belowSeq: Int64, batch: Int) {
        (self.database, self.horizon, self.belowSeq, self.batch, batchesLeft) = (database, horizon, belowSeq, batch, true)
        outcome = RawRetentionOutcome(horizonMs: horizon)
    }

    /// Deletes the next batch, or, once none is left, the clicks kept only for events deleted
    /// since, the click indexes' entries before the horizon and the free pages; returns whether
    /// more is left.
    public mutating func step() throws -> Bool {
        guard let database else { return false }
        let (events, attribution) = (database.events, database.attribution)
        if batchesLeft {
            let expired = try events.expiredEvents(after: cursor, horizon: horizon, below: belowSeq, limit: batch)
            if let last = expired.last {
                cursor = (last.occurredAtMs, last.seq)
                try attribution.forget(expired)
                let (deleted, kept) = try events.deleteUnlessStillMatched(expired.map { ($0.seq, $0.isClick) })
                outcome.deletedEvents += deleted
                keptClicks += kept
            }
            batchesLeft = expired.count == batch
            return true
        }
        // A click kept only for events deleted in a later batch of this run goes now.
        if !keptClicks.isEmpty {
            let (deleted, kept) = try events.deleteUnlessStillMatched(keptClicks.map { ($0, true) })
            outcome.deletedEvents += deleted
            outcome.keptClicks = kept.count
        }
        try attribution.dropFingerprintClicks(before: horizon, batch: batch)
        if outcome.deletedEvents > 0 { outcome.releasedPages = try events.releaseFreePages() }
        self.database = nil
        return false
    }
}

/// A raw event retention may delete.
struct ExpiredEvent {
    var seq: Int64
    var occurredAtMs: Int64
    var isClick: Bool
    var ref: String?

    static func fetch(
        _ db: Database, sql: String, after cursor: (ms: Int64, seq: Int64), horizon: Int64, below: Int64, limit: Int
    ) throws -> [ExpiredEvent] {
        let s = HotStatement(try db.cachedStatement(sql: sql), in: db)
        try s.bind(":after_ms", cursor.ms)
        try s.bind(":after_seq", cursor.seq)
        try s.bind(":horizon_ms", horizon)
        try s.bind(":below_seq", below)
        try s.bind(":limit", Int64(limit))
        var found: [ExpiredEvent] = []
        while try s.step() {
            typealias C = ExpiredEventColumn
            found.append(ExpiredEvent(seq: s.int64(C.seq), occurredAtMs: s.int64(C.occurredAtMs), isClick: s.int64(C.type) == 0, ref: s.text(C.ref)))
        }
        return found
    }
}
