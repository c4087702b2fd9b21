import Foundation
import PostgresNIO

/// The PostgreSQL store's statements, from `queries/postgres/` (compiled into the binary).
struct PostgresQueries: Sendable {
    /// Migration bookkeeping and partitions (`schema/`).
    struct Schema: Sendable {
        let lock, createMigrations, applied, record, ensureEventMonths, databaseId: PostgresStatement
        let keepInstallationValue, setInstallationValue, forgetInstallationValue, installationValues, ping: PostgresStatement
    }

    /// The access keys (`keys/`).
    struct Keys: Sendable {
        let list, version, insert, revoke, recordUse: PostgresStatement
    }

    /// The ingest writer's statements and the reads of what it stored (`ingest/`).
    struct Ingest: Sendable {
        let lockSeq, advanceSeq, insertEvents, insertQuarantine, storedSeq, eventsAfter, recentQuarantine, deleteOldQuarantine: PostgresStatement
    }

    /// The derived-work lock and attribution (`attribution/`).
    struct Attribution: Sendable {
        let tryLead, roundCommitMode, state, advance, notify, clicksById, newestRefClicks, fingerprintClicks: PostgresStatement
        let insertAttributions, insertRefClicks, insertFingerprintClicks, insertResolveDevices, attributionsAfter: PostgresStatement
        let progress: PostgresStatement
    }

    /// Stats read from the raw events (`stats/`).
    struct Stats: Sendable {
        let rawEvents, rollupCounts, rollupVisitors, snapshot, workMemory: PostgresStatement
    }

    /// The rollups the derived work counts (`rollups/`).
    struct Rollups: Sendable {
        let state, events, cells, upsert, advance: PostgresStatement
    }

    /// Raw-event retention (`retention/`).
    struct Retention: Sendable {
        let expiredMonths, goneMonth, goneDefault, uncounted, keepClicks, forget, deleteDefault, dropMonth: PostgresStatement
        let dropClickIndexes, recordHorizon, horizon: PostgresStatement
    }

    /// The export ledger and the raw-event export's pages (`export/`).
    struct Export: Sendable {
        let jobLastPeriod, recordJobPeriod, insertFile, files, deleteFile: PostgresStatement
        let eventsInTime, eventsTail, newestSeq: PostgresStatement
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
        func text(_ name: String) throws -> PostgresStatement { PostgresStatement(named: try SQLQueries.text("postgres/" + name)) }
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

/// One statement of `queries/postgres/`: its parameters are named in the file (`:ref`), bound
/// by name here, and numbered for the server (`$1`) when the file is read
/// (`SQLScript.numberingParameters`). A value for a name the statement lacks, or a name left
/// without one, fails the query before it is sent.
struct PostgresStatement: Sendable {
    /// The SQL as the server receives it.
    let sql: String
    /// The parameters' names, `$1`'s first.
    let parameters: [String]

    init(named text: String) {
        (sql, parameters) = SQLScript.numberingParameters(text)
    }

    /// A value for a parameter: any value PostgreSQL takes, nil for NULL.
    typealias Value = (any PostgresThrowingDynamicTypeEncodable)?

    /// The statement with `values` bound by name.
    func query(_ values: KeyValuePairs<String, Value> = [:]) throws -> PostgresQuery {
        try query(binding: values.map { ($0.key, $0.value) })
    }

    /// The statement with `values` (name, value) bound by name, for values gathered in a loop.
    func query(binding values: [(name: String, value: Value)]) throws -> PostgresQuery {
        var byName: [String: Value] = [:]
        for (name, value) in values { byName[name] = .some(value) }
        let unknown = byName.keys.filter { !parameters.contains($0) }.sorted()
        let missing = parameters.filter { byName[$0] == nil }
        guard unknown.isEmpty, missing.isEmpty, byName.count == values.count else {
            throw PostgresStoreError.parameters(missing: missing, unknown: unknown, statement: sql)
        }
        var bindings = PostgresBindings(capacity: parameters.count)
        for name in parameters {
            if let value = byName[name]! { try bindings.append(value) } else { bindings.appendNull() }
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

/// Reads SQL the way PostgreSQL does where it matters here: what is code, and what is a quoted
/// string (`'…'`), a quoted name (`"…"`), a dollar-quoted body (`$$…$$`, `$tag$…$tag$`) or a
/// comment (`-- …` to the end of the line, `/* … */`).
enum SQLScript {
    /// Splits an SQL file into its statements, for a server that takes one statement per query
    /// (PostgreSQL's extended protocol). A `;` in code ends a statement. Statements are returned
    /// trimmed, without their `;`; comments stay in them; a piece holding only comments and
    /// space is dropped.
    static func statements(of sql: String) -> [String] {
        let text = Array(sql.utf8)
        var statements: [String] = []
        var start = 0
        func finish(_ end: Int) {
            let piece = String(decoding: text[start..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !isOnlyComments(piece) { statements.append(piece) }
        }
        forEachCodeByte(text) { i in
            guard text[i] == UInt8(ascii: ";") else { return }
            finish(i)
            start = i + 1
        }
        finish(text.count)
        return statements
    }

    /// The statement with its named parameters (`:ref`) numbered for PostgreSQL (`$1`), in the
    /// order their names first appear (a name used twice is one parameter), and those names in
    /// that order. A name is `:` then a lower-case letter or `_`, then letters, digits or `_`,
    /// in code, after no `:` (so a cast, `::int`, is not one).
    static func numberingParameters(_ sql: String) -> (sql: String, names: [String]) {
        let text = Array(sql.utf8)
        func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (!first && byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        var names: [String] = []
        var out: [UInt8] = []
        var copied = 0
        var skipTo = 0
        forEachCodeByte(text) { i in
            guard i >= skipTo, text[i] == UInt8(ascii: ":"), i + 1 < text.count, isNameByte(text[i + 1], first: true),
                i == 0 || text[i - 1] != UInt8(ascii: ":") else { return }
            var end = i + 2
            while end < text.count, isNameByte(text[end], first: false) { end += 1 }
            let name = String(decoding: text[(i + 1)..<end], as: UTF8.self)
            let number = (names.firstIndex(of: name) ?? { names.append(name); return names.count - 1 }()) + 1
            out.append(contentsOf: text[copied..<i])
            out.append(contentsOf: Array("$\(number)".utf8))
            copied = end
            skipTo = end
        }
        out.append(contentsOf: text[copied...])
        return (String(decoding: out, as: UTF8.self), names)
    }

    /// Calls `body` with the index of every byte of `text` that is code (outside quotes,
    /// dollar quotes and comments), in order.
    static func forEachCodeByte(_ text: [UInt8], _ body: (Int) -> Void) {
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
                    body(i)
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
                    body(i)
                    i += 1
                }
            default:
                body(i)
                i += 1
            }
        }
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
