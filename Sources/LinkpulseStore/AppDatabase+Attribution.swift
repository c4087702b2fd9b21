import Foundation
import GRDB
import LinkpulseDomain

/// The clicks stored in the events database, as `Attributor` looks them up: by id through the
/// id index (and the clicks stored earlier in the same commit), by ref and by fingerprint
/// through the partial indexes of migration 0003. Only clicks stored before `beforeSeq` are
/// seen, so an event is attributed against exactly what was stored before it, whenever it is
/// attributed (at commit time or in the backfill of older events).
struct StoredClickLookup: ClickLookup {
    let db: Database
    let store: AppDatabase
    /// Only clicks with a lower seq are seen.
    var beforeSeq: Int64 = .max
    /// Ids stored earlier in the current commit (not in the id tail until it commits).
    var storedInCommit: [String: Int64] = [:]
    let ids: AppDatabase.IdLookups
    let clickBySeq, newestRefClick, fingerprintClicks: Statement

    init(_ db: Database, store: AppDatabase) throws {
        self.db = db
        self.store = store
        let q = store.queries
        ids = AppDatabase.IdLookups(
            indexed: try db.cachedStatement(sql: q.indexedSeqsForKey), stored: try db.cachedStatement(sql: q.eventIdAtSeq))
        clickBySeq = try db.cachedStatement(sql: q.attribution.clickBySeq)
        newestRefClick = try db.cachedStatement(sql: q.attribution.newestRefClick)
        fingerprintClicks = try db.cachedStatement(sql: q.attribution.fingerprintClicks)
    }

    func click(id: String) throws -> KnownClick? {
        let seq: Int64?
        if let inCommit = storedInCommit[id] {
            seq = inCommit
        } else {
            seq = try store.storedSeq(db, id: id, key: EventIdKey.of(id), ids)
        }
        guard let seq, seq < beforeSeq else { return nil }
        return try click(seq: seq)
    }

    /// The click stored under `seq`, or nil when that event is not a click.
    func click(seq: Int64) throws -> KnownClick? {
        let s = HotStatement(clickBySeq, in: db)
        try s.bind(1, seq)
        guard try s.step() else { return nil }
        defer { s.finish() }
        return KnownClick(
            seq: seq, occurredAtMs: s.int64(1),
            dimensions: LinkDimensions(ref: s.text(2), campaign: s.text(3), source: s.text(4), medium: s.text(5)),
            osVersion: osMajorMinor(s.text(6)))
    }

    func newestClick(ref: String, atOrBefore atMs: Int64) throws -> KnownClick? {
        let s = HotStatement(newestRefClick, in: db)
        try s.bind(1, ref)
        try s.bind(2, atMs)
        try s.bind(3, beforeSeq)
        guard try s.step() else { return nil }
        defer { s.finish() }
        return KnownClick(
            seq: s.int64(0), occurredAtMs: s.int64(1),
            dimensions: LinkDimensions(ref: ref, campaign: s.text(2), source: s.text(3), medium: s.text(4)),
            osVersion: osMajorMinor(s.text(5)))
    }

    func clicks(with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64) throws -> [KnownClick] {
        let s = HotStatement(fingerprintClicks, in: db)
        var found: [KnownClick] = []
        let keyHex = fingerprint.ipKeyHex
        var hour = TimeGrain.floor(throughMs, TimeGrain.hourMs) / TimeGrain.hourMs
        let firstHour = TimeGrain.floor(fromMs, TimeGrain.hourMs) / TimeGrain.hourMs
        while hour >= firstHour {
            s.reset()
            try s.bind(1, hour)
            try s.bind(2, keyHex)
            try s.bind(3, fingerprint.platform.rawValue)
            try s.bind(4, fromMs)
            try s.bind(5, throughMs)
            try s.bind(6, beforeSeq)
            while try s.step() {
                found.append(KnownClick(
                    seq: s.int64(0), occurredAtMs: s.int64(1),
                    dimensions: LinkDimensions(ref: s.text(2), campaign: s.text(3), source: s.text(4), medium: s.text(5)),
                    osVersion: osMajorMinor(s.text(6))))
            }
            hour -= 1
        }
        return found
    }
}

