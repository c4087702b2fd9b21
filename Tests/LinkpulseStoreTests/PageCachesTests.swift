import Foundation
import GRDB
import Logging
import Testing

@testable import LinkpulseStore

/// Each connection gets the page caches asked for, its own file's and those of the files it
/// attaches (SQLite gives every attached file a cache of its own, about 2 MiB by default), but
/// for the events readers, which keep SQLite's default.
@Suite struct PageCachesTests {
    /// `PRAGMA schema.cache_size` of each schema, as SQLite reports it (negative: KiB).
    static func cacheSizes(_ db: Database, _ schemas: [String]) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for schema in schemas { sizes[schema] = try Int.fetchOne(db, sql: "PRAGMA \(schema).cache_size") }
        return sizes
    }

    @Test(arguments: [PageCaches.daemon, PageCaches.command])
    func everyConnectionKeepsTheCachesAsked(caches: PageCaches) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "linkpulse-caches-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try AppDatabase(directory: directory, durability: .normal, tuning: .daemon.with { $0.pageCaches = caches }, logger: Logger(label: "test"))
        defer { try? database.close() }
        // SQLite's own default where none is asked for.
        let attached = -(caches.attachedKiB ?? 2000)

        // The derived files' connections attach nothing: their rounds and passes read the
        // events on an events reader.
        let rollups = try database.rollups.queue.inDatabase { db in try Self.cacheSizes(db, ["main"]) }
        #expect(rollups == ["main": -caches.rollupKiB])
        let rollupSchemas = try database.rollups.queue.inDatabase { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_database_list") }
        #expect(rollupSchemas.filter { $0 != "temp" } == ["main"])
        let attribution = try database.attribution.queue.inDatabase { db in try Self.cacheSizes(db, ["main"]) }
        #expect(attribution == ["main": -caches.attributionKiB])
        let attributionSchemas = try database.attribution.queue.inDatabase { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_database_list") }
        #expect(attributionSchemas.filter { $0 != "temp" } == ["main"])
        #expect(database.attribution.tuning.pageCaches.attributionKiB == caches.attributionKiB)
        // The events connections: the writer, and a reader, which answers stats and resolves
        // from the attached files and keeps SQLite's default.
        let writer = try await database.events.pool.write { db in try Self.cacheSizes(db, ["ids", "agg", "attr"]) }
        #expect(writer == ["ids": attached, "agg": attached, "attr": attached])
        let reader = try await database.events.pool.read { db in try Self.cacheSizes(db, ["ids", "agg", "attr"]) }
        #expect(reader == ["ids": -2000, "agg": -2000, "attr": -2000])
    }
}
