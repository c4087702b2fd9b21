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
