import GRDB

/// The result columns of one statement of `queries/`, in the statement's order: a case a column,
/// named as the column in camel case (`attributed_through_seq`: `attributedThroughSeq`). Rows
/// are read by these names (`row[AttributionStateColumn.fingerprintFromMs]`), not by a bare
/// position, so a SELECT reordered in `queries/` fails `StatementColumnsTests` (which prepares
/// each statement named in `StatementColumnsCatalog` and compares) instead of reading the
/// wrong column. The hot loops that read rows through `HotStatement` keep positions, named
/// where they are read.
protocol StatementColumn: RawRepresentable<Int>, CaseIterable, Sendable, ColumnIndex {}

/// A result column, for `HotStatement`'s accessors: a `StatementColumn`, or a bare position
/// (the only column of a one-column statement, or a column counted from a named one).
protocol ColumnIndex {
    /// The column's 0-based position.
    var index: Int32 { get }
}

extension Int32: ColumnIndex {
    @inline(__always) var index: Int32 { self }
}

extension StatementColumn {
    @inline(__always) var index: Int32 { Int32(rawValue) }

    /// The Swift names of the statement's columns, in order (what a catalog compares).
    static var columnNames: [String] { allCases.map { "\($0)" } }
}

extension Row {
    /// The value of `column`, as GRDB's `row[index]` reads it (optional when `Value` is).
    subscript<Value: DatabaseValueConvertible>(_ column: some StatementColumn) -> Value {
        self[column.rawValue]
    }
}

/// The columns every derived file's state row begins with (`attribution/state.sql`,
/// `rollup/rollup_state.sql`, `rollup/attribution_state.sql`, `id_index/state.sql`): the events
/// database it was derived from, and how far.
enum DerivedStateColumn: Int, StatementColumn {
    case databaseId, throughSeq
}

/// `attribution/state.sql`.
enum AttributionStateColumn: Int, StatementColumn {
    case databaseId, attributedThroughSeq, attributionWindowMs, throughEventId, recentFromMs, fingerprintFromMs
}

/// `rollup/rollup_state.sql`.
enum RollupStateColumn: Int, StatementColumn {
    case databaseId, rolledThroughSeq, attributionWindowMs, throughEventId, blocksMergedThroughDay, dimensionPartPasses, countingRules
}

/// `rollup/progress.sql`.
enum RollupProgressColumn: Int, StatementColumn {
    case storedThroughSeq, countedThroughSeq, oldestUncountedReceivedAtMs, attributedThroughSeq
}

/// `connection/checkpoint_passive.sql` and `connection/checkpoint_restart.sql` (SQLite's
/// `wal_checkpoint` pragma): whether a reader or the writer kept it from finishing (1), the WAL's
/// frames, and how many of them are copied into the file.
enum WALCheckpointColumn: Int, StatementColumn {
    case busy, log, checkpointed
}

/// `connection/page_counts.sql`.
enum PageCountsColumn: Int, StatementColumn {
    case freePages, pages, pageSize, autoVacuum
}

/// `retention/watermarks.sql`: how far the derived files have come, and a running backup's hold.
enum RetentionWatermarksColumn: Int, StatementColumn {
    case rolledThroughSeq, attributedThroughSeq, holdSeq
}

/// `attribution/events_after.sql`: the events an attribution round goes through.
enum AttributionEventColumn: Int, StatementColumn {
    case seq, eventId, type, occurredAtMs, ref, campaign, source, medium, platform, clickId, ipHash, osVersion, bot
    case clickIdSource, resolvingDevice
}

/// `attribution/recent_clicks.sql`: the clicks the memory half of the click indexes starts with.
enum RecentClickColumn: Int, StatementColumn {
    case seq, occurredAtMs, ref, ipHash, platform, osVersion
}

/// `attribution/raw_clicks_of_hour.sql`: an hour's clicks, for fingerprints older than the index.
enum RawClickColumn: Int, StatementColumn {
    case seq, occurredAtMs, ipHash, platform, osVersion
}

/// `attribution/click_by_seq.sql`: a click named by a `click_id`.
enum ClickBySeqColumn: Int, StatementColumn {
    case eventId, occurredAtMs, ref, campaign, source, medium
}

/// `rollup/click_dimensions.sql`: the link a click was on, its audience and its referrer.
enum RollupClickColumn: Int, StatementColumn {
    case ref, campaign, source, medium, audience, referrer
}

/// `attribution/newest_ref_click.sql`.
enum RefClickColumn: Int, StatementColumn {
    case seq, occurredAtMs
}

