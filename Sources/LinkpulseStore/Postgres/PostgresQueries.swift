import Foundation

/// The PostgreSQL store's statements, from `queries/postgres/` (compiled into the binary).
struct PostgresQueries: Sendable {
    /// Migration bookkeeping and partitions (`schema/`).
    struct Schema: Sendable {
        let lock, createMigrations, applied, record, ensureEventMonths, databaseId: String
        let keepInstallationValue, setInstallationValue, forgetInstallationValue, installationValues, ping: String
    }

    /// The access keys (`keys/`).
    struct Keys: Sendable {
        let list, version, insert, revoke, recordUse: String
    }

    /// The ingest writer's statements and the reads of what it stored (`ingest/`).
    struct Ingest: Sendable {
        let lockSeq, advanceSeq, insertEvents, insertQuarantine, storedSeq, eventsAfter, recentQuarantine, deleteOldQuarantine: String
    }

    /// The derived-work lock and attribution (`attribution/`).
    struct Attribution: Sendable {
        let tryLead, roundCommitMode, state, advance, notify, clicksById, newestRefClicks, fingerprintClicks: String
        let insertAttributions, insertRefClicks, insertFingerprintClicks, insertResolveDevices, attributionsAfter: String
        let progress: String
    }

    /// Stats read from the raw events (`stats/`).
    struct Stats: Sendable {
        let rawEvents, rollupCounts, rollupVisitors, snapshot, workMemory: String
    }

    /// The rollups the derived work counts (`rollups/`).
    struct Rollups: Sendable {
        let state, events, cells, upsert, advance: String
    }

    /// Raw-event retention (`retention/`).
    struct Retention: Sendable {
        let expiredMonths, goneMonth, goneDefault, uncounted, keepClicks, forget, deleteDefault, dropMonth: String
        let dropClickIndexes, recordHorizon, horizon: String
    }

    /// The export ledger and the raw-event export's pages (`export/`).
    struct Export: Sendable {
        let jobLastPeriod, recordJobPeriod, insertFile, files, deleteFile: String
        let eventsInTime, eventsTail, newestSeq: String
    }

    let schema: Schema
    let ingest: Ingest
    let attribution: Attribution
    let stats: Stats
    let rollups: Rollups
    let retention: Retention
    let export: Export
    let keys: Keys
    /// The hosted links (`links/`).
    let links: LinkQueries
    /// The migrations, in order: (name, the statements of its file).
    let migrations: [(name: String, statements: [String])]

    static func load() throws -> PostgresQueries {
        func text(_ name: String) throws -> String { try SQLQueries.text("postgres/" + name) }
        return PostgresQueries(
            schema: Schema(
                lock: try text("schema/lock.sql"),
                createMigrations: try text("schema/create_migrations.sql"),
                applied: try text("schema/applied.sql"),
                record: try text("schema/record.sql"),
                ensureEventMonths: try text("schema/ensure_event_months.sql"),
                databaseId: try text("schema/database_id.sql"),
                keepInstallationValue: try text("schema/keep_installation_value.sql"),
                setInstallationValue: try text("schema/set_installation_value.sql"),
                forgetInstallationValue: try text("schema/forget_installation_value.sql"),
                installationValues: try text("schema/installation_values.sql"),
                ping: try text("schema/ping.sql")),
            ingest: Ingest(
                lockSeq: try text("ingest/lock_seq.sql"),
                advanceSeq: try text("ingest/advance_seq.sql"),
                insertEvents: try text("ingest/insert_events.sql"),
                insertQuarantine: try text("ingest/insert_quarantine.sql"),
                storedSeq: try text("ingest/stored_seq.sql"),
                eventsAfter: try text("ingest/events_after.sql"),
                recentQuarantine: try text("ingest/recent_quarantine.sql"),
                deleteOldQuarantine: try text("ingest/delete_old_quarantine.sql")),
            attribution: Attribution(
                tryLead: try text("attribution/try_lead.sql"),
                roundCommitMode: try text("attribution/round_commit_mode.sql"),
                state: try text("attribution/state.sql"),
                advance: try text("attribution/advance.sql"),
                notify: try text("attribution/notify.sql"),
                clicksById: try text("attribution/clicks_by_id.sql"),
                newestRefClicks: try text("attribution/newest_ref_clicks.sql"),
                fingerprintClicks: try text("attribution/fingerprint_clicks.sql"),
                insertAttributions: try text("attribution/insert_attributions.sql"),
                insertRefClicks: try text("attribution/insert_ref_clicks.sql"),
                insertFingerprintClicks: try text("attribution/insert_fingerprint_clicks.sql"),
                insertResolveDevices: try text("attribution/insert_resolve_devices.sql"),
                attributionsAfter: try text("attribution/attributions_after.sql"),
                progress: try text("attribution/progress.sql")),
            stats: Stats(
                rawEvents: try text("stats/raw_events.sql"), rollupCounts: try text("stats/rollup_counts.sql"),
                rollupVisitors: try text("stats/rollup_visitors.sql"), snapshot: try text("stats/snapshot.sql"),
                workMemory: try text("stats/work_memory.sql")),
            rollups: Rollups(
                state: try text("rollups/state.sql"), events: try text("rollups/events.sql"), cells: try text("rollups/cells.sql"),
                upsert: try text("rollups/upsert.sql"), advance: try text("rollups/advance.sql")),
            retention: Retention(
                expiredMonths: try text("retention/expired_months.sql"), goneMonth: try text("retention/gone_month.sql"),
                goneDefault: try text("retention/gone_default.sql"), uncounted: try text("retention/uncounted.sql"),
                keepClicks: try text("retention/keep_clicks.sql"), forget: try text("retention/forget.sql"),
                deleteDefault: try text("retention/delete_default.sql"), dropMonth: try text("retention/drop_month.sql"),
                dropClickIndexes: try text("retention/drop_click_indexes.sql"), recordHorizon: try text("retention/record_horizon.sql"),
                horizon: try text("retention/horizon.sql")),
            export: Export(
                jobLastPeriod: try text("export/job_last_period.sql"),
                recordJobPeriod: try text("export/record_job_period.sql"),
                insertFile: try text("export/insert_export_file.sql"),
                files: try text("export/export_files.sql"),
                deleteFile: try text("export/delete_export_file.sql"),
                eventsInTime: try text("export/events_in_time.sql"),
                eventsTail: try text("export/events_tail.sql"),
                newestSeq: try text("export/newest_seq.sql")),
            keys: Keys(
                list: try text("keys/list.sql"), version: try text("keys/version.sql"), insert: try text("keys/insert.sql"),
                revoke: try text("keys/revoke.sql"), recordUse: try text("keys/record_use.sql")),
            links: try LinkQueries(under: "postgres/links/"),
            migrations: SQLQueries.files(under: "postgres/migrations/").map { ($0.name, SQLScript.statements(of: $0.sql)) })
    }
}

