import GRDB
import GRDBSQLite
@testable import LinkpulseStore
import Testing

/// The statements whose rows Swift reads by column name: each prepared on the connection it
/// runs on, its columns must be the Swift side's names in the same order. A SELECT reordered or
/// renamed in `queries/` fails here rather than reading the wrong column.
@Suite struct StatementColumnsTests {
    /// `attributed_through_seq` as the Swift side names it: `attributedThroughSeq`.
    static func camelCase(_ column: String) -> String {
        let words = column.split(separator: "_")
        return (words.first.map(String.init) ?? "") + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The connection of `database` a statement of `connection` runs on.
    static func reader(_ connection: StatementColumnsCatalog.Connection, in database: AppDatabase) -> any DatabaseReader {
        switch connection {
        case .attribution: database.attribution.queue
        case .rollups: database.rollups.queue
        case .eventsReader: database.events.pool
        case .idIndex: database.events.idIndex
        }
    }

    static func columns(of entry: StatementColumnsCatalog.Entry, in database: AppDatabase) throws -> [String] {
        try reader(entry.connection, in: database).read { db in try db.makeStatement(sql: entry.sql).columnNames }
    }

    @Test func eachNamedStatementHasTheColumnsItsSwiftSideReadsInOrder() throws {
        let store = try TemporaryStore()
        let entries = StatementColumnsCatalog.entries(store.database.queries)
        #expect(entries.count == 30)
        for entry in entries {
            let columns = try Self.columns(of: entry, in: store.database)
            #expect(columns.map(Self.camelCase) == entry.columns, "\(entry.file): \(columns)")
        }
    }

    /// `derivedWatermark` reads every derived file's state by `DerivedStateColumn`.
    @Test func eachDerivedStateBeginsWithItsOwnerAndItsWatermark() throws {
        let store = try TemporaryStore()
        for entry in StatementColumnsCatalog.entries(store.database.queries) where entry.file.hasSuffix("state.sql") {
            let columns = try Self.columns(of: entry, in: store.database)
            #expect(columns.count > DerivedStateColumn.throughSeq.rawValue, "\(entry.file)")
            #expect(columns[DerivedStateColumn.databaseId.rawValue] == "database_id", "\(entry.file): \(columns)")
            #expect(columns[DerivedStateColumn.throughSeq.rawValue].hasSuffix("_through_seq"), "\(entry.file): \(columns)")
        }
    }

    @Test func columnNamesAreSpelledInCamelCase() {
        #expect(Self.camelCase("attributed_through_seq") == "attributedThroughSeq")
        #expect(Self.camelCase("database_id") == "databaseId")
        #expect(Self.camelCase("seq") == "seq")
    }
}

/// A statement run through `HotStatement` with one of its parameters never bound stops a debug
/// build (the tests), naming the statement, instead of reading the parameter as NULL.
@Suite struct HotStatementParameterTests {
    @Test func aStatementRunWithAParameterNeverBoundStops() async {
        await #expect(processExitsWith: .failure) {
            let queue = try DatabaseQueue()
            try queue.inDatabase { db in
                let s = HotStatement(try db.cachedStatement(sql: "SELECT :a + :b"), in: db)
                try s.bind(":a", Int64(1))
                _ = try s.step()
            }
        }
    }

    @Test func aStatementWithEveryParameterBoundRuns() throws {
        let queue = try DatabaseQueue()
        let sum = try queue.inDatabase { db -> Int64 in
            let s = HotStatement(try db.cachedStatement(sql: "SELECT :a + :b + :a"), in: db)
            try s.bind(":a", Int64(1))
            try s.bind(":b", Int64(2))
            guard try s.step() else { return -1 }
            defer { s.finish() }
            return s.int64(HotStatement.onlyColumn)
        }
        #expect(sum == 4)
    }
}

/// Every statement of `queries/` names its parameters; the hot loops' enums name them as the
/// statements do, in the order SQLite numbers them.
@Suite struct StatementParametersTests {
    /// The parameters SQLite sees in `entry`'s statement, prepared where it runs, in camel case.
    static func parameters(of entry: StatementParametersCatalog.Entry, in database: AppDatabase) throws -> [String] {
        try StatementColumnsTests.reader(entry.connection, in: database).read { db in
            let statement = try db.makeStatement(sql: entry.sql)
            return withExtendedLifetime(statement) {
                let handle = statement.sqliteStatement
                return (1...max(1, sqlite3_bind_parameter_count(handle))).compactMap { i in
                    sqlite3_bind_parameter_name(handle, i).map { String(cString: $0) }
                }.map { name in StatementColumnsTests.camelCase(String(name.dropFirst())) }
            }
        }
    }

    @Test func eachHotLoopsEnumNamesItsStatementsParametersInOrder() throws {
        let store = try TemporaryStore()
        let entries = StatementParametersCatalog.entries(store.database.queries)
        #expect(entries.count == 10)
        for entry in entries {
            #expect(try Self.parameters(of: entry, in: store.database) == entry.parameters, "\(entry.file)")
        }
    }

    /// `?`, `?NNN`, `@name` and `$name` (SQLite's other forms) outside comments and string
    /// literals, in the SQLite statements of `queries/` (PostgreSQL's are under `postgres/`).
    static func unnamedParameters(_ sql: String) -> [String] {
        sql.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            let code = line.components(separatedBy: "--")[0]
            return code.split(separator: "'", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }
                .flatMap { $0.element.matches(of: /[?@$][0-9A-Za-z_]*/).map { String($0.output) } }
        }
    }

    @Test func noStatementTakesAParameterByPosition() {
        let files = EmbeddedText.files.filter { $0.key.hasSuffix(".sql") && !$0.key.hasPrefix("postgres/") }
        #expect(files.count > 150)
        for (file, sql) in files.sorted(by: { $0.key < $1.key }) {
            #expect(Self.unnamedParameters(sql).isEmpty, "\(file): \(Self.unnamedParameters(sql))")
        }
        #expect(Self.unnamedParameters("SELECT ?1, '?', :a -- ?\nWHERE x = ?") == ["?1", "?"])
    }
}
