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
        if let ref = click.dimensions.ref { byRef[ref, default: []].insertInTimeOrder(click) }
        if let fingerprint { byFingerprint[fingerprint, default: []].insertInTimeOrder(click) }
    }

    /// Adds a person's click to be found by ref and by fingerprint only, not by id (a click an
    /// earlier round left in a store's indexes, brought back for the lookups of a new round).
    public mutating func addFindable(_ click: KnownClick, fingerprint: Fingerprint?) {
        if let ref = click.dimensions.ref { byRef[ref, default: []].insertInTimeOrder(click) }
        if let fingerprint { byFingerprint[fingerprint, default: []].insertInTimeOrder(click) }
    }

    public func click(id: String) -> KnownClick? { byId[id] }

    public func newestClick(ref: String, atOrBefore atMs: Int64) -> KnownClick? {
        guard let clicks = byRef[ref] else { return nil }
        let end = clicks.firstIndex(happenedAfter: atMs)
        return end > 0 ? clicks[end - 1] : nil
    }

    public func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) -> [KnownClick] {
        guard let clicks = byFingerprint[fingerprint] else { return [] }
        var found: [KnownClick] = []
        var i = clicks.firstIndex(happenedAfter: throughMs) - 1
        while i >= 0 && clicks[i].occurredAtMs >= fromMs {
            found.append(clicks[i])
            i -= 1
        }
        return found
    }
}

/// What click indexes keep in arrays in time order: something that happened at an instant.
public protocol TimeOrdered {
    /// When it happened, UTC ms.
    var timeMs: Int64 { get }
}

extension KnownClick: TimeOrdered {
    public var timeMs: Int64 { occurredAtMs }
}

extension Array where Element: TimeOrdered {
    /// In an array in time order: the index of the first element that happened after `ms`
    /// (count when none did).
    public func firstIndex(happenedAfter ms: Int64) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].timeMs <= ms { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Adds to an array in time order, elements added in store order: usually an append; a
    /// late one goes after every element of its instant (they were stored before it).
    public mutating func insertInTimeOrder(_ element: Element) {
        if let last, last.timeMs > element.timeMs {
            insert(element, at: firstIndex(happenedAfter: element.timeMs))
        } else {
            append(element)
        }
    }
}
