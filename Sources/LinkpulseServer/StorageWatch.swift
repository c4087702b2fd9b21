import Foundation
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Synchronization

/// Whether the data directory's filesystem has room for more events, as the disk watch last
/// saw it. Ingest reads it before handing work to the writer; `/readyz` reports it.
public final class StorageGuard: Sendable {
    /// The last reading: free and required bytes, and whether ingest is refused.
    public struct Reading: Sendable, Equatable {
        public var freeBytes: Int64
        public var requiredBytes: Int64
        public var low: Bool { freeBytes < requiredBytes }
    }

    let minimum: FreeSpaceMinimum
    private let state = Mutex<Reading?>(nil)

    public init(minimum: FreeSpaceMinimum = .standard) {
        self.minimum = minimum
    }

    /// The last reading; nil before the first.
    public var reading: Reading? { state.withLock { $0 } }

    /// Whether ingest must refuse for want of space (never before the first reading).
    public var isLow: Bool { reading?.low ?? false }

    /// Records a reading of the filesystem; returns the previous one.
    @discardableResult
    func record(freeBytes: Int64, totalBytes: Int64) -> Reading? {
        let reading = Reading(freeBytes: freeBytes, requiredBytes: minimum.requiredBytes(totalBytes: totalBytes))
        return state.withLock { old in
            defer { old = reading }
            return old
        }
    }
}

/// Every second: reads the sizes of the database files and their WALs and the free space
/// beside them into `/metrics` (`linkpulse_database_bytes`, `linkpulse_wal_bytes`, by file;
/// `linkpulse_disk_free_bytes`, `linkpulse_disk_total_bytes`), and into the storage guard,
/// logging when ingest stops or resumes for want of space.
public struct DiskWatchJob: TimerJob {
    public let name = "disk-watch"
    let events: EventStore
    let storage: StorageGuard
    let logger: Logger
    let databaseBytes: [String: Gauge]
    let walBytes: [String: Gauge]
    let freeBytes = Gauge(label: "linkpulse_disk_free_bytes")
    let totalBytes = Gauge(label: "linkpulse_disk_total_bytes")

    public init(events: EventStore, storage: StorageGuard, logger: Logger) {
        self.events = events
        self.storage = storage
        self.logger = logger
        let names = StoreFiles.all.map(\.name)
        databaseBytes = Dictionary(uniqueKeysWithValues: names.map { ($0, Gauge(label: "linkpulse_database_bytes", dimensions: [("file", $0)])) })
        walBytes = Dictionary(uniqueKeysWithValues: names.map { ($0, Gauge(label: "linkpulse_wal_bytes", dimensions: [("file", $0)])) })
    }

    public func run() throws {
        let usage = try events.diskUsage()
        for file in usage.files {
            databaseBytes[file.name]?.record(Double(file.databaseBytes))
            walBytes[file.name]?.record(Double(file.walBytes))
        }
        freeBytes.record(Double(usage.freeBytes))
        totalBytes.record(Double(usage.totalBytes))
        let before = storage.record(freeBytes: usage.freeBytes, totalBytes: usage.totalBytes)
        guard let now = storage.reading, now.low != (before?.low ?? false) else { return }
        let metadata: Logger.Metadata = ["free_bytes": "\(now.freeBytes)", "required_bytes": "\(now.requiredBytes)", "dir": "\(events.directory.path)"]
        if now.low {
            logger.critical("free disk space is below --min-free-disk: ingest answers 503 insufficient_storage until there is room", metadata: metadata)
        } else {
            logger.notice("free disk space is back above --min-free-disk: ingest resumed", metadata: metadata)
        }
    }
}
