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
