import Foundation
import GRDB
import LinkpulseDomain

/// The SQL statements of `queries/`, compiled into the binary at build time.
///
/// `load()` fails when a file is missing; `prepareAll(_:)` compiles every statement once at
/// start-up so a broken file stops the daemon immediately instead of at its first use.
struct SQLQueries: Sendable {
    let insertEvent: String
    let insertQuarantine: String
    let indexedSeqsForKey: String
    let eventIdAtSeq: String
    let idKeysInRange: String
    let insertEventId: String
    let textId, insertText: String
    let recentQuarantine: String
    /// One batch of the quarantine's retention (`retention/delete_old_quarantine.sql`).
    let deleteOldQuarantine: String
    let retention: RetentionQueries
    /// One event with its attribution, for answers to apps (`answer/attributed_event.sql`).
    let attributedEvent: String
    let truncateWAL: String
    /// Connection settings, checkpoints and attachments (`connection/`).
    let connection: ConnectionQueries
    let attribution: AttributionQueries
    let rollup: RollupQueries
    let stats: StatsQueries
    let idIndex: IdIndexQueries
    let installation: InstallationQueries
    let export: ExportQueries
    let archive: ArchiveQueries
    /// The access keys (`keys/`).
    let keys: KeyQueries
    let links: LinkQueries

    /// Migrations of the events database, in order: (name, SQL).
    let migrations: [(name: String, sql: String)]
    /// Migrations of the id index file, in order: (name, SQL).
    let idIndexMigrations: [(name: String, sql: String)]
    /// Migrations of the rollup file, in order: (name, SQL).
    let rollupMigrations: [(name: String, sql: String)]
    /// Migrations of the attribution file, in order: (name, SQL).
    let attributionMigrations: [(name: String, sql: String)]

