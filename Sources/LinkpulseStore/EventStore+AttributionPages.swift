import GRDB
import LinkpulseDomain

/// What an attribution round reads of the events database, read in one short transaction of an
/// events reader before the round decides anything (`EventStore.attributionPage`).
///
/// Why a page of its own: a round that read the events inside the attribution file's
/// transaction (the events database attached to its connection) held a snapshot of the events
/// until it committed, back to back while a backlog lasted, and the events WAL could not start
/// over without the round waiting for it. Read apart, the round holds the events' snapshot only
/// while it copies the page, and the ingest writer finds moments between two commits with no
/// older snapshot to restart the WAL in.
struct AttributionPage {
    /// The next events to attribute after the watermark, in seq order (clicks included).
    var events: [AttributionSourceEvent]
    /// The clicks stored before the page that its events name by `click_id`, by id.
    var clicksById: [String: KnownClick]
    /// The raw-event horizon, UTC ms (`Int64.min` while retention has deleted nothing): clicks
    /// before it are never matched.
    var rawHorizonMs: Int64
    /// The id of the page's last event, which the attribution file records beside its
    /// watermark (nil for an empty page).
    var lastEventId: String?
}

/// A non-bot click as the memory half of the click indexes lists it again after a start
/// (`attribution/recent_clicks.sql`).
struct ListedClick {
    var seq: Int64
    var occurredAtMs: Int64
    var ref: String?
    var fingerprint: Fingerprint?
    /// The OS version, major.minor.
    var osVersion: String?
}

extension EventStore {
    /// The next page of events to attribute: at most `limit` after `watermark`, the clicks
    /// they name by id, and the raw-event horizon, all from one snapshot of the events. The
    /// caller holds the attribution file's write lock, so a retention run that moves the
    /// horizon waits for its round (`AttributionStore.adoptRawHorizon`).
    func attributionPage(after watermark: Int64, limit: Int) throws -> AttributionPage {
        // Loaded first (after a command's open it reads the database's id): a pool's reads do
        // not nest.
        try ensureIdFilter()
        return try pool.read { db in
            let events = try unattributedEvents(db, after: watermark, limit: limit)
            return AttributionPage(
                events: events,
                clicksById: try clicksNamed(db, by: events),
                rawHorizonMs: try Int64.fetchOne(db.cachedStatement(sql: queries.retention.rawHorizon)) ?? .min,
                lastEventId: try events.last.flatMap { last in
                    try String.fetchOne(db.cachedStatement(sql: queries.eventIdAtSeq), arguments: ["seq": last.subject.seq])
                })
        }
    }

    /// Each non-bot click stored through seq `watermark` that happened at or after
    /// `horizonMs`, in (time, seq) order, read in one transaction (after a start, or after a
    /// failed round: seconds on a large installation, never on an app's behalf).
    func forEachRecentClick(from horizonMs: Int64, through watermark: Int64, _ body: (ListedClick) throws -> Void) throws {
        try pool.read { db in
            let s = HotStatement(try db.cachedStatement(sql: queries.attribution.recentClicks), in: db)
            try s.bind(":horizon_ms", horizonMs)
            try s.bind(":through_seq", watermark)
            typealias C = RecentClickColumn
            while try s.step() {
                try body(ListedClick(
                    seq: s.int64(C.seq), occurredAtMs: s.int64(C.occurredAtMs), ref: s.text(C.ref),
                    fingerprint: s.storedFingerprint(hash: C.ipHash, platform: C.platform), osVersion: osMajorMinor(s.text(C.osVersion))))
            }
        }
    }

    /// The non-bot clicks that happened within one UTC hour (since 1970), by fingerprint,
    /// each fingerprint's newest first (ties in time: the later stored first); how many in all.
    func rawClicks(ofHour hour: Int64) throws -> (byFingerprint: [Fingerprint: [RawClickHours.Click]], count: Int) {
        try pool.read { db in
            let read = HotStatement(try db.cachedStatement(sql: queries.attribution.rawClicksOfHour), in: db)
            try read.bind(":from_ms", hour * TimeGrain.hourMs)
            try read.bind(":to_ms", (hour + 1) * TimeGrain.hourMs)
            var byFingerprint: [Fingerprint: [RawClickHours.Click]] = [:]
            var count = 0
            typealias C = RawClickColumn
            while try read.step() {
                guard let fingerprint = read.storedFingerprint(hash: C.ipHash, platform: C.platform) else { continue }
                // In the statement's order: newest first.
                byFingerprint[fingerprint, default: []].append(
                    RawClickHours.Click(ms: read.int64(C.occurredAtMs), seq: read.int64(C.seq), osVersion: osMajorMinor(read.text(C.osVersion))))
                count += 1
            }
            return (byFingerprint, count)
        }
    }

