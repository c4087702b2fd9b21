import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a user agent says about the sender (its platform, whether it is a bot, its device,
/// system and browser), remembered for the most frequent ones: traffic repeats a small set of
/// user agent strings, so most events skip the rule scans entirely.
///
/// The device, system and browser come from uap-core's rules (`UserAgentRules`) when the
/// daemon has them (`replaceRules`, also on a reload); without them those fields are `""` and
/// the device class is `other`, and the platform and the bot rules still apply.
public final class UserAgentClassifier: Sendable {
    /// What a user agent says about the sender.
    public struct Verdict: Sendable, Equatable {
        public var platform: Platform
        public var botReason: String?
        /// The device class, system and browser (`""` and `.other` without uap-core's rules).
        public var device: AudienceDimensions.DeviceClass = .other
        public var os = ""
        public var osMajor = ""
        public var browser = ""
        /// The four above as `AudienceDimensions.agentText` writes them, made once per user agent.
        public var agentText: String?

        public init(platform: Platform, botReason: String?) {
            self.platform = platform
            self.botReason = botReason
        }
    }

    public let bots: BotDetector
    private struct State {
        var rules: UserAgentRules?
        var cache: [String: Verdict] = [:]
    }
    private let state: Mutex<State>
    /// Distinct user agents remembered; past this the memory is cleared and refilled.
    public let capacity: Int
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)

    public init(bots: BotDetector = .standard, rules: UserAgentRules? = nil, capacity: Int = 4096) {
        self.bots = bots
        self.capacity = capacity
        state = Mutex(State(rules: rules))
    }

    /// Uses `rules` from now on (nil: none), forgetting every remembered verdict.
    public func replaceRules(_ rules: UserAgentRules?) {
        state.withLock { $0 = State(rules: rules) }
    }

    /// Whether uap-core's rules are loaded.
    public var hasRules: Bool { state.withLock { $0.rules != nil } }

    /// Lookups answered from memory and by the rules, since the start.
    public var lookups: (hits: Int, misses: Int) { (hits.load(ordering: .relaxed), misses.load(ordering: .relaxed)) }

    /// User agents remembered now.
    public var remembered: Int { state.withLock { $0.cache.count } }

    public func classify(_ userAgent: String?) -> Verdict {
        guard let userAgent, !userAgent.isEmpty else { return Verdict(platform: .other, botReason: nil) }
        if let known = state.withLock({ $0.cache[userAgent] }) {
            hits.wrappingAdd(1, ordering: .relaxed)
            return known
        }
        misses.wrappingAdd(1, ordering: .relaxed)
        let rules = state.withLock { $0.rules }
        var verdict = Verdict(platform: Platform.from(userAgent: userAgent), botReason: bots.reason(userAgent: userAgent))
        if let details = rules?.details(userAgent) {
            (verdict.device, verdict.os, verdict.osMajor, verdict.browser) = (details.device, details.os, details.osMajor, details.browser)
            // The project's rules name preview fetchers and tools first; uap-core's crawlers after.
            if verdict.botReason == nil, let spider = details.spider {
                verdict.botReason = "crawler:" + spider.lowercased().replacingOccurrences(of: " ", with: "-")
            }
        }
        if verdict.botReason != nil { verdict.device = .bot }
        verdict.agentText = AudienceDimensions.agentText(device: verdict.device, os: verdict.os, osMajor: verdict.osMajor, browser: verdict.browser)
        state.withLock { state in
            // A reload while this was classified: the verdict belongs to the rules it replaced.
            guard state.rules?.identity === rules?.identity else { return }
            if state.cache.count >= capacity { state.cache.removeAll(keepingCapacity: true) }
            state.cache[userAgent] = verdict
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
