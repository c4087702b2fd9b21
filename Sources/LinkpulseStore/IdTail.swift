/// The writer's in-memory index of event ids stored after the id index's watermark: id key →
/// seqs. Together with the on-disk id index it answers "is this id stored?" for every event.
///
/// Only the writer changes it, inside its write transactions; a merge into the on-disk index
/// only *requests* a prune, which the writer applies at the start of its next transaction,
/// before that transaction first reads the index (so it sees the merge). Id lookups (dedupe, and
/// attribution's click-by-id) read it before their first read of the index (see `storedSeq`).
///
/// Layout: the writer adds ids in store order, and seqs follow each other without gaps, so the
/// keys are one array by seq (8 bytes an id) with an open-addressing table of their positions
/// (4 bytes a slot, at most half full). A `[key: seq]` dictionary took 16 bytes a slot at most
/// three-quarters full, and at 400,000 ids it had just doubled to a million slots: 17 MB, the
/// largest block of the daemon's heap at its peak under batches, against 7 MB here. An id that
/// does not fit the array (a seq before its end, or after a gap of more than `longestGap`) goes
/// to a small dictionary instead, so any order of adds stays correct.
struct IdTail: Sendable {
    /// The key of each seq from `firstSeq` on (`IdTail.gap` where no id was added for a seq).
    private var keys: [Int64] = []
    private var firstSeq: Int64 = 0
    /// Positions in `keys` plus one (0: an empty slot), found from a key's low bits (keys are
    /// hashes already). Linear probing; never more than half full.
    private var slots: [Int32] = []
    /// Ids that did not fit `keys`, by key.
    private var others: [Int64: [Int64]] = [:]
    private var pendingPrune: Int64?
    private(set) var count = 0
    /// The highest seq ever added: every event up to it is here or in the on-disk index.
    private(set) var newestSeq: Int64 = 0

    /// What `keys` holds for a seq no id was added for. A real key equal to it goes to `others`.
    static let gap = Int64.min
    /// The most seqs without an id that `keys` fills with `gap` before an id goes to `others`.
    static let longestGap: Int64 = 4_096

    mutating func add(key: Int64, seq: Int64) {
        count += 1
        newestSeq = max(newestSeq, seq)
        if keys.isEmpty { firstSeq = seq }
        let end = firstSeq + Int64(keys.count)
        guard key != Self.gap, seq >= end, seq - end <= Self.longestGap, keys.count < Int(Int32.max - 1) else {
            others[key, default: []].append(seq)
            return
        }
        if seq > end { keys.append(contentsOf: repeatElement(Self.gap, count: Int(seq - end))) }
        keys.append(key)
        index(position: keys.count - 1)
    }

    func seqs(for key: Int64) -> [Int64] {
        var found: [Int64] = []
        if !slots.isEmpty {
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: key) & mask
            while slots[slot] != 0 {
                let position = Int(slots[slot]) - 1
                if keys[position] == key { found.append(firstSeq + Int64(position)) }
                slot = (slot + 1) & mask
            }
            // Probing meets positions in table order, not seq order.
            if found.count > 1 { found.sort() }
        }
        if let more = others[key] { found = (found + more).sorted() }
        return found
    }

    /// Records that the on-disk index now covers every seq ≤ `seq`.
    mutating func requestPrune(through seq: Int64) {
        pendingPrune = max(pendingPrune ?? seq, seq)
    }

    /// Drops the entries the on-disk index covers. The writer calls this first thing in a
    /// write transaction.
    mutating func applyPendingPrune() {
        guard let through = pendingPrune else { return }
        pendingPrune = nil
        let dropped = Int(min(max(through + 1 - firstSeq, 0), Int64(keys.count)))
        if dropped > 0 {
            // In place: the arrays keep their size, and the next ids fill them again.
            keys.removeFirst(dropped)
            firstSeq += Int64(dropped)
            reindex(slotCount: slots.count)
        }
        if !others.isEmpty {
            others = others.compactMapValues { seqs in
                let kept = seqs.filter { $0 > through }
                return kept.isEmpty ? nil : kept
            }
        }
        count = keys.reduce(0) { $0 + ($1 == Self.gap ? 0 : 1) } + others.values.reduce(0) { $0 + $1.count }
    }

    /// Puts `keys[position]` in the table, doubling it first when that would make it more
    /// than half full.
    private mutating func index(position: Int) {
        if 2 * (keys.count + 1) > slots.count {
            reindex(slotCount: max(1 << 12, slots.count * 2))
            return
        }
        insert(position: position)
    }

    private mutating func insert(position: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: keys[position]) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(position + 1)
    }

    /// Builds the table again, with `slotCount` slots (kept when the keys fit), from `keys`.
    private mutating func reindex(slotCount: Int) {
        var size = max(slotCount, 1 << 12)
        while 2 * (keys.count + 1) > size { size *= 2 }
        if size == slots.count {
            for i in slots.indices { slots[i] = 0 }
        } else {
            slots = [Int32](repeating: 0, count: size)
        }
        for position in keys.indices where keys[position] != Self.gap { insert(position: position) }
    }
}
