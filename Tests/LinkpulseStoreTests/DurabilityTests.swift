import Foundation
import GRDB
import Logging
import Testing

@testable import LinkpulseStore

/// The durability asked for is the one the ingest writer commits with: `synchronous` is a
/// setting of each connection, and GRDB sets its own on a pool's writer when it turns WAL on.
@Suite struct DurabilityTests {
    @Test(arguments: [(Durability.full, 2), (Durability.normal, 1)])
    func theEventsWriterCommitsAtTheDurabilityAsked(durability: Durability, level: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-durability-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try AppDatabase(directory: directory, durability: durability, logger: Logger(label: "test"))
        defer { try? database.close() }
        // The writer: the connection `EventStore.store` commits on.
        let writer = try await database.events.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA main.synchronous") }
        #expect(writer == level)
        // The checkpointer syncs what it copies back at the same level.
        let checkpointer = try await database.events.checkpointer.read { db in try Int.fetchOne(db, sql: "PRAGMA main.synchronous") }
        #expect(checkpointer == level)
    }
}
