import Foundation
@testable import LinkpulseStore
import Synchronization
import TestSupport
import Testing

/// Work time is wall-clock time inside a unit of work, less what its thread waited for a CPU:
/// time blocked (on the disk, a lock, a sleep) counts, time spent runnable behind other
/// threads does not.
@Suite struct WorkTimeTests {
    @Test func timeBlockedCounts() {
        let time = WorkTime()
        let start = ContinuousClock.now
        // One wait of 50 ms (a loop of short sleeps would add a wait for a CPU after each).
        time.measure { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50)) }
        let wall = (ContinuousClock.now - start).nanoseconds / 1_000_000
        #expect(time.milliseconds >= 45, "\(time.milliseconds) ms of work in \(wall) ms")
    }

    @Test(.timeLimit(.minutes(1))) func timeWaitingForACPUDoesNot() throws {
        // Four busy threads a core: this one gets a CPU about a fifth of the time at most.
        let stop = Atomic<Bool>(false)
        let started = Atomic<Int>(0)
        let busy = ProcessInfo.processInfo.activeProcessorCount * 4
        for _ in 0..<busy {
            Thread.detachNewThread {
                started.add(1, ordering: .relaxed)
                while !stop.load(ordering: .relaxed) {}
            }
        }
        defer { stop.store(true, ordering: .relaxed) }
        eventuallyBlocking(every: .milliseconds(1)) { started.load(ordering: .relaxed) == busy }
        // 40 ms of this thread's own CPU time, measured again (up to five times) while the
        // scheduler still let this thread run most of the time: the busy threads had not
        // yet taken their share of the CPUs (seen once in a full suite: 40 ms in 50).
        var time = WorkTime()
        var wall: Int64 = 0
        for _ in 0..<5 where wall < 100 {
            time = WorkTime()
            let start = ContinuousClock.now
            time.measure {
                let until = threadCPUNanoseconds() + 40_000_000
                while threadCPUNanoseconds() < until {}
            }
            wall = (ContinuousClock.now - start).nanoseconds / 1_000_000
        }
        try #require(wall >= 100, "the busy threads took little CPU from this one (\(wall) ms)")
        #expect(time.milliseconds < wall / 2, "\(time.milliseconds) ms of work in \(wall) ms")
        #expect(time.milliseconds >= 35)
    }

    private func threadCPUNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
