import Foundation
import GRDB
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// The rollup count's cache of link values by the bytes of their columns, and the recount that
/// starts from an emptied rollup file.
@Suite struct RawLinkCacheTests {
    /// Keys from four optional texts (nil: SQL NULL), through the cache's own key builder.
    static func key(_ cache: inout RawLinkCache, _ values: [String?]) -> Bool {
        let bytes = values.map { $0.map { Array($0.utf8) } }
        func buffer(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> Bool) -> Bool {
            guard let value = bytes[i] else { return body(nil) }
            return value.withUnsafeBufferPointer { body($0) }
        }
        return buffer(0) { a in buffer(1) { b in buffer(2) { c in buffer(3) { d in cache.key((a, b, c, d)) } } } }
    }

    /// Values that make different strings never share a number: NULL against empty, and the
    /// same bytes split at another place between two columns. Every number remembered is found
    /// again after the table has grown many times.
    @Test func differentValuesNeverShareANumber() {
        var cache = RawLinkCache()
        let keys: [[String?]] = [
            [nil, nil, nil, nil], ["", nil, nil, nil], [nil, "", nil, nil], ["ab", "c", nil, nil], ["a", "bc", nil, nil],
            ["abc", nil, nil, nil], [nil, nil, nil, "abc"], ["r1", "campaign_1", "email", "email"],
        ] + (0..<10_000).map { ["r\($0)", "campaign_\($0 % 7)", "src", $0 % 2 == 0 ? nil : "cpc"] }
        for (number, values) in keys.enumerated() {
            #expect(Self.key(&cache, values))
            #expect(cache.lookup() == nil, "\(values) matched a key met before")
            cache.insert(UInt32(number))
        }
        for (number, values) in keys.enumerated() {
            #expect(Self.key(&cache, values))
            #expect(cache.lookup() == UInt32(number), "\(values)")
        }
    }

    /// A value longer than a key can hold is not cached (the caller reads the strings).
    @Test func aValueTooLongIsNotCached() {
        var cache = RawLinkCache()
        #expect(!Self.key(&cache, [String(repeating: "x", count: RawLinkCache.maxValueBytes + 1), nil, nil, nil]))
        #expect(Self.key(&cache, [String(repeating: "x", count: RawLinkCache.maxValueBytes), nil, nil, nil]))
    }

    /// A recount gives the emptied rollup file's pages back (no free page left behind).
    @Test func aResetLeavesNoFreePagesInTheRollupFile() async throws {
        let store = try TemporaryStore()
        let events = AttributionStoreTests.traffic(seed: 5, count: 3_000)
        _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        try store.database.rollups.rollUpAll()
        let path = store.directory.appending(path: AppDatabase.rollupFileName).path
        func pages() throws -> (total: Int, free: Int) {
            try DatabaseQueue(path: path).read { db in
                (try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
            }
        }
        let counted = try pages()
        try store.database.rollups.resetRollups()
        let reset = try pages()
        #expect(reset.free == 0)
        #expect(reset.total < counted.total, "\(reset.total) pages after the reset, \(counted.total) before")
    }
}
