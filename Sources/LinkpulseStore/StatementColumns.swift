import GRDB

/// The result columns of one statement of `queries/`, in the statement's order: a case a column,
/// named as the column in camel case (`attributed_through_seq`: `attributedThroughSeq`). Rows
/// are read by these names (`row[AttributionStateColumn.fingerprintFromMs]`), not by a bare
/// position, so a SELECT reordered in `queries/` fails `StatementColumnsTests` (which prepares
/// each statement named in `StatementColumnsCatalog` and compares) instead of reading the
/// wrong column. The hot loops that read rows through `HotStatement` keep positions, named
/// where they are read.
protocol StatementColumn: RawRepresentable<Int>, CaseIterable, Sendable {}

extension StatementColumn {
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

/// Which statement each set of column names belongs to, for `StatementColumnsTests`.
enum StatementColumnsCatalog {
    /// The connection a statement runs on.
    enum Connection {
        /// The attribution follower's (the attribution file).
        case attribution
        /// The rollup passes' (the rollup file, with the attribution file attached as `attr`).
        case rollups
        /// A reader of the events database (the rollup file attached as `agg`, the
        /// attribution file as `attr`).
        case eventsReader
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
                file: "rollup/attribution_state.sql", sql: queries.rollup.attributionState, connection: .rollups,
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
        ]
    }
}
