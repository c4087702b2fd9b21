import Foundation
import GRDB
import LinkpulseDomain

/// One cell of a pass's cube deltas: a bucket's start (UTC ms) and the cube key.
struct CubeCell: Hashable {
    var bucket: Int64
    var key: CubeKey
}

/// An event's audience as a pass counts it: its stored audience text's `event_texts` id (0:
/// none) and its referrer host's number in the pass (`RollupCount.hosts`; 0: none), packed in
/// one word (the text in the high 40 bits, the host in the low 24): a pass looks one up per
/// event, and two words hash and compare faster than four fields.
struct AudienceKey: Hashable {
    let packed: UInt64

    init(text: Int64, host: UInt32) {
        precondition(text >= 0 && text < 1 << 40 && host < 1 << 24, "an audience text id or host number out of range")
        packed = UInt64(text) << 24 | UInt64(host)
    }

    /// The most referrer hosts a pass numbers: it ends early, after a whole event, once it has
    /// met this many (an event adds at most two: its own and its click's).
    static let hostLimit = (1 << 24) - 2

    var text: Int64 { Int64(packed >> 24) }
    var host: UInt32 { UInt32(truncatingIfNeeded: packed & 0xFF_FFFF) }
}

/// A cell of a pass's rows by audience: a UTC day's start, the audience counted under, and
/// people or bots (the low bit of `dayAndBot`).
struct AudienceCell: PassCellKey {
    let dayAndBot: Int64
    let audience: AudienceKey

    init(bucket: Int64, audience: AudienceKey, isBot: Bool) {
        dayAndBot = (bucket / TimeGrain.dayMs) << 1 | (isBot ? 1 : 0)
        self.audience = audience
    }

    var bucket: Int64 { (dayAndBot >> 1) * TimeGrain.dayMs }
    var isBot: Bool { dayAndBot & 1 == 1 }
    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: dayAndBot), audience.packed) }
}

/// The counting half of a rollup pass: each event counted once, under its stored attribution,
/// into a 15-minute cell keyed by integers (bucket, link tuple id, platform, people or bots),
/// then rolled up into hours and days (`prepare`); and once into a UTC day's cell of its
/// audience (its click's, for an install or open a click brought:
/// `CountedAudience.countsUnderClick`). Runs on any connection that sees the events and the
/// attribution (the rollup job's, or a reader's while the previous pass is being written).
/// Events are read in their compact stored form (type and platform codes, visitor bytes).
struct RollupCount {
    /// The pass's counts by 15-minute bucket and cube key.
    var quarters = PassCells<CubeCell>()
    /// The link tuples known before this pass (shared, never changed here: a copy of a million
    /// tuples a pass would cost more than the pass), and those it added, in a table of their
    /// own (its id `i` is tuple `tuples.count + i - 1`): as value ids, about 25 bytes a tuple,
    /// where an array of their strings and a dictionary keyed by them took about 200 (13 MB of
    /// a pass that meets 65,000 new tuples).
    let tuples: LinkTuples.Known
    var added = LinkTuples.Known()
    /// The link tuples of the clicks counted so far in this pass, by seq from `firstSeq` on
    /// (`UInt32.max`: not a click), and their audiences: most attributed events match a click
    /// stored shortly before them. Clicks of earlier passes, once read, are kept in `earlierClicks`.
    var passClicks: [UInt32] = []
    var passClickAudiences: [AudienceKey] = []
    var firstSeq: Int64 = 0
    var earlierClicks: [Int64: (tuple: UInt32, audience: AudienceKey)] = [:]
    /// The pass's counts by UTC day and audience.
    var audiences = PassCells<AudienceCell>()
    /// The referrer hosts met, numbered (0 is none), and the audiences of the stored texts
    /// met (`resolveAudiences`).
    var hosts: [String] = [""]
    var hostNumbers: [String: UInt32] = ["": 0]
    /// The host's number by the referrer's bytes: most referrers repeat, and one hash of their
    /// bytes costs less than a `String` made of them and hashed.
    var rawReferrers = RawLinkCache()
    var audienceTexts: StoredAudiences
    /// The distinct own link values of the pass's events, numbered in the order met, with
    /// their tuple once one is made (`UInt32.max` until then); found by their bytes in `rawLinks`.
    var ownLinks: [LinkDimensions] = []
    var ownLinkTuples: [UInt32] = []
    var rawLinks = RawLinkCache()
    /// The tuple an event attributed by click id, install referrer or ref is counted under,
    /// by its own values' number and its click's tuple (`own << 32 | click`).
    var filledTuples: [UInt64: UInt32] = [:]
    let eventsAfter, attributionsAfter, clickRow: HotStatement

