import TestSupport
import Testing

@testable import LinkpulseStore

/// The PostgreSQL statements whose rows Swift reads by column name: the server describes each
/// (on a migrated database), and its columns must be the Swift side's names in the same order.
/// A SELECT reordered or renamed in `queries/postgres/` fails here rather than reading the wrong
/// column.
@Suite struct PostgresStatementColumnsTests {
    @Test func eachNamedStatementHasTheColumnsItsSwiftSideReadsInOrder() async throws {
        let location = try PostgresStoreTests.database("statement_columns")
        let store = try await PostgresStoreTests.open(location)
        await store.close()
        let cluster = try PostgresTestCluster.shared.get()
        let entries = PostgresColumnsCatalog.entries(try PostgresQueries.load())
        #expect(entries.count == 20)
        // psql runs as a child process: waited for on a thread of its own, not the cooperative
        // pool the other tests' in-process daemons answer on.
        let database = location.database
        let described = try await onThreadOfItsOwn { try entries.map { try cluster.columnNames(of: $0.setup + $0.sql, database: database) } }
        for (entry, columns) in zip(entries, described) {
            #expect(columns.map(StatementColumnsTests.camelCase) == entry.columns, "\(entry.file): \(columns)")
        }
    }

    /// A cell's counts, and a group's summed counts, are read as `ConversionCounts.row` writes them.
    @Test func aCellsCountsAreTheRowsCountsInOrder() {
        let names = PostgresRollupCellColumn.columnNames
        #expect(names[PostgresRollupCellColumn.counts] == [
            "events", "clicks", "fallbacks", "installsClickId", "installsRef", "installsFingerprint", "installsOrganic", "opens",
            "deferredOpens", "installsInstallReferrer", "opensInstallReferrer", "opensClickId", "opensRef", "opensFingerprint", "opensOrganic",
        ])
        #expect(PostgresRollupCellColumn.counts.upperBound == PostgresRollupCellColumn.visitors.rawValue)
        let summed = PostgresRollupCountsColumn.columnNames
        #expect(Array(summed[PostgresRollupCountsColumn.counts]) == Array(names[PostgresRollupCellColumn.counts]))
        #expect(PostgresRollupCountsColumn.counts.upperBound == summed.count)
    }
}

/// PostgreSQL's statements name their parameters (`:ref`) as SQLite's do; reading a file
/// numbers them for the server, and a query binds them by name.
@Suite struct PostgresStatementParametersTests {
    @Test func namesAreNumberedInTheOrderTheyFirstAppearOutsideQuotesAndComments() {
        let (sql, names) = SQLScript.numberingParameters(
            "SELECT :a, :b::int, :a, ':c', \"x:d\", $$ :e $$, y::text -- :f\nFROM t WHERE z = :g_2 /* :h */")
        #expect(sql == "SELECT $1, $2::int, $1, ':c', \"x:d\", $$ :e $$, y::text -- :f\nFROM t WHERE z = $3 /* :h */")
        #expect(names == ["a", "b", "g_2"])
    }

    @Test func aQueryBindsEveryNameOnceAndNothingElse() throws {
        let statement = PostgresStatement(named: "SELECT :ref, :at_ms, :ref")
        #expect(statement.parameters == ["ref", "at_ms"])
        let query = try statement.query(["at_ms": Int64(5), "ref": nil])
        #expect(query.sql == "SELECT $1, $2, $1")
        #expect(query.binds.count == 2)
        #expect(throws: PostgresStoreError.self) { try statement.query(["ref": "r"]) }
        #expect(throws: PostgresStoreError.self) { try statement.query(["ref": "r", "at_ms": Int64(5), "seq": Int64(1)]) }
        #expect(throws: PostgresStoreError.self) { try statement.query(["ref": "r", "at_ms": Int64(5), "ref": "s"]) }
    }

    /// `$1` in code: a statement of `queries/postgres/` (migrations aside, which take none) that
    /// takes a parameter by position.
    @Test func noStatementTakesAParameterByPosition() {
        let files = EmbeddedText.files.filter { $0.key.hasPrefix("postgres/") && !$0.key.hasPrefix("postgres/migrations/") }
        #expect(files.count > 60)
        for (file, sql) in files.sorted(by: { $0.key < $1.key }) {
            let text = Array(sql.utf8)
            var positional = 0
            SQLScript.forEachCodeByte(text) { i in
                if text[i] == UInt8(ascii: "$"), i + 1 < text.count, text[i + 1] >= UInt8(ascii: "0"), text[i + 1] <= UInt8(ascii: "9") { positional += 1 }
            }
            #expect(positional == 0, "\(file)")
        }
    }
}
