import Testing

@testable import LinkpulseStore

/// Waiting for the attribution follower: woken by its progress, or at the deadline.
@Suite struct AttributionProgressTests {
    @Test func waitersWakeWhenTheirSeqIsPassedOrAtTheirDeadline() async throws {
        let progress = AttributionProgress()
        progress.advance(to: 10)
        #expect(await progress.wait(for: 10, timeout: .seconds(5)), "already attributed: at once")

        // Deadlines far beyond anything a loaded CI machine takes to resume a task.
        async let early = progress.wait(for: 12, timeout: .seconds(300))
        async let late = progress.wait(for: 20, timeout: .seconds(300))
        async let never = progress.wait(for: 99, timeout: .milliseconds(200))
        try await Task.sleep(for: .milliseconds(50))
        progress.advance(to: 15)
        let start = ContinuousClock.now
        #expect(await early)
        progress.advance(to: 25)
        #expect(await late)
        #expect(ContinuousClock.now - start < .seconds(150), "woken by progress, not by the 300 s deadline")
        #expect(await never == false)
        // The sweeper stopped with no one left; a new waiter starts it again.
        #expect(await progress.wait(for: 100, timeout: .milliseconds(100)) == false)
    }
}
