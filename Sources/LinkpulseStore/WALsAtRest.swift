import Foundation
import GRDB

/// When the store's WALs go back to zero bytes: once nothing has been stored, attributed or
/// counted for `quietFor` (every stored event attributed and counted, and those watermarks
/// unchanged), once per quiet spell. Under load each WAL is kept at most about 64 MiB (started
/// over and truncated back to `journal_size_limit`), and it would stay that size on disk after
/// the load; a quiet store gives that space back. Pure: the checkpoint job feeds it the progress
/// it reads each second.
public struct WALsAtRest: Sendable {
    /// How long the store must be quiet before its WALs are truncated
    /// (`SQLiteTuning.quietFor`).
    let quietFor: Duration
    private var last: RollupProgress?
    private var quietSince: ContinuousClock.Instant?
    private var truncated = false

    public init(quietFor: Duration) {
        self.quietFor = quietFor
    }

    /// Notes `progress` read at `now`; true when the WALs should be truncated now (the spell has
    /// lasted `quietFor` and they were not truncated in it yet).
    public mutating func observe(_ progress: RollupProgress, at now: ContinuousClock.Instant) -> Bool {
        let caughtUp = progress.countedThroughSeq >= progress.storedThroughSeq
            && progress.attributedThroughSeq >= progress.storedThroughSeq
        guard caughtUp, progress == last, let since = quietSince else {
            last = progress
            quietSince = caughtUp ? now : nil
            truncated = false
            return false
        }
        guard !truncated, now - since >= quietFor else { return false }
        truncated = true
        return true
    }
}

extension AppDatabase {
    /// Copies every file's WAL back into its file and truncates it to zero bytes (the events
    /// database and attribution on their checkpointers' connections, the id index and rollups on
    /// their writers' queues, idle when the store is quiet), each on its connection's own GRDB
    /// queue. Run by the checkpoint job when `WALsAtRest` says so; a file busy at that moment
    /// keeps what could not be copied, harmlessly.
    public func truncateWALs() async {
        let truncate = queries.truncateWAL
        for connection in [events.checkpointer, events.idIndex, attribution.checkpointer, rollups.queue] {
            try? await connection.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: truncate) }
        }
    }
}
