@testable import LinkpulseDomain
import Testing

extension IngestPacing.Reading {
    /// A reading where counting works all the time (its worked time is the elapsed time) and
    /// attribution has caught up: the derived work saturated, as most of these tests assume.
    init(atMs: Int64, lagMs: Int64, backlog: Int64, countedThroughSeq: Int64) {
        self.init(
            atMs: atMs, lagMs: lagMs, backlog: backlog, countedThroughSeq: countedThroughSeq,
            attributedThroughSeq: countedThroughSeq + backlog, countingMs: atMs, attributingMs: 0)
    }
}

struct IngestPacingTests {
    /// Feeds readings every 250 ms from `startMs`, each (lag, backlog), with the counted
    /// watermark moving by 1,000 a reading unless `counting` is false; returns the decisions.
    func decisions(
        _ pacing: inout IngestPacing, from startMs: Int64 = 0, counting: Bool = true, _ readings: [(lagMs: Int64, backlog: Int64)]
    ) -> [Bool] {
        readings.enumerated().map { index, reading in
            pacing.observe(.init(
                atMs: startMs + Int64(index) * 250, lagMs: reading.lagMs, backlog: reading.backlog,
                countedThroughSeq: counting ? Int64(index) * 1_000 : 0))
        }
    }

    @Test func aLagUnderTheLimitNeverHolds() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        // The backlog grows fast, but the stats are less than the limit behind: a burst.
        let held = decisions(&pacing, (0..<40).map { (lagMs: Int64($0) * 300, backlog: Int64($0) * 50_000) })
        #expect(!held.contains(true))
    }

    @Test func aGrowingBacklogPastTheLimitHoldsOnceAWindowOfHistoryShowsIt() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        // Past the limit from the first reading, and growing: no decision before one window
        // of readings exists (the reading at 0 ms is the reference at 1,000 ms).
        let readings: [(lagMs: Int64, backlog: Int64)] = (0..<8).map { (i: Int) -> (lagMs: Int64, backlog: Int64) in
            (lagMs: 16_000 + Int64(i) * 250, backlog: 1_000_000 + Int64(i) * 10_000)
        }
        let held = decisions(&pacing, readings)
        #expect(held == [false, false, false, false, true, true, true, true])
        #expect(pacing.holding)
    }

    @Test func aBacklogStandingStillPastTheLimitHolds() {
        // Counted as fast as stored, but the stats stay past the limit: held until they are
        // back within it.
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        let held = decisions(&pacing, Array(repeating: (lagMs: 20_000, backlog: 500_000), count: 8))
        #expect(held.suffix(4) == [true, true, true, true])
    }

    @Test func nothingCountedSinceTheStartBeginsNoHold() {
        // A restart: the last run left events uncounted an hour ago, and the first timer pass
        // is an interval away. Sends go on at full speed until the derived work has counted.
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        let beforeAnyPass = decisions(&pacing, counting: false, (0..<12).map { (lagMs: 3_600_000, backlog: 150_000 + Int64($0) * 10) })
        #expect(!beforeAnyPass.contains(true))
        // Once a pass has counted and the backlog still does not shrink, the rule applies.
        let afterAPass = pacing.observe(.init(atMs: 12 * 250, lagMs: 3_600_000, backlog: 150_200, countedThroughSeq: 1))
        #expect(afterAPass)
    }

    @Test func aShrinkingBacklogBeginsNoHoldHoweverOldItsOldestEvent() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        // A recount after a restore: the oldest uncounted event waited for hours, but the
        // backlog shrinks by 50,000 events a reading: never held.
        let catchingUp = decisions(&pacing, (0..<12).map { (lagMs: 7_200_000, backlog: 10_000_000 - Int64($0) * 50_000) })
        #expect(!catchingUp.contains(true))
    }

    @Test func aHoldLastsUntilTheLagIsBackWithinTheLimit() {
        var held = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        let growing = decisions(&held, (0..<6).map { (lagMs: 20_000, backlog: 1_000_000 + Int64($0) * 1_000) })
        #expect(growing.last == true)
        // A pass counts 200,000 events, but the stats are still 19 s behind: still held (a
        // release at every pass would leave the lag wherever the load settles it).
        let afterPass = held.observe(.init(atMs: 6 * 250, lagMs: 19_000, backlog: 805_000, countedThroughSeq: 200_000))
        #expect(afterPass)
        let withinTheLimit = held.observe(.init(atMs: 7 * 250, lagMs: 15_000, backlog: 605_000, countedThroughSeq: 400_000))
        #expect(!withinTheLimit)
    }

    @Test func theLagFallingUnderTheLimitReleasesAtOnce() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000)
        _ = decisions(&pacing, Array(repeating: (lagMs: 20_000, backlog: 500_000), count: 6))
        #expect(pacing.holding)
        let underTheLimit = pacing.observe(.init(atMs: 1_500, lagMs: 14_000, backlog: 600_000, countedThroughSeq: 6_000))
        #expect(!underTheLimit)
        // And past it again with the backlog above the window's reference: held again.
        let pastItAgain = pacing.observe(.init(atMs: 1_750, lagMs: 16_000, backlog: 600_000, countedThroughSeq: 7_000))
        #expect(pastItAgain)
    }

    /// Feeds `seconds` of readings every 250 ms from `startMs`, the counted watermark moving
    /// by `countedPerSecond`, the lag and backlog from `reading(ms since startMs)`.
    func run(
        _ pacing: inout IngestPacing, from startMs: Int64 = 0, seconds: Int, countedPerSecond: Int64, countedFrom: Int64 = 0,
        _ reading: (Int64) -> (lagMs: Int64, backlog: Int64)
    ) -> [Bool] {
        (0..<(seconds * 4)).map { i in
            let ms = Int64(i) * 250
            let (lagMs, backlog) = reading(ms)
            return pacing.observe(.init(
                atMs: startMs + ms, lagMs: lagMs, backlog: backlog, countedThroughSeq: countedFrom + countedPerSecond * ms / 1_000))
        }
    }

    @Test func aBacklogThatWouldTakeLongerThanTheLimitToCountHoldsBeforeTheLagSays() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000, rateWindowMs: 15_000)
        // Counted at 10,000 events/s while 30,000/s arrive: the backlog grows by 20,000 a
        // second, and the lag stays at 5 s (passes keep counting the oldest events).
        let held = run(&pacing, seconds: 25, countedPerSecond: 10_000) { ms in (lagMs: 5_000, backlog: 1_000 + 20 * ms) }
        // No rate before 15 s of readings; at 15 s the backlog is 300,000 events (30 s to
        // count): held from then on, though the lag never passed the limit.
        #expect(!held.prefix(60).contains(true))
        #expect(held[60...].allSatisfy { $0 })
        #expect(pacing.catchUpMs.map { (29_000...50_000).contains($0) } == true)
        // Once the backlog would be counted within the limit again (and the lag is within
        // it), the hold ends.
        let released = pacing.observe(.init(atMs: 25_000, lagMs: 5_000, backlog: 100_000, countedThroughSeq: 250_000))
        #expect(!released)
    }

    @Test func steadyLoadCountedAtEveryTickNeverHolds() {
        // 20,000 events/s, all counted by a pass every 10 s (the standard limits of a 10 s
        // interval): the backlog climbs to 200,000 between passes, which the rate measured
        // over two intervals counts in 10 s, within the limit.
        var pacing = IngestPacing(
            lagLimitMs: IngestPacing.standardLagLimitMs(rollupIntervalMs: 10_000), windowMs: 1_000,
            rateWindowMs: IngestPacing.standardRateWindowMs(rollupIntervalMs: 10_000))
        var held: [Bool] = []
        for tick in 0..<6 {
            let start = Int64(tick) * 10_000
            held += run(&pacing, from: start, seconds: 10, countedPerSecond: 0, countedFrom: Int64(tick) * 200_000) { ms in
                (lagMs: ms, backlog: 20 * ms + 1)
            }
        }
        #expect(!held.contains(true))
        #expect(pacing.catchUpMs.map { $0 <= 10_000 } == true)
    }

    @Test func nothingCountedForAWholeRateWindowWhileEventsWaitHolds() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000, rateWindowMs: 15_000)
        // Counted once at the start, then nothing for 16 s with 50,000 events waiting and the
        // lag under the limit (a pass held up elsewhere, the lag measured from a reset clock):
        // the catch-up time is unbounded.
        _ = pacing.observe(.init(atMs: 0, lagMs: 0, backlog: 0, countedThroughSeq: 0))
        let held = run(&pacing, from: 250, seconds: 16, countedPerSecond: 0, countedFrom: 1) { _ in (lagMs: 1_000, backlog: 50_000) }
        #expect(pacing.catchUpMs == Int64.max)
        #expect(held.last == true)
    }

    @Test func aDryBacklogStartsTheRateOver() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000, rateWindowMs: 15_000)
        _ = run(&pacing, seconds: 16, countedPerSecond: 1_000) { _ in (lagMs: 1_000, backlog: 50_000) }
        #expect(pacing.catchUpMs != nil)
        _ = pacing.observe(.init(atMs: 16_000, lagMs: 0, backlog: 0, countedThroughSeq: 16_000))
        #expect(pacing.catchUpMs == nil)
    }

    /// A minute at 3,000 events/s, counted by a pass every 10 s that works half a second,
    /// then 15,000 events/s: until the next pass the backlog grows to 150,000 events, which
    /// the passes count in 2.5 s of their work. No hold. Measured per elapsed millisecond (the
    /// passes taken as working all the time), the same readings say 50 s, and hold.
    @Test func aStepUpAfterLightLoadIsNotHeldWhileTheDerivedWorkHasTimeToSpare() {
        func steppedUp(workMsPerPass: Int64?) -> (held: [Bool], catchUpMs: Int64?) {
            var pacing = IngestPacing(
                lagLimitMs: IngestPacing.standardLagLimitMs(rollupIntervalMs: 10_000), windowMs: 3_000,
                rateWindowMs: IngestPacing.standardRateWindowMs(rollupIntervalMs: 10_000))
            var held: [Bool] = []
            var counted: Int64 = 0
            var passes: Int64 = 0
            for i in 0..<(70 * 4) {
                let ms = Int64(i) * 250
                let stored = ms <= 60_000 ? 3 * ms : 180_000 + 15 * (ms - 60_000)
                if ms > 0 && ms % 10_000 == 0 {  // a timer pass counts everything stored
                    counted = stored
                    passes += 1
                }
                let oldestWaitingMs = counted == stored ? 0 : ms - (ms / 10_000) * 10_000
                held.append(pacing.observe(.init(
                    atMs: ms, lagMs: oldestWaitingMs, backlog: stored - counted + 1, countedThroughSeq: counted,
                    attributedThroughSeq: stored, countingMs: workMsPerPass.map { passes * $0 } ?? ms, attributingMs: ms / 100)))
            }
            return (held, pacing.catchUpMs)
        }
        let byWork = steppedUp(workMsPerPass: 500)
        #expect(!byWork.held.contains(true))
        #expect(byWork.catchUpMs.map { $0 <= 3_000 } == true, "\(String(describing: byWork.catchUpMs))")
        let byElapsed = steppedUp(workMsPerPass: nil)
        #expect(byElapsed.held.contains(true))
    }

    /// Counting keeps up in short passes while attribution, working all the time, gets
    /// through 10,000 events a second and falls 20,000 a second behind: attribution's backlog
    /// sets the catch-up time, and the hold comes before the lag passes the limit.
    @Test func attributionFallingBehindSetsTheCatchUpTime() {
        var pacing = IngestPacing(lagLimitMs: 15_000, windowMs: 1_000, rateWindowMs: 15_000)
        var held: [Bool] = []
        for i in 0..<(25 * 4) {
            let ms = Int64(i) * 250
            let attributed = 10 * ms
            held.append(pacing.observe(.init(
                atMs: ms, lagMs: 5_000, backlog: 20 * ms + 1_000, countedThroughSeq: attributed, attributedThroughSeq: attributed,
                countingMs: ms / 10, attributingMs: ms)))
        }
        #expect(!held.prefix(60).contains(true))
        #expect(held[60...].allSatisfy { $0 })
        #expect(pacing.catchUpMs.map { (29_000...50_000).contains($0) } == true)
    }

    @Test func workTimeTurnsABacklogIntoTime() {
        #expect(IngestPacing.workMs(backlog: 0, done: 0, worked: 0) == 0)
        #expect(IngestPacing.workMs(backlog: 10, done: 0, worked: 1_000) == Int64.max)
        #expect(IngestPacing.workMs(backlog: 150_000, done: 60_000, worked: 1_000) == 2_500)
    }

    @Test func theStandardLimitAndRateWindowAreOneAndAFifthAndTwoRollupIntervals() {
        #expect(IngestPacing.standardLagLimitMs(rollupIntervalMs: 10_000) == 12_000)
        #expect(IngestPacing.standardLagLimitMs(rollupIntervalMs: 60_000) == 72_000)
        // Never under a second, however short the interval (tests run with 100 ms).
        #expect(IngestPacing.standardLagLimitMs(rollupIntervalMs: 100) == 1_000)
        #expect(IngestPacing.standardRateWindowMs(rollupIntervalMs: 10_000) == 20_000)
        #expect(IngestPacing.standardRateWindowMs(rollupIntervalMs: 100) == 2_000)
    }
}