    /// The events after `watermark` (at most `limit`), in seq order, as attribution reads them.
    private func unattributedEvents(_ db: Database, after watermark: Int64, limit: Int) throws -> [AttributionSourceEvent] {
        let read = HotStatement(try db.cachedStatement(sql: queries.attribution.eventsAfter), in: db)
        try read.bind(":after_seq", watermark)
        try read.bind(":limit", Int64(limit))
        var events: [AttributionSourceEvent] = []
        // An app's round reads a few events: room for 65,536 (about 13 MB, a block of its own)
        // was mapped and unmapped by malloc in every round. The follower's long rounds grow
        // the array.
        events.reserveCapacity(min(limit, 256))
        typealias C = AttributionEventColumn
        while try read.step() {
            let kind = CompactEvent.kind(code: read.int64(C.type))
            // A click's own click_id plays no part; the text is made only for the events that use it.
            let clickId = kind == .click ? nil : read.withStoredId(C.clickId) { String(decoding: $0, as: UTF8.self) }
            events.append(AttributionSourceEvent(
                eventKey: StoredIdKey(read, column: C.eventId) ?? .text(""),
                subject: AttributionSubject(
                    seq: read.int64(C.seq), kind: kind, occurredAtMs: read.int64(C.occurredAtMs),
                    dimensions: LinkDimensions(ref: read.text(C.ref), campaign: read.text(C.campaign), source: read.text(C.source), medium: read.text(C.medium)),
                    clickId: clickId, clickIdSource: read.isNull(C.clickIdSource) ? nil : ClickIdSource(code: Int(read.int64(C.clickIdSource))),
                    fingerprint: read.storedFingerprint(hash: C.ipHash, platform: C.platform), osVersion: read.text(C.osVersion),
                    isBot: read.int64(C.bot) != 0),
                resolvingDevice: read.text(C.resolvingDevice)))
        }
        return events
    }

    /// The stored clicks named by the `click_id`s of a page's events, by id (clicks of the
    /// page itself are found as the round goes).
    ///
    /// Candidates come from the writer's in-memory id tail, then the on-disk id index, then a
    /// scan of any events neither knows yet (stored by another process, such as `linkpulse
    /// generate` beside `serve`); each is confirmed by its id. The tail is read before the
    /// index's first read in this transaction, so an id merged and forgotten meanwhile is
    /// still found in the index.
    private func clicksNamed(_ db: Database, by events: [AttributionSourceEvent]) throws -> [String: KnownClick] {
        var wanted: [Int64: Set<String>] = [:]
        for e in events where !e.subject.isBot && e.subject.kind != .click {
            if let id = e.subject.clickId { wanted[EventIdKey.of(id), default: []].insert(id) }
        }
        guard !wanted.isEmpty, let firstSeq = events.first?.subject.seq else { return [:] }
        var candidates: [Int64: Set<Int64>] = [:]
        let known = tail.withLock { tail in
            for key in wanted.keys { candidates[key, default: []].formUnion(tail.seqs(for: key)) }
            return tail.newestSeq
        }
        let knownThrough = max(known, indexedThrough.withLock { $0 })
        let indexed = HotStatement(try db.cachedStatement(sql: queries.indexedSeqsForKey), in: db)
        for key in wanted.keys where filter.withLock({ $0.mayContain(key) }) {
            try indexed.bind(":id_key", key)
            try indexed.forEachInt64 { candidates[key, default: []].insert($0) }
        }
        if knownThrough < firstSeq - 1 {
            let scan = HotStatement(try db.cachedStatement(sql: queries.idKeysInRange), in: db)
            try scan.bind(":after_seq", knownThrough)
            try scan.bind(":through_seq", firstSeq - 1)
            while try scan.step() {
                let key = scan.withStoredId(IdInRangeColumn.eventId) { EventIdKey.of(utf8: $0) } ?? 0
                if wanted[key] != nil { candidates[key, default: []].insert(scan.int64(IdInRangeColumn.seq)) }
            }
        }
        var found: [String: KnownClick] = [:]
        let click = HotStatement(try db.cachedStatement(sql: queries.attribution.clickBySeq), in: db)
        for (key, seqs) in candidates {
            for seq in seqs where seq < firstSeq {
                try click.bind(":seq", seq)
                guard try click.step() else { continue }
                typealias C = ClickBySeqColumn
                if let id = click.text(C.eventId), wanted[key]?.contains(id) == true {
                    found[id] = KnownClick(
                        seq: seq, occurredAtMs: click.int64(C.occurredAtMs),
                        dimensions: LinkDimensions(ref: click.text(C.ref), campaign: click.text(C.campaign), source: click.text(C.source), medium: click.text(C.medium)))
                }
                click.finish()
            }
        }
        return found
    }
}
