import Foundation
import LinkpulseDomain
@testable import LinkpulseStore
import Synchronization
import TestSupport
import Testing

/// Waiting for the attribution follower: woken by its progress, or at the deadline.
@Suite struct AttributionProgressTests {
    @Test func waitersWakeWhenTheirSeqIsPassedOrAtTheirDeadline() async throws {
        let progress = AttributionProgress()
        progress.advance(to: 10)
        #expect(await progress.wait(for: 10, timeout: .seconds(5)).reached, "already attributed: at once")

        // Deadlines far beyond anything a loaded CI machine takes to resume a task.
        async let early = progress.wait(for: 12, timeout: .seconds(300))
        async let late = progress.wait(for: 20, timeout: .seconds(300))
        async let never = progress.wait(for: 99, timeout: .milliseconds(200))
        try await eventually(every: .milliseconds(1)) { progress.awaitedSeqs(through: 20).count == 2 }
        progress.advance(to: 15)
        let start = ContinuousClock.now
        #expect(await early.reached)
        progress.advance(to: 25)
        #expect(await late.reached)
        #expect(ContinuousClock.now - start < .seconds(150), "woken by progress, not by the 300 s deadline")
        #expect(await never.reached == false)
        // The sweeper stopped with no one left; a new waiter starts it again.
        #expect(await progress.wait(for: 100, timeout: .milliseconds(100)).reached == false)
    }

    /// A round hands each waiter the answer read for its seq; a waiter whose answer it did not
    /// read is only told its seq is attributed (and reads the answer itself).
    @Test func aRoundHandsWaitersTheirOwnAnswers() async throws {
        let progress = AttributionProgress()
        async let first = progress.wait(for: 3, timeout: .seconds(300))
        async let second = progress.wait(for: 5, timeout: .seconds(300))
        async let unanswered = progress.wait(for: 6, timeout: .seconds(300))
        async let later = progress.wait(for: 9, timeout: .milliseconds(300))
        try await eventually(every: .milliseconds(1)) { progress.awaitedSeqs(through: 100).count == 4 }
        #expect(progress.awaitedSeqs(through: 6) == [3, 5, 6], "only the seqs a round through 6 can answer")
        progress.advance(to: 6, answers: [3: answer(3), 5: answer(5), 9: answer(9)])
        guard case .answered(let a) = await first, case .answered(let b) = await second else {
            Issue.record("the answered waiters got no answer")
            return
        }
        #expect(a == answer(3) && b == answer(5))
        guard case .attributed = await unanswered else {
            Issue.record("a waiter without an answer must be told its seq is attributed")
            return
        }
        guard case .timedOut = await later else {
            Issue.record("seq 9 is past the round: its waiter must not be woken with 9's answer")
            return
        }
    }

    /// The writer tells which stored seqs apps will wait for: a round that runs before they
    /// begin to wait reads those answers anyway and parks them, and each wait takes its own once.
    @Test func answersOfExpectedSeqsAreParkedForCallersThatComeLater() async throws {
        let progress = AttributionProgress()
        progress.advance(to: 2)
        progress.expect([1, 4, 7, 12])
        #expect(progress.awaitedSeqs(through: 10) == [4, 7], "expected seqs count as awaited; one already attributed does not")
        progress.advance(to: 10, answers: [4: answer(4), 7: answer(7)])
        #expect(progress.parkedCount == 2)
        #expect(progress.awaitedSeqs(through: 20) == [12], "the seqs the round passed are no longer expected")
        guard case .answered(let parked) = await progress.wait(for: 7, timeout: .seconds(5)) else {
            Issue.record("the parked answer was not handed to the caller that came after the round")
            return
        }
        #expect(parked == answer(7))
        guard case .attributed = await progress.wait(for: 7, timeout: .seconds(5)) else {
            Issue.record("a parked answer is taken once; a second wait reads its own")
            return
        }
        // A round that could not read an expected answer parks nothing: the caller reads it.
        progress.advance(to: 20, answers: [:])
        guard case .attributed = await progress.wait(for: 12, timeout: .seconds(5)) else {
            Issue.record("seq 12 had no answer to take")
            return
        }
        #expect(progress.parkedCount == 1, "4's answer waits for its caller")
    }
}

/// An answer for `seq`, told apart from others by its ref.
private func answer(_ seq: Int64) -> AttributedEvent {
    AttributedEvent(
        seq: seq, kind: .install, isBot: false, isResolve: true, own: LinkDimensions(ref: "r\(seq)"), url: nil, properties: nil,
        match: .ref, click: nil, candidates: nil, firstResolveSeq: seq)
}

extension AttributionProgress.Reached {
    /// Whether the wait ended with the seq attributed (answered or not).
    var reached: Bool {
        if case .timedOut = self { return false }
        return true
    }
}
