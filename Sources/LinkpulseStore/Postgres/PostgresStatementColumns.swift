import LinkpulseDomain
import PostgresNIO

extension PostgresRandomAccessRow {
    /// The cell of `column`, read by its name rather than a bare position (see
    /// `StatementColumn`; `PostgresColumnsCatalog` lists the statements read so).
    subscript(_ column: some StatementColumn) -> PostgresCell {
        self[column.rawValue]
    }
}

/// `ingest/events_after.sql`: every column of a stored event, as the derived work and
/// `linkpulse copy` read it.
enum PostgresEventColumn: Int, StatementColumn {
    case seq, eventId, type, platform, bot, occurredAtMs, receivedAtMs, sentAtMs, ref, campaign, source, medium, deferred
    case visitorId, ipHash, deviceId, clickId, clickIdSource, resolve, url, referrer, userAgent, osVersion, appVersion
    case botReason, properties
}

/// `ingest/recent_quarantine.sql`.
enum PostgresQuarantineColumn: Int, StatementColumn {
    case id, receivedAtMs, eventIndex, code, field, message, rawText, rawTruncated, userAgent
}

/// `stats/raw_events.sql`, and `rollups/events.sql`, which adds the seq: an event with its own
/// dimensions, its match type and the dimensions attribution counts it under.
enum PostgresCountedEventColumn: Int, StatementColumn {
    case occurredAtMs, type, platform, bot, deferred, visitorId, ref, campaign, source, medium, matchType
    case countedRef, countedCampaign, countedSource, countedMedium, seq
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

/// Which PostgreSQL statement each set of column names belongs to, for
/// `PostgresStatementColumnsTests` (which asks the server for each statement's columns).
enum PostgresColumnsCatalog {
    /// One statement: its file under `queries/postgres/`, its SQL, and the names of its columns
    /// as the Swift side reads them, in order.
    struct Entry {
        var file: String
        var sql: String
        var columns: [String]
    }

    static func entries(_ queries: PostgresQueries) -> [Entry] {
        return [
            Entry(file: "ingest/events_after.sql", sql: queries.ingest.eventsAfter, columns: PostgresEventColumn.columnNames),
            Entry(file: "ingest/recent_quarantine.sql", sql: queries.ingest.recentQuarantine, columns: PostgresQuarantineColumn.columnNames),
            Entry(file: "rollups/events.sql", sql: queries.rollups.events, columns: PostgresCountedEventColumn.columnNames),
            Entry(file: "stats/raw_events.sql", sql: queries.stats.rawEvents, columns: PostgresCountedEventColumn.columnNames.dropLast()),
            Entry(file: "rollups/cells.sql", sql: queries.rollups.cells, columns: PostgresRollupCellColumn.columnNames),
            Entry(file: "attribution/fingerprint_clicks.sql", sql: queries.attribution.fingerprintClicks, columns: PostgresFingerprintClickColumn.columnNames),
            Entry(file: "answer/attributed_event.sql", sql: AttributedEventStatement.sql, columns: PostgresAttributedEventColumn.columnNames),
            Entry(file: "stats/rollup_counts.sql", sql: queries.stats.rollupCounts, columns: PostgresRollupCountsColumn.columnNames),
        ]
    }
}