    static func load() throws -> SQLQueries {
        SQLQueries(
            insertEvent: try text("ingest/insert_event.sql"),
            insertQuarantine: try text("ingest/insert_quarantine.sql"),
            indexedSeqsForKey: try text("ingest/indexed_seqs_for_key.sql"),
            eventIdAtSeq: try text("ingest/event_id_at_seq.sql"),
            idKeysInRange: try text("ingest/id_keys_in_range.sql"),
            insertEventId: try text("ingest/insert_event_id.sql"),
            textId: try text("ingest/text_id.sql"),
            insertText: try text("ingest/insert_text.sql"),
            recentQuarantine: try text("ingest/recent_quarantine.sql"),
            deleteOldQuarantine: try text("retention/delete_old_quarantine.sql"),
            retention: RetentionQueries(
                rawHorizon: try text("retention/raw_horizon.sql"),
                anyBefore: try text("retention/any_before.sql"),
                setRawHorizon: try text("retention/set_raw_horizon.sql"),
                watermarks: try text("retention/watermarks.sql"),
                expiredEvents: try text("retention/expired_events.sql"),
                clickStillMatched: try text("retention/click_still_matched.sql"),
                deleteEvent: try text("retention/delete_event.sql"),
                attributionByClick: try text("retention/attribution_by_click.sql"),
                deleteAttribution: try text("retention/delete_attribution.sql"),
                deleteRefClick: try text("retention/delete_ref_click.sql"),
                deleteOldFingerprintClicks: try text("retention/delete_old_fingerprint_clicks.sql")),
            attributedEvent: try text("answer/attributed_event.sql"),
            truncateWAL: try text("truncate_wal.sql"),
            connection: try ConnectionQueries.load(),
            attribution: AttributionQueries(
                state: try text("attribution/state.sql"),
                reset: try text("attribution/reset.sql"),
                lock: try text("attribution/lock.sql"),
                advance: try text("attribution/advance.sql"),
                setWindow: try text("attribution/set_window.sql"),
                insertAttribution: try text("attribution/insert_attribution.sql"),
                insertResolveDevice: try text("attribution/insert_resolve_device.sql"),
                insertRefClick: try text("attribution/insert_ref_click.sql"),
                insertFingerprintClick: try text("attribution/insert_fingerprint_click.sql"),
                newestRefClick: try text("attribution/newest_ref_click.sql"),
                fingerprintClicks: try text("attribution/fingerprint_clicks.sql"),
                setHorizon: try text("attribution/set_horizon.sql"),
                setFingerprintFrom: try text("attribution/set_fingerprint_from.sql"),
                eventsAfter: try text("attribution/events_after.sql"),
                clickBySeq: try text("attribution/click_by_seq.sql"),
                recentClicks: try text("attribution/recent_clicks.sql"),
                rawClicksOfHour: try text("attribution/raw_clicks_of_hour.sql")),
            rollup: RollupQueries(
                state: try text("rollup/rollup_state.sql"),
                reset: try text("rollup/reset_rollups.sql"),
                adoptCountingRules: try text("rollup/adopt_counting_rules.sql"),
                lock: try text("rollup/lock.sql"),
                attributionState: try text("rollup/attribution_state.sql"),
                advanceWatermark: try text("rollup/advance_watermark.sql"),
                eventsAfter: try text("rollup/events_after.sql"),
                attributionsAfter: try text("rollup/attributions_after.sql"),
                clickDimensions: try text("rollup/click_dimensions.sql"),
                upsertRollup: try text("rollup/upsert_rollup.sql"),
                progress: try text("rollup/progress.sql"),
                upsertAudienceRollup: try text("rollup/upsert_audience_rollup.sql"),
                audienceText: try text("rollup/audience_text.sql"),
                upsertCubeBlock: try text("rollup/upsert_cube_block.sql"),
                cubeBlock: try text("rollup/cube_block.sql"),
                upsertDimensionDay: try text("rollup/upsert_dimension_day.sql"),
                dayParts: try text("stats/cube_parts.sql"),
                insertDimensionDayPart: try text("rollup/insert_dimension_day_part.sql"),
                countDimensionPartPass: try text("rollup/count_dimension_part_pass.sql"),
                dimensionDayPartsAfter: try text("rollup/dimension_day_parts_after.sql"),
                deleteDimensionDayParts: try text("rollup/delete_dimension_day_parts.sql"),
                tuplesAfter: try text("rollup/tuples_after.sql"),
                lastTuple: try text("rollup/last_tuple.sql"),
                insertTuple: try text("rollup/insert_tuple.sql"),
                cubePartsOfBucket: try text("rollup/cube_parts_of_bucket.sql"),
                countCubeParts: try text("rollup/count_cube_parts.sql"),
                insertCubePart: try text("rollup/insert_cube_part.sql"),
                deleteCubePart: try text("rollup/delete_cube_part.sql")),
            stats: StatsQueries(
                rollupCounts: try text("stats/rollup_counts.sql"),
                cubeParts: try text("stats/cube_parts.sql"),
                tuplesAfter: try text("rollup/tuples_after.sql"),
                rawEvents: try text("stats/raw_events.sql"),
                cubeBlock: try text("rollup/cube_block.sql"),
                dimensionVisitors: try text("stats/dimension_visitors.sql"),
                audienceCounts: try text("stats/audience_counts.sql"),
                blocksMergedThrough: try text("stats/blocks_merged_through.sql"),
                cubeBlockTag: try text("stats/cube_block_tag.sql"),
                cubePartTags: try text("stats/cube_part_tags.sql"),
                cubePartEntries: try text("stats/cube_part_entries.sql")),
            idIndex: IdIndexQueries(
                setIndexedThrough: try text("id_index/set_indexed_through.sql"),
                allKeys: try text("id_index/all_keys.sql"),
                keyCount: try text("id_index/key_count.sql"),
                state: try text("id_index/state.sql"),
                reset: try text("id_index/reset.sql"),
                foldInsert: try text("id_index/fold_insert.sql"),
                foldDelete: try text("id_index/fold_delete.sql")),
            installation: InstallationQueries(
                databaseId: try text("installation/database_id.sql"),
                insertDatabaseId: try text("installation/insert_database_id.sql"),
                maxSeq: try text("installation/max_seq.sql"),
                health: try text("installation/health.sql")),
            export: ExportQueries(
                eventsInTime: try text("export/events_in_time.sql"),
                eventsTail: try text("export/events_tail.sql"),
                jobLastPeriod: try text("export/job_last_period.sql"),
                recordJobPeriod: try text("export/record_job_period.sql"),
                insertFile: try text("export/insert_export_file.sql"),
                files: try text("export/export_files.sql"),
                deleteFile: try text("export/delete_export_file.sql")),
            archive: ArchiveQueries(
                blocksInRange: try text("archive/blocks_in_range.sql"),
                blocksByTime: try text("archive/blocks_by_time.sql"),
                blockData: try text("archive/block_data.sql"),
                state: try text("archive/state.sql"),
                rowsAfter: try text("archive/rows_after.sql"),
                insertBlock: try text("archive/insert_block.sql"),
                setSealedThrough: try text("archive/set_sealed_through.sql"),
                newestHotSeq: try text("archive/newest_hot_seq.sql"),
                claim: try text("archive/claim.sql"),
                blockOfSeq: try text("archive/block_of_seq.sql"),
                deleteBlock: try text("archive/delete_block.sql")),
            keys: KeyQueries(
                list: try text("keys/list.sql"), version: try text("keys/version.sql"), byId: try text("keys/by_id.sql"),
                insert: try text("keys/insert.sql"), revoke: try text("keys/revoke.sql"), recordUse: try text("keys/record_use.sql")),
            links: try LinkQueries(under: "links/"),
            migrations: files(under: "migrations/"),
            idIndexMigrations: files(under: "ids/"),
            rollupMigrations: files(under: "rollups/"),
            attributionMigrations: files(under: "attributions/"))
    }

