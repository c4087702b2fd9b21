import LinkpulseDomain

/// The memory half of the attribution follower's click indexes: every indexed person's click
/// that happened at or after `horizonMs`, by ref and by fingerprint. The other half, the clicks
/// before the horizon, is in the attribution file (`ref_clicks`, `fingerprint_clicks`).
///
/// Why: clicks arrive in time order but with random refs and addresses, so indexing each one
/// in a B-tree took a random page write per click, which made attribution the slowest part of
/// the pipeline under load. Here a click costs an append to a small array; the clicks that fall
/// behind the horizon go to disk in batches sorted by key (a move, `beginMove` to `finishMove`,
/// written between attribution rounds; `spill` at once when the memory half is listed), which
/// touches each page once per batch.
///
/// Only times and seqs are held (a matched click's link is read from the events by seq), so
/// an entry is 16 to 24 bytes. Nothing here must be saved: the memory half is exactly the
/// indexed clicks at or after the horizon, which the events database can list again
/// (`AttributionStore.recentClicks(_:through:horizon:disk:)`).
struct RecentClicks {
    /// A click by ref: when it happened and its seq. Arrays of them are kept sorted by
    /// (time, seq): of clicks at the same instant, the one stored last is the newest.
    struct RefEntry: Equatable {
        var ms: Int64
        var seq: Int64
    }

    /// A click by fingerprint, with its OS version (major.minor, an index into `osVersions`;
    /// -1 when the click did not know it).
    struct FingerprintEntry: Equatable {
        var ms: Int64
        var seq: Int64
        var os: Int32
    }

    /// A click found by fingerprint: time, seq and OS version (major.minor).
    struct FingerprintMatch: Equatable {
        var ms: Int64
        var seq: Int64
        var osVersion: String?
    }

    /// What leaves memory when the horizon moves: every entry before `horizonMs`, sorted in
    /// the order of the disk tables' keys.
    struct Spill {
        var horizonMs: Int64
        var byRef: [(ref: String, entry: RefEntry)]
        var byFingerprint: [(fingerprint: Fingerprint, entry: FingerprintEntry)]
        /// The OS versions the entries' `os` indexes name.
        var osVersions: [String]

        /// The OS version (major.minor) of an entry's `os`, nil when it did not know it.
        func osVersion(_ id: Int32) -> String? { id < 0 ? nil : osVersions[Int(id)] }

        /// Sorts the entries in the order of the disk tables' keys (ref, time, seq; hour,
        /// address, platform, time, seq), so that a slice is a key range of each. In place: a
        /// move holds half the memory's entries.
        mutating func sortByKey() {
            byRef.sort { ($0.ref, $0.entry.ms, $0.entry.seq) < ($1.ref, $1.entry.ms, $1.entry.seq) }
            byFingerprint.sort {
                let a = $0.fingerprint, b = $1.fingerprint
                return (TimeGrain.floor($0.entry.ms, TimeGrain.hourMs), a.ipKey, a.platform.code, $0.entry.ms, $0.entry.seq)
                    < (TimeGrain.floor($1.entry.ms, TimeGrain.hourMs), b.ipKey, b.platform.code, $1.entry.ms, $1.entry.seq)
            }
        }
    }

    /// Clicks at or after this instant are held here; earlier ones are on disk.
    private(set) var horizonMs: Int64
    /// The attribution watermark these entries are exact for (every click with seq ≤ it).
    var throughSeq: Int64
    /// Past this many entries (a click by ref and by fingerprint counts twice), `spill` moves
    /// the horizon to keep about half of them.
    let capacity: Int
    private var byRef: [String: [RefEntry]] = [:]
    private var byFingerprint: [Fingerprint: [FingerprintEntry]] = [:]
    private var osVersions: [String] = []
    private var osIds: [String: Int32] = [:]
    /// How many entries are held.
    private(set) var entries = 0

    init(horizonMs: Int64, throughSeq: Int64, capacity: Int) {
        self.horizonMs = horizonMs; self.throughSeq = throughSeq; self.capacity = max(capacity, 2)
    }

