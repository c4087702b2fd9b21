import Foundation
import GRDB
import LinkpulseDomain

/// Which old events move into sealed blocks (`event_blocks`), and how they are grouped.
public struct SealPolicy: Sendable {
    /// Events a block holds, at most (fewer when some are left out of it as out of order).
    public var blockRows: Int
    /// How far an event may lie outside the time span of most of its neighbours and still go
    /// into their block: events further out (a phone that flushed its events days late, a
    /// clock set a day ahead) stay in `event_rows`, so no block spans much more event time than
    /// its events were sent over, and a read of a time range inflates only the blocks of it.
    public var slackMs: Int64

    /// Blocks of 1,024 events, an hour of slack.
    public static let standard = SealPolicy(blockRows: 1_024, slackMs: 3_600_000)

    public init(blockRows: Int, slackMs: Int64) {
        self.blockRows = blockRows
        self.slackMs = slackMs
    }

    /// Which of `times` (event times of consecutive seqs) go into one block: those within
    /// the slack of the span from the 5th to the 95th percentile of them.
    func inBlock(_ times: [Int64]) -> [Bool] {
        guard !times.isEmpty else { return [] }
        let sorted = times.sorted()
        let low = sorted[sorted.count * 5 / 100], high = sorted[(sorted.count - 1) * 95 / 100]
        return times.map { $0 >= low &- slackMs && $0 <= high &+ slackMs }
    }
}

/// When old raw events are sealed: how long after they happened (`--seal-after-days`).
public struct SealAge: Sendable, Equatable {
    /// Milliseconds after an event happened before it may be sealed; nil never seals.
    public var ms: Int64?

    /// Two days: well past the attribution window, so the follower's clicks and the answers
    /// apps ask for are read from `event_rows`; older events are read mostly by exports, stats
    /// edges and recounts.
    public static let standard = SealAge(days: 2)

    /// `days` days; 0 never seals.
    public init(days: Int) { ms = days > 0 ? Int64(days) * 86_400_000 : nil }
}

/// What one call of `sealEvents` did.
public struct SealReport: Sendable, Equatable {
    /// Blocks written.
    public var blocks = 0
    /// Events moved into them.
    public var events = 0
    /// Events looked at and left in `event_rows` for being out of time order.
    public var leftOut = 0
}

extension EventStore {
    /// Moves old events out of `event_rows` into sealed blocks, one block per transaction (ingest
    /// commits between them): runs of `policy.blockRows` consecutive events with seq ≤
    /// `throughSeq`, all of whose in-order events happened before `beforeMs`, up to `maxBlocks`
    /// blocks. A run shorter than a block waits for more events, and the newest row of
    /// `event_rows` always stays (the next event's seq follows it). Readers see the moved events
    /// through `event_archive` unchanged. Synchronous: run it from a store thread.
    @discardableResult
    public func sealEvents(throughSeq: Int64, beforeMs: Int64, policy: SealPolicy = .standard, maxBlocks: Int = .max) throws -> SealReport {
        let archive = queries.archive
        var report = SealReport()
        while report.blocks < maxBlocks {
            // Looked for first on a reader: under live load nothing is old enough, and a tick
            // then writes nothing (no commit beside ingest's).
            guard try pool.read({ db in try nextRun(db, throughSeq: throughSeq, beforeMs: beforeMs, policy: policy) }) != nil else { break }
            let sealed = try pool.writeDeferred { db -> SealReport? in
                try db.execute(sql: archive.claim)
                // Read again under the write lock: another process may have sealed it meanwhile.
                guard let run = try nextRun(db, throughSeq: throughSeq, beforeMs: beforeMs, policy: policy) else { return nil }
                try Self.insertBlock(run.kept, db, archive)
                let delete = HotStatement(try db.cachedStatement(sql: queries.retention.deleteEvent), in: db)
                for row in run.kept {
                    try delete.bind(":seq", Self.seq(row))
                    try delete.run()
                }
                try db.execute(sql: archive.setSealedThrough, arguments: ["seq": run.lastSeq])
                return SealReport(blocks: 1, events: run.kept.count, leftOut: run.leftOut)
            }
            guard let sealed else { break }
            report.blocks += sealed.blocks
            report.events += sealed.events
            report.leftOut += sealed.leftOut
        }
        return report
    }