/// Splits an SQL file into its statements, for a server that takes one statement per query
/// (PostgreSQL's extended protocol). A `;` ends a statement except inside a quoted string
/// (`'…'`), a quoted name (`"…"`), a dollar-quoted body (`$$…$$`, `$tag$…$tag$`) or a comment
/// (`-- …` to the end of the line, `/* … */`). Statements are returned trimmed, without their
/// `;`; comments stay in them; a piece holding only comments and space is dropped.
enum SQLScript {
    static func statements(of sql: String) -> [String] {
        let text = Array(sql.utf8)
        var statements: [String] = []
        var start = 0
        var i = 0
        /// Index just past the first occurrence of `needle` at or after `from` (end when none).
        func after(_ needle: [UInt8], from: Int) -> Int {
            var j = from
            while j + needle.count <= text.count {
                if text[j..<(j + needle.count)].elementsEqual(needle) { return j + needle.count }
                j += 1
            }
            return text.count
        }
        func finish(_ end: Int) {
            let piece = String(decoding: text[start..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !isOnlyComments(piece) { statements.append(piece) }
        }
        while i < text.count {
            switch text[i] {
            case UInt8(ascii: "'"): i = after([UInt8(ascii: "'")], from: i + 1)
            case UInt8(ascii: "\""): i = after([UInt8(ascii: "\"")], from: i + 1)
            case UInt8(ascii: "-") where i + 1 < text.count && text[i + 1] == UInt8(ascii: "-"):
                i = after([UInt8(ascii: "\n")], from: i + 2)
            case UInt8(ascii: "/") where i + 1 < text.count && text[i + 1] == UInt8(ascii: "*"):
                i = after(Array("*/".utf8), from: i + 2)
            case UInt8(ascii: "$"):
                // A dollar quote's tag: `$`, letters, digits or `_` not starting with a digit
                // (`$1` is a parameter), then `$`.
                var j = i + 1
                if j < text.count, text[j] >= UInt8(ascii: "0"), text[j] <= UInt8(ascii: "9") {
                    i = j
                    continue
                }
                while j < text.count, text[j] == UInt8(ascii: "_") || (text[j] | 0x20 >= UInt8(ascii: "a") && text[j] | 0x20 <= UInt8(ascii: "z"))
                    || (text[j] >= UInt8(ascii: "0") && text[j] <= UInt8(ascii: "9")) {
                    j += 1
                }
                if j < text.count, text[j] == UInt8(ascii: "$") {
                    let tag = Array(text[i...j])
                    i = after(tag, from: j + 1)
                } else {
                    i += 1
                }
            case UInt8(ascii: ";"):
                finish(i)
                i += 1
                start = i
            default: i += 1
            }
        }
        finish(text.count)
        return statements
    }

    /// Whether `piece` holds nothing but comments and white space.
    static func isOnlyComments(_ piece: String) -> Bool {
        var rest = Substring(piece)
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.isEmpty { return true }
            if rest.hasPrefix("--") {
                rest = rest.drop { $0 != "\n" }
            } else if rest.hasPrefix("/*"), let end = rest.range(of: "*/") {
                rest = rest[end.upperBound...]
            } else {
                return false
            }
        }
    }
}
