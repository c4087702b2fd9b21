/// Token buckets per key (a client address): each holds up to `burst` tokens and gains `rate`
/// a second; a request takes one, or is refused with the time until one is there. Memory stays
/// bounded: past `maxKeys` buckets, those full again (idle long enough) are forgotten, and if
/// that is not enough the table starts over (every key full: briefly more lenient, never less).
public struct RateLimiter: Sendable {
    public let rate: Double
    public let burst: Double
    public let maxKeys: Int

    struct Bucket {
        var tokens: Double
        var atMs: Int64
    }

    var buckets: [String: Bucket] = [:]

    /// - Parameters:
    ///   - rate: tokens a second (requests a second, sustained); 0 or less turns limiting off.
    ///   - burst: most requests at once after a quiet spell (at least 1).
    public init(rate: Double, burst: Int, maxKeys: Int = 100_000) {
        self.rate = rate
        self.burst = Double(max(burst, 1))
        self.maxKeys = maxKeys
    }

    /// Takes a token for `key` at `nowMs`: nil when allowed, else the whole seconds (at least
    /// 1) to wait before one is there.
    public mutating func take(_ key: String, nowMs: Int64) -> Int? {
        guard rate > 0 else { return nil }
        var bucket = buckets[key].map { refilled($0, nowMs: nowMs) } ?? Bucket(tokens: burst, atMs: nowMs)
        defer {
            buckets[key] = bucket
            if buckets.count > maxKeys { prune(nowMs: nowMs) }
        }
        guard bucket.tokens >= 1 else {
            return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
        }
        bucket.tokens -= 1
        return nil
    }

    func refilled(_ bucket: Bucket, nowMs: Int64) -> Bucket {
        let elapsed = Double(max(nowMs - bucket.atMs, 0)) / 1000
        return Bucket(tokens: min(burst, bucket.tokens + elapsed * rate), atMs: nowMs)
    }

    mutating func prune(nowMs: Int64) {
        buckets = buckets.filter { refilled($0.value, nowMs: nowMs).tokens < burst }
        if buckets.count > maxKeys { buckets = [:] }
    }

    /// How many keys are tracked (for tests).
    public var trackedKeys: Int { buckets.count }
}
