import Foundation
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Synchronization

/// Whether the data directory's filesystem has room for more events. Read when asked (ingest
/// asks before handing work to the writer, `/readyz` and `/metrics` when they answer), at most
/// once every `readingLastsFor`: a `statvfs` and a `stat` of each store file, microseconds that
/// touch no disk, so no timer keeps it fresh. A change between room and no room is logged once.
public final class StorageGuard: Sendable {
    /// A reading: free and required bytes, and whether ingest is refused.
    public struct Reading: Sendable, Equatable {
        public var freeBytes: Int64
        public var requiredBytes: Int64
        public var low: Bool { freeBytes < requiredBytes }
    }

    let minimum: FreeSpaceMinimum
    /// The data directory watched; nil watches nothing (the PostgreSQL store, and tests that
    /// run on whatever disk they find): never low, never measured.
    let directory: URL?
    let logger: Logger?
    /// How long a reading stands before the next question reads the filesystem again.
    let readingLastsFor: Duration
    private let state = Mutex<(reading: Reading?, at: ContinuousClock.Instant?)>((nil, nil))

    public init(minimum: FreeSpaceMinimum = .standard, directory: URL? = nil, readingLastsFor: Duration = .seconds(1), logger: Logger? = nil) {
        self.minimum = minimum
        self.directory = directory
        self.readingLastsFor = readingLastsFor
        self.logger = logger
    }

    /// The reading now (taken again when the last is older than `readingLastsFor`; the last
    /// stands when the filesystem does not answer); nil when nothing is watched or read yet.
    public var reading: Reading? {
        let now = ContinuousClock.now
        let kept = state.withLock { state in state.at.map { now - $0 < readingLastsFor } == true ? state.reading : nil }
        return kept ?? usage().map(\.reading) ?? state.withLock { $0.reading }
    }

    /// Whether ingest must refuse for want of space.
    public var isLow: Bool { reading?.low ?? false }

    /// Reads the filesystem now, with every store file's size (the gauges of `/metrics` take it
    /// whole), and keeps it as the reading; nil when nothing is watched or it does not answer.
    func usage() -> (reading: Reading, files: DiskUsage)? {
        guard let directory, let usage = try? DiskUsage.read(directory: directory) else { return nil }
        let reading = Reading(freeBytes: usage.freeBytes, requiredBytes: minimum.requiredBytes(totalBytes: usage.totalBytes))
        let before = state.withLock { state in
            defer { state = (reading, .now) }
            return state.reading
        }
        if reading.low != (before?.low ?? false) { announce(reading, directory: directory) }
        return (reading, usage)
    }

    private func announce(_ reading: Reading, directory: URL) {
        let metadata: Logger.Metadata = ["free_bytes": "\(reading.freeBytes)", "required_bytes": "\(reading.requiredBytes)", "dir": "\(directory.path)"]
        if reading.low {
            logger?.critical("free disk space is below --min-free-disk: ingest answers 503 insufficient_storage until there is room", metadata: metadata)
        } else {
            logger?.notice("free disk space is back above --min-free-disk: ingest resumed", metadata: metadata)
        }
    }
}

/// At each scrape of `/metrics`, the sizes of the database files and their WALs and the free
/// space beside them: `linkpulse_database_bytes` and `linkpulse_wal_bytes` by file,
/// `linkpulse_disk_free_bytes`, `linkpulse_disk_total_bytes` (when a data directory is watched).
struct DiskGauges: Sendable {
    let storage: StorageGuard
    let databaseBytes: [String: Gauge]
    let walBytes: [String: Gauge]
    let freeBytes = Gauge(label: "linkpulse_disk_free_bytes")
    let totalBytes = Gauge(label: "linkpulse_disk_total_bytes")

    init(storage: StorageGuard) {
        self.storage = storage
        let names = StoreFiles.all.map(\.name)
        databaseBytes = Dictionary(uniqueKeysWithValues: names.map { ($0, Gauge(label: "linkpulse_database_bytes", dimensions: [("file", $0)])) })
        walBytes = Dictionary(uniqueKeysWithValues: names.map { ($0, Gauge(label: "linkpulse_wal_bytes", dimensions: [("file", $0)])) })
    }

    /// Records the gauges from one reading.
    func record() {
        guard let usage = storage.usage()?.files else { return }
        for file in usage.files {
            databaseBytes[file.name]?.record(Double(file.databaseBytes))
            walBytes[file.name]?.record(Double(file.walBytes))
        }
        freeBytes.record(Double(usage.freeBytes))
        totalBytes.record(Double(usage.totalBytes))
    }
}
