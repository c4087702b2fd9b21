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
        for try await c in try await client.query(PostgresStore.query(queries.export.jobLastPeriod, job), logger: logger).byName() {
            return (try c.decode(PostgresJobPeriodColumn.lastPeriodStartMs), try c.decode(PostgresJobPeriodColumn.lastPeriodEndMs))
        }
        return nil
    }

    public func recordExport(_ file: ExportFileRecord) async throws {
        try await restore(jobs: [(file.job, file.periodStartMs, file.periodEndMs)], files: [file])
    }

    public func exportFiles() async throws -> [ExportFileRecord] {
        var files: [ExportFileRecord] = []
        let rows = try await client.query(PostgresQuery(unsafeSQL: queries.export.files), logger: logger)
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
                    PostgresStore.query(
                        q.insertFile, file.name, file.job, file.periodStartMs, file.periodEndMs, file.periodLabel, Int64(file.rows), file.bytes,
                        file.createdAtMs),
                    logger: logger)
            }
            for job in jobs {
                try await connection.query(PostgresStore.query(q.recordJobPeriod, job.name, job.startMs, job.endMs), logger: logger)
            }
        }
    }

    public func forgetExportFile(name: String) async throws {
        try await client.query(PostgresStore.query(queries.export.deleteFile, name), logger: logger)
    }
}
