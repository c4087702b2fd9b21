import LinkpulseDomain

/// The memory half of the attribution follower's click indexes: every indexed person's click
/// that happened at or after `horizonMs`, by ref and by fingerprint. The other half, the clicks
/// before the horizon, is in the attribution file (`ref_clicks`, `fingerprint_clicks`).
///
/// Why: clicks arrive in time order but with random refs and addresses, so indexing each one
/// in a B-tree took a random page write per click, which made attribution the slowest part of
/// the pipeline under load. Here a click costs an append to a small array or a chain; the
/// clicks that fall behind the horizon go to disk in batches sorted by key (a move, `beginMove`
/// to `finishMove`, written between attribution rounds; `spill` at once when the memory half is
/// listed), which touches each page once per batch.
///
/// Only times and seqs are held (a matched click's link is read from the events by seq), once a
/// click, in a slot of 24 bytes in one array (`slots`) that both indexes point into:
/// - by fingerprint, a slot is chained newest first from a head per fingerprint: most
///   fingerprints (an address and a platform) have one to three clicks, and an array of their
///   own cost a 32-byte header and growth slack besides;
/// - by ref, an array per ref holds the slots' numbers, 4 bytes each: refs are few against
///   clicks, so each has many. They held the time and seq again, 16 bytes an entry: 12 of the
///   30 MB the memory half took after 240 s of batches (measured with
///   `ops/bench/ingest.sh` and heaptrack, 2026-11-29).
///
/// A move hands what leaves to disk straight from these arrays, slice by slice
/// (`outgoingRows`): it keeps only the order to write them in (a line per ref, 16 bytes a
/// fingerprint's click), not a copy of every entry with its key.
///
/// Nothing here must be saved: the memory half is exactly the indexed clicks at or after the
/// horizon, which the events database can list again
/// (`AttributionStore.recentClicks(_:through:horizon:disk:)`).
struct RecentClicks {
    /// A click by ref: when it happened and its seq. Arrays of them are kept sorted by
    /// (time, seq): of clicks at the same instant, the one stored last is the newest.
    struct RefEntry: Equatable {
        var ms: Int64
        var seq: Int64
    }

    /// A click found by fingerprint: time, seq and OS version (major.minor).
    struct FingerprintMatch: Equatable {
        var ms: Int64
        var seq: Int64
        var osVersion: String?
    }

    /// A click on its way to disk: a row of `ref_clicks` (with `ref`) or of
    /// `fingerprint_clicks` (with `fingerprint`, and the OS version when the click knew it).
    struct DiskRow: Equatable {
        var seq: Int64
        var ms: Int64
        var ref: String?
        var fingerprint: Fingerprint?
        var osVersion: String?
    }

    /// A held click in `slots`: its time, seq and OS version (an index into `osVersions`, -1
    /// when the click did not know it), and the slot of the next older click of its
    /// fingerprint (-1 for none; `notChained` for a click without a fingerprint, found by ref
    /// only). A free slot has seq -1, and `older` is then the next free slot.
    private struct HeldClick {
        var ms: Int64
        var seq: Int64
        var older: Int32
        var os: Int32
    }

    /// Clicks at or after this instant are held here; earlier ones are on disk.
    private(set) var horizonMs: Int64
    /// The attribution watermark these entries are exact for (every click with seq ≤ it).
    var throughSeq: Int64
    /// Past this many entries (a click by ref and by fingerprint counts twice), `spill` moves
    /// the horizon to keep about half of them.
    let capacity: Int
    /// Per ref, the slots of its clicks in (time, seq) order.
    private var byRef: [String: [Int32]] = [:]
    /// The slot of each fingerprint's newest click.
    private var newestByFingerprint: [Fingerprint: Int32] = [:]
    /// Every held click; each fingerprint's chained newest first by (time, seq).
    private var slots: [HeldClick] = []
    /// `HeldClick.older` of a click found by ref only.
    private static let notChained: Int32 = -2
    /// The first free slot (-1 for none): slots of clicks that left are reused.
    private var freeSlot: Int32 = -1
    private var osVersions: [String] = []
    private var osIds: [String: Int32] = [:]
    /// How many entries are held.
    private(set) var entries = 0
    /// The largest seq added.
    private var lastSeqAdded = Int64.min

