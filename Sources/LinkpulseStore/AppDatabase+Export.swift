import Foundation
import GRDB
import LinkpulseDomain

/// What a raw-event export covers: events that happened in [from, to), optionally only those
/// whose stored dimensions match the filters (as sent, not as attributed), bots included or not.
public struct RawEventQuery: Sendable {
    public var fromMs: Int64
    public var toMs: Int64
    public var filters: StatsFilters
    public var includeBots: Bool

    public init(fromMs: Int64, toMs: Int64, filters: StatsFilters = StatsFilters(), includeBots: Bool = true) {
        self.fromMs = fromMs; self.toMs = toMs; self.filters = filters; self.includeBots = includeBots
    }
}

/// The columns of a raw-event export row, in the order the export queries return them.
public enum RawEventColumn: Int32, CaseIterable, Sendable {
    case seq, eventId, type, occurredAt, sentAt, receivedAt, ref, campaign, source, medium, platform
    case deviceId, clickId, deferred, url, referrer, userAgent, osVersion, appVersion, properties
    case bot, botReason, visitorId, matchType, matchedClickId
}

/// One row of a raw-event export while it is read; valid only inside the reading callback.
public struct RawEventRow {
    let statement: HotStatement

    /// An integer column; nil when NULL.
    public func int64(_ column: RawEventColumn) -> Int64? {
        statement.isNull(column.rawValue) ? nil : statement.int64(column.rawValue)
    }

    /// Calls `body` with a text column's UTF-8 bytes (valid only inside it); nil when NULL.
    public func withText<R>(_ column: RawEventColumn, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        statement.withText(column.rawValue, body)
    }
}

/// Where a paged raw-event export stands. The events the rollup job had seen when the export
/// began are read in time order (through `event_times`), then the newer ones in arrival order,
/// so that an export running beside the rollup job neither repeats nor misses an event.
public struct RawEventCursor: Sendable {
    /// Events up to this seq are read in time order; later ones in seq order.
    let snapshotSeq: Int64
    var inTail = false
    /// The last row read (time, seq); nil before the first page.
    var afterMs: Int64?
    var afterSeq: Int64 = -1
}

/// A scheduled export file as recorded in the database.
public struct ExportFileRecord: Sendable, Equatable {
    public var name: String
    public var job: String
    public var periodStartMs: Int64
    public var periodEndMs: Int64
    /// The local date (`2026-11-21`) or hour (`2026-11-21T14`) the file covers, as in its name.
    public var periodLabel: String
    public var rows: Int
    public var bytes: Int64
    public var createdAtMs: Int64

    public init(name: String, job: String, periodStartMs: Int64, periodEndMs: Int64, periodLabel: String, rows: Int, bytes: Int64, createdAtMs: Int64) {
        self.name = name; self.job = job; self.periodStartMs = periodStartMs; self.periodEndMs = periodEndMs
        self.periodLabel = periodLabel; self.rows = rows; self.bytes = bytes; self.createdAtMs = createdAtMs
    }
}

extension AppDatabase {
    /// Starts a raw-event export at the rollup job's current watermark.
    public func rawEventCursor() throws -> RawEventCursor {
        RawEventCursor(snapshotSeq: try rolledThroughSeq())
    }

    /// Reads the next page of at most `limit` events of `query`, calling `body` for each row
    /// with `output` to fill; returns the filled output and the cursor to go on from (nil when
    /// the export is complete). Each page is its own read transaction on a reader connection.
    public func rawEventsPage<Output: Sendable>(
        _ query: RawEventQuery, cursor: RawEventCursor, limit: Int, into output: Output,
        _ body: @escaping @Sendable (inout Output, RawEventRow) -> Void
    ) async throws -> (output: Output, next: RawEventCursor?) {
        let statements = queries.export
        return try await pool.read { db in
            var output = output
            var cursor = cursor
            var count = 0
            if !cursor.inTail {
                let s = HotStatement(try db.cachedStatement(sql: statements.eventsRolled), in: db)
                s.bind(1, max(query.fromMs, cursor.afterMs ?? query.fromMs))
                s.bind(2, query.toMs)
                s.bind(3, cursor.snapshotSeq)
                s.bind(4, cursor.afterMs == nil ? -1 : cursor.afterSeq)
                Self.bindFilters(s, query, from: 5)
                s.bind(11, Int64(limit))
                while try s.step() {
                    body(&output, RawEventRow(statement: s))
                    cursor.afterMs = s.int64(RawEventColumn.occurredAt.rawValue)
                    cursor.afterSeq = s.int64(RawEventColumn.seq.rawValue)
                    count += 1
                }
                if count == limit { return (output, cursor) }
                cursor.inTail = true
                cursor.afterSeq = -1
            }
            let s = HotStatement(try db.cachedStatement(sql: statements.eventsTail), in: db)
            s.bind(1, query.fromMs)
            s.bind(2, query.toMs)
            s.bind(3, cursor.snapshotSeq)
            s.bind(4, cursor.afterSeq)
            Self.bindFilters(s, query, from: 5)
            s.bind(11, Int64(limit - count))
            var tailCount = 0
            while try s.step() {
                body(&output, RawEventRow(statement: s))
                cursor.afterSeq = s.int64(RawEventColumn.seq.rawValue)
                tailCount += 1
            }
            return (output, count + tailCount == limit ? cursor : nil)
        }
    }

    static func bindFilters(_ s: HotStatement, _ query: RawEventQuery, from first: Int32) {
        let f = query.filters
        s.bind(first, f.ref)
        s.bind(first + 1, f.campaign)
        s.bind(first + 2, f.source)
        s.bind(first + 3, f.medium)
        s.bind(first + 4, f.platform?.rawValue)
        s.bind(first + 5, query.includeBots)
    }

    /// The last period (start, end in UTC ms) the scheduled export `job` finished; nil if none.
    public func lastExportedPeriod(job: String) async throws -> (startMs: Int64, endMs: Int64)? {
        let sql = queries.export.jobLastPeriod
        return try await pool.read { db in
            try Row.fetchOne(db, sql: sql, arguments: [job]).map { ($0[0], $0[1]) }
        }
    }

    /// Records, in one transaction, that `file` is in place and its period is done.
    public func recordExport(_ file: ExportFileRecord) async throws {
        let statements = queries.export
        try await pool.write { db in
            try db.execute(sql: statements.insertFile, arguments: [
                file.name, file.job, file.periodStartMs, file.periodEndMs, file.periodLabel, file.rows, file.bytes, file.createdAtMs,
            ])
            try db.execute(sql: statements.recordJobPeriod, arguments: [file.job, file.periodStartMs, file.periodEndMs, file.createdAtMs])
        }
    }

    /// Every recorded export file, newest period first.
    public func exportFiles() async throws -> [ExportFileRecord] {
        let sql = queries.export.files
        return try await pool.read { db in
            try Row.fetchAll(db, sql: sql).map {
                ExportFileRecord(
                    name: $0[0], job: $0[1], periodStartMs: $0[2], periodEndMs: $0[3], periodLabel: $0[4],
                    rows: $0[5], bytes: $0[6], createdAtMs: $0[7])
            }
        }
    }

    /// Forgets a file retention removed.
    public func forgetExportFile(name: String) async throws {
        let sql = queries.export.deleteFile
        try await pool.write { db in try db.execute(sql: sql, arguments: [name]) }
    }
}
