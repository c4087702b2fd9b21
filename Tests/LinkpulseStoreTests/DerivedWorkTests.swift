import Foundation
import LinkpulseDomain
import Synchronization
import Testing

@testable import LinkpulseStore

/// The derived-work loop's turns, run by the test one at a time (nothing here wakes the loop's
/// thread: the events are stored without a commit's wake-up, and the count is made due
/// directly).
@Suite struct DerivedWorkTests {
    static let start: Int64 = 1_795_000_000_000

    /// The sizes of a count's passes, in order.
    final class Passes: Sendable {
        let sizes = Mutex<[Int]>([])
    }

    /// `count` clicks stored from `first` on, without waking the loop.
    static func storeClicks(_ store: TemporaryStore, from first: Int = 0, count: Int = 200) async throws {
        let events = (first..<(first + count)).map {
            IngestEvent(
                id: "c\($0)", kind: .click, occurredAtMs: start + Int64($0) * 1_000, receivedAtMs: start, ref: "r\($0 % 3)",
                platform: .ios, visitorId: "v\($0)")
        }
        _ = try await store.database.events.store([IngestWork(events: events, quarantine: [])])
    }

    /// Makes a count due as the rollup timer does, without waking the loop; the passes' sizes
    /// go to `passes`. Returns whether it was not due already.
    @discardableResult
    static func countSoon(_ store: TemporaryStore, batch: Int, passes: Passes) -> Bool {
        let rollups = store.database.rollups
        return store.database.attribution.derived.countSoon(DerivedWork.CountDue(
            batch: batch, pass: { try rollups.rollUp(maxEvents: $0, attributing: false) },
            rolledThroughSeq: { try rollups.rolledThroughSeq() },
            onPass: { result in if case .success(let pass) = result { passes.sizes.withLock { $0.append(pass.count) } } }))
    }

    /// Runs turns until the loop says nothing is left; returns how many it ran.
    static func turnsUntilDone(_ store: TemporaryStore) -> Int {
        var turns = 1
        while store.database.attribution.derivedTurn() { turns += 1 }
        return turns
    }

