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
    /// blocks. A run shorter than a block waits for more events. Readers see the moved events
    /// through `event_archive` unchanged. Synchronous: run it from a store thread.
    @discardableResult
    public func sealEvents(throughSeq: Int64, beforeMs: Int64, policy: SealPolicy = .standard, maxBlocks: Int = .max) throws -> SealReport {
        let archive = queries.archive
        let columnCount = EventArchiveTable.columns.count
        var report = SealReport()
        while report.blocks < maxBlocks {
            let sealed = try pool.writeDeferred { db -> SealReport? in
                let after = try Int64.fetchOne(db, sql: archive.state) ?? 0
                let read = HotStatement(try db.cachedStatement(sql: archive.rowsAfter), in: db)
                try read.bind(1, after)
                try read.bind(2, throughSeq)
                try read.bind(3, Int64(policy.blockRows))
                var rows: [[EventBlock.Value]] = []
                rows.reserveCapacity(policy.blockRows)
                while try read.step() {
                    rows.append((0..<Int32(columnCount)).map(read.blockValue))
                }
                guard rows.count == policy.blockRows else { return nil }
                let times = rows.map(Self.eventTime)
                let keep = policy.inBlock(times)
                let kept = rows.indices.filter { keep[$0] }
                guard let latest = kept.map({ times[$0] }).max(), latest < beforeMs else { return nil }
                let earliest = kept.map { times[$0] }.min()!
                let block = EventBlock.encode(rows: kept.map { rows[$0] }, columnCount: columnCount)
                let insert = HotStatement(try db.cachedStatement(sql: archive.insertBlock), in: db)
                try insert.bind(1, Self.seq(rows[kept.first!]))
                try insert.bind(2, Self.seq(rows[kept.last!]))
                try insert.bind(3, Int64(kept.count))
                try insert.bind(4, earliest)
                try insert.bind(5, latest)
                try insert.bind(6, block)
                try insert.run()
                let delete = HotStatement(try db.cachedStatement(sql: archive.deleteSealedRow), in: db)
                for i in kept {
                    try delete.bind(1, Self.seq(rows[i]))
                    try delete.run()
                }
                try db.execute(sql: archive.setSealedThrough, arguments: [Self.seq(rows[rows.count - 1])])
                return SealReport(blocks: 1, events: kept.count, leftOut: rows.count - kept.count)
            }
            guard let sealed else { break }
            report.blocks += sealed.blocks
            report.events += sealed.events
            report.leftOut += sealed.leftOut
        }
        return report
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
