import LinkpulseDomain
import Logging
import PostgresNIO

/// What one run of raw-event retention did on PostgreSQL.
public struct PostgresRetentionOutcome: Sendable, Equatable {
    /// The horizon the run worked to: raw events before it may be gone.
    public var horizonMs: Int64
    /// The month partitions dropped, and the rows of `lp_events_default` deleted.
    public var droppedMonths: [String] = []
    public var deletedDefaultEvents = 0
    /// Whether events before the horizon wait for the rollups to count them (the run stopped).
    public var waitsForRollups = false
}

extension PostgresDerivedWork {
    /// Deletes the raw events that happened before `horizonMs`, on this daemon's connection
    /// between its rounds (so no round sees a half-deleted range), once the rollups have counted
    /// them: whole month partitions ending at or before it are dropped, rows of the default
    /// partition before it deleted in batches of `batch`. In each transaction, with what it
    /// deletes: the horizon is recorded (stats then refuse edges before it), the click indexes
    /// forget the clicks before it (attribution matches none of them any more, as on SQLite),
    /// the clicks an event still kept was attributed to are kept (`lp_kept_clicks`), and the
    /// attributions of the deleted events go. Only while this daemon leads.
    @discardableResult
    public func pruneRawEvents(before horizonMs: Int64, batch: Int = 5_000) async throws -> PostgresRetentionOutcome {
        let session = try await currentSession()
        guard session.leading else { return PostgresRetentionOutcome(horizonMs: horizonMs) }
        let connection = session.connection
        let q = queries.retention
        var outcome = PostgresRetentionOutcome(horizonMs: horizonMs)
        var months: [String] = []
        for try await c in try await connection.query(q.expiredMonths.query(["horizon_ms": horizonMs]), logger: logger).byName() {
            months.append(try c.decode(PostgresEventMonthColumn.month))
        }
        for name in months {
            // A name from the catalogue, checked again before it is formatted into SQL.
            guard name.utf8.count == "lp_events_2026_11".utf8.count, name.hasPrefix("lp_events_"),
                  name.dropFirst(10).allSatisfy({ $0.isNumber || $0 == "_" }) else { continue }
            let done = try await deleteBatch(
                gone: PostgresQuery(unsafeSQL: q.goneMonth.sql.replacingOccurrences(of: "%I", with: "\"\(name)\"")),
                delete: PostgresQuery(unsafeSQL: q.dropMonth.sql.replacingOccurrences(of: "%I", with: "\"\(name)\"")),
                evenIfEmpty: true, horizonMs: horizonMs, on: connection)
            guard done != nil else {
                outcome.waitsForRollups = true
                return outcome
            }
            outcome.droppedMonths.append(name)
        }
        while true {
            guard let deleted = try await deleteBatch(
                gone: q.goneDefault.query(["before_ms": horizonMs, "batch": Int64(batch)]), delete: q.deleteDefault.query(),
                evenIfEmpty: false, horizonMs: horizonMs, on: connection)
            else {
                outcome.waitsForRollups = true
                return outcome
            }
            outcome.deletedDefaultEvents += deleted
            if deleted < batch { return outcome }
        }
    }

    /// One transaction of retention: `gone` fills `lp_gone` with a batch of events, `delete`
    /// removes them (an empty batch too with `evenIfEmpty`: an empty month partition goes).
    /// Returns how many the batch held, or nil (nothing done) when some are not counted by the
    /// rollups yet.
    private func deleteBatch(
        gone: PostgresQuery, delete: PostgresQuery, evenIfEmpty: Bool, horizonMs: Int64, on connection: PostgresConnection
    ) async throws -> Int? {
        let q = queries.retention
        return try await connection.withTransaction(logger: logger) { connection in
            try await connection.query(gone, logger: logger)
            var (size, uncounted): (Int64, Int64) = (0, 0)
            for try await c in try await connection.query(q.uncounted.query(), logger: logger).byName() {
                (size, uncounted) = (try c.decode(PostgresGoneColumn.gone), try c.decode(PostgresGoneColumn.uncounted))
            }
            guard uncounted == 0 else { return nil }
            guard size > 0 || evenIfEmpty else { return 0 }
            try await connection.query(q.recordHorizon.query(["horizon_ms": String(horizonMs)]), logger: logger)
            try await connection.query(q.dropClickIndexes.query(["before_ms": horizonMs]), logger: logger)
            try await connection.query(q.keepClicks.query(), logger: logger)
            try await connection.query(q.forget.query(), logger: logger)
            try await connection.query(delete, logger: logger)
            return Int(size)
        }
    }
}
