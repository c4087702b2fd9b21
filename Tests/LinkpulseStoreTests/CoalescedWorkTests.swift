@testable import LinkpulseStore
import Synchronization
import TestSupport
import Testing

/// Requests coalescing on a store thread, across the rounds of repeating work.
@Suite struct CoalescedWorkTests {
    /// What the work and the probe saw, shared with the store thread.
    final class Seen: Sendable {
        let rounds = Mutex(0)
        let probes = Mutex<[Bool]>([])
    }

    /// A request made between two rounds of work that is still behind (the rollup timer's tick
    /// while a backlog is worked off) adds nothing: the work stays pending until it is done.
    @Test func aRequestBetweenRoundsOfRepeatingWorkAddsNothing() async throws {
        let thread = StoreThread(name: "linkpulse.test-coalesced")
        defer { thread.stop() }
        let work = CoalescedWork(on: thread, coversRunning: true)
        let seen = Seen()
        let queued = work.request(repeating: {
            let round = seen.rounds.withLock { $0 += 1; return $0 }
            if round == 1 {
                // Runs after this round, before the next one (queued behind it).
                thread.enqueue {
                    let probe = work.request(once: { seen.rounds.withLock { $0 += 100 } })
                    seen.probes.withLock { $0.append(probe) }
                }
            }
            return round < 3
        })
        #expect(queued)
        try await eventually(within: .seconds(2)) { seen.rounds.withLock { $0 } >= 3 }
        _ = try await thread.run {}  // queued behind anything the rounds queued
        #expect(seen.probes.withLock { $0 } == [false])
        #expect(seen.rounds.withLock { $0 } == 3)
        // Once done, a request is queued again.
        let again = work.request(once: {})
        #expect(again)
    }
}
