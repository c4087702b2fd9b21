/// A Bloom filter over the id keys in the on-disk id index: when it says a key is absent (for
/// almost every new event) the writer skips the index lookup, and with it the random page read
/// that would otherwise cost more than the insert. It never says "absent" for a key it was
/// given; about 1% of absent keys come back "maybe", which costs only that lookup.
///
/// 10 bits and 7 probes per key (1.2 MB per million keys). It is filled by whoever merges into the index, before the
/// writer forgets those keys from memory, so it covers every indexed key at every moment.
struct IdFilter: Sendable {
    private(set) var bits: [UInt64]
    private(set) var count = 0
    /// Keys it was sized for; past this the false-positive rate climbs and it should be rebuilt.
    let capacity: Int

    static let bitsPerKey = 10
    static let probes = 7

    init(capacity: Int) {
        self.capacity = max(capacity, 1 << 16)
        let words = (self.capacity * Self.bitsPerKey + 63) / 64
        bits = [UInt64](repeating: 0, count: words)
    }

    var isOverfull: Bool { count > capacity }

    mutating func insert(_ key: Int64) {
        let bitCount = UInt64(bits.count * 64)
        var (h1, h2) = Self.hashes(key)
        for _ in 0..<Self.probes {
            let bit = h1 % bitCount
            bits[Int(bit >> 6)] |= 1 << (bit & 63)
            h1 &+= h2
        }
        count += 1
    }

    func mayContain(_ key: Int64) -> Bool {
        let bitCount = UInt64(bits.count * 64)
        var (h1, h2) = Self.hashes(key)
        for _ in 0..<Self.probes {
            let bit = h1 % bitCount
            if bits[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            h1 &+= h2
        }
        return true
    }

    /// Two independent-enough hashes of a key that is itself a SHA-256 prefix (double hashing).
    static func hashes(_ key: Int64) -> (UInt64, UInt64) {
        var x = UInt64(bitPattern: key)
        let h1 = x
        // splitmix64 finaliser for the second hash; odd so that probes cycle the whole table.
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        x ^= x >> 31
        return (h1, x | 1)
    }
}

extension IdFilter {
    /// The filter as words, with what it was sized for and holds, for `SavedIdFilter`.
    var saved: (capacity: Int, count: Int, bits: [UInt64]) { (capacity, count, bits) }

    /// A filter as `saved` gave it; nil when the words do not fit the capacity.
    init?(capacity: Int, count: Int, bits: [UInt64]) {
        guard capacity >= 1 << 16, capacity <= Int.max / (2 * Self.bitsPerKey), count >= 0,
              bits.count == (capacity * Self.bitsPerKey + 63) / 64
        else { return nil }
        self.capacity = capacity
        self.count = count
        self.bits = bits
    }
}
