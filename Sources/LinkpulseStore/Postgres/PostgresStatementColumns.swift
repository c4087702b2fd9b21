import LinkpulseDomain
import PostgresNIO

extension PostgresRandomAccessRow {
    /// The cell of `column`, read by its name rather than a bare position (see
    /// `StatementColumn`; `PostgresColumnsCatalog` lists the statements read so).
    subscript(_ column: some StatementColumn) -> PostgresCell {
        self[column.rawValue]
    }

    /// The value of `column`, decoded as `T`.
    func decode<T: PostgresDecodable>(_ column: some StatementColumn, as type: T.Type = T.self) throws -> T {
        try self[column.rawValue].decode(T.self)
    }
}

extension PostgresRowSequence {
    /// Each row, to be read by column name.
    func byName() -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRandomAccessRow> {
        map { $0.makeRandomAccess() }
    }
}

/// `ingest/events_after.sql`: every column of a stored event, as the derived work and
/// `linkpulse copy` read it.
enum PostgresEventColumn: Int, StatementColumn {
    case seq, eventId, type, platform, bot, occurredAtMs, receivedAtMs, sentAtMs, ref, campaign, source, medium, deferred
    case visitorId, ipHash, deviceId, clickId, clickIdSource, resolve, url, referrer, userAgent, osVersion, appVersion
    case botReason, properties, installReferrer, audience
}

/// `ingest/recent_quarantine.sql`.
enum PostgresQuarantineColumn: Int, StatementColumn {
    case id, receivedAtMs, eventIndex, code, field, message, rawText, rawTruncated, userAgent
}

/// `stats/raw_events.sql`, and `rollups/events.sql`, which adds the seq: an event with its own
/// dimensions, its match type and the dimensions attribution counts it under.
enum PostgresCountedEventColumn: Int, StatementColumn {
    case occurredAtMs, type, platform, bot, deferred, visitorId, ref, campaign, source, medium, matchType
    case countedRef, countedCampaign, countedSource, countedMedium
    case audience, referrer, clickAudience, clickReferrer, seq
}

/// `rollups/cells.sql`: a cell's key, its counts in `ConversionCounts.row`'s order, and its
/// click visitors.
enum PostgresRollupCellColumn: Int, StatementColumn {
    case dimension, grain, bucketMs, value, platform, bot
    case events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens
    case installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic
    case visitors

    /// The counts, in `ConversionCounts.row`'s order.
    static let counts = events.rawValue..<(events.rawValue + ConversionCounts.rowColumnCount)
}

/// `answer/attributed_event.sql`: an event with its attribution and its matched click, for the
/// answers to apps and the API.
enum PostgresAttributedEventColumn: Int, StatementColumn {
    case type, bot, resolve, ref, campaign, source, medium, url, properties, attributedThroughSeq
    case matchType, matchedClickSeq, candidates
    case clickEventId, clickOccurredAtMs, clickUrl, clickProperties, clickRef, clickCampaign, clickSource, clickMedium
    case firstResolveSeq
}

/// `stats/rollup_counts.sql`: a group's key, people or bots, and its summed counts in
/// `ConversionCounts.row`'s order.
enum PostgresRollupCountsColumn: Int, StatementColumn {
    case key, bot
    case events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens
    case installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic

    /// The counts, in `ConversionCounts.row`'s order.
    static let counts = events.rawValue..<(events.rawValue + ConversionCounts.rowColumnCount)
}

/// `attribution/fingerprint_clicks.sql`.
enum PostgresFingerprintClickColumn: Int, StatementColumn {
    case ipKey, platform, occurredAtMs, seq, osVersion, ref, campaign, source, medium
}

/// `keys/list.sql` and `keys/revoke.sql`: an access key as stored.
enum PostgresAccessKeyColumn: Int, StatementColumn {
    case id, name, kind, digest, createdAtMs, lastUsedAtMs, revokedAtMs
}

/// `attribution/attributions_after.sql`: an event's stored answer of attribution.
enum PostgresAttributionColumn: Int, StatementColumn {
    case seq, matchType, matchedClickSeq, candidates
}

/// `attribution/clicks_by_id.sql`: a click of an earlier round, found by its id.
enum PostgresClickByIdColumn: Int, StatementColumn {
    case eventId, seq, occurredAtMs, ref, campaign, source, medium, osVersion
}

/// `attribution/newest_ref_clicks.sql`: the newest click of a ref at or before an instant.
enum PostgresRefClickColumn: Int, StatementColumn {
    case ref, occurredAtMs, seq, campaign, source, medium
}

/// `rollups/state.sql`: how far the rollups and attribution have come.
enum PostgresRollupStateColumn: Int, StatementColumn {
    case countedThroughSeq, attributedThroughSeq
}