/// `attribution/fingerprint_clicks.sql`.
enum FingerprintClickColumn: Int, StatementColumn {
    case seq, occurredAtMs, osVersion
}

/// `ingest/id_keys_in_range.sql`: the stored ids of a range of seqs.
enum IdInRangeColumn: Int, StatementColumn {
    case eventId, seq
}

/// `answer/attributed_event.sql`: an event with its attribution and its matched click.
enum AttributedEventColumn: Int, StatementColumn {
    case type, bot, resolve, ref, campaign, source, medium, url, properties, attributedThroughSeq
    case matchType, matchedClickSeq, candidates
    case clickEventId, clickOccurredAtMs, clickUrl, clickProperties, clickRef, clickCampaign, clickSource, clickMedium
    case firstResolveSeq
}

/// `rollup/events_after.sql`: the events a rollup pass counts, in their compact stored form.
enum RollupEventColumn: Int, StatementColumn {
    case seq, type, occurredAtMs, ref, campaign, source, medium, platform, deferred, visitor, deviceId, bot, audience, referrer
}

/// `rollup/attributions_after.sql`.
enum RollupAttributionColumn: Int, StatementColumn {
    case seq, matchType, matchedClickSeq
}

/// `rollup/tuples_after.sql`: the link tuples of the cubes.
enum LinkTupleColumn: Int, StatementColumn {
    case id, ref, campaign, source, medium
}

/// `rollup/dimension_day_parts_after.sql`.
enum DimensionDayPartColumn: Int, StatementColumn {
    case dim, value, day, bot, clickVisitors
}

/// `rollup/cube_parts_of_bucket.sql`.
enum CubePartOfBucketColumn: Int, StatementColumn {
    case id, entries
}

/// `stats/rollup_counts.sql` and `stats/audience_counts.sql`: a group's key, people or bots, and
/// a row's counts (the click visitors among them, where `HotStatement.counts(from:)` expects them).
enum StatsRollupColumn: Int, StatementColumn {
    case key, bot, events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens
    case deferredOpens, clickVisitors, installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint
    case opensOrganic
}

/// `stats/raw_events.sql`: a counted event with its own link and its matched click's.
enum StatsRawEventColumn: Int, StatementColumn {
    case occurredAtMs, type, platform, bot, deferred, visitor, deviceId, ref, campaign, source, medium, matchType
    case clickSeq, clickRef, clickCampaign, clickSource, clickMedium
    case audience, referrer, clickAudience, clickReferrer
}

/// `stats/dimension_visitors.sql`.
enum DimensionVisitorsColumn: Int, StatementColumn {
    case value, bot, clickVisitors
}

/// `stats/cube_parts.sql`.
enum CubePartColumn: Int, StatementColumn {
    case bucket, entries
}

/// `stats/cube_part_tags.sql`.
enum CubePartTagColumn: Int, StatementColumn {
    case id, bucket, tag
}

/// `archive/block_of_seq.sql`.
enum BlockOfSeqColumn: Int, StatementColumn {
    case id, lastSeq, data
}

/// `retention/expired_events.sql`.
enum ExpiredEventColumn: Int, StatementColumn {
    case seq, occurredAtMs, type, ref
}

/// Which statement each set of column names belongs to, for `StatementColumnsTests`.
enum StatementColumnsCatalog {
    /// The connection a statement runs on.
    enum Connection {
        /// The attribution follower's (the attribution file).
        case attribution
        /// The rollup passes' writes (the rollup file alone).
        case rollups
        /// A reader of the events database (the rollup file attached as `agg`, the
        /// attribution file as `attr`).
        case eventsReader
        /// The id index's merges (the id index file).
        case idIndex
    }

    /// One named statement: its file under `queries/`, its SQL, where it runs, and the names of
    /// its columns as the Swift side reads them.
    struct Entry {
        var file: String
        var sql: String
        var connection: Connection
        var columns: [String]
    }