    init(horizonMs: Int64, throughSeq: Int64, capacity: Int) {
        self.horizonMs = horizonMs; self.throughSeq = throughSeq; self.capacity = max(capacity, 2)
    }

    /// Holds a person's click, unless it happened before the horizon (false: it belongs on disk).
    /// Clicks are added in store order.
    mutating func add(seq: Int64, ms: Int64, ref: String?, fingerprint: Fingerprint?, osVersion: String?) -> Bool {
        guard ms >= horizonMs else { return false }
        lastSeqAdded = max(lastSeqAdded, seq)
        guard ref != nil || fingerprint != nil else { return true }
        let slot = allocate(HeldClick(ms: ms, seq: seq, older: Self.notChained, os: fingerprint == nil ? -1 : osId(osVersion)))
        if let ref {
            // Clicks of one instant in store order: after every click of its time.
            let at = byRef[ref].map { firstIndex(in: $0, happenedAfter: ms) } ?? 0
            byRef[ref, default: []].insert(slot, at: at)
            entries += 1
        }
        if let fingerprint {
            chain(slot, to: fingerprint)
            entries += 1
        }
        return true
    }

    /// The newest held click of `ref` at or before `atMs`, or nil when none is held (there may
    /// be one on disk then, before the horizon).
    func newest(ref: String, atOrBefore atMs: Int64) -> RefEntry? {
        guard let clicks = byRef[ref] else { return nil }
        let end = firstIndex(in: clicks, happenedAfter: atMs)
        return end > 0 ? refEntry(clicks[end - 1]) : nil
    }