/// `stats/rollup_visitors.sql`: a group's key, people or bots, and a row's click visitors.
enum PostgresRollupVisitorsColumn: Int, StatementColumn {
    case key, bot, visitors
}

/// `retention/expired_months.sql`: a month partition of the events and its bounds.
enum PostgresEventMonthColumn: Int, StatementColumn {
    case month, lowerBound, upperBound
}

/// `retention/uncounted.sql`: the events of a retention batch, and those not yet counted.
enum PostgresGoneColumn: Int, StatementColumn {
    case gone, uncounted
}

/// `schema/installation_values.sql`.
enum PostgresInstallationValueColumn: Int, StatementColumn {
    case key, value
}

/// `export/job_last_period.sql`.
enum PostgresJobPeriodColumn: Int, StatementColumn {
    case lastPeriodStartMs, lastPeriodEndMs
}

/// `export/export_files.sql`: a scheduled export's file.
enum PostgresExportFileColumn: Int, StatementColumn {
    case name, job, periodStartMs, periodEndMs, periodLabel, rows, bytes, createdAtMs
}

/// Which PostgreSQL statement each set of column names belongs to, for
/// `PostgresStatementColumnsTests` (which asks the server for each statement's columns).
enum PostgresColumnsCatalog {
    /// One statement: its file under `queries/postgres/`, its SQL, and the names of its columns
    /// as the Swift side reads them, in order.
    struct Entry {
        var file: String
        var sql: String
        var columns: [String]
        /// What the statement needs to exist first (a temporary table of a transaction).
        var setup = ""
    }

    static func entries(_ queries: PostgresQueries) -> [Entry] {
        return [
            Entry(file: "ingest/events_after.sql", sql: queries.ingest.eventsAfter.sql, columns: PostgresEventColumn.columnNames),
            Entry(file: "ingest/recent_quarantine.sql", sql: queries.ingest.recentQuarantine.sql, columns: PostgresQuarantineColumn.columnNames),
            Entry(file: "rollups/events.sql", sql: queries.rollups.events.sql, columns: PostgresCountedEventColumn.columnNames),
            Entry(file: "stats/raw_events.sql", sql: queries.stats.rawEvents.sql, columns: PostgresCountedEventColumn.columnNames.dropLast()),
            Entry(file: "rollups/cells.sql", sql: queries.rollups.cells.sql, columns: PostgresRollupCellColumn.columnNames),
            Entry(file: "attribution/fingerprint_clicks.sql", sql: queries.attribution.fingerprintClicks.sql, columns: PostgresFingerprintClickColumn.columnNames),
            Entry(file: "answer/attributed_event.sql", sql: AttributedEventStatement.sql, columns: PostgresAttributedEventColumn.columnNames),
            Entry(file: "stats/rollup_counts.sql", sql: queries.stats.rollupCounts.sql, columns: PostgresRollupCountsColumn.columnNames),
            Entry(file: "keys/list.sql", sql: queries.keys.list.sql, columns: PostgresAccessKeyColumn.columnNames),
            Entry(file: "keys/revoke.sql", sql: queries.keys.revoke.sql, columns: PostgresAccessKeyColumn.columnNames),
            Entry(file: "attribution/attributions_after.sql", sql: queries.attribution.attributionsAfter.sql, columns: PostgresAttributionColumn.columnNames),
            Entry(file: "attribution/clicks_by_id.sql", sql: queries.attribution.clicksById.sql, columns: PostgresClickByIdColumn.columnNames),
            Entry(file: "attribution/newest_ref_clicks.sql", sql: queries.attribution.newestRefClicks.sql, columns: PostgresRefClickColumn.columnNames),
            Entry(file: "rollups/state.sql", sql: queries.rollups.state.sql, columns: PostgresRollupStateColumn.columnNames),
            Entry(file: "stats/rollup_visitors.sql", sql: queries.stats.rollupVisitors.sql, columns: PostgresRollupVisitorsColumn.columnNames),
            Entry(file: "retention/expired_months.sql", sql: queries.retention.expiredMonths.sql, columns: PostgresEventMonthColumn.columnNames),
            Entry(
                file: "retention/uncounted.sql", sql: queries.retention.uncounted.sql, columns: PostgresGoneColumn.columnNames,
                setup: "CREATE TEMP TABLE lp_gone (seq bigint, type smallint);"),
            Entry(file: "schema/installation_values.sql", sql: queries.schema.installationValues.sql, columns: PostgresInstallationValueColumn.columnNames),
            Entry(file: "export/job_last_period.sql", sql: queries.export.jobLastPeriod.sql, columns: PostgresJobPeriodColumn.columnNames),
            Entry(file: "export/export_files.sql", sql: queries.export.files.sql, columns: PostgresExportFileColumn.columnNames),
        ]
    }
}
