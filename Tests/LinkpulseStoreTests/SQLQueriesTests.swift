import Foundation
import Testing

@testable import LinkpulseStore

/// The statements of `queries/` as the store runs them.
@Suite struct SQLQueriesTests {
    /// Comment lines are left out and nothing else: every statement the store looks up in its
    /// statement caches is plain ASCII (the cache hashes the text at each lookup). Every store
    /// the tests open compiles what is left (`prepareAll`).
    @Test func statementsAreTheFilesWithoutTheirComments() throws {
        let file = "-- what it does — with a dash\n  -- indented comment\nSELECT '--not a comment', 1 -- trailing stays\nFROM t\n"
        #expect(SQLQueries.statement(file) == "SELECT '--not a comment', 1 -- trailing stays\nFROM t\n")
        let statements = EmbeddedText.files.filter { $0.key.hasSuffix(".sql") && !$0.key.contains("migrations/") && !$0.key.hasPrefix("ids/0") && !$0.key.hasPrefix("rollups/0") && !$0.key.hasPrefix("attributions/0") }
        #expect(statements.count > 150)
        for name in statements.keys {
            let statement = try SQLQueries.text(name)
            #expect(statement.utf8.allSatisfy { $0 < 0x80 }, "\(name) holds a character outside ASCII outside its comments")
        }
    }
}
