import GRDB

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
    let recentQuarantine: String

    /// Migrations of the events database, in order: (name, SQL).
    let migrations: [(name: String, sql: String)]
    /// Migrations of the id index file, in order: (name, SQL).
    let idIndexMigrations: [(name: String, sql: String)]

    static func load() throws -> SQLQueries {
        SQLQueries(
            insertEvent: try text("ingest/insert_event.sql"),
            insertQuarantine: try text("ingest/insert_quarantine.sql"),
            indexedSeqsForKey: try text("ingest/indexed_seqs_for_key.sql"),
            eventIdAtSeq: try text("ingest/event_id_at_seq.sql"),
            idKeysInRange: try text("ingest/id_keys_in_range.sql"),
            insertEventId: try text("ingest/insert_event_id.sql"),
            recentQuarantine: try text("ingest/recent_quarantine.sql"),
            migrations: files(under: "migrations/"),
            idIndexMigrations: files(under: "ids/"))
    }

    static func text(_ name: String) throws -> String {
        guard let sql = EmbeddedText.files[name] else { throw StoreError.missingQuery(name) }
        return sql
    }

    static func files(under folder: String) -> [(name: String, sql: String)] {
        EmbeddedText.files
            .filter { $0.key.hasPrefix(folder) && $0.key.hasSuffix(".sql") }
            .sorted { $0.key < $1.key }
            .map { (String($0.key.dropFirst(folder.count).dropLast(4)), $0.value) }
    }

    /// Compiles the statements that run against the events database (with `ids` attached).
    func prepareEventStatements(_ db: Database) throws {
        for sql in [insertEvent, insertQuarantine, indexedSeqsForKey, eventIdAtSeq, idKeysInRange, recentQuarantine] {
            _ = try db.makeStatement(sql: sql)
        }
    }
}

/// Failures of the store that are not SQLite errors.
public enum StoreError: Error, CustomStringConvertible {
    case missingQuery(String)

    public var description: String {
        switch self {
        case .missingQuery(let name): "queries/\(name) is missing from this build"
        }
    }
}
