import LinkpulseDomain

/// The counts a rollup pass keeps for one cell: lanes 0…9 as in `CountsVector` (lane 0 the
/// events), 32-bit because a pass counts at most a few million events.
typealias PassCounts = SIMD16<Int32>

extension PassCounts {
    /// The counts widened to a stored vector.
    var widened: CountsVector { CountsVector(truncatingIfNeeded: self) }
}

/// One click counted in a pass: the index of its cell and its visitor's hash.
struct CellClick {
    var cell: Int32
    var hash: UInt64
}

/// A key of `PassCells`: hashable, with a cheap hash of its own (a pass looks up a cell per
/// event and per cell at every grain; the standard library's seeded hashing of a few integers
/// was a tenth of a rebuild).
protocol PassCellKey: Hashable {
    /// A well-mixed hash of the key (equal keys, equal hashes).
    var cellHash: UInt64 { get }
}

extension PassCellKey {
    /// Mixes two words into one well-spread hash (a multiply-xorshift finalizer).
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var h = a &* 0x9E37_79B9_7F4A_7C15 ^ (b &+ 0x632B_E59B_D9B4_E019) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }
}

extension CubeCell: PassCellKey {
    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: bucket), key.packed) }
}

/// The cells one rollup pass counts into (32-bit counts: see `PassCounts`).
typealias PassCells<Key: PassCellKey> = CellTable<Key, Int32>

/// Cells in flat arrays: every distinct key once (in the order first met), its fifteen counts
/// (lanes 0…14 of a vector of `Lane`s), and the visitor hash of every click counted (repeats
/// included; `visitors()` sorts them out once, at the end). A rollup pass touches about one
/// cell an event at fine grains, so cells are kept as plain values: no sketch, dictionary or
/// reference-counted buffer per cell.
struct CellTable<Key: PassCellKey, Lane: FixedWidthInteger & SIMDScalar> {
    private(set) var keys: [Key] = []
    private(set) var counts: [SIMD16<Lane>] = []
    private(set) var clicks: [CellClick] = []
    /// An open-addressing table of cell indexes (-1: free), at most half full.
    private var slots: [Int32]

    init(capacity: Int = 0) {
        keys.reserveCapacity(capacity)
        counts.reserveCapacity(capacity)
        slots = [Int32](repeating: -1, count: Self.slotCount(for: capacity))
    }

    /// A table of these cells (distinct keys), its slots built for them.
    private init(keys: [Key], counts: [SIMD16<Lane>], clicks: [CellClick]) {
        self.keys = keys
        self.counts = counts
        self.clicks = clicks
        slots = [Int32](repeating: -1, count: Self.slotCount(for: keys.count))
        let mask = slots.count - 1
        for (index, key) in keys.enumerated() {
            var slot = Int(truncatingIfNeeded: key.cellHash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }

    private static func slotCount(for cells: Int) -> Int {
        var n = 16
        while n < 2 * cells { n <<= 1 }
        return n
    }

    var count: Int { keys.count }

    /// The index of `key`'s cell, added (with no counts) when new.
    mutating func cell(_ key: Key) -> Int {
        if 2 * (keys.count + 1) > slots.count { grow() }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: key.cellHash) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { break }
            if keys[index] == key { return index }
            slot = (slot + 1) & mask
        }
        let index = keys.count
        slots[slot] = Int32(index)
        keys.append(key)
        counts.append(SIMD16<Lane>())
        return index
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, key) in keys.enumerated() {
            var slot = Int(truncatingIfNeeded: key.cellHash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }

    /// Counts one event in cell `index` (see `CountedEvent.countLane` and `openMatchLane`).
    mutating func count(_ event: CountedEvent, in index: Int) {
        let (lane, deferred) = event.countLane
        counts[index][0] &+= 1
        counts[index][lane] &+= 1
        if deferred { counts[index][8] &+= 1 }
        if let matchLane = event.openMatchLane { counts[index][matchLane] &+= 1 }
        if lane == 1 { clicks.append(CellClick(cell: Int32(index), hash: event.visitorHash)) }
    }

    /// The same counts grouped under other keys: each cell (key and counts) added into the
    /// cell `key` maps it to, or left out when `key` gives nil; its clicks follow it.
    func regrouped<Other: PassCellKey>(by key: (Key, SIMD16<Lane>) -> Other?) -> CellTable<Other, Lane> {
        regrouped { _, k, counts in key(k, counts) }
    }

    /// `regrouped(by:)`, the key told each cell's index too (for what the caller keeps by cell).
    func regrouped<Other: PassCellKey>(by key: (Int, Key, SIMD16<Lane>) -> Other?) -> CellTable<Other, Lane> {
        var result = CellTable<Other, Lane>(capacity: keys.count / 2)
        var target = [Int32](repeating: -1, count: keys.count)
        for (i, k) in keys.enumerated() {
            guard let other = key(i, k, counts[i]) else { continue }
            let j = result.cell(other)
            target[i] = Int32(j)
            result.counts[j] &+= counts[i]
        }
        result.clicks.reserveCapacity(clicks.count)
        for click in clicks {
            let j = target[Int(click.cell)]
            if j >= 0 { result.clicks.append(CellClick(cell: j, hash: click.hash)) }
        }
        return result
    }

    /// The same cells under other keys, when `key` maps no two of them to one: only the keys
    /// are new, the counts and clicks are this table's own arrays (shared until either table
    /// is changed), so a coarser grain whose cells are the finer ones costs no copy of them.
    func relabeled<Other: PassCellKey>(by key: (Key) -> Other) -> CellTable<Other, Lane> {
        CellTable<Other, Lane>(keys: keys.map(key), counts: counts, clicks: clicks)
    }

    /// Adds `more` to cell `index`'s counts.
    mutating func add(_ more: SIMD16<Lane>, to index: Int) { counts[index] &+= more }

    /// The distinct click visitors of every cell.
    func visitors() -> CellVisitors { CellVisitors(clicks, cells: keys.count) }
}

/// The click visitors of each cell of a `CellTable`: cell `i`'s are
/// `hashes[starts[i]..<starts[i + 1]]`, sorted and distinct when there are at most
/// `VisitorSketch.exactLimit` of them (what a sketch keeps exactly), else as they came, repeats
/// and all, so more than `exactLimit` of them: a sketch of so many visitors is registers, which
/// need neither order nor distinct values. Sorting those cells' hashes only to count them took 12% of a rebuild's
/// writing thread (`perf record` of `linkpulse rollup --rebuild`, 2026-11-29).
struct CellVisitors {
    private var hashes: [UInt64]
    private var starts: [Int]

