/// The writer's in-memory index of event ids stored after the id index's watermark: id key →
/// seqs. Together with the on-disk id index it answers "is this id stored?" for every event.
///
/// Only the writer changes it, inside its write transactions; a merge into the on-disk index
/// only *requests* a prune, which the writer applies at the start of its next transaction,
/// before that transaction first reads the index (so it sees the merge). Id lookups (dedupe, and
/// attribution's click-by-id) read it before their first read of the index (see `storedSeq`).
struct IdTail: Sendable {
    private var first: [Int64: Int64] = [:]
    /// Further seqs for keys shared by more than one id (64-bit collisions: practically never).
    private var more: [Int64: [Int64]] = [:]
    private var pendingPrune: Int64?
    private(set) var count = 0
    /// The highest seq ever added: every event up to it is here or in the on-disk index.
    private(set) var newestSeq: Int64 = 0

    mutating func add(key: Int64, seq: Int64) {
        count += 1
        newestSeq = max(newestSeq, seq)
        if first[key] == nil {
            first[key] = seq
        } else {
            more[key, default: []].append(seq)
        }
    }

    func seqs(for key: Int64) -> [Int64] {
        guard let seq = first[key] else { return [] }
        return [seq] + (more[key] ?? [])
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
        // In place: a filtered copy of the dictionary beside the old one was the largest
        // block of the daemon's heap at its peak under batches (17 MB at 400,000 ids). The
        // storage keeps its size; the next ids fill it again.
        let pruned = first.compactMap { $0.value <= through ? $0.key : nil }
        for key in pruned { first.removeValue(forKey: key) }
        more = more.compactMapValues { seqs in
            let kept = seqs.filter { $0 > through }
            return kept.isEmpty ? nil : kept
        }
        // A key whose first seq was pruned but which still has later seqs keeps those.
        for (key, seqs) in more where first[key] == nil {
            first[key] = seqs[0]
            more[key] = seqs.count > 1 ? Array(seqs.dropFirst()) : nil
        }
        count = first.count + more.values.reduce(0) { $0 + $1.count }
    }
}
