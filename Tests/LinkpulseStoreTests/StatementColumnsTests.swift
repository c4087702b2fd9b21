import GRDB
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

    static func columns(of entry: StatementColumnsCatalog.Entry, in database: AppDatabase) throws -> [String] {
        let reader: any DatabaseReader = switch entry.connection {
        case .attribution: database.attribution.queue
        case .rollups: database.rollups.queue
        case .eventsReader: database.events.pool
        }
        return try reader.read { db in try db.makeStatement(sql: entry.sql).columnNames }
    }

    @Test func eachNamedStatementHasTheColumnsItsSwiftSideReadsInOrder() throws {
        let store = try TemporaryStore()
        let entries = StatementColumnsCatalog.entries(store.database.queries)
        #expect(entries.count == 31)
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
                let s = HotStatement(try db.cachedStatement(sql: "SELECT ?1 + ?2"), in: db)
                try s.bind(1, Int64(1))
                _ = try s.step()
            }
        }
    }

    @Test func aStatementWithEveryParameterBoundRuns() throws {
        let queue = try DatabaseQueue()
        let sum = try queue.inDatabase { db -> Int64 in
            let s = HotStatement(try db.cachedStatement(sql: "SELECT ?1 + ?2"), in: db)
            try s.bind(1, Int64(1))
            try s.bind(2, Int64(2))
            guard try s.step() else { return -1 }
            defer { s.finish() }
            return s.int64(HotStatement.onlyColumn)
        }
        #expect(sum == 3)
    }
}