    /// The next run of events to seal as one block: the events in it (in seq order, every
    /// column), how many of the run stay out of it as out of order, and the run's last seq
    /// (how far sealing has looked once it is stored). Nil while there is no whole run with
    /// seq ≤ `throughSeq` below the newest row, or its in-order events are not all before
    /// `beforeMs`.
    private func nextRun(
        _ db: Database, throughSeq: Int64, beforeMs: Int64, policy: SealPolicy
    ) throws -> (kept: [[EventBlock.Value]], leftOut: Int, lastSeq: Int64)? {
        let archive = queries.archive
        let after = try Int64.fetchOne(db, sql: archive.state) ?? 0
        let through = min(throughSeq, (try Int64.fetchOne(db, sql: archive.newestHotSeq) ?? 0) - 1)
        let read = HotStatement(try db.cachedStatement(sql: archive.rowsAfter), in: db)
        try read.bind(":after_seq", after)
        try read.bind(":through_seq", through)
        try read.bind(":limit", Int64(policy.blockRows))
        var rows: [[EventBlock.Value]] = []
        rows.reserveCapacity(policy.blockRows)
        while try read.step() {
            rows.append((0..<Int32(EventArchiveTable.columns.count)).map(read.blockValue))
        }
        guard rows.count == policy.blockRows else { return nil }
        let keep = policy.inBlock(rows.map(Self.eventTime))
        let kept = rows.indices.filter { keep[$0] }.map { rows[$0] }
        guard let latest = kept.map(Self.eventTime).max(), latest < beforeMs else { return nil }
        return (kept, rows.count - kept.count, Self.seq(rows[rows.count - 1]))
    }

    /// Stores `rows` (in seq order, every column) as one block.
    private static func insertBlock(_ rows: [[EventBlock.Value]], _ db: Database, _ archive: ArchiveQueries) throws {
        let times = rows.map(eventTime)
        let insert = HotStatement(try db.cachedStatement(sql: archive.insertBlock), in: db)
        try insert.bind(":first_seq", seq(rows[0]))
        try insert.bind(":last_seq", seq(rows[rows.count - 1]))
        try insert.bind(":row_count", Int64(rows.count))
        try insert.bind(":earliest_ms", times.min()!)
        try insert.bind(":latest_ms", times.max()!)
        try insert.bind(":data", EventBlock.encode(rows: rows, columnCount: EventArchiveTable.columns.count))
        try insert.run()
    }

    /// Removes sealed events (retention) in the caller's transaction: each block that holds
    /// some of `seqs` is written again without them (as a new block: readers may cache a block
    /// by its id) or deleted when none of its events is left. Returns how many were found.
    func removeSealed(_ seqs: [Int64], in db: Database) throws -> Int {
        guard !seqs.isEmpty else { return 0 }
        let archive = queries.archive
        var byBlock: [Int64: (data: [UInt8], seqs: Set<Int64>)] = [:]
        let find = HotStatement(try db.cachedStatement(sql: archive.blockOfSeq), in: db)
        for seq in seqs {
            try find.bind(":seq", seq)
            guard try find.step() else { continue }
            defer { find.finish() }
            let id = find.int64(BlockOfSeqColumn.id)
            guard find.int64(BlockOfSeqColumn.lastSeq) >= seq else { continue }
            if byBlock[id] == nil { byBlock[id] = (Array(find.blob(BlockOfSeqColumn.data) ?? UnsafeRawBufferPointer(start: nil, count: 0)), []) }
            byBlock[id]!.seqs.insert(seq)
        }
        var removed = 0
        for (id, found) in byBlock.sorted(by: { $0.key < $1.key }) {
            let block = try found.data.withUnsafeBytes { try EventBlock.Inflated(compressed: $0) }
            var left: [[EventBlock.Value]] = []
            for values in try block.rows() {
                if found.seqs.contains(Self.seq(values)) { removed += 1 } else { left.append(values) }
            }
            try db.execute(sql: archive.deleteBlock, arguments: ["id": id])
            if !left.isEmpty { try Self.insertBlock(left, db, archive) }
        }
        return removed
    }

    private static func seq(_ row: [EventBlock.Value]) -> Int64 {
        if case .integer(let seq) = row[Int(EventArchiveTable.seqColumn)] { return seq }
        return 0
    }

    private static func eventTime(_ row: [EventBlock.Value]) -> Int64 {
        if case .integer(let ms) = row[Int(EventArchiveTable.timeColumn)] { return ms }
        return 0
    }
}

extension AppDatabase {
    /// Seals old raw events into compressed blocks (see `EventStore.sealEvents`): those every
    /// derived file has passed (attribution and rollups, under a running backup's hold)
    /// that happened `age` before `nowMs`, at most `maxBlocks` blocks (one short transaction
    /// each). Synchronous: run it from the derived-work loop (`AppDatabase.housekeeping`) or a
    /// command, never from the cooperative pool.
    @discardableResult
    public func sealOldEvents(nowMs: Int64, age: SealAge = .standard, maxBlocks: Int = .max) throws -> SealReport {
        guard let ageMs = age.ms else { return SealReport() }
        let through = try events.derivedBoundSeq(nowMs: nowMs)
        let report = try events.sealEvents(throughSeq: through, beforeMs: nowMs - ageMs, maxBlocks: maxBlocks)
        // The rows' pages are free now: beyond a reserve for new events, back to the filesystem.
        if report.blocks > 0 { try events.releaseFreePages() }
        return report
    }
}