    static func entries(_ queries: SQLQueries) -> [Entry] {
        return [
            Entry(file: "attribution/state.sql", sql: queries.attribution.state, connection: .attribution, columns: AttributionStateColumn.columnNames),
            Entry(file: "rollup/rollup_state.sql", sql: queries.rollup.state, connection: .rollups, columns: RollupStateColumn.columnNames),
            Entry(
                file: "rollup/attribution_state.sql", sql: queries.rollup.attributionState, connection: .eventsReader,
                columns: Array(AttributionStateColumn.columnNames.prefix(2))),
            Entry(file: "rollup/progress.sql", sql: queries.rollup.progress, connection: .eventsReader, columns: RollupProgressColumn.columnNames),
            Entry(
                file: "connection/checkpoint_passive.sql", sql: queries.connection.checkpointPassive, connection: .eventsReader,
                columns: WALCheckpointColumn.columnNames),
            Entry(
                file: "connection/checkpoint_restart.sql", sql: queries.connection.checkpointRestart, connection: .attribution,
                columns: WALCheckpointColumn.columnNames),
            Entry(file: "connection/page_counts.sql", sql: queries.connection.pageCounts, connection: .eventsReader, columns: PageCountsColumn.columnNames),
            Entry(file: "retention/watermarks.sql", sql: queries.retention.watermarks, connection: .eventsReader, columns: RetentionWatermarksColumn.columnNames),
            Entry(file: "attribution/events_after.sql", sql: queries.attribution.eventsAfter, connection: .eventsReader, columns: AttributionEventColumn.columnNames),
            Entry(file: "attribution/recent_clicks.sql", sql: queries.attribution.recentClicks, connection: .eventsReader, columns: RecentClickColumn.columnNames),
            Entry(file: "attribution/raw_clicks_of_hour.sql", sql: queries.attribution.rawClicksOfHour, connection: .eventsReader, columns: RawClickColumn.columnNames),
            Entry(file: "attribution/click_by_seq.sql", sql: queries.attribution.clickBySeq, connection: .eventsReader, columns: ClickBySeqColumn.columnNames),
            Entry(file: "rollup/click_dimensions.sql", sql: queries.rollup.clickDimensions, connection: .eventsReader, columns: RollupClickColumn.columnNames),
            Entry(file: "stats/audience_counts.sql", sql: queries.stats.audienceCounts, connection: .eventsReader, columns: StatsRollupColumn.columnNames),
            Entry(file: "attribution/newest_ref_click.sql", sql: queries.attribution.newestRefClick, connection: .attribution, columns: RefClickColumn.columnNames),
            Entry(file: "attribution/fingerprint_clicks.sql", sql: queries.attribution.fingerprintClicks, connection: .attribution, columns: FingerprintClickColumn.columnNames),
            Entry(file: "ingest/id_keys_in_range.sql", sql: queries.idKeysInRange, connection: .eventsReader, columns: IdInRangeColumn.columnNames),
            Entry(file: "answer/attributed_event.sql", sql: queries.attributedEvent, connection: .eventsReader, columns: AttributedEventColumn.columnNames),
            Entry(file: "rollup/events_after.sql", sql: queries.rollup.eventsAfter, connection: .eventsReader, columns: RollupEventColumn.columnNames),
            Entry(file: "rollup/attributions_after.sql", sql: queries.rollup.attributionsAfter, connection: .eventsReader, columns: RollupAttributionColumn.columnNames),
            Entry(file: "rollup/tuples_after.sql", sql: queries.rollup.tuplesAfter, connection: .rollups, columns: LinkTupleColumn.columnNames),
            Entry(file: "rollup/dimension_day_parts_after.sql", sql: queries.rollup.dimensionDayPartsAfter, connection: .rollups, columns: DimensionDayPartColumn.columnNames),
            Entry(file: "rollup/cube_parts_of_bucket.sql", sql: queries.rollup.cubePartsOfBucket, connection: .rollups, columns: CubePartOfBucketColumn.columnNames),
            Entry(file: "stats/rollup_counts.sql", sql: queries.stats.rollupCounts, connection: .eventsReader, columns: StatsRollupColumn.columnNames),
            Entry(file: "stats/raw_events.sql", sql: queries.stats.rawEvents, connection: .eventsReader, columns: StatsRawEventColumn.columnNames),
            Entry(file: "stats/dimension_visitors.sql", sql: queries.stats.dimensionVisitors, connection: .eventsReader, columns: DimensionVisitorsColumn.columnNames),
            Entry(file: "stats/cube_parts.sql", sql: queries.stats.cubeParts, connection: .eventsReader, columns: CubePartColumn.columnNames),
            Entry(file: "stats/cube_part_tags.sql", sql: queries.stats.cubePartTags, connection: .eventsReader, columns: CubePartTagColumn.columnNames),
            Entry(file: "archive/block_of_seq.sql", sql: queries.archive.blockOfSeq, connection: .eventsReader, columns: BlockOfSeqColumn.columnNames),
            Entry(file: "retention/expired_events.sql", sql: queries.retention.expiredEvents, connection: .eventsReader, columns: ExpiredEventColumn.columnNames),
        ]
    }
}
