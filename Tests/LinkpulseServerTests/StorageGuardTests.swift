import Foundation
import LinkpulseDomain
import LinkpulseServer
import Testing

/// The free-space guard reads the data directory's filesystem when asked, not on a timer.
@Suite struct StorageGuardTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "linkpulse-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A floor above the filesystem's size is low at the first question; no floor never is.
    @Test func theFirstQuestionReadsTheFilesystem() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let full = StorageGuard(minimum: FreeSpaceMinimum(bytes: Int64.max / 2, percent: nil), directory: directory)
        #expect(full.isLow)
        let reading = try #require(full.reading)
        #expect(reading.freeBytes > 0 && reading.requiredBytes == Int64.max / 2)
        let roomy = StorageGuard(minimum: .off, directory: directory)
        #expect(!roomy.isLow)
        #expect(roomy.reading?.low == false)
    }

    /// Without a data directory (PostgreSQL, and the in-process tests), nothing is measured and
    /// ingest is never refused.
    @Test func withoutADirectoryNothingIsMeasured() {
        let guarded = StorageGuard(minimum: FreeSpaceMinimum(bytes: Int64.max / 2, percent: nil))
        #expect(guarded.reading == nil)
        #expect(!guarded.isLow)
    }

    /// A filesystem that does not answer (here: the directory is gone) leaves the last reading
    /// standing: ingest stays refused rather than taking events it may have no room for.
    @Test func theLastReadingStandsWhenTheFilesystemDoesNotAnswer() throws {
        let directory = try Self.directory()
        let full = StorageGuard(minimum: FreeSpaceMinimum(bytes: Int64.max / 2, percent: nil), directory: directory, readingLastsFor: .zero)
        let first = try #require(full.reading)
        try FileManager.default.removeItem(at: directory)
        #expect(full.reading == first)
        #expect(full.isLow)
    }
}