    init(db: Database, queries: SQLQueries, tuples: LinkTuples.Known) throws {
        self.tuples = tuples
        eventsAfter = HotStatement(try db.cachedStatement(sql: queries.rollup.eventsAfter), in: db)
        attributionsAfter = HotStatement(try db.cachedStatement(sql: queries.rollup.attributionsAfter), in: db)
        clickRow = HotStatement(try db.cachedStatement(sql: queries.rollup.clickDimensions), in: db)
        audienceTexts = try StoredAudiences(db, sql: queries.rollup.audienceText)
    }

    /// Counts the events after `watermark` that attribution has already seen (through
    /// `attributed`), at most `limit`, in seq order, streamed from the events database; returns
    /// the last one's seq and how many were counted (nil when none). Stops early, after a whole
    /// event, once the pass holds `maxCells` 15-minute cells: the rest is the next pass's.
    mutating func count(after watermark: Int64, through attributed: Int64, limit: Int, maxCells: Int = .max) throws -> (lastSeq: Int64, count: Int)? {
        let read = eventsAfter
        try read.bind(":after_seq", watermark)
        try read.bind(":through_seq", attributed)
        // A pass's cells count in 32 bits (`PassCounts`): never more events than fit.
        try read.bind(":limit", Int64(min(limit, Self.maxEvents)))
        var attributions = AttributionsInOrder(attributionsAfter)
        try attributions.start(after: watermark, through: attributed)
        defer { attributions.finish() }
        var last: Int64 = 0, count = 0
        firstSeq = watermark + 1
        passClicks.removeAll(keepingCapacity: true)
        passClicks.reserveCapacity(min(limit, 1 << 20))
        passClickAudiences.removeAll(keepingCapacity: true)
        typealias E = RollupEventColumn
        while try read.step() {
            let seq = read.int64(E.seq)
            let kind = CompactEvent.kind(code: read.int64(E.type))
            let isBot = read.int64(E.bot) != 0
            let own = ownLink(read)
            let attribution = try attributions.of(seq)
            let match = attribution?.match
            let click = try attribution?.clickSeq.flatMap { try clickSeen(seq: $0) }
            let (tuple, countedMatch) = counted(kind: kind, isBot: isBot, own: own, match: match, click: click?.tuple)
            let platform = Platform.fromCode(UInt8(truncatingIfNeeded: read.int64(E.platform)))
            let ownAudience = AudienceKey(text: read.int64(E.audience), host: hostNumber(read.textBytes(E.referrer)))
            // A click is counted under its own dimensions: its tuple is what a match fills from.
            if kind == .click {
                let at = Int(seq - firstSeq)
                if at >= passClicks.count {
                    passClicks.append(contentsOf: repeatElement(UInt32.max, count: at + 1 - passClicks.count))
                    passClickAudiences.append(contentsOf: repeatElement(AudienceKey(text: 0, host: 0), count: at + 1 - passClickAudiences.count))
                }
                passClicks[at] = tuple
                passClickAudiences[at] = ownAudience
            }
            let occurredAtMs = read.int64(E.occurredAtMs)
            let cell = quarters.cell(CubeCell(
                bucket: TimeGrain.floor(occurredAtMs, TimeGrain.quarterHourMs),
                key: CubeKey(tuple: tuple, platform: platform, isBot: isBot)))
            // The dimensions are in the cells' keys: the count needs only the kind and match.
            let event = CountedEvent(
                kind: kind, platform: platform, isBot: isBot, deferred: read.int64(E.deferred) == 1,
                visitorHash: kind == .click ? read.withStoredVisitor(visitor: E.visitor, device: E.deviceId) { VisitorSketch.hash(utf8: $0) } ?? 0 : 0,
                dimensions: LinkDimensions(), match: countedMatch)
            quarters.count(event, in: cell)
            let audience = click.map { CountedAudience.countsUnderClick(kind: kind, isBot: isBot, match: match) ? $0.audience : ownAudience } ?? ownAudience
            audiences.count(event, in: audiences.cell(AudienceCell(bucket: TimeGrain.floor(occurredAtMs, TimeGrain.dayMs), audience: audience, isBot: isBot)))
            last = seq
            count += 1
            if quarters.count >= maxCells || hosts.count >= AudienceKey.hostLimit {
                read.finish()
                break
            }
        }
        if count > 0 { try resolveAudiences() }
        return count == 0 ? nil : (last, count)
    }

    /// The number of a referrer's host in this pass (0: no referrer, or no host in it).
    mutating func hostNumber(_ referrer: UnsafeBufferPointer<UInt8>?) -> UInt32 {
        guard let referrer else { return 0 }
        let cacheable = rawReferrers.key((referrer, nil, nil, nil))
        if cacheable, let known = rawReferrers.lookup() { return known }
        let host = AudienceDimensions.referrerHost(utf8: referrer)
        let number: UInt32
        if let known = hostNumbers[host] {
            number = known
        } else {
            number = UInt32(hosts.count)
            hosts.append(host)
            hostNumbers[host] = number
        }
        if cacheable { rawReferrers.insert(number) }
        return number
    }

