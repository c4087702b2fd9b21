import Foundation

/// A pause before trying again something that waits for a state nobody signals: a SQLite
/// reader's snapshot ending (so that a checkpoint reaches the end of the WAL), or the apps'
/// resolves going quiet. The one place a store thread sleeps; everything else that waits
/// awaits a signal (`Wakeup`, a continuation, a condition).
struct RetryBackoff: Sendable {
    /// How long one pause lasts.
    let pause: Duration

    /// Blocks the calling store thread (never a cooperative one) for `pause`.
    func pauseThread() {
        Thread.sleep(forTimeInterval: Double(pause.nanoseconds) / 1e9)
    }
}
