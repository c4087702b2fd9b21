import Foundation
import GRDB
import Synchronization

extension EventStore {
    /// Deletes quarantined bodies received before `beforeMs`, in transactions of at most
    /// `batch` rows (ingest commits between them); returns how many went. Synchronous: the retention
    /// job runs it on the derived-work loop's thread, never on the cooperative pool.
    public func pruneQuarantine(receivedBeforeMs beforeMs: Int64, batch: Int = 2_000) throws -> Int {
        let sql = queries.deleteOldQuarantine
        var total = 0
        while true {
            let deleted = try pool.writeDeferred { db -> Int in
                try db.execute(sql: sql, arguments: ["before_ms": beforeMs, "batch": batch])
                return db.changesCount
            }
            total += deleted
            if deleted < batch { return total }
        }
    }

    /// The raw-event horizon, UTC ms: raw events that happened before it may have been deleted
    /// by retention (their rollups are kept). Nil while retention has deleted nothing.
    public var rawHorizonMs: Int64? { rawHorizon.ms }

    /// Gives the events database's free pages beyond `reserveBytes` (by default
    /// `SQLiteTuning.freePageReserveBytes`) back to the filesystem, a
    /// few megabytes per transaction (incremental auto-vacuum); returns how many pages went (0
    /// for a database made before incremental auto-vacuum, whose free pages are reused instead).
    @discardableResult
    public func releaseFreePages(reserveBytes: Int? = nil, step: Int = 2_048) throws -> Int {
        let reserveBytes = reserveBytes ?? tuning.freePageReserveBytes
        let sql = queries.connection.pageCounts
        var released = 0
        while true {
            let row = try pool.read { db in try Row.fetchOne(db, sql: sql) }
            let (free, pageSize, mode): (Int, Int, Int) = (
                row?[PageCountsColumn.freePages] ?? 0, row?[PageCountsColumn.pageSize] ?? 4096, row?[PageCountsColumn.autoVacuum] ?? 0)
            let surplus = free - reserveBytes / max(pageSize, 512)
            guard mode == 2, surplus > 0 else { return released }
            let pages = min(surplus, step)
            try pool.writeWithoutTransaction { db in try db.execute(sql: queries.connection.incrementalVacuum(pages: pages)) }
            released += pages
        }
    }

    /// Loads the raw-event horizon (at open).
    func loadRawHorizon() throws {
        let sql = queries.retention.rawHorizon
        let horizon = try pool.read { db in try Int64.fetchOne(db, sql: sql) }
        rawHorizon.set(horizon)
    }

    /// Refuses work that would count the events again from what is left of them (a rollup
    /// rebuild, a replay of attribution) once retention has deleted raw events: their counts
    /// live only in the rollups now.
    func refuseRecountAfterRetention(_ what: String) throws {
        guard let horizon = rawHorizonMs else { return }
        throw StoreError.rawEventsDeleted(what: what, horizonMs: horizon)
    }

    /// Whether retention has deleted no raw event yet (so the rollups can be counted again).
    var rawEventsAreAllKept: Bool { rawHorizonMs == nil }
}

extension EventStore {
    /// Records `horizonMs` as the raw-event horizon (it never moves back; stats refuse raw
    /// edges before it from now on) once there is an event before it to delete; returns the
    /// horizon in force, or nil while nothing is before it (then nothing is recorded).
    func recordRawHorizon(_ horizonMs: Int64) throws -> Int64? {
        let retention = queries.retention
        if rawHorizon.ms == nil, try pool.read({ db in try Int.fetchOne(db, sql: retention.anyBefore, arguments: ["before_ms": horizonMs]) }) == nil {
            return nil
        }
        let horizon = try pool.writeDeferred { db -> Int64 in
            try db.execute(sql: retention.setRawHorizon, arguments: ["horizon_ms": horizonMs])
            return try Int64.fetchOne(db, sql: retention.rawHorizon) ?? horizonMs
        }
        rawHorizon.set(horizon)
        return horizon
    }

    /// The seq below which events may be deleted at `nowMs`: under the rollups' and
    /// attribution's watermarks, a running backup's hold, and the id index's watermark (an id
    /// still only in the writer's memory must reach the index before its row can go, or a
    /// resend would be taken for new).
    func retentionBoundSeq(nowMs: Int64) throws -> Int64 {
        min(try derivedBoundSeq(nowMs: nowMs), indexedThrough.withLock { $0 })
    }

    /// The seq up to which the rollups and attribution have passed every event, under a running
    /// backup's hold: what sealing may move into blocks (the rows stay readable, so the id
    /// index need not have them yet).
    func derivedBoundSeq(nowMs: Int64) throws -> Int64 {
        let sql = queries.retention.watermarks
        return try pool.read { db -> Int64 in
            let row = try Row.fetchOne(db, sql: sql, arguments: ["now_ms": nowMs])
            typealias W = RetentionWatermarksColumn
            return min(row?[W.rolledThroughSeq] ?? 0, row?[W.attributedThroughSeq] ?? 0, (row?[W.holdSeq] as Int64?) ?? .max)
        }
    }

    /// The next batch of events before `horizon` and below seq `below`, after `cursor` in
    /// (time, seq) order.
    func expiredEvents(after cursor: (ms: Int64, seq: Int64), horizon: Int64, below: Int64, limit: Int) throws -> [ExpiredEvent] {
        let sql = queries.retention.expiredEvents
        return try pool.read { db in try ExpiredEvent.fetch(db, sql: sql, after: cursor, horizon: horizon, below: below, limit: limit) }
    }

    /// Deletes these raw events in one transaction, from `event_rows` or from their sealed
    /// blocks, except the clicks an attribution still names; returns how many went and the seqs
    /// of the clicks kept.
    func deleteUnlessStillMatched(_ events: [(seq: Int64, isClick: Bool)]) throws -> (deleted: Int, kept: [Int64]) {
        let retention = queries.retention
        return try pool.writeDeferred { db in
            let matched = HotStatement(try db.cachedStatement(sql: retention.clickStillMatched), in: db)
            let delete = HotStatement(try db.cachedStatement(sql: retention.deleteEvent), in: db)
            var deleted = 0
            var kept: [Int64] = []
            var sealed: [Int64] = []  // not in event_rows: in a block (see removeSealed)
            for event in events {
                if event.isClick {
                    try matched.bind(":seq", event.seq)
                    if try matched.firstInt64() != nil {
                        kept.append(event.seq)
                        continue
                    }
                }
                try delete.bind(":seq", event.seq)
                try delete.run()
                if db.changesCount == 1 { deleted += 1 } else { sealed.append(event.seq) }
            }
            deleted += try removeSealed(sealed, in: db)
            return (deleted, kept)
        }
    }
}

/// The raw-event horizon as last recorded: the time before which retention deleted the raw
/// events (nil while everything is kept). Set by retention, read by every part that must not
/// answer from events that are gone.
final class RawEventHorizon: Sendable {
    private let value = Mutex<Int64?>(nil)

    /// The horizon, UTC ms; nil while every raw event is kept.
    var ms: Int64? { value.withLock { $0 } }

    func set(_ ms: Int64?) { value.withLock { $0 = ms } }
}
