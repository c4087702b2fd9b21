import Foundation
import GRDB
import LinkpulseDomain

/// The rollup grains (the `grain` column of `rollups`).
enum RollupGrain: Int64, CaseIterable {
    /// 15-minute UTC buckets by every dimension.
    case quarterHour = 1
    /// UTC days by every dimension.
    case day = 2
    /// 15-minute UTC buckets by platform only.
    case quarterHourByPlatform = 3
    /// UTC days by platform only.
    case dayByPlatform = 4
    /// UTC hours by platform only (local days of half-hour zones are mostly whole UTC hours).
    case hourByPlatform = 5

    var length: Int64 {
        switch self {
        case .quarterHour, .quarterHourByPlatform: TimeGrain.quarterHourMs
        case .hourByPlatform: TimeGrain.hourMs
        case .day, .dayByPlatform: TimeGrain.dayMs
        }
    }
    var hasLinkDimensions: Bool { self == .quarterHour || self == .day }
}

/// The key of one dimension-day delta (see `dimension_blocks` and `dimension_days`).
struct DimensionDayKey: Hashable {
    var dimension: StatsDimension
    var value: String
    var day: Int64
    var isBot: Bool
}

/// Blocks of whole UTC days at power-of-two sizes, for breakdowns over long ranges.
enum DayBlocks {
    /// Levels 0…8: blocks of 1 to 256 days.
    static let levels = 0...8

    /// The fewest aligned blocks that exactly cover the days [from, to): (level, block) pairs.
    static func cover(from: Int64, to: Int64) -> [(level: Int, block: Int64)] {
        var blocks: [(level: Int, block: Int64)] = []
        var day = from
        while day < to {
            var level = levels.upperBound
            // The largest block that starts at `day` and ends by `to`.
            while level > 0 && (day % (Int64(1) << level) != 0 || day + (Int64(1) << level) > to) { level -= 1 }
            blocks.append((level, day >> level))
            day += Int64(1) << level
        }
        return blocks
    }
}

/// The key of one rollup row.
struct RollupKey: Hashable {
    var grain: RollupGrain
    var bucket: Int64
    var platform: Platform
    var isBot: Bool
    var dimensions: LinkDimensions
}

/// One raw event as the rollup job reads it.
struct RollupSourceEvent {
    var seq: Int64
    var eventId: String
    var idKey: Int64
    var kind: EventKind
    var occurredAtMs: Int64
    var dimensions: LinkDimensions
    var platform: Platform
    var clickId: String?
    var deferred: Bool
    var ipHash: String?
    var visitorId: String
    var osVersion: String?
    var isBot: Bool
}

/// Which dimension block a row of `dimension_blocks` is.
struct DimensionBlockID: Hashable {
    var dimension: StatsDimension
    var level: Int
    var block: Int64
}

/// What attribution decided for one install, open or fallback.
struct Attribution {
    var match: MatchType
    var clickSeq: Int64?
    var clickId: String?
    var dimensions: LinkDimensions
}

extension AppDatabase {
    /// The seq through which every event is counted in the rollups.
    public func rolledThroughSeq() throws -> Int64 {
        try rollupQueue.inDatabase { db in try Int64.fetchOne(db, sql: "SELECT rolled_through_seq FROM rollup_state") ?? 0 }
    }

    /// Rolls up every event stored so far, in passes of `batch` events; returns how many.
    /// With a `budget`, stops after the first pass that ends past it (the timer uses this so a
    /// big backlog, such as a first rollup of an old database, never delays shutdown for long).
    /// Synchronous; for the timer, the command line, the admin endpoint and tests.
    @discardableResult
    public func rollUpAll(batch: Int = 200_000, budget: Duration? = nil) throws -> Int {
        let start = ContinuousClock.now
        var total = 0
        while true {
            let processed = try rollUp(maxEvents: batch)
            total += processed
            if processed == 0 { return total }
            if let budget, ContinuousClock.now - start > budget { return total }
        }
    }

    /// Rolls up every event stored when it is called (not those arriving meanwhile, so it ends
    /// even under sustained ingest); returns how many events it processed. For readers that must
    /// see everything stored so far: scheduled exports, `linkpulse export`.
    @discardableResult
    public func rollUpThroughCurrent(batch: Int = 200_000) throws -> Int {
        let target = try maxSeq()
        var total = 0
        while try rolledThroughSeq() < target {
            let processed = try rollUp(maxEvents: batch)
            total += processed
            if processed == 0 { break }
        }
        return total
    }