    /// A count due over events nothing has attributed: the loop attributes them, then counts
    /// them, then stops.
    @Test func aCountDueAttributesFirstThenCountsOnTheSameLoop() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        let passes = Passes()
        #expect(Self.countSoon(store, batch: 1_000, passes: passes))
        // An attribution round, a pass of everything, a round that finds nothing.
        #expect(Self.turnsUntilDone(store) == 3)
        #expect(passes.sizes.withLock { $0 } == [200])
        #expect(try store.database.attribution.attributedThroughSeq() == 200)
        #expect(try store.database.rollups.rolledThroughSeq() == 200)
        #expect(!store.database.attribution.derived.countIsDue)
    }

    /// A count counts in whole passes of its batch while attribution is ahead of it, and the
    /// last pass takes what is left once everything through its target is attributed.
    @Test func aCountGoesInWholePassesUpToItsTarget() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        #expect(try store.database.attribution.attributeRound(maxEvents: 130) == 130)
        let passes = Passes()
        Self.countSoon(store, batch: 50, passes: passes)
        _ = Self.turnsUntilDone(store)
        // Two whole passes of what was attributed, then (the rest attributed) 50, 50.
        #expect(passes.sizes.withLock { $0 } == [50, 50, 50, 50])
        #expect(try store.database.rollups.rolledThroughSeq() == 200)
    }

    /// A tick while a count is due adds no count, and makes the one due go on through what is
    /// stored by then.
    @Test func aTickDuringACountMakesItGoOnThroughWhatIsStoredSince() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        let passes = Passes()
        #expect(Self.countSoon(store, batch: 1_000, passes: passes))
        #expect(store.database.attribution.derivedTurn(), "the round left the count to do")
        try await Self.storeClicks(store, from: 200, count: 100)
        #expect(!Self.countSoon(store, batch: 1_000, passes: passes), "one count at a time")
        _ = Self.turnsUntilDone(store)
        #expect(try store.database.rollups.rolledThroughSeq() == 300)
        #expect(passes.sizes.withLock { $0.reduce(0, +) } == 300)
        #expect(!store.database.attribution.derived.countIsDue)
    }

    /// With nothing due, a turn only attributes: the rollups stay where they were.
    @Test func withoutACountDueATurnOnlyAttributes() async throws {
        let store = try TemporaryStore()
        try await Self.storeClicks(store)
        _ = Self.turnsUntilDone(store)
        #expect(try store.database.attribution.attributedThroughSeq() == 200)
        #expect(try store.database.rollups.rolledThroughSeq() == 0)
    }

    /// What a housekeeping chore saw at each of its steps, and how it ended.
    final class ChoreLog: Sendable {
        let attributedAtSteps = Mutex<[Int64]>([])
        let endings = Mutex<[String]>([])

        /// A chore of `steps` steps that records how far attribution was at each.
        func chore(_ store: TemporaryStore, name: String = "chore", steps: Int, tag: String = "first") -> DerivedWork.Chore {
            let attribution = store.database.attribution
            return DerivedWork.Chore(
                name: name,
                step: { [self] in
                    let seen = try attribution.attributedThroughSeq()
                    return attributedAtSteps.withLock { $0.append(seen); return $0.count < steps }
                },
                ended: { [self] result in
                    endings.withLock { $0.append(tag + ((try? result.get()) != nil ? " done" : " failed")) }
                })
        }
    }

    /// Housekeeping made due takes every other turn: attribution goes on between its steps, and
    /// the loop keeps turning until both are done.
    @Test func housekeepingTakesEveryOtherTurnWithAttribution() async throws {
        let store = try TemporaryStore { $0.roundEvents = 50 }
        try await Self.storeClicks(store)
        let log = ChoreLog()
        #expect(store.database.attribution.derived.choreSoon(log.chore(store, steps: 3)) == .due)
        _ = Self.turnsUntilDone(store)
        #expect(log.attributedAtSteps.withLock { $0 } == [0, 50, 100], "a round between two steps")
        #expect(log.endings.withLock { $0 } == ["first done"])
        #expect(try store.database.attribution.attributedThroughSeq() == 200)
        #expect(!store.database.attribution.derived.choresDue)
    }

    /// Housekeeping asked for while the same is due adds no run: the run due goes on, and both
    /// askers are told when it ends.
    @Test func housekeepingAskedForTwiceRunsOnceAndTellsBoth() async throws {
        let store = try TemporaryStore { $0.roundEvents = 50 }
        try await Self.storeClicks(store)
        let log = ChoreLog()
        let derived = store.database.attribution.derived
        #expect(derived.choreSoon(log.chore(store, steps: 2)) == .due)
        #expect(store.database.attribution.derivedTurn())
        #expect(derived.choreSoon(log.chore(store, steps: 2, tag: "second")) == .joined)
        #expect(derived.choreSoon(log.chore(store, name: "other", steps: 1, tag: "other")) == .due)
        _ = Self.turnsUntilDone(store)
        #expect(log.attributedAtSteps.withLock { $0 } == [0, 50, 100], "two steps of the first, then one of the other")
        #expect(log.endings.withLock { $0 } == ["first done", "second done", "other done"])
    }

    /// Through the store's own thread: the awaited housekeeping returns once its last step has
    /// run; once the store is closed, housekeeping is refused.
    @Test func housekeepingRunsOnTheLoopsThreadUntilDone() async throws {
        let store = try TemporaryStore()
        let steps = Mutex(0)
        try await store.database.housekeeping("count-to-three") { steps.withLock { $0 += 1; return $0 < 3 } }
        #expect(steps.withLock { $0 } == 3)
        try await offThePool { [database = store.database] in try database.close() }
        await #expect(throws: StoreError.self) { try await store.database.housekeeping("after-close") { true } }
        #expect(steps.withLock { $0 } == 3)
    }
}