    /// Groups the clicks by cell (a counting sort: cells are small and many); then each cell's
    /// hashes are sorted and their repeats dropped, unless counting them finds more distinct
    /// ones than a sketch keeps exactly.
    init(_ clicks: [CellClick], cells: Int) {
        var starts = [Int](repeating: 0, count: cells + 1)
        for c in clicks { starts[Int(c.cell) + 1] += 1 }
        for i in 0..<cells { starts[i + 1] += starts[i] }
        var next = starts
        var hashes = [UInt64](repeating: 0, count: clicks.count)
        for c in clicks {
            hashes[next[Int(c.cell)]] = c.hash
            next[Int(c.cell)] += 1
        }
        var seen = DistinctCounter()
        var kept = 0
        hashes.withUnsafeMutableBufferPointer { buffer in
            for cell in 0..<cells {
                let run = starts[cell]..<starts[cell + 1]
                starts[cell] = kept
                // `kept <= run.lowerBound` below: only positions already read are overwritten.
                if run.count > VisitorSketch.exactLimit && seen.exceedsExactLimit(UnsafeBufferPointer(rebasing: buffer[run])) {
                    for i in run {
                        buffer[kept] = buffer[i]
                        kept += 1
                    }
                    continue
                }
                if run.count > 1 { buffer[run].sort() }
                for i in run where i == run.lowerBound || buffer[i] != buffer[i - 1] {
                    buffer[kept] = buffer[i]
                    kept += 1
                }
            }
        }
        starts[cells] = kept
        hashes.removeLast(hashes.count - kept)
        self.hashes = hashes
        self.starts = starts
    }

    /// How many distinct visitors cell `i` has while a sketch keeps them exactly
    /// (`VisitorSketch.exactLimit`); `exactLimit + 1` for a cell with more, which is all a
    /// sketch's stored length depends on.
    func count(_ i: Int) -> Int { min(starts[i + 1] - starts[i], VisitorSketch.exactLimit + 1) }

    /// Appends cell `i`'s sketch in its stored form (`VisitorSketch.serialized`).
    func appendSketch(_ i: Int, to bytes: inout [UInt8]) {
        hashes.withUnsafeBufferPointer { all in
            let run = UnsafeBufferPointer(rebasing: all[starts[i]..<starts[i + 1]])
            if run.count > VisitorSketch.exactLimit {
                VisitorSketch.appendSerialized(manyHashes: run, to: &bytes)
            } else {
                VisitorSketch.appendSerialized(sortedDistinct: run, to: &bytes)
            }
        }
    }

    /// Cell `i`'s sketch in its stored form, nil when it has no visitors.
    func sketch(_ i: Int) -> [UInt8]? {
        guard count(i) > 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(VisitorSketch.serializedLength(distinct: count(i)))
        appendSketch(i, to: &bytes)
        return bytes
    }
}

/// Counts distinct hashes only until there are more than `VisitorSketch.exactLimit`: an
/// open-addressing set of 2,048 slots (at most half full when it stops), cleared between runs
/// by the slots it filled.
struct DistinctCounter {
    private var slots = [UInt64](repeating: 0, count: 2_048)
    private var filled: [Int] = []
    /// Whether the zero hash was met (a free slot holds 0).
    private var sawZero = false

    /// True when `hashes` holds more than `VisitorSketch.exactLimit` distinct values. Reads
    /// only as far as it takes to tell.
    mutating func exceedsExactLimit(_ hashes: UnsafeBufferPointer<UInt64>) -> Bool {
        defer { clear() }
        let mask = slots.count - 1
        var distinct = 0
        for h in hashes {
            if h == 0 {
                if !sawZero { sawZero = true; distinct += 1 }
            } else {
                var at = Int(truncatingIfNeeded: h >> 32) & mask
                while slots[at] != 0 && slots[at] != h { at = (at + 1) & mask }
                if slots[at] == 0 {
                    slots[at] = h
                    filled.append(at)
                    distinct += 1
                }
            }
            if distinct > VisitorSketch.exactLimit { return true }
        }
        return false
    }

    private mutating func clear() {
        for at in filled { slots[at] = 0 }
        filled.removeAll(keepingCapacity: true)
        sawZero = false
    }
}