    /// Reads the stored audience texts the pass's cells name and has not read yet.
    mutating func resolveAudiences() throws {
        for key in audiences.keys { _ = try audienceTexts.audience(key.audience.text) }
    }

    /// The values of an audience key, in `StatsDimension.audience` order.
    func audienceValues(_ key: AudienceKey) -> CountedAudience {
        var values = audienceTexts.read(key.text) ?? .unknown
        values.referrerHost = hosts[Int(key.host)]
        return values
    }

    /// The event's own link values (of `events_after.sql`), as their number in
    /// `ownLinks`: from `rawLinks` when these bytes were met before in the pass. No tuple is
    /// made for them here: an attributed event may be counted under other dimensions.
    mutating func ownLink(_ read: HotStatement) -> Int {
        typealias E = RollupEventColumn
        let cacheable = rawLinks.key((read.textBytes(E.ref), read.textBytes(E.campaign), read.textBytes(E.source), read.textBytes(E.medium)))
        if cacheable, let known = rawLinks.lookup() { return Int(known) }
        ownLinks.append(LinkDimensions(ref: read.text(E.ref), campaign: read.text(E.campaign), source: read.text(E.source), medium: read.text(E.medium)))
        ownLinkTuples.append(UInt32.max)
        if cacheable { rawLinks.insert(UInt32(ownLinks.count - 1)) }
        return ownLinks.count - 1
    }

    /// The tuple of own link values `own` (made at its first use).
    mutating func tuple(ofOwn own: Int) -> UInt32 {
        if ownLinkTuples[own] == UInt32.max { ownLinkTuples[own] = tupleId(ownLinks[own]) }
        return ownLinkTuples[own]
    }

    /// The tuple an event is counted under, and the match type it is counted with: what
    /// `CountedEvent.init(kind:…own:match:click:)` decides, on tuple ids (clicks and bots under
    /// their own link, attributed events under `MatchType.countedDimensions`, found once per
    /// combination of own values, click tuple and match), making tuples in the same order.
    mutating func counted(kind: EventKind, isBot: Bool, own: Int, match: MatchType?, click: UInt32?) -> (UInt32, MatchType?) {
        if kind == .click { return (tuple(ofOwn: own), nil) }
        guard let match, !isBot else { return (tuple(ofOwn: own), .unattributed(ref: ownLinks[own].ref)) }
        switch match {
        case .fingerprint:
            return (click ?? tuple(ofOwn: own), match)
        case .installReferrer, .clickId, .ref:
            guard let click else { return (tuple(ofOwn: own), match) }
            let key = UInt64(own) << 32 | UInt64(click)
            if let known = filledTuples[key] { return (known, match) }
            let id = tupleId(ownLinks[own].filled(from: tuple(Int(click))))
            filledTuples[key] = id
            return (id, match)
        case .organic:
            return (tuple(ofOwn: own), match)
        }
    }

    /// The most events one pass counts (a larger limit is cut to this; the caller's loop
    /// counts the rest in the next passes).
    static let maxEvents = 1 << 30

    /// The id of a link tuple: known, or new in this pass.
    mutating func tupleId(_ dimensions: LinkDimensions) -> UInt32 {
        if let id = tuples.id(of: dimensions) { return id }
        if let new = added.id(of: dimensions) { return UInt32(tuples.count) + new - 1 }
        added.append(dimensions)
        return UInt32(tuples.count + added.count - 2)
    }

    /// The link dimensions of a tuple id, known or new in this pass.
    func tuple(_ id: Int) -> LinkDimensions {
        id < tuples.count ? tuples[id] : added[id - tuples.count + 1]
    }

    /// The tuples this pass added, in id order.
    var newTuples: [LinkDimensions] { (1..<added.count).map { added[$0] } }

    /// The tuple and audience of the click stored under `seq`: from this pass, else from the
    /// events database (then remembered for the rest of the pass); nil when no click is stored there.
    mutating func clickSeen(seq: Int64) throws -> (tuple: UInt32, audience: AudienceKey)? {
        let at = Int(seq - firstSeq)
        if at >= 0 && at < passClicks.count && passClicks[at] != UInt32.max { return (passClicks[at], passClickAudiences[at]) }
        if let known = earlierClicks[seq] { return known }
        try clickRow.bind(":seq", seq)
        guard try clickRow.step() else { return nil }
        defer { clickRow.finish() }
        typealias L = RollupClickColumn
        let id = tupleId(LinkDimensions(ref: clickRow.text(L.ref), campaign: clickRow.text(L.campaign), source: clickRow.text(L.source), medium: clickRow.text(L.medium)))
        let seen = (tuple: id, audience: AudienceKey(text: clickRow.int64(L.audience), host: hostNumber(clickRow.textBytes(L.referrer))))
        earlierClicks[seq] = seen
        return seen
    }

