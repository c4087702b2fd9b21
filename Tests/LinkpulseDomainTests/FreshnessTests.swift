import LinkpulseDomain
import Testing

/// What stats answers say of their freshness, and how a recount is told from the backlog.
@Suite struct FreshnessTests {
    @Test func countedThroughIsTheOldestUncountedEventsArrival() {
        let waiting = Freshness(nowMs: 10_000, oldestUncountedReceivedAtMs: 7_500)
        #expect(waiting.countedThroughMs == 7_500 && waiting.lagSeconds == 2.5)
        let upToDate = Freshness(nowMs: 10_000, oldestUncountedReceivedAtMs: nil)
        #expect(upToDate.countedThroughMs == 10_000 && upToDate.lagSeconds == 0)
        // A clock that went back never makes a negative lag.
        #expect(Freshness(nowMs: 10_000, oldestUncountedReceivedAtMs: 12_000).lagSeconds == 0)
    }

    @Test func theEverydayBacklogIsNoRecount() {
        var watch = RecountWatch(storedThroughSeq: 10, countedThroughSeq: 10)
        #expect(watch.observe(storedThroughSeq: 10, countedThroughSeq: 10) == nil)
        #expect(watch.observe(storedThroughSeq: 500, countedThroughSeq: 10) == nil)
        #expect(watch.observe(storedThroughSeq: 900, countedThroughSeq: 500) == nil)
    }

    @Test func rollupsBehindWhenTheStoreOpenedAreARecountUntilTheyReachWhatWasStoredThen() {
        var watch = RecountWatch(storedThroughSeq: 1_000, countedThroughSeq: 0)
        #expect(watch.targetSeq == 1_000)
        #expect(watch.observe(storedThroughSeq: 1_000, countedThroughSeq: 0) == 1_000)
        #expect(watch.observe(storedThroughSeq: 1_200, countedThroughSeq: 400) == 600)
        // The events stored since the recount began are the everyday backlog.
        #expect(watch.observe(storedThroughSeq: 1_300, countedThroughSeq: 1_000) == nil)
        #expect(watch.targetSeq == nil)
        #expect(watch.observe(storedThroughSeq: 1_300, countedThroughSeq: 1_100) == nil)
    }

    @Test func rollupsThatStartOverAreARecount() {
        var watch = RecountWatch(storedThroughSeq: 5_000, countedThroughSeq: 5_000)
        // `linkpulse rollup --rebuild` beside the daemon: the counted seq goes back.
        #expect(watch.observe(storedThroughSeq: 5_100, countedThroughSeq: 200) == 4_900)
        #expect(watch.observe(storedThroughSeq: 5_200, countedThroughSeq: 5_100) == nil)
    }
}
