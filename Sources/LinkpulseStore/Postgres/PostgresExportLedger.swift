import LinkpulseDomain
import Logging
import PostgresNIO

/// The export ledger in PostgreSQL (`lp_export_jobs`, `lp_export_files`): the same records as
/// the SQLite store's `ExportLedger`, shared by every daemon on the database. Written by the
/// daemon that runs the scheduled exports (the one doing the derived work).
public struct PostgresExportLedger: ExportRecords {
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger

    public func lastExportedPeriod(job: String) async throws -> (startMs: Int64, endMs: Int64)? {
        for try await c in try await client.query(queries.export.jobLastPeriod.query(["job": job]), logger: logger).byName() {
            return (try c.decode(PostgresJobPeriodColumn.lastPeriodStartMs), try c.decode(PostgresJobPeriodColumn.lastPeriodEndMs))
        }
        return nil
    }

    public func recordExport(_ file: ExportFileRecord) async throws {
        try await restore(jobs: [(file.job, file.periodStartMs, file.periodEndMs)], files: [file])
    }

    public func exportFiles() async throws -> [ExportFileRecord] {
        var files: [ExportFileRecord] = []
        let rows = try await client.query(queries.export.files.query(), logger: logger)
        typealias C = PostgresExportFileColumn
        for try await c in rows.byName() {
            files.append(ExportFileRecord(
                name: try c.decode(C.name), job: try c.decode(C.job), periodStartMs: try c.decode(C.periodStartMs),
                periodEndMs: try c.decode(C.periodEndMs), periodLabel: try c.decode(C.periodLabel), rows: Int(try c.decode(C.rows, as: Int64.self)),
                bytes: try c.decode(C.bytes), createdAtMs: try c.decode(C.createdAtMs)))
        }
        return files
    }

    /// Records, in one transaction, the periods each job finished and the files it keeps, as
    /// another store held them (`linkpulse copy`); a period never moves backwards.
    func restore(jobs: [(name: String, startMs: Int64, endMs: Int64)], files: [ExportFileRecord]) async throws {
        let q = queries.export
        try await client.withTransaction(logger: logger) { connection in
            for file in files {
                try await connection.query(
                    q.insertFile.query([
                        "name": file.name, "job": file.job, "period_start_ms": file.periodStartMs, "period_end_ms": file.periodEndMs,
                        "period_label": file.periodLabel, "rows": Int64(file.rows), "bytes": file.bytes, "created_at_ms": file.createdAtMs,
                    ]),
                    logger: logger)
            }
            for job in jobs {
                try await connection.query(q.recordJobPeriod.query(["job": job.name, "period_start_ms": job.startMs, "period_end_ms": job.endMs]), logger: logger)
            }
        }
    }

    public func forgetExportFile(name: String) async throws {
        try await client.query(queries.export.deleteFile.query(["name": name]), logger: logger)
    }
}