    /// The counted cells, rolled up into hours and days: what `RollupWriter` writes (it also
    /// serializes them, and derives the rows by platform and the visitors by value, on its own
    /// thread when passes are pipelined). With `serializingQuarters`, the 15-minute cube parts
    /// are serialized here: in a pipelined rebuild that moves about a sixth of the writer's
    /// work to the counting side, which had that much less to do (56% of samples against 44%).
    func prepare(after watermark: Int64, lastSeq: Int64, count: Int, serializingQuarters: Bool = false) -> PreparedPass {
        let hours = quarters.coarser(TimeGrain.hourMs)
        let days = hours.coarser(TimeGrain.dayMs)
        var audienceValues: [AudienceKey: CountedAudience] = [:]
        for key in audiences.keys where audienceValues[key.audience] == nil { audienceValues[key.audience] = self.audienceValues(key.audience) }
        return PreparedPass(
            watermark: watermark, lastSeq: lastSeq, count: count, tuplesBefore: tuples, newTuples: newTuples,
            quarters: quarters, hours: hours, days: days,
            quarterParts: serializingQuarters ? RollupWriter.serializedParts(quarters) : nil,
            audiences: audiences, audienceValues: audienceValues)
    }
}

extension CellTable where Key == CubeCell, Lane == Int32 {
    /// The cells added up into buckets `length` long. When every cell is in one bucket (a
    /// pass of fresh events: they all fall in the same 15 minutes), each coarser cell is one
    /// finer cell, and the table shares the finer one's counts instead of copying them.
    func coarser(_ length: Int64) -> PassCells<CubeCell> {
        if let first = keys.first?.bucket, keys.allSatisfy({ $0.bucket == first }) {
            let bucket = TimeGrain.floor(first, length)
            return relabeled { CubeCell(bucket: bucket, key: $0.key) }
        }
        return regrouped { cell, _ in CubeCell(bucket: TimeGrain.floor(cell.bucket, length), key: cell.key) }
    }
}

/// A counted rollup pass, ready to write: its cells at every cube grain, and the link tuples
/// it counted with.
struct PreparedPass: @unchecked Sendable {
    /// The rollup watermark the pass counted after: it may only be written on top of it.
    let watermark: Int64
    let lastSeq: Int64
    let count: Int
    /// The id of the event at `lastSeq`, which the rollup file records beside its watermark.
    var lastEventId: String? = nil
    /// The link tuples known when the pass was counted, and those it added (ids from
    /// `tuplesBefore.count` on).
    let tuplesBefore: LinkTuples.Known
    let newTuples: [LinkDimensions]
    let quarters, hours, days: PassCells<CubeCell>
    /// The 15-minute cube parts already serialized (see `RollupCount.prepare`), or nil.
    var quarterParts: [(bucket: Int64, entries: [UInt8])]? = nil
    /// The counts by UTC day and audience, and the values of each audience counted.
    var audiences = PassCells<AudienceCell>()
    var audienceValues: [AudienceKey: CountedAudience] = [:]

    /// The tuples known once this pass is written: what the next pass counts with.
    var tuplesAfter: LinkTuples.Known {
        var known = tuplesBefore
        for t in newTuples { known.append(t) }
        return known
    }

    /// Per tuple id of this pass, the id of its value of link dimension `dimension`: the
    /// known values' ids, then ids for the values new in this pass; and the value of every id.
    func values(of dimension: StatsDimension) -> (ofTuple: NarrowIds, value: (Int32) -> String?) {
        let known = tuplesBefore.values(of: dimension)
        var ofTuple = known.ofTuple
        var newValues: [String?] = []
        var newIds: [String?: Int32] = [:]
        for tuple in newTuples {
            let value = dimension.linkValue(of: tuple)
            if let id = known.id(of: value) ?? newIds[value] {
                ofTuple.append(id)
            } else {
                let id = Int32(known.byId.count + newValues.count)
                newIds[value] = id
                newValues.append(value)
                ofTuple.append(id)
            }
        }
        return (ofTuple, { id in Int(id) < known.byId.count ? known.byId[Int(id)] : newValues[Int(id) - known.byId.count] })
    }
}

/// The bucket of a row by platform only (`rollups`).
struct PlatformBucket: PassCellKey {
    var bucket: Int64
    var platformCode: UInt8
    var isBot: Bool

    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: bucket), UInt64(platformCode) << 1 | (isBot ? 1 : 0)) }
}

/// A row by audience of one dimension (the writer's loop says which): its value's number in
/// the pass, its bucket (a UTC day's or month's start), people or bots.
struct AudienceRow: PassCellKey {
    var value: Int32
    var bucket: Int64
    var isBot: Bool

    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: bucket), UInt64(UInt32(bitPattern: value)) << 1 | (isBot ? 1 : 0)) }
}

/// A key of a cube block: the block's number at its level, and the cube key.
struct BlockCell: PassCellKey {
    var block: Int64
    var key: CubeKey

    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: block), key.packed) }
}

/// A day of one dimension's value (its id in the pass, or the platform's code), for the
/// click visitors by value (`dimension_days`).
struct ValueDay: PassCellKey {
    var value: Int32
    var day: Int64
    var isBot: Bool