    /// Forgets all attribution and rollups so that the next passes recompute them from the raw
    /// events with the current attribution window (`linkpulse rollup --rebuild`).
    public func resetRollups() throws {
        let databaseId = try self.databaseId()
        try rollupQueue.inDatabase { db in
            try db.inTransaction(.deferred) {
                try db.execute(sql: queries.rollup.reset, arguments: ["database_id": databaseId, "window_ms": attributionWindowMs])
                return .commit
            }
        }
    }

    /// One rollup pass over at most `maxEvents` events past the watermark: resolves their
    /// attribution, indexes their clicks, adds them to every rollup grain, and advances the
    /// watermark, all in one transaction of the rollup file. Returns how many events it
    /// processed (0 when up to date). Idempotent and restartable: a pass that dies leaves
    /// nothing behind, and a finished one is never counted again.
    ///
    /// Never takes the events database's write lock, so it never blocks ingest. Synchronous;
    /// several callers (the timer, `linkpulse rollup`, the admin endpoint) are serialised by
    /// the rollup file's lock.
    public func rollUp(maxEvents: Int = 200_000) throws -> Int {
        try rollupQueue.inDatabase { db in
            var processed = 0
            try db.inTransaction(.deferred) {
                // A write first: takes the rollup file's write lock (and only that one) before the
                // watermark is read, so two passes can never count the same events.
                try db.execute(sql: "UPDATE rollup_state SET rolled_through_seq = rolled_through_seq")
                let watermark = try Int64.fetchOne(db, sql: "SELECT rolled_through_seq FROM rollup_state") ?? 0
                let events = try readEvents(db, after: watermark, limit: maxEvents)
                guard let last = events.last else { return .commit }
                var pass = try RollupPass(db: db, queries: queries.rollup, windowMs: attributionWindowMs)
                pass.deltas.reserveCapacity(events.count)
                pass.dimensionDeltas.reserveCapacity(events.count / 4)
                pass.clicksById = try resolveClickIds(db, in: events)
                for event in events { try pass.add(event) }
                try pass.flush()
                try db.execute(sql: queries.rollup.advanceWatermark, arguments: [last.seq])
                processed = events.count
                return .commit
            }
            return processed
        }
    }

    func readEvents(_ db: Database, after watermark: Int64, limit: Int) throws -> [RollupSourceEvent] {
        let read = HotStatement(try db.cachedStatement(sql: queries.rollup.eventsAfter), in: db)
        read.bind(1, watermark)
        read.bind(2, Int64(limit))
        var events: [RollupSourceEvent] = []
        events.reserveCapacity(min(limit, 65_536))
        while try read.step() {
            events.append(RollupSourceEvent(
                seq: read.int64(0), eventId: read.text(1) ?? "", idKey: read.int64(2),
                kind: EventKind(rawValue: read.text(3) ?? "") ?? .click, occurredAtMs: read.int64(4),
                dimensions: LinkDimensions(ref: read.text(5), campaign: read.text(6), source: read.text(7), medium: read.text(8)),
                platform: Platform(rawValue: read.text(9) ?? "") ?? .other, clickId: read.text(10),
                deferred: read.int64(11) == 1, ipHash: read.text(12), visitorId: read.text(13) ?? "",
                osVersion: read.text(14), isBot: read.int64(15) != 0))
        }
        return events
    }

