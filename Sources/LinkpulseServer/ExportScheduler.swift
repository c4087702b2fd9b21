import Dispatch
import Foundation
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics

/// Runs the scheduled exports of the config file: for each job, every period that is due and
/// not yet done, oldest first. The last period done is recorded in the database in the same
/// transaction as the file's record, after the file is in place, so a period is exported once
/// even across crashes and restarts (a crash between the rename and the record only means the
/// same file is written again, under the same name, at the next start).
///
/// On PostgreSQL every daemon has one, but only the daemon doing the derived work runs it
/// (`runsHere`): a period is written once, by one daemon, into that daemon's export directory.
public struct ExportScheduler: Sendable {
    let jobs: [ExportJob]
    let directory: URL
    let exporter: CSVExporter
    let ledger: any ExportRecords
    /// Brings the stats up to every event stored when called (the SQLite store's rollups, the
    /// PostgreSQL store's attribution).
    let bringStatsUpToDate: @Sendable () async throws -> Void
    /// Whether this daemon runs the exports now.
    let runsHere: @Sendable () -> Bool
    let now: @Sendable () -> Int64
    let logger: Logger
    let written = Counter(label: "linkpulse_export_files_total")
    let failures = Counter(label: "linkpulse_export_failures_total")

    public init(
        jobs: [ExportJob], directory: URL, exporter: CSVExporter, ledger: any ExportRecords,
        bringStatsUpToDate: @escaping @Sendable () async throws -> Void, runsHere: @escaping @Sendable () -> Bool = { true },
        now: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.jobs = jobs
        self.directory = directory
        self.exporter = exporter
        self.ledger = ledger
        self.bringStatsUpToDate = bringStatsUpToDate
        self.runsHere = runsHere
        self.now = now
        self.logger = logger
    }

    /// What one call of `runDue` did.
    public struct Outcome: Sendable {
        public var written: [ExportFileRecord] = []
        public var failed: [(job: String, error: String)] = []
        /// Periods too old to keep that catch-up skipped.
        public var skipped = 0
    }

    /// Runs what is due of `job` (or of every job): brings the stats up to date first when
    /// anything is due, then writes each period's file. A failure (disk full, permissions…) is
    /// logged and counted and leaves that period due for the next tick; it never throws. Does
    /// nothing on a daemon that does not run the exports now.
    public func runDue(only jobName: String? = nil) async -> Outcome {
        var outcome = Outcome()
        guard runsHere() else { return outcome }
        var rolledUp = false
        for job in jobs where jobName == nil || job.name == jobName {
            do {
                let last = try await ledger.lastExportedPeriod(job: job.name)
                let due = job.schedule.duePeriods(after: last?.startMs, nowMs: now(), limit: job.keep)
                if due.skipped > 0 {
                    logger.warning("export catch-up skips periods older than the files kept", metadata: ["job": "\(job.name)", "skipped": "\(due.skipped)"])
                    outcome.skipped += due.skipped
                }
                guard !due.periods.isEmpty else { continue }
                if !rolledUp {
                    try await bringStatsUpToDate()
                    rolledUp = true
                }
                for period in due.periods {
                    outcome.written.append(try await export(job, period: period))
                }
                try await applyRetention(job)
            } catch {
                failures.increment()
                logger.error("scheduled export failed; it is retried at the next tick", metadata: ["job": "\(job.name)", "error": "\(error)"])
                outcome.failed.append((job.name, "\(error)"))
            }
        }
        return outcome
    }

    /// Writes one period's file atomically and records it.
    func export(_ job: ExportJob, period: ExportSchedule.Period) async throws -> ExportFileRecord {
        let name = job.fileName(for: period)
        let (rows, bytes) = try await ExportFiles.write(directory: directory, name: name) { sink in
            try await exporter.write(job.content(for: period), gzip: job.gzip, to: sink)
        }
        let record = ExportFileRecord(
            name: name, job: job.name, periodStartMs: period.startMs, periodEndMs: period.endMs,
            periodLabel: period.label, rows: rows, bytes: bytes, createdAtMs: now())
        try await ledger.recordExport(record)
        written.increment()
        logger.info("export written", metadata: ["job": "\(job.name)", "file": "\(name)", "rows": "\(rows)", "bytes": "\(bytes)"])
        return record
    }

    /// Deletes the job's files beyond its newest `keep`.
    func applyRetention(_ job: ExportJob) async throws {
        let files = try await ledger.exportFiles().filter { $0.job == job.name }
        for file in files.dropFirst(job.keep) {
            let path = directory.appending(path: file.name).path
            if unlink(path) != 0 && errno != ENOENT {
                logger.warning("could not delete an old export", metadata: ["file": "\(file.name)", "error": "\(String(cString: strerror(errno)))"])
                continue
            }
            try await ledger.forgetExportFile(name: file.name)
        }
    }
}

extension AsyncTickJob {
    /// One scheduled export job on its timer: each tick starts what is due (see
    /// `ExportScheduler`), unless the previous tick's run is still going.
    static func scheduledExport(_ job: String, scheduler: ExportScheduler) -> AsyncTickJob {
        AsyncTickJob(name: "export-\(job)") { _ = await scheduler.runDue(only: job) }
    }
}
