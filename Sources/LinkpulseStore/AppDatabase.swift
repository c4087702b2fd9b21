import Foundation
import GRDB
import Logging
import Synchronization

/// How hard a commit works to survive a crash.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: an acknowledged event survives `kill -9` and power loss.
    case full
    /// `synchronous=NORMAL`: survives `kill -9`; the last commits before a power loss may be lost.
    case normal
}

/// The only owner of SQLite in Linkpulse: the events database (`linkpulse.sqlite`, WAL, one
/// writer and a pool of readers) and its derived id index (`linkpulse-ids.sqlite`).
///
/// Opening it runs migrations, verifies that the id index belongs to this database (rebuilding
/// it when not), catches the index up, and loads the writer's in-memory id tail.
public final class AppDatabase: Sendable {
    /// File names under the data directory.
    public static let eventsFileName = "linkpulse.sqlite"
    public static let idIndexFileName = "linkpulse-ids.sqlite"

    let pool: DatabasePool
    let idIndex: DatabaseQueue
    let queries: SQLQueries
    let tail: Mutex<IdTail>
    /// The id index's watermark as last written by a merge (merges run one at a time).
    let indexedThrough: Mutex<Int64>
    let logger: Logger

    /// Opens (creating when missing) the databases under `directory`.
    /// - Parameters:
    ///   - durability: the `synchronous` level of every connection to the events database.
    ///   - tailLimit: at start, merge into the id index until at most this many ids remain in memory.
    public init(directory: URL, durability: Durability = .full, tailLimit: Int = 200_000, logger: Logger) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.logger = logger
        let queries = try SQLQueries.load()
        self.queries = queries

        let eventsPath = directory.appending(path: Self.eventsFileName).path
        let idIndexPath = directory.appending(path: Self.idIndexFileName).path

        // The id index file first: every events connection attaches it.
        var idConfig = Configuration()
        idConfig.busyMode = .timeout(10)
        idConfig.prepareDatabase { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        idIndex = try DatabaseQueue(path: idIndexPath, configuration: idConfig)
        var idMigrator = DatabaseMigrator()
        for migration in queries.idIndexMigrations {
            idMigrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        try idMigrator.migrate(idIndex)

        var config = Configuration()
        config.busyMode = .timeout(10)
        config.maximumReaderCount = 4
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try db.execute(sql: "ATTACH DATABASE ? AS ids", arguments: [idIndexPath])
        }
        pool = try DatabasePool(path: eventsPath, configuration: config)
        var migrator = DatabaseMigrator()
        for migration in queries.migrations {
            migrator.registerMigration(migration.name) { db in try db.execute(sql: migration.sql) }
        }
        try migrator.migrate(pool)
        try pool.write { db in try queries.prepareEventStatements(db) }

        tail = Mutex(IdTail())
        indexedThrough = Mutex(0)
        try prepareIdIndex(tailLimit: tailLimit)
    }

    /// Runs the migrations of both files and returns (nothing else): for `linkpulse migrate`.
    public static func migrate(directory: URL, logger: Logger) throws {
        _ = try AppDatabase(directory: directory, logger: logger)
    }

    /// Whether the events database answers a trivial read.
    public func isHealthy() async -> Bool {
        (try? await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    /// The highest seq stored (0 when empty).
    public func maxSeq() throws -> Int64 {
        try pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM events") ?? 0 }
    }

    /// Closes every connection. The object must not be used afterwards.
    public func close() throws {
        try pool.close()
        try idIndex.close()
    }
}
