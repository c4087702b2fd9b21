import Foundation
import LinkpulseDomain
import Synchronization
import Testing

@testable import LinkpulseStore

@Suite struct RollupRunTests {
    static let start: Int64 = 1_795_000_000_000

    /// 200 clicks stored without waking the follower (the tests run its rounds).
    static func storeClicks(_ store: TemporaryStore) async throws {
        let events = (0..<200).map {
            IngestEvent(
                id: "c\($0)", kind: .click, occurredAtMs: start + Int64($0) * 1_000, receivedAtMs: start, ref: "r\($0 % 3)",
                platform: .ios, visitorId: "v\($0)")
        }
        _ = try await store.database.events.store([IngestWork(events: events, quarantine: [])])
    }

    /// A timer run (counting only what the follower attributed) that has caught up with the
    /// follower while events still wait for it counts what the follower attributes next,
    /// within its budget, without another tick.
    @Test func aTimerRunCountsWhatTheFollowerAttributesAfterTheRunCaughtUp() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        let attribution = store.database.attribution
        #expect(try attribution.attributeRound(maxEvents: 100) == 100)
        // The rest is attributed 300 ms into the run, on a thread of its own.
        let rest = Mutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            rest.withLock { $0 = try? attribution.attributeRound(maxEvents: 100) }
            done.signal()
        }
        let run = try store.database.rollups.rollUpRun(batch: 200_000, budget: .seconds(5), attributing: false)
        done.wait()
        #expect(rest.withLock { $0 } == 100)
        #expect(run.count == 200)
        #expect(try store.database.rollups.rolledThroughSeq() == 200)
    }

    /// A run whose budget is spent while the follower still has events to attribute says it
    /// stopped early, so that it goes on at once rather than at the next tick.
    @Test func aTimerRunWhoseBudgetIsSpentWaitingForTheFollowerStopsEarly() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        #expect(try store.database.attribution.attributeRound(maxEvents: 100) == 100)
        let run = try store.database.rollups.rollUpRun(batch: 200_000, budget: .milliseconds(300), attributing: false)
        #expect(run.count == 100 && run.stoppedEarly)
    }

    /// With nothing left to attribute, a timer run ends as soon as it has counted everything.
    @Test func aTimerRunWithNothingLeftToAttributeEndsAtOnce() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        #expect(try store.database.attribution.attributeRound(maxEvents: 1_000) == 200)
        let began = ContinuousClock.now
        let run = try store.database.rollups.rollUpRun(batch: 200_000, budget: .seconds(5), attributing: false)
        #expect(run.count == 200 && !run.stoppedEarly)
        #expect(ContinuousClock.now - began < .seconds(3))
    }
}