    /// Holds a person's click, unless it happened before the horizon (false: it belongs on disk).
    /// Clicks are added in store order.
    mutating func add(seq: Int64, ms: Int64, ref: String?, fingerprint: Fingerprint?, osVersion: String?) -> Bool {
        guard ms >= horizonMs else { return false }
        if let ref {
            byRef[ref, default: []].insertInTimeOrder(RefEntry(ms: ms, seq: seq))
            entries += 1
        }
        if let fingerprint {
            let entry = FingerprintEntry(ms: ms, seq: seq, os: osId(osVersion))
            byFingerprint[fingerprint, default: []].insertInTimeOrder(entry)
            entries += 1
        }
        return true
    }

    /// The newest held click of `ref` at or before `atMs`, or nil when none is held (there may
    /// be one on disk then, before the horizon).
    func newest(ref: String, atOrBefore atMs: Int64) -> RefEntry? {
        guard let clicks = byRef[ref] else { return nil }
        let end = clicks.firstIndex(happenedAfter: atMs)
        return end > 0 ? clicks[end - 1] : nil
    }

    /// The held clicks with this fingerprint in [fromMs, throughMs], newest first.
    func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) -> [FingerprintMatch] {
        guard let clicks = byFingerprint[fingerprint] else { return [] }
        var found: [FingerprintMatch] = []
        var i = clicks.firstIndex(happenedAfter: throughMs) - 1
        while i >= 0 && clicks[i].ms >= fromMs {
            let c = clicks[i]
            found.append(FingerprintMatch(ms: c.ms, seq: c.seq, osVersion: c.os < 0 ? nil : osVersions[Int(c.os)]))
            i -= 1
        }
        return found
    }

    /// When more than `capacity` entries are held: moves the horizon so that about half stay
    /// and returns what leaves, for the caller to store (in the same transaction as the new
    /// horizon). Nil while under capacity. At once, for the listing of the memory half; rounds
    /// move clicks to disk in steps (`beginMove`).
    mutating func spill() -> Spill? {
        // A move begun and finished at once: nothing arrived in between, so nothing is late.
        guard beginMove(slices: { _ in 1 }), let move = outgoing else { return nil }
        _ = finishMove()
        return move.spill
    }

    /// A move of clicks to disk in progress (see `beginMove`): what leaves, cut into `slices`
    /// transactions, of which `slicesDone` are on disk.
    struct Move {
        /// The entries before the new horizon when the move began, in the disk tables' order.
        let spill: Spill
        /// The watermark the memory half was exact for when the move began: entries with a
        /// later seq were added during the move.
        let beganThroughSeq: Int64
        let slices: Int
        var slicesDone = 0
    }

    /// The move in progress, if any. Its entries stay in memory, and lookups find them there,
    /// until `finishMove`: rounds go on while its slices are written.
    private(set) var outgoing: Move?

    /// When more than `capacity` entries are held and no move is in progress: begins one of
    /// about half the entries, the oldest (`spill`'s choice), in `slices(spill)` slices, and
    /// returns true. Nothing leaves memory yet, and the horizon stays: disk rows written at or
    /// after the file's horizon are read by no lookup until `finishMove` moves both.
    mutating func beginMove(slices: (Spill) -> Int) -> Bool {
        guard entries > capacity, outgoing == nil else { return false }
        let newHorizon = medianTime()
        var spill = Spill(
            horizonMs: newHorizon, byRef: Self.entries(before: newHorizon, in: byRef),
            byFingerprint: Self.entries(before: newHorizon, in: byFingerprint), osVersions: osVersions)
        spill.sortByKey()
        outgoing = Move(spill: spill, beganThroughSeq: throughSeq, slices: max(slices(spill), 1))
        return true
    }

    /// Records that the next slice of the move in progress is on disk.
    mutating func sliceMoved() {
        outgoing?.slicesDone += 1
    }

    /// Ends the move in progress, once every slice is on disk: drops every entry before its
    /// horizon from memory and moves the horizon there. Returns what the caller must still
    /// store with the new horizon, in the same transaction: the entries before it that were
    /// added during the move (clicks that arrived late), which its slices did not hold.
    mutating func finishMove() -> Spill? {
        guard let newHorizon = outgoing?.spill.horizonMs, let beganThroughSeq = outgoing?.beganThroughSeq else { return nil }
        // The move's copy of what leaves goes first: it is on disk, and it is half the entries.
        outgoing = nil
        let leftByRef = Self.removeEntries(before: newHorizon, from: &byRef) { $0.seq > beganThroughSeq }
        let leftByFingerprint = Self.removeEntries(before: newHorizon, from: &byFingerprint) { $0.seq > beganThroughSeq }
        entries -= leftByRef.removed + leftByFingerprint.removed
        horizonMs = newHorizon
        var late = Spill(horizonMs: newHorizon, byRef: leftByRef.kept, byFingerprint: leftByFingerprint.kept, osVersions: osVersions)
        late.sortByKey()
        return late
    }

    /// Where to put the horizon so that about half the entries leave: the median time of a
    /// sample of at most about 8,192 entries; past it when most entries share the oldest
    /// instant (then every entry of that instant leaves), so that something always does.
    private func medianTime() -> Int64 {
        let step = max(entries / 8_192, 1)
        var times: [Int64] = []
        times.reserveCapacity(entries / step + 2)
        var n = 0
        func sample(_ ms: Int64) {
            if n % step == 0 { times.append(ms) }
            n += 1
        }
        for clicks in byRef.values { for c in clicks { sample(c.ms) } }
        for clicks in byFingerprint.values { for c in clicks { sample(c.ms) } }
        times.sort()
        let oldest = min(
            byRef.values.lazy.map { $0[0].ms }.min() ?? .max, byFingerprint.values.lazy.map { $0[0].ms }.min() ?? .max)
        let median = times[times.count / 2]
        if median > oldest { return median }
        let newest = max(
            byRef.values.lazy.map { $0[$0.count - 1].ms }.max() ?? .min, byFingerprint.values.lazy.map { $0[$0.count - 1].ms }.max() ?? .min)
        return times.first(where: { $0 > median }) ?? (newest + 1)
    }

    private mutating func osId(_ version: String?) -> Int32 {
        guard let version else { return -1 }
        if let id = osIds[version] { return id }
        let id = Int32(osVersions.count)
        osVersions.append(version)
        osIds[version] = id
        return id
    }

    /// Every entry before `horizon` of each array, left in place.
    private static func entries<Key, Entry: TimeOrdered>(before horizon: Int64, in arrays: [Key: [Entry]]) -> [(Key, Entry)] {
        var leaving: [(Key, Entry)] = []
        for (key, entries) in arrays {
            let cut = entries.firstIndex(happenedAfter: horizon - 1)
            for entry in entries[..<cut] { leaving.append((key, entry)) }
        }
        return leaving
    }

    /// Takes every entry before `horizon` out of each array (in place: no second copy of
    /// memory), dropping arrays left empty. Returns how many left, and those of them `keep`
    /// holds (with their keys): only those are copied.
    private static func removeEntries<Key, Entry: TimeOrdered>(
        before horizon: Int64, from arrays: inout [Key: [Entry]], keep: (Entry) -> Bool
    ) -> (removed: Int, kept: [(Key, Entry)]) {
        var removed = 0
        var kept: [(Key, Entry)] = []
        for key in Array(arrays.keys) {
            let cut = arrays[key]!.firstIndex(happenedAfter: horizon - 1)
            guard cut > 0 else { continue }
            removed += cut
            for entry in arrays[key]![..<cut] where keep(entry) { kept.append((key, entry)) }
            if cut == arrays[key]!.count { arrays[key] = nil } else { arrays[key]!.removeFirst(cut) }
        }
        return (removed, kept)
    }
}

extension RecentClicks.RefEntry: TimeOrdered {
    var timeMs: Int64 { ms }
}

extension RecentClicks.FingerprintEntry: TimeOrdered {
    var timeMs: Int64 { ms }
}
