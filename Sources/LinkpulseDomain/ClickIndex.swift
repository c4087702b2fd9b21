/// Clicks held in memory, indexed the three ways attribution looks them up: by event id, by
/// ref and by fingerprint. A complete `ClickLookup` without a database: the reference replay
/// the store's stored answers are tested against, and for small sets of events. Unbounded:
/// the store keeps its click indexes on disk.
///
/// Clicks must be added in store order (increasing seq); lookups then see exactly the clicks
/// added so far.
public struct ClickIndex: ClickLookup, Sendable {
    var byId: [String: KnownClick] = [:]
    /// Non-bot clicks per ref, sorted by (occurredAtMs, seq).
    var byRef: [String: [KnownClick]] = [:]
    /// Non-bot clicks per fingerprint, sorted by (occurredAtMs, seq).
    var byFingerprint: [Fingerprint: [KnownClick]] = [:]

    public init() {}

    /// How many clicks are held.
    public var count: Int { byId.count }

    /// Adds a click stored under `id`. Bots' clicks are only found by id.
    public mutating func add(_ click: KnownClick, id: String, fingerprint: Fingerprint?, isBot: Bool) {
        byId[id] = click
        guard !isBot else { return }
        if let ref = click.dimensions.ref { Self.insertSorted(click, into: &byRef[ref, default: []]) }
        if let fingerprint { Self.insertSorted(click, into: &byFingerprint[fingerprint, default: []]) }
    }

    public func click(id: String) -> KnownClick? { byId[id] }

    public func newestClick(ref: String, atOrBefore atMs: Int64) -> KnownClick? {
        guard let clicks = byRef[ref] else { return nil }
        let end = Self.firstIndex(in: clicks, after: atMs)
        return end > 0 ? clicks[end - 1] : nil
    }

    public func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) -> [KnownClick] {
        guard let clicks = byFingerprint[fingerprint] else { return [] }
        var found: [KnownClick] = []
        var i = Self.firstIndex(in: clicks, after: throughMs) - 1
        while i >= 0 && clicks[i].occurredAtMs >= fromMs {
            found.append(clicks[i])
            i -= 1
        }
        return found
    }

    /// The index of the first click that happened after `ms` (clicks.count when none did).
    static func firstIndex(in clicks: [KnownClick], after ms: Int64) -> Int {
        var low = 0, high = clicks.count
        while low < high {
            let mid = (low + high) / 2
            if clicks[mid].occurredAtMs <= ms { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Keeps the order by (occurredAtMs, seq): a click is usually the newest, so it is usually
    /// appended; a late one is inserted after every click of the same instant (a higher seq).
    static func insertSorted(_ click: KnownClick, into clicks: inout [KnownClick]) {
        if let last = clicks.last, last.occurredAtMs > click.occurredAtMs {
            clicks.insert(click, at: firstIndex(in: clicks, after: click.occurredAtMs))
        } else {
            clicks.append(click)
        }
    }
}