    /// The statement of one file, without its comment lines.
    static func text(_ name: String) throws -> String {
        guard let file = EmbeddedText.files[name] else { throw StoreError.missingQuery(name) }
        return statement(file)
    }

    /// `file` without its comment lines (those that begin with `--`). SQLite ignores them, but
    /// GRDB's statement cache hashes the whole text at every lookup, and one character outside
    /// ASCII in a comment takes that hash off Swift's fast path (microseconds a lookup on the
    /// resolve path).
    static func statement(_ file: String) -> String {
        file.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("--") }
            .joined(separator: "\n")
    }

    static func files(under folder: String) -> [(name: String, sql: String)] {
        EmbeddedText.files
            .filter { $0.key.hasPrefix(folder) && $0.key.hasSuffix(".sql") }
            .sorted { $0.key < $1.key }
            .map { (String($0.key.dropFirst(folder.count).dropLast(4)), $0.value) }
    }

    /// Compiles the statements that run against the events database (with `ids` attached).
    func prepareEventStatements(_ db: Database) throws {
        for sql in [insertEvent, insertQuarantine, indexedSeqsForKey, eventIdAtSeq, idKeysInRange, recentQuarantine, deleteOldQuarantine, attributedEvent,
                    textId, insertText,
                    stats.rollupCounts, stats.audienceCounts, stats.cubeParts, stats.tuplesAfter, stats.rawEvents, stats.cubeBlock, stats.dimensionVisitors, stats.blocksMergedThrough,
                    stats.cubeBlockTag, stats.cubePartTags, stats.cubePartEntries]
                    + export.all + keys.all + links.statements + installation.all + retention.ofEvents + attribution.ofEvents + rollup.ofEvents {
            _ = try db.makeStatement(sql: sql)
        }
    }

    /// Compiles the attribution follower's statements on its connection (`reset` has several
    /// statements and runs rarely).
    func prepareAttributionStatements(_ db: Database) throws {
        for sql in attribution.preparable + retention.ofAttribution {
            _ = try db.makeStatement(sql: sql)
        }
    }

    /// Compiles the rollup job's statements on its connection.
    func prepareRollupStatements(_ db: Database) throws {
        for sql in rollup.preparable {
            _ = try db.makeStatement(sql: sql)
        }
    }
}

/// The attribution follower's statements: most run on its connection (the attribution file
/// alone), those of `ofEvents` on an events reader, where a round reads its page of events
/// (`EventStore.attributionPage`) in a short transaction of its own.
struct AttributionQueries: Sendable {
    let state, reset, lock, advance, setWindow, insertAttribution, insertResolveDevice, insertRefClick: String
    let insertFingerprintClick, newestRefClick, fingerprintClicks, setHorizon: String
    /// The on-disk fingerprint index's span (`0004_fingerprint_horizon.sql`): its start moved.
    let setFingerprintFrom: String
    /// Read from the events database: the events after the watermark, the clicks their ids
    /// name, the clicks listed into memory after a start, and the clicks of an hour before the
    /// fingerprint index's span.
    let eventsAfter, clickBySeq, recentClicks, rawClicksOfHour: String

    /// The statements of the attribution file compiled at start-up.
    var preparable: [String] {
        [state, lock, advance, setWindow, insertAttribution, insertResolveDevice, insertRefClick, insertFingerprintClick,
         newestRefClick, fingerprintClicks, setHorizon, setFingerprintFrom]
    }

    /// The statements of the events database compiled at start-up.
    var ofEvents: [String] { [eventsAfter, clickBySeq, recentClicks, rawClicksOfHour] }
}