    var cellHash: UInt64 { Self.mix(UInt64(bitPattern: day), UInt64(UInt32(bitPattern: value)) << 1 | (isBot ? 1 : 0)) }
}

/// The writing half of a rollup pass, on the rollup job's connection inside its transaction:
/// new link tuples, one cube part per touched bucket (merging small ones), one upsert per
/// row by platform and per dimension value's day of visitors, and the cube blocks.
struct RollupWriter {
    // The statements, looked up once (every one is left reset after each use).
    let upsert, upsertAudience, readBlock, upsertBlock, upsertDay, insertDayPart, dayParts: HotStatement
    let insertTuple, countParts, partsOfBucket, insertPart, deletePart: HotStatement

    init(db: Database, queries: SQLQueries) throws {
        func statement(_ sql: String) throws -> HotStatement { HotStatement(try db.cachedStatement(sql: sql), in: db) }
        upsert = try statement(queries.rollup.upsertRollup)
        upsertAudience = try statement(queries.rollup.upsertAudienceRollup)
        readBlock = try statement(queries.rollup.cubeBlock)
        upsertBlock = try statement(queries.rollup.upsertCubeBlock)
        upsertDay = try statement(queries.rollup.upsertDimensionDay)
        insertDayPart = try statement(queries.rollup.insertDimensionDayPart)
        dayParts = try statement(queries.rollup.dayParts)
        insertTuple = try statement(queries.rollup.insertTuple)
        countParts = try statement(queries.rollup.countCubeParts)
        partsOfBucket = try statement(queries.rollup.cubePartsOfBucket)
        insertPart = try statement(queries.rollup.insertCubePart)
        deletePart = try statement(queries.rollup.deleteCubePart)
    }

    /// Writes a prepared pass; returns the new `mergedThroughDay`. With `visitorsInParts`, the
    /// click visitors by value go into parts of this pass (see `upsertDimensionDays`).
    func write(_ pass: PreparedPass, mergedThroughDay: Int64, visitorsInParts: Bool) throws -> Int64 {
        let firstNew = pass.tuplesBefore.count
        for (i, t) in pass.newTuples.enumerated() {
            try insertTuple.bind(":id", Int64(firstNew + i))
            try insertTuple.bind(":ref", t.ref ?? "")
            try insertTuple.bind(":campaign", t.campaign ?? "")
            try insertTuple.bind(":source", t.source ?? "")
            try insertTuple.bind(":medium", t.medium ?? "")
            try insertTuple.run()
        }
        for (grain, byPlatform, cells) in [
            (RollupGrain.quarterHour, RollupGrain.quarterHourByPlatform, pass.quarters), (.hour, .hourByPlatform, pass.hours),
            (.day, .dayByPlatform, pass.days),
        ] {
            for part in (grain == .quarterHour ? pass.quarterParts : nil) ?? Self.serializedParts(cells) {
                try writePart(grain: grain, bucket: part.bucket, entries: part.entries)
            }
            try upsertRows(grain: byPlatform, cells.regrouped { cell, _ in
                PlatformBucket(bucket: cell.bucket, platformCode: cell.key.platformCode, isBot: cell.key.isBot)
            })
        }
        try upsertDimensionDays(pass, inPartOf: visitorsInParts ? pass.lastSeq : nil)
        try writeAudienceRows(pass)
        return try writeBlocks(pass.days, mergedThroughDay: mergedThroughDay)
    }

    /// Adds the pass's counts by audience to the rows of each audience dimension's values, by
    /// UTC day and by UTC month (`audience_rollups`).
    func writeAudienceRows(_ pass: PreparedPass) throws {
        guard pass.audiences.count > 0 else { return }
        // Each value numbered once, and each audience's six values as those numbers.
        var values: [String] = []
        var numbers: [String: Int32] = [:]
        var valuesOf: [AudienceKey: [Int32]] = [:]
        for (key, audience) in pass.audienceValues {
            valuesOf[key] = StatsDimension.audience.map { dimension in
                let value = audience.value(dimension) ?? ""
                if let number = numbers[value] { return number }
                values.append(value)
                numbers[value] = Int32(values.count - 1)
                return Int32(values.count - 1)
            }
        }
        // Per cell, its six values' numbers (one lookup a cell, not one a cell and dimension).
        let cellValues = pass.audiences.keys.map { valuesOf[$0.audience]! }
        for (d, dimension) in RollupCells.Dimension.audience.enumerated() {
            let days = pass.audiences.regrouped { i, cell, _ in
                AudienceRow(value: cellValues[i][d], bucket: cell.bucket, isBot: cell.isBot)
            }
            let months = days.regrouped { row, _ in AudienceRow(value: row.value, bucket: RollupCells.Grain.monthStart(row.bucket), isBot: row.isBot) }
            for (grain, rows) in [(RollupCells.Grain.day, days), (.month, months)] {
                let visitors = rows.visitors()
                for (i, row) in rows.keys.enumerated() {
                    typealias P = UpsertAudienceRollupParameter
                    try upsertAudience.bind(P.dimension, Int64(dimension.rawValue))
                    try upsertAudience.bind(P.grain, Int64(grain.rawValue))
                    try upsertAudience.bind(P.bucket, row.bucket)
                    try upsertAudience.bind(P.value, values[Int(row.value)])
                    try upsertAudience.bind(P.bot, row.isBot)
                    let counts = rows.counts[i]
                    for lane in 0..<CountedEvent.laneCount { try upsertAudience.bind(P.lane(lane), Int64(counts[lane])) }
                    try upsertAudience.bind(P.clickVisitors, visitors.sketch(i))
                    try upsertAudience.run()
                }
            }
        }
    }

