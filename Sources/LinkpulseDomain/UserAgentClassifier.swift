import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Platform and bot verdict for user agents, remembered for the most frequent ones: traffic
/// repeats a small set of user agent strings, so most events skip the rule scan entirely.
public final class UserAgentClassifier: Sendable {
    /// What a user agent says about the sender.
    public struct Verdict: Sendable, Equatable {
        public var platform: Platform
        public var botReason: String?
    }

    public let bots: BotDetector
    private let cache = Mutex<[String: Verdict]>([:])
    /// Distinct user agents remembered; past this the memory is cleared and refilled.
    private let capacity: Int

    public init(bots: BotDetector = .standard, capacity: Int = 4096) {
        self.bots = bots
        self.capacity = capacity
    }

    public func classify(_ userAgent: String?) -> Verdict {
        guard let userAgent, !userAgent.isEmpty else { return Verdict(platform: .other, botReason: nil) }
        if let known = cache.withLock({ $0[userAgent] }) { return known }
        let verdict = Verdict(platform: Platform.from(userAgent: userAgent), botReason: bots.reason(userAgent: userAgent))
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[userAgent] = verdict
        }
        return verdict
    }
}

/// Substring search over bytes: `memchr` finds candidates for the first byte, `memcmp`
/// confirms them (glibc's `memmem` is not exported to Swift).
enum ByteSearch {
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count, let base = haystack.baseAddress else { return false }
        return needle.withUnsafeBytes { n in
            let first = Int32(n[0])
            let end = base + (haystack.count - n.count + 1)
            var cursor = base
            while cursor < end, let hit = memchr(cursor, first, end - cursor) {
                if memcmp(hit, n.baseAddress!, n.count) == 0 { return true }
                cursor = UnsafeRawPointer(hit) + 1
            }
            return false
        }
    }

    /// Runs `body` over the UTF-8 bytes of `text` without copying when the string is native.
    static func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }
}
