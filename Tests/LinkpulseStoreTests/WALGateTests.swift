import Foundation
import Testing

@testable import LinkpulseStore

/// The WAL gate's rules: when a restart is wanted, when readers wait, and that they never wait
/// past their limit or after the writer has prepared the restart.
@Suite struct WALGateTests {
    func waited(_ gate: WALGate, atMost limit: Duration = .milliseconds(300)) -> Duration {
        let start = ContinuousClock.now
        gate.waitWhileClosed(atMost: limit)
        return ContinuousClock.now - start
    }

    @Test func underItsLimitNothingIsWantedAndNobodyWaits() {
        let gate = WALGate()
        gate.measured(pages: 100, checkpointed: 10, limit: 8192)
        #expect(!gate.restartWanted)
        #expect(waited(gate) < .milliseconds(100))
    }

    @Test func pastItsLimitTheWriterIsAskedAndReadersWaitOnlyWhileTheCopyIsShort() {
        let gate = WALGate()
        // Copied to the end already: the writer should restart, readers need not wait.
        gate.measured(pages: 9000, checkpointed: 9000, limit: 8192)
        #expect(gate.restartWanted)
        #expect(waited(gate) < .milliseconds(100))
        // A reader's old snapshot kept the copy short: readers step aside, at most their limit.
        gate.measured(pages: 9500, checkpointed: 9000, limit: 8192)
        #expect(gate.restartWanted)
        let waitedOut = waited(gate, atMost: .milliseconds(300))
        #expect(waitedOut >= .milliseconds(250) && waitedOut < .seconds(2))
    }

    @Test func theWritersPreparedRestartLetsWaitingReadersGoAtOnce() async throws {
        let gate = WALGate()
        gate.measured(pages: 9500, checkpointed: 9000, limit: 8192)
        let reader = Task.detached { waited(gate, atMost: .seconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        gate.restartPrepared()
        let took = await reader.value
        #expect(took < .seconds(5), "released by the writer, not by the limit: \(took)")
        #expect(!gate.restartWanted)
    }
}