    /// A pass's cells of one cube grain as the entries of a part per bucket, buckets in
    /// ascending order (what `writePart` stores). Pure: any thread may make them.
    static func serializedParts(_ cells: PassCells<CubeCell>) -> [(bucket: Int64, entries: [UInt8])] {
        let visitors = cells.visitors()
        let keys = cells.keys
        var parts: [(bucket: Int64, entries: [UInt8])] = []
        Self.forEachGroup(keys, group: { $0.bucket }, key: { $0.key }) { bucket, run in
            let entries = CubePart.serialize(count: run.count, key: { keys[run[run.startIndex + $0]].key }) { i, bytes in
                let cell = run[run.startIndex + i]
                CubePart.appendCounts(cells.counts[cell].widened, to: &bytes)
                let distinct = visitors.count(cell)
                CubePart.appendSketchField(length: distinct == 0 ? 0 : VisitorSketch.serializedLength(distinct: distinct), to: &bytes) {
                    visitors.appendSketch(cell, to: &$0)
                }
            }
            parts.append((bucket, entries))
        }
        return parts
    }

    /// Calls `body` with every group of cells (a bucket's, a block's) and the indexes of its
    /// cells in key order, groups in ascending order.
    static func forEachGroup<Cell>(
        _ cells: [Cell], group: (Cell) -> Int64, key: (Cell) -> CubeKey, _ body: (Int64, ArraySlice<Int>) throws -> Void
    ) rethrows {
        // One sort of plain integers: the group's rank (a pass has a few hundred buckets or
        // blocks), the packed key (48 bits) and the cell's index, in 128 bits. A comparison
        // closure reading both through the cells was a tenth of the writer's time.
        let groups = Set(cells.lazy.map(group)).sorted()
        var rank: [Int64: UInt128] = [:]
        rank.reserveCapacity(groups.count)
        for (r, number) in groups.enumerated() { rank[number] = UInt128(r) }
        var sortKeys = [UInt128]()
        sortKeys.reserveCapacity(cells.count)
        for (index, cell) in cells.enumerated() {
            sortKeys.append(rank[group(cell)]! << 96 | UInt128(key(cell).packed) << 32 | UInt128(index))
        }
        sortKeys.sort()
        let order = sortKeys.map { Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: $0)) }
        var start = 0
        while start < order.count {
            let groupRank = Int(sortKeys[start] >> 96)
            var end = start + 1
            while end < order.count && Int(sortKeys[end] >> 96) == groupRank { end += 1 }
            try body(groups[groupRank], order[start..<end])
            start = end
        }
    }

    /// Merges the click visitors of the pass's days into every dimension value's day (the
    /// platform's value being its name), or, with `inPartOf`, writes them into a part of that
    /// pass (its last seq) for each value's day: the timer's passes, which follow fresh events
    /// and touch the same busy values' days pass after pass (see `RollupStore.foldVisitorParts`).
    func upsertDimensionDays(_ pass: PreparedPass, inPartOf partPass: Int64?) throws {
        for dimension in StatsDimension.linkAndPlatform {
            let numbered = dimension == .platform ? nil : pass.values(of: dimension)
            let days = pass.days.regrouped { cell, counts -> ValueDay? in
                guard counts[1] > 0 else { return nil }
                let value = numbered.map { $0.ofTuple[cell.key.tuple] } ?? Int32(cell.key.platformCode)
                return ValueDay(value: value, day: cell.bucket / TimeGrain.dayMs, isBot: cell.key.isBot)
            }
            let visitors = days.visitors()
            // In key order (value, day, audience): the rows then go into the table's B-tree page
            // by page, not at random. Each value's text is made once and ranked once.
            var texts: [Int32: String] = [:]
            for key in days.keys where texts[key.value] == nil {
                texts[key.value] = numbered.map { $0.value(key.value) ?? "" } ?? Platform.fromCode(UInt8(key.value)).rawValue
            }
            var rank: [Int32: UInt64] = [:]
            for (r, entry) in texts.sorted(by: { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }).enumerated() { rank[entry.key] = UInt64(r) }
            let order = days.keys.indices.map { i in
                let key = days.keys[i]
                return (rank[key.value]! << 40 | UInt64(truncatingIfNeeded: key.day) << 1 | (key.isBot ? 1 : 0), i)
            }.sorted { $0.0 < $1.0 }
            for (_, i) in order {
                let key = days.keys[i]
                try upsertDay(
                    dimension: dimension.rawValue, value: texts[key.value]!, day: key.day, isBot: key.isBot, sketch: visitors.sketch(i),
                    inPartOf: partPass)
            }
        }
    }

    /// Merges click visitors into one dimension value's day, or, with `inPartOf`, into that
    /// pass's part of it.
    func upsertDay(dimension: String, value: String, day: Int64, isBot: Bool, sketch: [UInt8]?, inPartOf partPass: Int64? = nil) throws {
        let statement = partPass == nil ? upsertDay : insertDayPart
        try statement.bind(":dim", dimension)
        try statement.bind(":value", value)
        try statement.bind(":day", day)
        try statement.bind(":bot", isBot)
        if let partPass { try statement.bind(":pass", partPass) }
        try statement.bind(":click_visitors", sketch)
        try statement.run()
    }

    /// Adds one bucket's cells to its cube: a new part, or, for a bucket that has
    /// `CubePart.mergeAt - 1` small parts already (under `CubePart.mergeBytes`), one part merged
    /// from them. Large parts are never read here, so a pass's memory stays bounded however
    /// many cells a hot bucket gathers.
    func writePart(grain: RollupGrain, bucket: Int64, entries new: [UInt8]) throws {
        try countParts.bind(":grain", grain.rawValue)
        try countParts.bind(":bucket", bucket)
        try countParts.bind(":max_bytes", Int64(CubePart.mergeBytes))
        let parts = try countParts.step() ? countParts.int64(HotStatement.onlyColumn) : 0
        countParts.finish()
        var entries = new
        if parts >= Int64(CubePart.mergeAt - 1) {
            // The small parts (under `CubePart.mergeBytes` each) are copied after the new one:
            // a merge reads them side by side, and a blob is only valid until the next step.
            var ranges = [0..<new.count]
            var ids: [Int64] = []
            try partsOfBucket.bind(":grain", grain.rawValue)
            try partsOfBucket.bind(":bucket", bucket)
            try partsOfBucket.bind(":max_bytes", Int64(CubePart.mergeBytes))
            while try partsOfBucket.step() {
                ids.append(partsOfBucket.int64(CubePartOfBucketColumn.id))
                if let bytes = partsOfBucket.blob(CubePartOfBucketColumn.entries) {
                    ranges.append(entries.count..<(entries.count + bytes.count))
                    entries.append(contentsOf: bytes)
                }
            }
            for id in ids {
                try deletePart.bind(":id", id)
                try deletePart.run()
            }
            entries = entries.withUnsafeBytes { all in CubePart.merge(ranges.map { UnsafeRawBufferPointer(rebasing: all[$0]) }) }
        }
        try insertPart.bind(":grain", grain.rawValue)
        try insertPart.bind(":bucket", bucket)
        try insertPart.run(binding: entries, at: ":entries")
    }

    /// Adds deltas to rows of `rollups` of a grain by platform only, one upsert per row.
    func upsertRows(grain: RollupGrain, _ rows: PassCells<PlatformBucket>) throws {
        let visitors = rows.visitors()
        for (i, key) in rows.keys.enumerated() {
            typealias P = UpsertRollupParameter
            try upsert.bind(P.grain, grain.rawValue)
            try upsert.bind(P.bucket, key.bucket)
            try upsert.bind(P.platform, Platform.fromCode(key.platformCode).rawValue)
            try upsert.bind(P.bot, key.isBot)
            for column in [P.ref, .campaign, .source, .medium] { try upsert.bind(column, "") }
            let counts = rows.counts[i]
            for lane in 0..<CountedEvent.laneCount { try upsert.bind(P.lane(lane), Int64(counts[lane])) }
            try upsert.bind(P.clickVisitors, visitors.sketch(i))
            try upsert.run()
        }
    }

    /// Adds the day cells of the pass to the cube blocks (levels above one day). Days before
    /// `mergedThroughDay` go into every level; later ones stay in their day cubes only, and
    /// days that fall behind the horizon are added up from their stored day cubes (which
    /// already hold this pass), once (see `DayBlocks`). Returns the new `mergedThroughDay`.
    ///
    /// The deltas are added up level by level (each from the one below: a key seen on many
    /// days is added once per block), then merged, in key order, into each stored block.
    func writeBlocks(_ days: PassCells<CubeCell>, mergedThroughDay: Int64) throws -> Int64 {
        let levels = DayBlocks.levels.filter { $0 > 0 }
        var deltas = CellTable<BlockCell, Int64>()
        func add(_ key: CubeKey, _ counts: CountsVector, day: Int64) {
            deltas.add(counts, to: deltas.cell(BlockCell(block: day >> levels[0], key: key)))
        }
        var newestDay = Int64.min
        for (i, cell) in days.keys.enumerated() {
            let day = cell.bucket / TimeGrain.dayMs
            newestDay = max(newestDay, day)
            if day < mergedThroughDay { add(cell.key, days.counts[i].widened, day: day) }
        }
        let merged = max(mergedThroughDay, newestDay - DayBlocks.horizonDays)
        if merged > mergedThroughDay {
            try dayParts.bind(":grain", RollupGrain.day.rawValue)
            try dayParts.bind(":from_ms", mergedThroughDay * TimeGrain.dayMs)
            try dayParts.bind(":to_ms", merged * TimeGrain.dayMs)
            while try dayParts.step() {
                guard let bytes = dayParts.blob(CubePartColumn.entries) else { continue }
                let day = dayParts.int64(CubePartColumn.bucket) / TimeGrain.dayMs
                CubePart.forEach(in: bytes) { key, counts, _ in add(key, counts, day: day) }
            }
        }
        for (i, level) in levels.enumerated() {
            if i > 0 {
                let shift = level - levels[i - 1]
                deltas = deltas.regrouped { cell, _ in BlockCell(block: cell.block >> shift, key: cell.key) }
            }
            try mergeIntoBlocks(level: level, deltas)
        }
        return merged
    }

    /// Adds the deltas to the stored blocks of one level: each touched block read, merged with
    /// its deltas in key order, and written back whole.
    func mergeIntoBlocks(level: Int, _ deltas: CellTable<BlockCell, Int64>) throws {
        let cells = deltas.keys
        try Self.forEachGroup(cells, group: { $0.block }, key: { $0.key }) { block, run in
            var stored: [(key: CubeKey, counts: CountsVector)] = []
            try readBlock.bind(":level", Int64(level))
            try readBlock.bind(":block", block)
            if try readBlock.step() {
                if let bytes = readBlock.blob(HotStatement.onlyColumn) { CubePart.forEach(in: bytes) { key, counts, _ in stored.append((key, counts)) } }
                readBlock.finish()
            }
            // Both sides are in key order: one merging walk.
            var keys: [CubeKey] = [], vectors: [CountsVector] = []
            keys.reserveCapacity(stored.count + run.count)
            vectors.reserveCapacity(stored.count + run.count)
            var s = 0, d = run.startIndex
            while s < stored.count || d < run.endIndex {
                let delta = d < run.endIndex ? cells[run[d]].key : nil
                if let delta, s == stored.count || delta < stored[s].key {
                    keys.append(delta)
                    vectors.append(deltas.counts[run[d]])
                    d += 1
                } else if let delta, delta == stored[s].key {
                    keys.append(delta)
                    vectors.append(stored[s].counts &+ deltas.counts[run[d]])
                    s += 1
                    d += 1
                } else {
                    keys.append(stored[s].key)
                    vectors.append(stored[s].counts)
                    s += 1
                }
            }
            try upsertBlock.bind(":level", Int64(level))
            try upsertBlock.bind(":block", block)
            try upsertBlock.run(binding: CubePart.serialize(sortedKeys: keys, vectors: vectors), at: ":entries")
        }
    }
}