/// Raw-event retention's statements: those of the events database (run by its writer and
/// readers, the derived files attached) and those of the attribution file (run on the
/// follower's connection, between its rounds).
struct RetentionQueries: Sendable {
    let rawHorizon, anyBefore, setRawHorizon, watermarks, expiredEvents, clickStillMatched, deleteEvent: String
    let attributionByClick, deleteAttribution, deleteRefClick, deleteOldFingerprintClicks: String

    /// The statements of the events database, compiled at start-up.
    var ofEvents: [String] { [rawHorizon, anyBefore, setRawHorizon, watermarks, expiredEvents, clickStillMatched, deleteEvent] }
    /// The statements of the attribution file compiled at start-up (the index is made once).
    var ofAttribution: [String] { [deleteAttribution, deleteRefClick, deleteOldFingerprintClicks] }
}

/// The rollup job's statements: those of `preparable` run on the rollup connection (the rollup
/// file alone), those of `ofEvents` on an events reader, where a pass counts
/// (`RollupStore.count`) and its progress is read.
struct RollupQueries: Sendable {
    let state, reset, adoptCountingRules, lock, attributionState, advanceWatermark, eventsAfter, attributionsAfter, clickDimensions, upsertRollup, progress: String
    /// The rows by audience (`audience_rollups`), and the audience texts their values come from.
    let upsertAudienceRollup, audienceText: String
    let upsertCubeBlock, cubeBlock, upsertDimensionDay, dayParts: String
    /// Click visitors by value in parts, folded every few passes (`RollupStore.foldVisitorParts`;
    /// `deleteDimensionDayParts` has two statements and runs with `execute`).
    let insertDimensionDayPart, countDimensionPartPass, dimensionDayPartsAfter, deleteDimensionDayParts: String
    let tuplesAfter, lastTuple, insertTuple, cubePartsOfBucket, countCubeParts, insertCubePart, deleteCubePart: String

    /// The statements of the rollup file compiled at start-up (`reset` has several statements
    /// and runs rarely).
    var preparable: [String] {
        [state, lock, advanceWatermark, upsertRollup, upsertAudienceRollup, upsertCubeBlock, cubeBlock, upsertDimensionDay,
         insertDimensionDayPart, countDimensionPartPass, dimensionDayPartsAfter, dayParts, tuplesAfter, lastTuple, insertTuple, cubePartsOfBucket, countCubeParts, insertCubePart, deleteCubePart]
    }

    /// The statements of an events reader compiled at start-up (`tuplesAfter` runs on both).
    var ofEvents: [String] { [attributionState, eventsAfter, attributionsAfter, clickDimensions, audienceText, tuplesAfter, progress] }
}

/// The stats statements (run on reader connections, rollup file attached).
struct StatsQueries: Sendable {
    let rollupCounts, cubeParts, tuplesAfter, rawEvents, cubeBlock, dimensionVisitors: String
    /// The rows by audience, summed by the caller.
    let audienceCounts: String
    let blocksMergedThrough: String
    /// Tags of blocks and parts, and a part's entries by id (for the cube sums cache).
    let cubeBlockTag, cubePartTags, cubePartEntries: String
}

/// The id index file's own statements (run on its connection; `reset` has three statements).
struct IdIndexQueries: Sendable {
    let setIndexedThrough, allKeys, keyCount, state, reset: String
    /// One slice of a fold of the recent level into the main one: copy, then delete.
    let foldInsert, foldDelete: String
}

/// Facts about the events database itself (run on the events database).
struct InstallationQueries: Sendable {
    let databaseId, insertDatabaseId, maxSeq, health: String

    var all: [String] { [databaseId, insertDatabaseId, maxSeq, health] }
}

/// Sealing old events into blocks, and reading the blocks (`EventArchiveTable`), on the events
/// database.
struct ArchiveQueries: Sendable {
    let blocksInRange, blocksByTime, blockData, state, rowsAfter, insertBlock, setSealedThrough: String
    let newestHotSeq, claim, blockOfSeq, deleteBlock: String

    /// What the `event_archive` table runs to find and read blocks.
    var table: EventArchiveTable.Statements { .init(blocksInRange: blocksInRange, blocksByTime: blocksByTime, blockData: blockData) }
}

/// The export statements (run on reader connections, rollup file attached, except the
/// bookkeeping of scheduled jobs, which writes the events database).
struct ExportQueries: Sendable {
    let eventsInTime, eventsTail, jobLastPeriod, recordJobPeriod, insertFile, files, deleteFile: String