    /// The stored clicks named by the `click_id`s of a pass's events: id → (seq, dimensions)
    /// of every click stored under it (one, but for a 64-bit key collision).
    ///
    /// Candidates come from the writer's in-memory id tail, then the on-disk id index, then a
    /// scan of any events neither knows yet, then the pass itself; each is confirmed by its id.
    /// The tail is read before the index's first read in this transaction, so an id merged and
    /// forgotten meanwhile is still found in the index.
    func resolveClickIds(_ db: Database, in events: [RollupSourceEvent]) throws -> [String: [(seq: Int64, dimensions: LinkDimensions)]] {
        var wanted: [Int64: Set<String>] = [:]
        for e in events where !e.isBot && e.kind != .click {
            if let id = e.clickId { wanted[EventIdKey.of(id), default: []].insert(id) }
        }
        guard !wanted.isEmpty, let firstSeq = events.first?.seq else { return [:] }
        var candidates: [Int64: Set<Int64>] = [:]
        let known = tail.withLock { tail in
            for key in wanted.keys { candidates[key, default: []].formUnion(tail.seqs(for: key)) }
            return tail.newestSeq
        }
        let knownThrough = max(known, indexedThrough.withLock { $0 })
        let indexed = HotStatement(try db.cachedStatement(sql: queries.indexedSeqsForKey), in: db)
        for key in wanted.keys where filter.withLock({ $0.mayContain(key) }) {
            indexed.bind(1, key)
            try indexed.forEachInt64 { candidates[key, default: []].insert($0) }
        }
        if knownThrough < firstSeq - 1 {
            let scan = HotStatement(try db.cachedStatement(sql: queries.idKeysInRange), in: db)
            scan.bind(1, knownThrough)
            scan.bind(2, firstSeq - 1)
            while try scan.step() {
                let key = scan.int64(0)
                if wanted[key] != nil { candidates[key, default: []].insert(scan.int64(1)) }
            }
        }
        var found: [String: [(seq: Int64, dimensions: LinkDimensions)]] = [:]
        for e in events where e.kind == .click && wanted[e.idKey]?.contains(e.eventId) == true {
            found[e.eventId, default: []].append((e.seq, e.dimensions))
        }
        let click = HotStatement(try db.cachedStatement(sql: queries.rollup.clickAtSeq), in: db)
        for (key, seqs) in candidates {
            for seq in seqs where seq < firstSeq {
                click.bind(1, seq)
                guard try click.step() else { continue }
                if let id = click.text(0), wanted[key]?.contains(id) == true {
                    found[id, default: []].append((seq, LinkDimensions(
                        ref: click.text(1), campaign: click.text(2), source: click.text(3), medium: click.text(4))))
                }
                click.finish()
            }
        }
        return found
    }

    func databaseId() throws -> String {
        try pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM installation WHERE name = 'database_id'") ?? ""
        }
    }

    /// At open: ties the rollup file to this database, and starts it over when it belongs to
    /// another one or claims events that do not exist (a restored backup).
    func prepareRollups() throws {
        let databaseId = try self.databaseId()
        let newest = try maxSeq()
        let reset = try rollupQueue.inDatabase { db -> Bool in
            try queries.prepareRollupStatements(db)
            let state = try Row.fetchOne(db, sql: queries.rollup.state)
            if let state, state[0] as String == databaseId, (state[1] as Int64) <= newest {
                if (state[2] as Int64) != attributionWindowMs {
                    logger.warning(
                        "the attribution window differs from the one past events were attributed with; run `linkpulse rollup --rebuild` to recompute them",
                        metadata: ["stored_ms": "\(state[2] as Int64)", "configured_ms": "\(attributionWindowMs)"])
                }
                return false
            }
            if state != nil {
                logger.warning("rollups belong to another database state; recomputing them", metadata: ["events": "\(newest)"])
            }
            return true
        }
        if reset { try resetRollups() }
    }
}

/// The work of one rollup pass: attribution of each event in seq order, the click indexes
/// later events of the same pass already see, and the rollup deltas written at the end.
struct RollupPass {
    let windowMs: Int64
    var clicksById: [String: [(seq: Int64, dimensions: LinkDimensions)]] = [:]
    var deltas: [RollupKey: ConversionCounts] = [:]
    var dimensionDeltas: [DimensionDayKey: ConversionCounts] = [:]
    // The pass's statements, looked up once (every one is left reset after each use).
    let time, attribution, latest, candidates, byRef, byAddress, upsert, readBlock, upsertBlock, upsertDay: HotStatement

    init(db: Database, queries: RollupQueries, windowMs: Int64) throws {
        self.windowMs = windowMs
        func statement(_ sql: String) throws -> HotStatement { HotStatement(try db.cachedStatement(sql: sql), in: db) }
        time = try statement(queries.insertEventTime)
        attribution = try statement(queries.insertAttribution)
        latest = try statement(queries.latestRefClick)
        candidates = try statement(queries.fingerprintCandidates)
        byRef = try statement(queries.insertRefClick)
        byAddress = try statement(queries.insertFingerprintClick)
        upsert = try statement(queries.upsertRollup)
        readBlock = try statement(queries.dimensionBlock)
        upsertBlock = try statement(queries.upsertDimensionBlock)
        upsertDay = try statement(queries.upsertDimensionDay)
    }

