import Foundation

/// How the events database's WAL gets started over under constant load.
///
/// SQLite restarts a WAL from its beginning only at a commit that finds every frame copied back (a
/// checkpoint reached the end) and no reader on an older snapshot. Ingest commits every few
/// milliseconds and the attribution follower and rollup passes read back to back while a backlog
/// lasts, so that moment never comes by itself and the WAL grows without end. The gate makes it:
/// when the checkpoint job finds the WAL past its limit, the file's only writer (the ingest writer)
/// checkpoints to the end between two commits, after which its next commit starts the WAL over; and
/// while a reader's old snapshot keeps that checkpoint short, the gate is closed: the derived-work
/// loop waits at it before its next turn. It never waits longer than `SQLiteTuning.walWaitsAtMost`,
/// and readers that must answer someone (the urgent attribution round of a resolve, stats, exports)
/// never wait. (The attribution file needs no gate: its only long reader is its writer's own loop,
/// see `AttributionStore.walRestartWanted`.)
final class WALGate: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    /// The WAL is past its limit: its writer should checkpoint to the end between two commits.
    private var wanted = false
    /// Readers should wait: the last checkpoint could not reach the end (a reader held an older
    /// snapshot).
    private var closed = false
    /// Readers in `waitWhileClosed`.
    private var waiting = 0

    /// Whether the file's writer should checkpoint to the end before its next commit.
    var restartWanted: Bool {
        condition.lock()
        defer { condition.unlock() }
        return wanted
    }

    /// The checkpoint job's reading of the WAL: `pages` frames, `checkpointed` of them copied
    /// back. Past `limit` pages a restart is wanted, and readers wait while the copy is short.
    func measured(pages: Int, checkpointed: Int, limit: Int) {
        condition.lock()
        wanted = pages > limit
        closed = wanted && checkpointed < pages
        if !closed { condition.broadcast() }
        condition.unlock()
    }

    /// The writer has checkpointed to the end between two commits: its next commit starts the
    /// WAL over, and readers go on (those that begin now read the database file only).
    func restartPrepared() {
        condition.lock()
        wanted = false
        closed = false
        condition.broadcast()
        condition.unlock()
    }

    /// Returns at once when open; otherwise when it opens, or after `limit`.
    func waitWhileClosed(atMost limit: Duration) {
        let deadline = Date().addingTimeInterval(Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        waiting += 1
        defer { waiting -= 1 }
        while closed {
            if !condition.wait(until: deadline) { return }
        }
    }

    /// How many readers wait at the gate now.
    var readersWaiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }
}
