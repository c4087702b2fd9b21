import Synchronization

/// The cells of one stored cube part or block added up per link tuple and audience, platforms
/// merged and without visitors: all that an unfiltered breakdown by a link dimension needs of
/// it, in a sixth of the entries (a block of 10,000 refs holds ≈ 60,000 cells and ≈ 11,000 sums).
struct CubeSums: Sendable {
    /// Per sum, `tuple << 1 | 1` for bots, `tuple << 1` for people; ascending.
    private(set) var keys: [Int] = []
    private(set) var counts: [CountsVector] = []

    /// No sums (a part or block with no entries).
    init() {}

    /// Adds up the entries of a stored part or block (its sketches are skipped).
    init(decoding bytes: UnsafeRawBufferPointer) {
        // Entries are sorted by tuple, then platform, then audience: a tuple's are together.
        var tuple = -1
        var people = CountsVector(), bots = CountsVector()
        var hasPeople = false, hasBots = false
        func flush() {
            if hasPeople { keys.append(tuple << 1); counts.append(people) }
            if hasBots { keys.append(tuple << 1 | 1); counts.append(bots) }
        }
        CubePart.forEach(in: bytes) { key, v, _ in
            if key.tuple != tuple {
                flush()
                tuple = key.tuple
                people = CountsVector(); bots = CountsVector()
                hasPeople = false; hasBots = false
            }
            if key.isBot { bots &+= v; hasBots = true } else { people &+= v; hasPeople = true }
        }
        flush()
    }

    /// These sums and `other`'s added up.
    func adding(_ other: CubeSums) -> CubeSums {
        if other.keys.isEmpty { return self }
        if keys.isEmpty { return other }
        var result = CubeSums()
        result.keys.reserveCapacity(max(keys.count, other.keys.count))
        result.counts.reserveCapacity(max(keys.count, other.keys.count))
        var i = 0, j = 0
        while i < keys.count || j < other.keys.count {
            if j == other.keys.count || (i < keys.count && keys[i] < other.keys[j]) {
                result.keys.append(keys[i]); result.counts.append(counts[i]); i += 1
            } else if i == keys.count || other.keys[j] < keys[i] {
                result.keys.append(other.keys[j]); result.counts.append(other.counts[j]); j += 1
            } else {
                result.keys.append(keys[i]); result.counts.append(counts[i] &+ other.counts[j]); i += 1; j += 1
            }
        }
        return result
    }

    /// Calls `body` with each sum: its tuple id, whether it counts bots, and its counts.
    func forEach(_ body: (_ tuple: Int, _ isBot: Bool, _ counts: CountsVector) -> Void) {
        for i in keys.indices { body(keys[i] >> 1, keys[i] & 1 != 0, counts[i]) }
    }

    /// About how much memory the sums take.
    var bytes: Int { keys.count * (MemoryLayout<Int>.stride + MemoryLayout<CountsVector>.stride) + 64 }
}

/// Decoded `CubeSums` of stored parts and blocks, known by their tag (a random number drawn at
/// every write of their entries, see `rollups/0007_cube_tags.sql`), and sums of several of
/// them known by all their tags, so that repeated breakdowns over long ranges read a few small
/// tags instead of decoding megabytes of cells. A tag that is no longer stored is never asked
/// for again and ages out. Bounded in bytes; the least recently used sums go first. Shared by
/// the readers of one store.
final class CubeSumsCache: Sendable {
    private struct Entry {
        var sums: CubeSums
        var lastUse: UInt64
    }

    private struct State {
        var entries: [[Int64]: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The most memory the cached sums may take.
    let limitBytes: Int

    init(limitBytes: Int) { self.limitBytes = limitBytes }

    /// The sums kept under `key` (the tags of what they add up), if any (and marks them as used).
    func sums(key: [Int64]) -> CubeSums? {
        state.withLock { s in
            guard var entry = s.entries[key] else { return nil }
            s.clock += 1
            entry.lastUse = s.clock
            s.entries[key] = entry
            return entry.sums
        }
    }

    /// Keeps `sums` under `key`, dropping the least recently used ones while over the limit
    /// (sums larger than the whole limit are not kept).
    func keep(_ sums: CubeSums, key: [Int64]) {
        guard sums.bytes <= limitBytes else { return }
        state.withLock { s in
            s.clock += 1
            if let old = s.entries.updateValue(Entry(sums: sums, lastUse: s.clock), forKey: key) { s.bytes -= old.sums.bytes }
            s.bytes += sums.bytes
            while s.bytes > limitBytes, let oldest = s.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                s.entries[oldest.key] = nil
                s.bytes -= oldest.value.sums.bytes
            }
        }
    }

    /// The sums stored under `tag`, or else those of the entries `entries` reads (a statement
    /// with its parameters bound, returning one blob), kept under `tag` for the next reader.
    func sums(tag: Int64, orReading entries: HotStatement) throws -> CubeSums {
        if let sums = sums(key: [tag]) { return sums }
        defer { entries.finish() }
        guard try entries.step(), let bytes = entries.blob(HotStatement.onlyColumn) else { return CubeSums() }
        let sums = CubeSums(decoding: bytes)
        keep(sums, key: [tag])
        return sums
    }

    /// How many sums are kept, and their bytes (for tests).
    var usage: (count: Int, bytes: Int) { state.withLock { ($0.entries.count, $0.bytes) } }
}
