import Foundation

/// Runs `body` on a thread of its own and resumes the caller with its result: for test work
/// that computes for seconds (a million-event oracle), which on Swift's cooperative pool (two
/// threads on two cores) would starve every other test's daemons in the same process, their
/// HTTP answers then missing the test client's 20-second timeout.
public func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "linkpulse.test-work"
        thread.start()
    }
}
