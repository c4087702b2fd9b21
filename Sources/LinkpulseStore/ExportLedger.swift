import GRDB

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

/// Which scheduled export periods are done and which files are in place, in whichever store
/// the daemon runs on (`ExportLedger` in SQLite, `PostgresExportLedger`). A period and its file
/// are recorded together, after the file is in place.
public protocol ExportRecords: Sendable {
    /// The last period (start, end in UTC ms) the scheduled export `job` finished; nil if none.
    func lastExportedPeriod(job: String) async throws -> (startMs: Int64, endMs: Int64)?
    /// Records, in one transaction, that `file` is in place and its period is done.
    func recordExport(_ file: ExportFileRecord) async throws
    /// Every recorded export file, newest period first.
    func exportFiles() async throws -> [ExportFileRecord]
    /// Forgets a file retention removed.
    func forgetExportFile(name: String) async throws
}

/// The export ledger: which scheduled export periods are done and which files are in place
/// (the `export_jobs` and `export_files` tables of the events database). Only the export
/// scheduler and the retention job write it; a period and its file are recorded in one
/// transaction, so a period is written once whatever stops the daemon.
public final class ExportLedger: ExportRecords {
    let pool: DatabasePool
    let queries: ExportQueries

    init(pool: DatabasePool, queries: ExportQueries) {
        self.pool = pool
        self.queries = queries
    }

    /// The last period (start, end in UTC ms) the scheduled export `job` finished; nil if none.
    public func lastExportedPeriod(job: String) async throws -> (startMs: Int64, endMs: Int64)? {
        let sql = queries.jobLastPeriod
        return try await pool.read { db in
            try Row.fetchOne(db, sql: sql, arguments: ["job": job]).map { ($0["last_period_start_ms"], $0["last_period_end_ms"]) }
        }
    }

    /// Where the next period of the scheduled export `job` begins (the end of the last one it
    /// finished), UTC ms; nil if it never finished one. Synchronous, for the retention job.
    public func nextExportPeriodStart(job: String) throws -> Int64? {
        let sql = queries.jobLastPeriod
        return try pool.read { db in try Row.fetchOne(db, sql: sql, arguments: ["job": job]).map { $0["last_period_end_ms"] } }
    }

    /// Records, in one transaction, that `file` is in place and its period is done.
    public func recordExport(_ file: ExportFileRecord) async throws {
        let statements = queries
        try await pool.writeDeferred { db in
            try db.execute(sql: statements.insertFile, arguments: [
                "name": file.name, "job": file.job, "period_start_ms": file.periodStartMs, "period_end_ms": file.periodEndMs,
                "period_label": file.periodLabel, "rows": file.rows, "bytes": file.bytes, "created_at_ms": file.createdAtMs,
            ])
            try db.execute(sql: statements.recordJobPeriod, arguments: [
                "job": file.job, "period_start_ms": file.periodStartMs, "period_end_ms": file.periodEndMs, "now_ms": file.createdAtMs,
            ])
        }
    }

    /// Every recorded export file, newest period first.
    public func exportFiles() async throws -> [ExportFileRecord] {
        let sql = queries.files
        return try await pool.read { db in
            try Row.fetchAll(db, sql: sql).map {
                ExportFileRecord(
                    name: $0["name"], job: $0["job"], periodStartMs: $0["period_start_ms"], periodEndMs: $0["period_end_ms"],
                    periodLabel: $0["period_label"], rows: $0["rows"], bytes: $0["bytes"], createdAtMs: $0["created_at_ms"])
            }
        }
    }

    /// Forgets a file retention removed.
    public func forgetExportFile(name: String) async throws {
        let sql = queries.deleteFile
        try await pool.writeDeferred { db in try db.execute(sql: sql, arguments: ["name": name]) }
    }
}
