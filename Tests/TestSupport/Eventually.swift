import Foundation

/// Polls `condition` every `interval` until it holds or `timeout` has passed; returns whether it
/// came to hold. For states nothing in the test's process signals: a child process listening
/// or writing a file, a browser's page, a row another daemon commits, a timer that runs on its
/// own Dispatch clock. It never orders events: a test awaits what it can (a commit, a round,
/// a `ManualTicks` tick), and polls only for what it cannot. The one place the tests sleep to
/// wait for a state.
@discardableResult
public func eventually(
    within timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: interval)
    }
}

/// `eventually` for a caller that may block (a test's own thread, never a cooperative one).
@discardableResult
public func eventuallyBlocking(
    within timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(20), _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        Thread.sleep(forTimeInterval: Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
    }
}