    /// The held clicks with this fingerprint in [fromMs, throughMs], newest first.
    func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) -> [FingerprintMatch] {
        var found: [FingerprintMatch] = []
        var slot = newestByFingerprint[fingerprint] ?? -1
        while slot >= 0, slots[Int(slot)].ms > throughMs { slot = slots[Int(slot)].older }
        while slot >= 0, slots[Int(slot)].ms >= fromMs {
            let c = slots[Int(slot)]
            found.append(FingerprintMatch(ms: c.ms, seq: c.seq, osVersion: osVersion(c.os)))
            slot = c.older
        }
        return found
    }

    /// When more than `capacity` entries are held: moves the horizon so that about half stay,
    /// handing each entry that leaves to `store`, in the order of the disk tables' keys, and
    /// returns the new horizon for the caller to record (in the same transaction as the rows).
    /// Nil while under capacity. At once, for the listing of the memory half; rounds move clicks
    /// to disk in steps (`beginMove`).
    mutating func spill(_ store: (DiskRow) throws -> Void) rethrows -> Int64? {
        // A move begun and finished at once: nothing arrived in between, so nothing is late.
        guard beginMove(slices: { _ in 1 }) else { return nil }
        try outgoingRows(slice: 0, of: 1, store)
        return finishMove()?.horizonMs
    }

    /// A fingerprint's click that leaves in a move: the fingerprint, and the click's slot.
    struct OutgoingFingerprint {
        let ipKey: Int64
        let slot: Int32
        let platform: Platform

        var fingerprint: Fingerprint { Fingerprint(ipKey: ipKey, platform: platform) }
    }

    /// A move of clicks to disk in progress (see `beginMove`): what leaves, in the order of the
    /// disk tables' keys, cut into `slices` transactions, of which `slicesDone` are on disk.
    /// It names the entries, which stay in memory until `finishMove`.
    struct Move {
        /// Entries before it leave.
        let horizonMs: Int64
        /// The watermark the memory half was exact for when the move began (or the largest seq
        /// held then, if larger): entries with a later seq were added during the move, and are
        /// not the slices' to write.
        let beganThroughSeq: Int64
        /// The refs with entries that leave, sorted, each with the position of its first
        /// leaving entry among all leaving ref entries (which slice writes it).
        let refs: [(ref: String, firstEntry: Int)]
        /// How many ref entries leave.
        let refEntries: Int
        /// The fingerprints' clicks that leave, sorted by the disk table's key (hour, address,
        /// platform, time, seq).
        let fingerprints: [OutgoingFingerprint]
        let slices: Int
        var slicesDone = 0

        /// The index in `refs` of the first ref whose first leaving entry is at `position` or
        /// after it (`refs.count` when none is).
        func firstRef(from position: Int) -> Int {
            var low = 0, high = refs.count
            while low < high {
                let mid = (low + high) / 2
                if refs[mid].firstEntry < position { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }

    /// The move in progress, if any. Its entries stay in memory, and lookups find them there,
    /// until `finishMove`: rounds go on while its slices are written.
    private(set) var outgoing: Move?

    /// When more than `capacity` entries are held and no move is in progress: begins one of
    /// about half the entries, the oldest (`spill`'s choice), in `slices(n)` slices (n: the
    /// larger of the leaving ref and fingerprint entries), and returns true. Nothing leaves
    /// memory yet, and the horizon stays: disk rows written at or after the file's horizon are
    /// read by no lookup until `finishMove` moves both.
    mutating func beginMove(slices: (Int) -> Int) -> Bool {
        guard entries > capacity, outgoing == nil else { return false }
        let newHorizon = medianTime()
        var refs: [(ref: String, firstEntry: Int)] = []
        for (ref, clicks) in byRef where slots[Int(clicks[0])].ms < newHorizon {
            refs.append((ref, firstIndex(in: clicks, happenedAfter: newHorizon - 1)))
        }
        refs.sort { $0.ref < $1.ref }
        var refEntries = 0
        for i in refs.indices {
            let leaving = refs[i].firstEntry
            refs[i].firstEntry = refEntries
            refEntries += leaving
        }
        var fingerprints: [OutgoingFingerprint] = []
        for (fingerprint, newest) in newestByFingerprint {
            var slot = firstSlot(of: newest, before: newHorizon).leaving
            while slot >= 0 {
                fingerprints.append(OutgoingFingerprint(ipKey: fingerprint.ipKey, slot: slot, platform: fingerprint.platform))
                slot = slots[Int(slot)].older
            }
        }
        fingerprints.sort { a, b in
            let x = slots[Int(a.slot)], y = slots[Int(b.slot)]
            return (TimeGrain.floor(x.ms, TimeGrain.hourMs), a.ipKey, a.platform.code, x.ms, x.seq)
                < (TimeGrain.floor(y.ms, TimeGrain.hourMs), b.ipKey, b.platform.code, y.ms, y.seq)
        }
        outgoing = Move(
            horizonMs: newHorizon, beganThroughSeq: max(throughSeq, lastSeqAdded), refs: refs, refEntries: refEntries, fingerprints: fingerprints,
            slices: max(slices(max(refEntries, fingerprints.count)), 1))
        return true
    }

    /// Hands slice `slice` of `slices` of the move in progress to `store`, in key order: that
    /// share of the leaving ref entries (whole refs, by where each one's first entry falls),
    /// then that share of the fingerprints' (so a slice covers a key range of each table). The
    /// entries added during the move are not among them.
    func outgoingRows(slice: Int, of slices: Int, _ store: (DiskRow) throws -> Void) rethrows {
        guard let move = outgoing else { return }
        let refRange = WriteSlices.range(slice, of: slices, count: move.refEntries)
        var i = move.firstRef(from: refRange.lowerBound)
        while i < move.refs.count, move.refs[i].firstEntry < refRange.upperBound {
            let ref = move.refs[i].ref
            for slot in byRef[ref] ?? [] {
                let entry = slots[Int(slot)]
                if entry.ms >= move.horizonMs { break }
                if entry.seq <= move.beganThroughSeq { try store(DiskRow(seq: entry.seq, ms: entry.ms, ref: ref)) }
            }
            i += 1
        }
        for leaving in move.fingerprints[WriteSlices.range(slice, of: slices, count: move.fingerprints.count)] {
            let c = slots[Int(leaving.slot)]
            try store(DiskRow(seq: c.seq, ms: c.ms, fingerprint: leaving.fingerprint, osVersion: osVersion(c.os)))
        }
    }

    /// Records that the next slice of the move in progress is on disk.
    mutating func sliceMoved() {
        outgoing?.slicesDone += 1
    }

    /// Ends the move in progress, once every slice is on disk: drops every entry before its
    /// horizon from memory and moves the horizon there. Returns the new horizon, and what the
    /// caller must still store with it, in the same transaction: the entries before it that
    /// were added during the move (clicks that arrived late), which its slices did not hold,
    /// in key order.
    mutating func finishMove() -> (horizonMs: Int64, late: [DiskRow])? {
        guard let newHorizon = outgoing?.horizonMs, let began = outgoing?.beganThroughSeq else { return nil }
        // The move's list of what leaves goes first: it is on disk.
        outgoing = nil
        var late: [DiskRow] = []
        // By ref first: a click that has a fingerprint too leaves its slot to the chains below.
        entries -= removeRefEntries(before: newHorizon) { ref, entry in
            if entry.seq > began { late.append(DiskRow(seq: entry.seq, ms: entry.ms, ref: ref)) }
        }
        late.sort { ($0.ref!, $0.ms, $0.seq) < ($1.ref!, $1.ms, $1.seq) }
        let lateByRef = late.count
        var emptied: [Fingerprint] = []
        for (fingerprint, newest) in newestByFingerprint {
            let (lastKept, leaving) = firstSlot(of: newest, before: newHorizon)
            guard leaving >= 0 else { continue }
            if lastKept < 0 { emptied.append(fingerprint) } else { slots[Int(lastKept)].older = -1 }
            var slot = leaving
            while slot >= 0 {
                let c = slots[Int(slot)]
                if c.seq > began { late.append(DiskRow(seq: c.seq, ms: c.ms, fingerprint: fingerprint, osVersion: osVersion(c.os))) }
                free(slot)
                entries -= 1
                slot = c.older
            }
        }
        for fingerprint in emptied { newestByFingerprint[fingerprint] = nil }
        late[lateByRef...].sort { a, b in
            let x = a.fingerprint!, y = b.fingerprint!
            return (TimeGrain.floor(a.ms, TimeGrain.hourMs), x.ipKey, x.platform.code, a.ms, a.seq)
                < (TimeGrain.floor(b.ms, TimeGrain.hourMs), y.ipKey, y.platform.code, b.ms, b.seq)
        }
        horizonMs = newHorizon
        return (newHorizon, late)
    }

    /// Where to put the horizon so that about half the entries leave: the median time of a
    /// sample of at most about 8,192 entries; past it when most entries share the oldest
    /// instant (then every entry of that instant leaves), so that something always does.
    private func medianTime() -> Int64 {
        let step = max(entries / 8_192, 1)
        var times: [Int64] = []
        times.reserveCapacity(entries / step + 2)
        var n = 0
        var oldest = Int64.max, newest = Int64.min
        func sample(_ ms: Int64) {
            if n % step == 0 { times.append(ms) }
            n += 1
            oldest = min(oldest, ms); newest = max(newest, ms)
        }
        for clicks in byRef.values { for slot in clicks { sample(slots[Int(slot)].ms) } }
        for c in slots where c.seq >= 0 && c.older != Self.notChained { sample(c.ms) }
        times.sort()
        let median = times[times.count / 2]
        if median > oldest { return median }
        return times.first(where: { $0 > median }) ?? (newest + 1)
    }

    /// Puts the click in `slot` into its fingerprint's chain, after every click of its instant
    /// (they were stored before it): usually as the newest.
    private mutating func chain(_ slot: Int32, to fingerprint: Fingerprint) {
        let ms = slots[Int(slot)].ms
        guard let newest = newestByFingerprint[fingerprint], slots[Int(newest)].ms > ms else {
            slots[Int(slot)].older = newestByFingerprint[fingerprint] ?? -1
            newestByFingerprint[fingerprint] = slot
            return
        }
        var newer = newest
        while slots[Int(newer)].older >= 0, slots[Int(slots[Int(newer)].older)].ms > ms { newer = slots[Int(newer)].older }
        slots[Int(slot)].older = slots[Int(newer)].older
        slots[Int(newer)].older = slot
    }

    /// The index in `clicks` (slots in time order) of the first click after `ms`.
    private func firstIndex(in clicks: [Int32], happenedAfter ms: Int64) -> Int {
        guard let last = clicks.last, slots[Int(last)].ms > ms else { return clicks.count }
        var low = 0, high = clicks.count
        while low < high {
            let mid = (low + high) / 2
            if slots[Int(clicks[mid])].ms <= ms { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func refEntry(_ slot: Int32) -> RefEntry {
        RefEntry(ms: slots[Int(slot)].ms, seq: slots[Int(slot)].seq)
    }

    /// In the chain from `newest`: the slot of the first click before `horizon` (-1 when none
    /// is), and of the click just newer than it (-1 when there is none: the whole chain is
    /// before the horizon).
    private func firstSlot(of newest: Int32, before horizon: Int64) -> (lastKept: Int32, leaving: Int32) {
        var lastKept: Int32 = -1, slot = newest
        while slot >= 0, slots[Int(slot)].ms >= horizon {
            lastKept = slot
            slot = slots[Int(slot)].older
        }
        return (lastKept, slot)
    }

    private mutating func allocate(_ click: HeldClick) -> Int32 {
        guard freeSlot >= 0 else {
            slots.append(click)
            return Int32(slots.count - 1)
        }
        let slot = freeSlot
        freeSlot = slots[Int(slot)].older
        slots[Int(slot)] = click
        return slot
    }

    private mutating func free(_ slot: Int32) {
        slots[Int(slot)] = HeldClick(ms: 0, seq: -1, older: freeSlot, os: -1)
        freeSlot = slot
    }

    private mutating func osId(_ version: String?) -> Int32 {
        guard let version else { return -1 }
        if let id = osIds[version] { return id }
        let id = Int32(osVersions.count)
        osVersions.append(version)
        osIds[version] = id
        return id
    }

    /// The OS version (major.minor) an entry's `os` names, nil when it did not know it.
    private func osVersion(_ id: Int32) -> String? { id < 0 ? nil : osVersions[Int(id)] }

    /// Takes every ref entry before `horizon` out of each ref's array (in place: no second
    /// copy of memory), dropping arrays left empty, and shows each one that leaves to
    /// `leaving` with its ref. Frees the slots of the clicks found by ref only; the others are
    /// still in their fingerprint's chain. Returns how many entries left.
    private mutating func removeRefEntries(before horizon: Int64, leaving: (String, RefEntry) -> Void) -> Int {
        var removed = 0
        for ref in Array(byRef.keys) {
            let cut = firstIndex(in: byRef[ref]!, happenedAfter: horizon - 1)
            guard cut > 0 else { continue }
            removed += cut
            for slot in byRef[ref]![..<cut] {
                leaving(ref, refEntry(slot))
                if slots[Int(slot)].older == Self.notChained { free(slot) }
            }
            if cut == byRef[ref]!.count { byRef[ref] = nil } else { byRef[ref]!.removeFirst(cut) }
        }
        return removed
    }
}