    var all: [String] { [eventsInTime, eventsTail, jobLastPeriod, recordJobPeriod, insertFile, files, deleteFile] }
}

/// The access keys' statements (`keys/`), on the events database.
struct KeyQueries: Sendable {
    let list, version, byId, insert, revoke, recordUse: String

    var all: [String] { [list, version, byId, insert, revoke, recordUse] }
}

/// Failures of the store that are not SQLite errors.
public enum StoreError: Error, CustomStringConvertible {
    case missingQuery(String)
    /// The store is closing: no new work is taken.
    case closed
    /// Retention has deleted raw events before `horizonMs` (UTC ms), so `what` (a rebuild, a
    /// replay, a derived file started over) would count less than the rollups hold.
    case rawEventsDeleted(what: String, horizonMs: Int64)
    /// Another daemon (process `holder`, when known) serves this data directory.
    case directoryInUse(String, holder: String?)

    public var description: String {
        switch self {
        case .missingQuery(let name): "queries/\(name) is missing from this build"
        case .closed: "the store is closing"
        case .directoryInUse(let path, let holder):
            "another linkpulse serve\(holder.map { " (process \($0))" } ?? "") is using \(path); stop it first, or give this one its own --data-dir"
        case .rawEventsDeleted(let what, let horizon):
            "\(what) is refused: retention (--retention-days) has deleted the raw events before \(Timestamp.formatUTC(horizon)), "
                + "whose counts are now kept only in the rollups; restore the derived files (linkpulse-rollups.sqlite, "
                + "linkpulse-attribution.sqlite) from the backup taken with them, or start over from an empty data directory"
        }
    }
}

/// The statements of `queries/connection/`: how each connection is set up (WAL, durability,
/// checkpoints left to the checkpoint job, the other files attached), passive checkpoints, and
/// the two settings SQLite takes no parameter for (`cache_size`, `incremental_vacuum`), whose
/// number the store writes into the text.
struct ConnectionQueries: Sendable {
    let wal, attach, durabilityFull, durabilityNormal, durabilityOff, journalSizeLimit, noAutocheckpoint: String
    let autoVacuumIncremental, checkpointPassive, checkpointRestart: String
    /// A file rewritten without its free pages; how many it has, of how many, their size and its
    /// auto_vacuum mode (`vacuum`, `page_counts`).
    let vacuum, pageCounts: String
    private let cacheSizeTemplate, incrementalVacuumTemplate: String

    static func load() throws -> ConnectionQueries {
        func text(_ name: String) throws -> String { try SQLQueries.text("connection/\(name).sql") }
        return ConnectionQueries(
            wal: try text("wal"), attach: try text("attach"), durabilityFull: try text("durability_full"),
            durabilityNormal: try text("durability_normal"), durabilityOff: try text("durability_off"),
            journalSizeLimit: try text("journal_size_limit"),
            noAutocheckpoint: try text("no_autocheckpoint"),
            autoVacuumIncremental: try text("auto_vacuum_incremental"), checkpointPassive: try text("checkpoint_passive"),
            checkpointRestart: try text("checkpoint_restart"),
            vacuum: try text("vacuum"), pageCounts: try text("page_counts"),
            cacheSizeTemplate: try text("cache_size"), incrementalVacuumTemplate: try text("incremental_vacuum"))
    }

    /// The `synchronous` level of `durability`.
    func durability(_ durability: Durability) -> String {
        durability == .full ? durabilityFull : durabilityNormal
    }

    /// `cache_size.sql` for a cache of `kib` KiB of `schema` ("main": the connection's own file).
    func cacheSize(kib: Int, schema: String = "main") -> String {
        cacheSizeTemplate.replacingOccurrences(of: "{schema}", with: schema).replacingOccurrences(of: "{kib}", with: String(kib))
    }

    /// `incremental_vacuum.sql` for at most `pages` pages.
    func incrementalVacuum(pages: Int) -> String {
        incrementalVacuumTemplate.replacingOccurrences(of: "{pages}", with: String(pages))
    }

    /// Attaches the file at `path` as `schema` on `db`, with a page cache of `cacheKiB` for it
    /// (nil: SQLite's default, about 2 MiB for every attached file).
    func attach(_ db: Database, path: String, as schema: String, cacheKiB: Int? = nil) throws {
        try db.execute(sql: attach, arguments: ["path": path, "schema": schema])
        if let cacheKiB { try db.execute(sql: cacheSize(kib: cacheKiB, schema: schema)) }
    }
}