    mutating func add(_ event: RollupSourceEvent) throws {
        time.bind(1, event.occurredAtMs)
        time.bind(2, event.seq)
        try time.run()

        var counted = CountedEvent(
            kind: event.kind, platform: event.platform, isBot: event.isBot, deferred: event.deferred,
            visitorHash: event.kind == .click ? VisitorSketch.hash(event.visitorId) : 0, dimensions: event.dimensions, match: nil)
        if event.kind == .click {
            if !event.isBot { try indexClick(event) }
        } else if event.isBot {
            counted.match = .unattributed(ref: event.dimensions.ref)
        } else {
            let attribution = try attribute(event)
            counted.match = attribution.match
            counted.dimensions = attribution.dimensions
            let insert = self.attribution
            insert.bind(1, event.seq)
            insert.bind(2, attribution.match.rawValue)
            insert.bind(3, attribution.clickSeq)
            insert.bind(4, attribution.clickId)
            insert.bind(5, attribution.dimensions.ref)
            insert.bind(6, attribution.dimensions.campaign)
            insert.bind(7, attribution.dimensions.source)
            insert.bind(8, attribution.dimensions.medium)
            try insert.run()
        }
        for grain in RollupGrain.allCases {
            let key = RollupKey(
                grain: grain, bucket: TimeGrain.floor(event.occurredAtMs, grain.length), platform: event.platform,
                isBot: event.isBot, dimensions: grain.hasLinkDimensions ? counted.dimensions : LinkDimensions())
            deltas[key, default: ConversionCounts()].add(counted)
        }
        let day = TimeGrain.floor(event.occurredAtMs, TimeGrain.dayMs) / TimeGrain.dayMs
        for dimension in StatsDimension.allCases {
            let key = DimensionDayKey(dimension: dimension, value: dimension.value(of: counted) ?? "", day: day, isBot: event.isBot)
            dimensionDeltas[key, default: ConversionCounts()].add(counted)
        }
    }

    /// The attribution rules, in order: click_id, ref, fingerprint, organic.
    func attribute(_ event: RollupSourceEvent) throws -> Attribution {
        if let id = event.clickId, let click = clicksById[id]?.last(where: { $0.seq < event.seq }) {
            return Attribution(match: .clickId, clickSeq: click.seq, clickId: id, dimensions: event.dimensions.filled(from: click.dimensions))
        }
        if let ref = event.dimensions.ref {
            latest.bind(1, ref)
            latest.bind(2, event.occurredAtMs)
            var dimensions = event.dimensions
            if try latest.step() {
                dimensions = dimensions.filled(from: LinkDimensions(ref: ref, campaign: latest.text(1), source: latest.text(2), medium: latest.text(3)))
                latest.finish()
            }
            return Attribution(match: .ref, clickSeq: nil, clickId: nil, dimensions: dimensions)
        }
        if event.kind != .fallback, let ipHash = event.ipHash, let match = try fingerprintMatch(event, ipKey: Self.ipKey(ipHash)) {
            return match
        }
        // Organic: no link, so no ref and no campaign; the event's own source and medium stay.
        return Attribution(
            match: .organic, clickSeq: nil, clickId: nil,
            dimensions: LinkDimensions(source: event.dimensions.source, medium: event.dimensions.medium))
    }

    /// The newest non-bot click from the same address and platform within the window (and the
    /// same OS major.minor when both know it).
    func fingerprintMatch(_ event: RollupSourceEvent, ipKey: Int64) throws -> Attribution? {
        let earliest = event.occurredAtMs - windowMs
        let version = osMajorMinor(event.osVersion)
        var hour = TimeGrain.floor(event.occurredAtMs, TimeGrain.hourMs) / TimeGrain.hourMs
        let firstHour = TimeGrain.floor(earliest, TimeGrain.hourMs) / TimeGrain.hourMs
        while hour >= firstHour {
            candidates.bind(1, hour)
            candidates.bind(2, ipKey)
            candidates.bind(3, event.platform.rawValue)
            candidates.bind(4, earliest)
            candidates.bind(5, event.occurredAtMs)
            while try candidates.step() {
                let clickVersion = candidates.text(1)
                if let version, let clickVersion, version != clickVersion { continue }
                let click = LinkDimensions(ref: candidates.text(2), campaign: candidates.text(3), source: candidates.text(4), medium: candidates.text(5))
                let seq = candidates.int64(0)
                candidates.finish()
                // The event has no ref of its own here, so the click's link is taken whole.
                return Attribution(match: .fingerprint, clickSeq: seq, clickId: nil, dimensions: click)
            }
            hour -= 1
        }
        return nil
    }