extension Fingerprint {
    /// The key as the fingerprint index spells it: the first 16 hex digits of the keyed IP hash.
    var ipKeyHex: String {
        let hex = String(UInt64(bitPattern: ipKey), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension AttributionSubject {
    /// The attribution subject of a validated event about to be stored.
    init(_ e: IngestEvent, seq: Int64) {
        self.init(
            seq: seq, kind: e.kind, occurredAtMs: e.occurredAtMs,
            dimensions: LinkDimensions(ref: e.ref, campaign: e.campaign, source: e.source, medium: e.medium),
            clickId: e.clickId, fingerprint: Fingerprint(ipHash: e.ipHash, platform: e.platform), osVersion: e.osVersion,
            isBot: e.isBot)
    }

    /// Whether attribution decides anything for this event (a person's install, open or fallback).
    var isAttributed: Bool { kind != .click && !isBot }
}

extension AppDatabase {
    /// Installation fact set once every stored event has its attribution (see `backfillAttribution`).
    static let attributionCompleteFact = "attribution_complete"

    /// At open: attributes the events stored before attribution moved to commit time (migration
    /// 0003), oldest first, each against the clicks stored before it — the answers the rollup
    /// job used to give them. Runs once; returns how many events it attributed (0 for a new or
    /// already converted database). Synchronous, on the writer connection, before serving.
    @discardableResult
    func backfillAttribution(batch: Int = 50_000) throws -> Int {
        let done = try pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM installation WHERE name = ?", arguments: [Self.attributionCompleteFact])
        }
        guard done == nil else { return 0 }
        let attributor = Attributor(windowMs: attributionWindowMs)
        var after: Int64 = 0
        var total = 0
        while true {
            let (processed, last) = try pool.write { db -> (Int, Int64) in
                var lookup = try StoredClickLookup(db, store: self)
                let read = HotStatement(try db.cachedStatement(sql: queries.attribution.unattributedAfter), in: db)
                try read.bind(1, after)
                try read.bind(2, Int64(batch))
                var subjects: [AttributionSubject] = []
                var last = after
                while try read.step() {
                    last = read.int64(0)
                    let kind = EventKind(rawValue: read.text(2) ?? "") ?? .click
                    let subject = AttributionSubject(
                        seq: last, kind: kind, occurredAtMs: read.int64(3),
                        dimensions: LinkDimensions(ref: read.text(4), campaign: read.text(5), source: read.text(6), medium: read.text(7)),
                        clickId: read.text(9),
                        fingerprint: Fingerprint(ipHash: read.text(10), platform: Platform(rawValue: read.text(8) ?? "") ?? .other),
                        osVersion: read.text(11), isBot: read.int64(12) != 0)
                    if subject.isAttributed && read.isNull(13) { subjects.append(subject) }
                }
                let update = HotStatement(try db.cachedStatement(sql: queries.attribution.setAttribution), in: db)
                for subject in subjects {
                    lookup.beforeSeq = subject.seq
                    let attribution = try attributor.attribute(subject, in: &lookup)
                    update.reset()
                    try update.bind(1, attribution.match.rawValue)
                    try update.bind(2, attribution.clickSeq)
                    try update.bind(3, subject.seq)
                    try update.run()
                }
                if last == after {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO installation (name, value) VALUES (?, ?)",
                        arguments: [Self.attributionCompleteFact, "1"])
                }
                return (subjects.count, last)
            }
            total += processed
            if last == after { break }
            after = last
            if total > 0 { logger.notice("attributing events stored by an earlier version", metadata: ["through_seq": "\(after)"]) }
        }
        return total
    }
}