/// The attribution rows of a rollup pass's events (`attributions_after.sql`), read in seq order
/// beside the events (`events_after.sql`), which come in the same order: each event's row, if
/// it has one, is the next row not yet passed. A join looked each one up in the attribution
/// table's B-tree instead.
struct AttributionsInOrder {
    /// An event's attribution: how it was matched, and its click's seq when it has one.
    struct Row {
        var match: MatchType?
        var clickSeq: Int64?
    }

    private let rows: HotStatement
    /// The seq of the row the statement is on (`Int64.max` once it has none left).
    private var seq: Int64 = .max

    init(_ rows: HotStatement) { self.rows = rows }

    /// Starts reading the rows of the events after `watermark` through `attributed`.
    mutating func start(after watermark: Int64, through attributed: Int64) throws {
        rows.finish()
        try rows.bind(":after_seq", watermark)
        try rows.bind(":through_seq", attributed)
        try advance()
    }

    /// The row of event `seq`, nil when it has none. Calls come in ascending seq order.
    mutating func of(_ eventSeq: Int64) throws -> Row? {
        while seq < eventSeq { try advance() }
        guard seq == eventSeq else { return nil }
        return Row(
            match: rows.matchType(RollupAttributionColumn.matchType),
            clickSeq: rows.isNull(RollupAttributionColumn.matchedClickSeq) ? nil : rows.int64(RollupAttributionColumn.matchedClickSeq))
    }

    /// Lets the statement go (the pass may stop before its rows end).
    func finish() { rows.finish() }

    private mutating func advance() throws {
        seq = try rows.step() ? rows.int64(RollupAttributionColumn.seq) : .max
    }
}