    func indexClick(_ event: RollupSourceEvent) throws {
        let d = event.dimensions
        if let ref = d.ref {
            byRef.bind(1, ref)
            byRef.bind(2, event.occurredAtMs)
            byRef.bind(3, event.seq)
            byRef.bind(4, d.campaign)
            byRef.bind(5, d.source)
            byRef.bind(6, d.medium)
            try byRef.run()
        }
        if let ipHash = event.ipHash {
            byAddress.bind(1, TimeGrain.floor(event.occurredAtMs, TimeGrain.hourMs) / TimeGrain.hourMs)
            byAddress.bind(2, Self.ipKey(ipHash))
            byAddress.bind(3, event.platform.rawValue)
            byAddress.bind(4, event.occurredAtMs)
            byAddress.bind(5, event.seq)
            byAddress.bind(6, osMajorMinor(event.osVersion))
            byAddress.bind(7, d.ref)
            byAddress.bind(8, d.campaign)
            byAddress.bind(9, d.source)
            byAddress.bind(10, d.medium)
            try byAddress.run()
        }
    }

    /// Writes every delta of the pass into its rollup rows.
    func flush() throws {
        var blocks: [DimensionBlockID: DimensionBlock] = [:]
        for (key, c) in dimensionDeltas {
            if !c.clickVisitors.isEmpty {
                upsertDay.bind(1, key.dimension.rawValue)
                upsertDay.bind(2, key.value)
                upsertDay.bind(3, key.day)
                upsertDay.bind(4, key.isBot)
                upsertDay.bind(5, c.clickVisitors.serialized)
                try upsertDay.run()
            }
            for level in DayBlocks.levels {
                let id = DimensionBlockID(dimension: key.dimension, level: level, block: key.day >> level)
                blocks[id, default: DimensionBlock()].add(c, value: key.value, isBot: key.isBot)
            }
        }
        // Each touched block: read it, add this pass's counts, write it back whole.
        for (id, delta) in blocks {
            readBlock.bind(1, id.dimension.rawValue)
            readBlock.bind(2, Int64(id.level))
            readBlock.bind(3, id.block)
            var block = DimensionBlock()
            if try readBlock.step() {
                if let bytes = readBlock.blob(0) { block = DimensionBlock(bytes) }
                readBlock.finish()
            }
            for (key, counts) in delta.entries { block.add(counts, value: key.value, isBot: key.isBot) }
            upsertBlock.bind(1, id.dimension.rawValue)
            upsertBlock.bind(2, Int64(id.level))
            upsertBlock.bind(3, id.block)
            upsertBlock.bind(4, block.serialized)
            try upsertBlock.run()
        }
        for (key, c) in deltas {
            upsert.bind(1, key.grain.rawValue)
            upsert.bind(2, key.bucket)
            upsert.bind(3, key.platform.rawValue)
            upsert.bind(4, key.isBot)
            upsert.bind(5, key.dimensions.ref ?? "")
            upsert.bind(6, key.dimensions.campaign ?? "")
            upsert.bind(7, key.dimensions.source ?? "")
            upsert.bind(8, key.dimensions.medium ?? "")
            Self.bindCounts(c, to: upsert, from: 9)
            upsert.bind(18, c.clickVisitors.isEmpty ? nil : c.clickVisitors.serialized)
            try upsert.run()
        }
    }

    /// Binds the nine counts, in the column order of the rollup tables, from parameter `first`.
    static func bindCounts(_ c: ConversionCounts, to statement: HotStatement, from first: Int32) {
        let values = [c.events, c.clicks, c.fallbacks, c.installsClickId, c.installsRef, c.installsFingerprint,
                      c.installsOrganic, c.opens, c.deferredOpens]
        for (i, value) in values.enumerated() { statement.bind(first + Int32(i), Int64(value)) }
    }

    /// The first 8 bytes of a hex keyed IP hash, as a signed integer.
    static func ipKey(_ hex: String) -> Int64 {
        Int64(bitPattern: UInt64(hex.prefix(16), radix: 16) ?? 0)
    }
}
