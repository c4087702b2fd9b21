import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LinkpulseStore

/// The WAL gate's rules: when a restart is wanted, when readers wait, and that they never wait
/// past their limit or after the writer has prepared the restart.
@Suite struct WALGateTests {
    /// How long a reader thread waited, told to the test when it returns.
    typealias Waited = Wakeup<Duration>

    /// Starts a reader that waits at the gate as the derived-work loop does, on a
    /// thread of its own (never on the cooperative pool, which the test needs to go on).
    func reader(_ gate: WALGate, atMost limit: Duration) -> Waited {
        let seen = Waited()
        Thread {
            let start = ContinuousClock.now
            gate.waitWhileClosed(atMost: limit)
            seen.wake(ContinuousClock.now - start)
        }.start()
        return seen
    }

    /// How long the reader waited, once it has returned.
    func result(_ seen: Waited) async throws -> Duration {
        let took = await seen.wait(atMost: .seconds(300), timedOut: .seconds(-1))
        try #require(took >= .zero, "the reader did not return")
        return took
    }

    @Test func underItsLimitNothingIsWantedAndNobodyWaits() async throws {
        let gate = WALGate()
        gate.measured(pages: 100, checkpointed: 10, limit: 8192)
        #expect(!gate.restartWanted)
        #expect(try await result(reader(gate, atMost: .seconds(30))) < .seconds(15))
    }

    @Test func pastItsLimitTheWriterIsAskedAndReadersWaitOnlyWhileTheCopyIsShort() async throws {
        let gate = WALGate()
        // Copied to the end already: the writer should restart, readers need not wait.
        gate.measured(pages: 9000, checkpointed: 9000, limit: 8192)
        #expect(gate.restartWanted)
        #expect(try await result(reader(gate, atMost: .seconds(30))) < .seconds(15))
        // A reader's old snapshot kept the copy short: readers step aside, at most their limit.
        gate.measured(pages: 9500, checkpointed: 9000, limit: 8192)
        #expect(gate.restartWanted)
        #expect(try await result(reader(gate, atMost: .milliseconds(300))) >= .milliseconds(300))
    }

    @Test func theWritersPreparedRestartLetsAWaitingReaderGoAtOnce() async throws {
        let gate = WALGate()
        gate.measured(pages: 9500, checkpointed: 9000, limit: 8192)
        let limit: Duration = .seconds(60)
        let seen = reader(gate, atMost: limit)
        try #require(await eventually(every: .milliseconds(1)) { gate.readersWaiting == 1 })
        gate.restartPrepared()
        #expect(!gate.restartWanted)
        let took = try await result(seen)
        #expect(took < limit / 2, "released by the writer, not by the limit: \(took)")
    }
}
