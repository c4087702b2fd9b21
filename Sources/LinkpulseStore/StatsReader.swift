import Foundation
import GRDB
import LinkpulseDomain

/// The reads behind every stats answer and every raw-event export: the rollup cubes and
/// tables (which the rollup job writes), and the raw events for the edges finer than a rollup
/// grain. Reads only, each on a reader connection of the events database (the rollup and
/// attribution files attached), never waiting for a writer.
public final class StatsReader: Sendable {
    let pool: DatabasePool
    let queries: SQLQueries
    /// The rollups' link tuples and decoded cube sums, shared with the rollup job.
    let linkTuples: LinkTuples
    let cubeSums: CubeSumsCache
    /// How far back raw events are kept (retention): edges before it cannot be answered.
    let rawHorizon: RawEventHorizon

    init(pool: DatabasePool, queries: SQLQueries, linkTuples: LinkTuples, cubeSums: CubeSumsCache, rawHorizon: RawEventHorizon) {
        self.pool = pool
        self.queries = queries
        self.linkTuples = linkTuples
        self.cubeSums = cubeSums
        self.rawHorizon = rawHorizon
    }

    /// Conversion counts of `query`'s range and filters, grouped by `grouping`.
    ///
    /// Exact for any range: whole UTC days come from day rollups, whole 15-minute buckets from
    /// 15-minute rollups, and the rest (ranges that do not start or end on a 15-minute
    /// boundary) from the raw events themselves. Counts only what the rollup job has
    /// processed. Click visitor sketches are merged only with `withVisitors` (they are the
    /// expensive part); `onlyKeys` restricts a dimension grouping to those values, and with
    /// `visitorsOnly` only their sketches are sure to be filled (counts may be left out).
    ///
    /// A long time series, or one read mostly from the raw events, is read as two halves at
    /// once on two reader connections (its buckets are independent): on an idle machine it
    /// answers in about half the time.
    public func statsCounts(
        _ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool, onlyKeys: [String?]?,
        visitorsOnly: Bool
    ) async throws -> [StatsGroupKey: CountsByAudience] {
        if case .buckets(let starts) = grouping, onlyKeys == nil,
            starts.count >= Self.bucketsWorthSplitting || (starts.count > 1 && Self.readsRawEvents(StatsPlan(query: query, grouping: grouping)))
        {
            let middle = starts.count / 2
            if starts[middle] > query.fromMs && starts[middle] < query.toMs {
                var first = query, second = query
                first.toMs = starts[middle]
                second.fromMs = starts[middle]
                async let early = statsCountsOnOneReader(first, grouping: .buckets(Array(starts[..<middle])), withVisitors: withVisitors)
                let late = try await statsCountsOnOneReader(second, grouping: .buckets(Array(starts[middle...])), withVisitors: withVisitors)
                return try await early.merging(late) { a, _ in a }  // the halves' buckets are disjoint
            }
        }
        return try await statsCountsOnOneReader(query, grouping: grouping, withVisitors: withVisitors, onlyKeys: onlyKeys, visitorsOnly: visitorsOnly)
    }

    /// Time series with at least this many buckets are read in two halves at once.
    static let bucketsWorthSplitting = 16

    private func statsCountsOnOneReader(
        _ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool, onlyKeys: [String?]? = nil,
        visitorsOnly: Bool = false
    ) async throws -> [StatsGroupKey: CountsByAudience] {
        let plan = StatsPlan(query: query, grouping: grouping)
        if plan.asksAudience {
            return try await audienceCounts(plan, withVisitors: withVisitors, onlyKeys: onlyKeys, visitorsOnly: visitorsOnly)
        }
        if let horizon = rawHorizon.ms { try plan.refuseRawEdges(before: horizon) }
        let keysJSON = try onlyKeys.map { String(decoding: try JSONEncoder().encode($0.map { $0 ?? "" }), as: UTF8.self) }
        let statements = queries.stats
        let linkTuples = self.linkTuples
        let cubeSums = self.cubeSums
        return try await pool.read { db in
            var groups: [StatsGroupKey: CountsByAudience] = [:]
            var cubes: CubeReader?
            func cubeReader() throws -> CubeReader {
                if let cubes { return cubes }
                return CubeReader(plan: plan, tuples: try linkTuples.current(db, sql: statements.tuplesAfter), onlyKeys: onlyKeys)
            }
            var visitorDays: [(dimension: StatsDimension, fromDay: Int64, toDay: Int64)] = []
            for piece in plan.pieces {
                switch piece {
                case .rollup(let grain, let from, let to) where grain.hasLinkDimensions:
                    cubes = try cubeReader()
                    try cubes!.add(db, sql: statements.cubeParts, grain: grain, from: from, to: to, visitors: withVisitors)
                case .rollup(let grain, let from, let to):
                    try Self.addRollupCounts(
                        db, sql: statements.rollupCounts, grain: grain, from: from, to: to, plan: plan,
                        withVisitors: withVisitors, keysJSON: keysJSON, into: &groups)
                case .raw(let from, let to):
                    try Self.addRawCounts(db, queries, from: from, to: to, plan: plan, onlyKeys: onlyKeys, into: &groups)
                case .dimensionDays(let dimension, let fromDay, let toDay):
                    // Counts from the cube blocks; click visitors by value from `dimension_days`.
                    cubes = try cubeReader()
                    if !(visitorsOnly && onlyKeys != nil) {
                        try cubes!.addBlocks(db, statements, cache: cubeSums, fromDay: fromDay, toDay: toDay)
                    }
                    if withVisitors { visitorDays.append((dimension, fromDay, toDay)) }
                }
            }
            cubes?.addSums(into: &groups)
            for (dimension, fromDay, toDay) in visitorDays {
                let values: [String?] = visitorsOnly && onlyKeys != nil
                    ? onlyKeys!
                    : groups.keys.compactMap { if case .value(let v) = $0 { v } else { nil } }
                try Self.addDimensionVisitors(db, statements, dimension: dimension, fromDay: fromDay, toDay: toDay, values: values, into: &groups)
            }
            return groups
        }
    }

    /// Counts of a question by audience (a grouping or filter by an audience dimension): whole
    /// UTC days and months from the rows by audience (`audience_rollups`, read by the same
    /// `RollupRows` plan as PostgreSQL's rows), the rest from the raw events; the whole range
    /// from the raw events when the rows cannot answer it (two dimensions at once).
    func audienceCounts(
        _ plan: StatsPlan, withVisitors: Bool, onlyKeys: [String?]?, visitorsOnly: Bool
    ) async throws -> [StatsGroupKey: CountsByAudience] {
        let query = plan.query
        let rows = Self.audienceRows(plan)
        if let horizon = rawHorizon.ms { try RollupRows.refuseRawReads(rows, of: query, before: horizon) }
        let keysJSON = try onlyKeys.map { String(decoding: try JSONEncoder().encode($0.map { $0 ?? "" }), as: UTF8.self) }
        let (reads, dropsNetted) = rows?.reads(withVisitors: withVisitors, asksKeys: onlyKeys != nil, visitorsOnly: visitorsOnly)
            ?? ([.raw(from: query.fromMs, to: query.toMs)], false)
        let queries = self.queries
        return try await pool.read { db in
            var groups: [StatsGroupKey: CountsByAudience] = [:]
            for read in reads {
                switch read {
                case .raw(let from, let to):
                    try Self.addRawCounts(db, queries, from: from, to: to, plan: plan, onlyKeys: onlyKeys, into: &groups)
                case .rows(let grain, let from, let to, let counting, let visitors, let onlyAskedKeys):
                    try Self.addAudienceRows(
                        db, sql: queries.stats.audienceCounts, rows!, grain, from: from, to: to, counting, visitors: visitors,
                        keysJSON: onlyAskedKeys ? keysJSON : nil, into: &groups)
                }
            }
            return dropsNetted ? RollupRows.droppingNetted(groups) : groups
        }
    }

    /// The rows by audience of one grain over [from, to), in `rows`' selection, grouped.
    static func addAudienceRows(
        _ db: Database, sql: String, _ rows: RollupRows, _ grain: RollupCells.Grain, from: Int64, to: Int64, _ counting: RollupRowCounting,
        visitors: Bool, keysJSON: String?, into groups: inout [StatsGroupKey: CountsByAudience]
    ) throws {
        let s = HotStatement(try db.cachedStatement(sql: sql), in: db)
        try s.bind(":dimension", Int64(rows.dimension.rawValue))
        try s.bind(":grain", Int64(grain.rawValue))
        try s.bind(":from_ms", from)
        try s.bind(":to_ms", to)
        try s.bind(":value", rows.value)
        try s.bind(":key", rows.key)
        try s.bind(":keys", keysJSON)
        try s.bind(":visitors", visitors)
        typealias C = StatsRollupColumn
        while try s.step() {
            let isBot = s.int64(C.bot) != 0
            let key = rows.group(s.text(C.key) ?? "")
            switch counting {
            case .add: groups[key, default: CountsByAudience()].add(s.counts(from: C.events), isBot: isBot)
            case .subtract: groups[key, default: CountsByAudience()].add(ConversionCounts(row: s.counts(from: C.events).row, sign: -1), isBot: isBot)
            case .none: break
            }
            if visitors, let blob = s.blob(C.clickVisitors) { groups[key, default: CountsByAudience()].mergeVisitors(serialized: blob, isBot: isBot) }
        }
    }

    static func addRollupCounts(
        _ db: Database, sql: String, grain: RollupGrain, from: Int64, to: Int64, plan: StatsPlan,
        withVisitors: Bool, keysJSON: String?, into groups: inout [StatsGroupKey: CountsByAudience]
    ) throws {
        let s = HotStatement(try db.cachedStatement(sql: sql), in: db)
        let f = plan.query.filters
        try s.bind(":grain", grain.rawValue)
        try s.bind(":from_ms", from)
        try s.bind(":to_ms", to)
        try s.bind(":key", plan.sqlKey)
        try s.bind(":campaign", f.campaign)
        try s.bind(":ref", f.ref)
        try s.bind(":source", f.source)
        try s.bind(":medium", f.medium)
        try s.bind(":platform", f.platform?.rawValue)
        try s.bind(":keys", keysJSON)
        typealias C = StatsRollupColumn
        while try s.step() {
            let isBot = s.int64(C.bot) != 0
            let key = plan.groupKey(s)
            groups[key, default: CountsByAudience()].add(s.counts(from: C.events), isBot: isBot)
            if withVisitors, let blob = s.blob(C.clickVisitors) { groups[key]!.mergeVisitors(serialized: blob, isBot: isBot) }
        }
    }

    /// Merges the click visitors of some values of a dimension over whole UTC days into their
    /// groups, from `dimension_days`.
    static func addDimensionVisitors(
        _ db: Database, _ statements: StatsQueries, dimension: StatsDimension, fromDay: Int64, toDay: Int64,
        values: [String?], into groups: inout [StatsGroupKey: CountsByAudience]
    ) throws {
        guard !values.isEmpty else { return }
        let keys = String(decoding: try JSONEncoder().encode(values.map { $0 ?? "" }), as: UTF8.self)
        let v = HotStatement(try db.cachedStatement(sql: statements.dimensionVisitors), in: db)
        try v.bind(":dim", dimension.rawValue)
        try v.bind(":from_day", fromDay)
        try v.bind(":to_day", toDay)
        try v.bind(":values", keys)
        while try v.step() {
            typealias C = DimensionVisitorsColumn
            guard let blob = v.blob(C.clickVisitors) else { continue }
            let value = v.text(C.value) ?? ""
            groups[.value(value.isEmpty ? nil : value), default: CountsByAudience()].mergeVisitors(serialized: blob, isBot: v.int64(C.bot) != 0)
        }
    }

    /// Counts the raw events the rollups have counted that happened in [from, to), as `plan`
    /// groups them (`queries`: `stats/raw_events.sql`, and `rollup/audience_text.sql` for a
    /// question by audience).
    static func addRawCounts(
        _ db: Database, _ queries: SQLQueries, from: Int64, to: Int64, plan: StatsPlan, onlyKeys: [String?]?,
        into groups: inout [StatsGroupKey: CountsByAudience]
    ) throws {
        let s = HotStatement(try db.cachedStatement(sql: queries.stats.rawEvents), in: db)
        try s.bind(":from_ms", from)
        try s.bind(":to_ms", to)
        // The audience only for a question by audience.
        var audiences = plan.asksAudience ? try StoredAudiences(db, sql: queries.rollup.audienceText) : nil
        let wanted = onlyKeys.map(Set.init)
        typealias C = StatsRawEventColumn
        while try s.step() {
            let click = s.isNull(C.clickSeq) ? nil : LinkDimensions(
                ref: s.text(C.clickRef), campaign: s.text(C.clickCampaign), source: s.text(C.clickSource), medium: s.text(C.clickMedium))
            let resolved = CountedEvent(
                kind: CompactEvent.kind(code: s.int64(C.type)), platform: Platform.fromCode(UInt8(truncatingIfNeeded: s.int64(C.platform))),
                isBot: s.int64(C.bot) != 0, deferred: s.int64(C.deferred) == 1,
                visitorHash: s.withStoredVisitor(visitor: C.visitor, device: C.deviceId) { VisitorSketch.hash(utf8: $0) } ?? VisitorSketch.hash(""),
                own: LinkDimensions(ref: s.text(C.ref), campaign: s.text(C.campaign), source: s.text(C.source), medium: s.text(C.medium)),
                match: s.matchType(C.matchType), click: click,
                ownAudience: try audiences?.audience(s.int64(C.audience), referrer: s, C.referrer) ?? .unknown,
                clickAudience: click == nil ? nil : try audiences?.audience(s.int64(C.clickAudience), referrer: s, C.clickReferrer))
            plan.addRaw(resolved, occurredAtMs: s.int64(C.occurredAtMs), wanted: wanted, into: &groups)
        }
    }
}

/// Where stats answers come from: the conversion counts of a range, grouped (the SQLite store's
/// `StatsReader`, or the PostgreSQL store's `PostgresStatsReader`). `StatsService` asks nothing
/// else, so both stores give the same answers from the same counts.
public protocol StatsSource: Sendable {
    /// Conversion counts of `query`'s range and filters, grouped by `grouping` (see
    /// `StatsReader.statsCounts` for `withVisitors`, `onlyKeys` and `visitorsOnly`).
    func statsCounts(
        _ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool, onlyKeys: [String?]?, visitorsOnly: Bool
    ) async throws -> [StatsGroupKey: CountsByAudience]

    /// Whether a breakdown of `query` by `dimension` had better count click visitors with its
    /// counts, in one pass, than for its page in a second pass: when that second pass would
    /// read the same raw events again.
    func countsVisitorsWithCounts(_ query: StatsQuery, by dimension: StatsDimension) -> Bool
}

extension StatsSource {
    public func countsVisitorsWithCounts(_ query: StatsQuery, by dimension: StatsDimension) -> Bool { false }

    /// `statsCounts` of every value, counts and visitors.
    public func statsCounts(_ query: StatsQuery, grouping: StatsGrouping, withVisitors: Bool) async throws -> [StatsGroupKey: CountsByAudience] {
        try await statsCounts(query, grouping: grouping, withVisitors: withVisitors, onlyKeys: nil, visitorsOnly: false)
    }
}

extension StatsReader: StatsSource {
    /// True when the question reads raw events (`readsRawEvents`): reading them once for the
    /// counts and again for the page's visitors took twice as long.
    public func countsVisitorsWithCounts(_ query: StatsQuery, by dimension: StatsDimension) -> Bool {
        Self.readsRawEvents(StatsPlan(query: query, grouping: .dimension(dimension)))
    }

    /// Whether `plan` is a question by audience with a part read from the raw events: a range
    /// that is not whole UTC days (any zone with an offset), or two dimensions at once. Reading
    /// those costs about 5 µs of CPU an event, where every other part of an answer reads rollups.
    static func readsRawEvents(_ plan: StatsPlan) -> Bool {
        guard plan.asksAudience else { return false }
        guard let rows = audienceRows(plan) else { return true }
        return rows.pieces.contains { if case .raw = $0 { true } else { false } }
    }

    /// The rows by audience that answer `plan` (nil: none, it reads raw events): by UTC day and
    /// month, as `audience_rollups` keeps them (no hour rows, whose visitor sketches would
    /// cost more than the file's size target allows).
    static func audienceRows(_ plan: StatsPlan) -> RollupRows? {
        RollupRows(plan: plan, hourRows: false)
    }
}

extension CountsByAudience {
    /// Merges a stored sketch into the people's or the bots' click visitors.
    mutating func mergeVisitors(serialized: UnsafeRawBufferPointer, isBot: Bool) {
        if isBot { bots.clickVisitors.merge(serialized: serialized) } else { people.clickVisitors.merge(serialized: serialized) }
    }
}

/// Adds up the cells of cube parts for one stats answer: filters and groups are decided once
/// per link tuple (or platform, or bucket) and kept as an index into running sums, so each cell
/// costs a few array reads and a vector addition, never a string hash.
struct CubeReader {
    let plan: StatsPlan
    /// How many tuple ids the cube's tuples had when this answer began (newer ones are left out).
    let tupleCount: Int
    let wanted: Set<String?>?
    /// Per tuple id: whether the filters admit it and the grouping wants its value (nil: all do).
    let admitted: [Bool]?
    /// Per tuple id: how many tuples before it are admitted (to skip groups of a part that
    /// hold none; nil when all are).
    let admittedBefore: [Int32]?
    let platformFilter: UInt8?
    /// The values of the link dimension grouped by (nil for other groupings).
    let dimensionValues: LinkTuples.DimensionValues?
    /// Per tuple id (dimension groupings), per value id of the dimension, or per platform code
    /// (by platform): its group's slot, -1 when left out, -2 while not decided yet.
    var slotByTuple: [Int32]
    var slotByValue: [Int32]
    var slotByPlatform = [Int32](repeating: -2, count: Platform.allCases.count)
    var keys: [StatsGroupKey] = []
    var slots: [StatsGroupKey: Int32] = [:]
    var people: [CountsVector] = [], bots: [CountsVector] = []
    var peopleVisitors: [VisitorSketch] = [], botVisitors: [VisitorSketch] = []

    init(plan: StatsPlan, tuples known: LinkTuples.Known, onlyKeys: [String?]?) {
        self.plan = plan
        tupleCount = known.count
        if case .dimension(let dimension) = plan.grouping, dimension != .platform {
            dimensionValues = known.values(of: dimension)
        } else {
            dimensionValues = nil
        }
        slotByValue = [Int32](repeating: -2, count: dimensionValues?.byId.count ?? 0)
        wanted = onlyKeys.map(Set.init)
        let filters = plan.query.filters
        var linkValuesWanted: (StatsDimension, Set<String?>)?
        if case .dimension(let dimension) = plan.grouping, dimension != .platform, let wanted = onlyKeys.map(Set.init) {
            linkValuesWanted = (dimension, wanted)
        }
        if !filters.onlyPlatform || linkValuesWanted != nil {
            let admitted = known.admitted(by: filters, wanted: linkValuesWanted)
            var before = [Int32](repeating: 0, count: admitted.count + 1)
            for (i, yes) in admitted.enumerated() { before[i + 1] = before[i] + (yes ? 1 : 0) }
            self.admitted = admitted
            admittedBefore = before
        } else {
            admitted = nil
            admittedBefore = nil
        }
        platformFilter = filters.platform?.code
        slotByTuple = [Int32](repeating: -2, count: tupleCount)
    }

    mutating func slot(_ key: StatsGroupKey) -> Int32 {
        if let slot = slots[key] { return slot }
        let slot = newSlot(key)
        slots[key] = slot
        return slot
    }

    /// A slot for a key that has none yet (the caller knows it is new).
    mutating func newSlot(_ key: StatsGroupKey) -> Int32 {
        let slot = Int32(keys.count)
        keys.append(key)
        people.append(CountsVector()); bots.append(CountsVector())
        peopleVisitors.append(VisitorSketch()); botVisitors.append(VisitorSketch())
        return slot
    }

    /// Adds every cell of the grain's parts in [from, to) that passes the filters (and its
    /// click visitors with `visitors`).
    mutating func add(_ db: Database, sql: String, grain: RollupGrain, from: Int64, to: Int64, visitors: Bool) throws {
        let s = HotStatement(try db.cachedStatement(sql: sql), in: db)
        try s.bind(":grain", grain.rawValue)
        try s.bind(":from_ms", from)
        try s.bind(":to_ms", to)
        while try s.step() {
            guard let bytes = s.blob(CubePartColumn.entries) else { continue }
            add(bytes, bucket: s.int64(CubePartColumn.bucket), visitors: visitors)
        }
    }

    /// Adds the counts of whole UTC days [fromDay, toDay) (no visitors): from the cube blocks
    /// (at most two a level) for the days they hold, from the day cubes for the newest ones.
    /// Only for a grouping by a link dimension without a platform filter (what `dimensionDays`
    /// pieces are): each block and part is read as its `CubeSums`, from `cache` when its tag
    /// is known there. The blocks and the older days of the cover change only when a late
    /// event or the daily horizon rewrites one of them: their sum is kept too, under all their
    /// tags, so a repeated breakdown adds one sum for them and the newest days' parts.
    mutating func addBlocks(_ db: Database, _ statements: StatsQueries, cache: CubeSumsCache, fromDay: Int64, toDay: Int64) throws {
        guard case .dimension(let dimension) = plan.grouping, dimension != .platform, platformFilter == nil else {
            preconditionFailure("cube sums serve only groupings by a link dimension, without a platform filter")
        }
        // Blocks above one day hold only the days before `merged`; later days are read one by one.
        let merged = try Int64.fetchOne(db, sql: statements.blocksMergedThrough) ?? 0
        let split = min(max(merged, fromDay), toDay)
        let blockTag = HotStatement(try db.cachedStatement(sql: statements.cubeBlockTag), in: db)
        let block = HotStatement(try db.cachedStatement(sql: statements.cubeBlock), in: db)
        let partTags = HotStatement(try db.cachedStatement(sql: statements.cubePartTags), in: db)
        let part = HotStatement(try db.cachedStatement(sql: statements.cubePartEntries), in: db)
        enum Member { case block(level: Int, index: Int64), part(id: Int64) }
        func dayParts(_ day: Int64) throws -> [(tag: Int64, member: Member)] {
            try partTags.bind(":grain", RollupGrain.day.rawValue)
            try partTags.bind(":from_ms", day * TimeGrain.dayMs)
            try partTags.bind(":to_ms", (day + 1) * TimeGrain.dayMs)
            var parts: [(tag: Int64, member: Member)] = []
            while try partTags.step() { parts.append((partTags.int64(CubePartTagColumn.tag), .part(id: partTags.int64(CubePartTagColumn.id)))) }
            return parts
        }
        func sums(_ tag: Int64, _ member: Member) throws -> CubeSums {
            switch member {
            case .block(let level, let index):
                try block.bind(":level", Int64(level))
                try block.bind(":block", index)
                return try cache.sums(tag: tag, orReading: block)
            case .part(let id):
                try part.bind(":id", id)
                return try cache.sums(tag: tag, orReading: part)
            }
        }
        var stable: [(tag: Int64, member: Member)] = []
        for (level, index) in DayBlocks.cover(from: fromDay, to: split) {
            if level == 0 { stable += try dayParts(index); continue }
            try blockTag.bind(":level", Int64(level))
            try blockTag.bind(":block", index)
            guard try blockTag.step() else { continue }
            stable.append((blockTag.int64(HotStatement.onlyColumn), .block(level: level, index: index)))
            blockTag.finish()
        }
        let stableKey = stable.map(\.tag)
        if let sum = cache.sums(key: stableKey) {
            add(sum, dimension)
        } else {
            var sum = CubeSums()
            for (tag, member) in stable { sum = sum.adding(try sums(tag, member)) }
            if stable.count > 1 { cache.keep(sum, key: stableKey) }
            add(sum, dimension)
        }
        for day in split..<toDay {
            for (tag, member) in try dayParts(day) { add(try sums(tag, member), dimension) }
        }
    }

    /// Adds the sums of one part or block to the groups of `dimension`'s values.
    mutating func add(_ sums: CubeSums, _ dimension: StatsDimension) {
        sums.forEach { tuple, isBot, counts in
            guard tuple < tupleCount else { return }
            if let admitted, !admitted[tuple] { return }
            let target = tupleSlot(tuple, dimension)
            guard target >= 0 else { return }
            if isBot { bots[Int(target)] &+= counts } else { people[Int(target)] &+= counts }
        }
    }

    /// Adds the cells of one stored part or block whose bucket starts at `bucket`.
    mutating func add(_ bytes: UnsafeRawBufferPointer, bucket: Int64, visitors withVisitors: Bool) {
        guard let admitted, let admittedBefore else {
            return add(bytes, bucket: bucket, visitors: withVisitors, selecting: EveryTuple())
        }
        admitted.withUnsafeBufferPointer { admitted in
            admittedBefore.withUnsafeBufferPointer { before in
                add(bytes, bucket: bucket, visitors: withVisitors, selecting: AdmittedTuples(admitted: admitted, before: before))
            }
        }
    }

    private mutating func add<Selection: CubeTupleSelection>(
        _ bytes: UnsafeRawBufferPointer, bucket: Int64, visitors withVisitors: Bool, selecting selection: Selection
    ) {
        let tupleCount = tupleCount, platformFilter = platformFilter
        let bucketSlot: Int32
        switch plan.grouping {
        case .none: bucketSlot = slot(.all)
        case .buckets: bucketSlot = slot(plan.bucket(containing: bucket))
        case .dimension(let dimension):
            CubePart.forEach(in: bytes, selecting: selection) { key, counts, sketch in
                let tuple = key.tuple
                guard tuple < tupleCount else { return }
                if let platformFilter, key.platformCode != platformFilter { return }
                let target = dimension == .platform ? platformSlot(key.platformCode) : tupleSlot(tuple, dimension)
                guard target >= 0 else { return }
                add(counts, sketch: withVisitors ? sketch : UnsafeRawBufferPointer(start: nil, count: 0), isBot: key.isBot, to: Int(target))
            }
            return
        }
        // One group for the whole part: summed in locals, added once.
        var people = CountsVector(), bots = CountsVector()
        var peopleVisitors = VisitorSketch(), botVisitors = VisitorSketch()
        CubePart.forEach(in: bytes, selecting: selection) { key, counts, sketch in
            guard key.tuple < tupleCount else { return }
            if let platformFilter, key.platformCode != platformFilter { return }
            if key.isBot { bots &+= counts } else { people &+= counts }
            if withVisitors && !sketch.isEmpty {
                if key.isBot { botVisitors.merge(serialized: sketch) } else { peopleVisitors.merge(serialized: sketch) }
            }
        }
        let i = Int(bucketSlot)
        self.people[i] &+= people
        self.bots[i] &+= bots
        self.peopleVisitors[i].merge(peopleVisitors)
        self.botVisitors[i].merge(botVisitors)
    }

    private mutating func add(_ counts: CountsVector, sketch: UnsafeRawBufferPointer, isBot: Bool, to i: Int) {
        if isBot { bots[i] &+= counts } else { people[i] &+= counts }
        if !sketch.isEmpty {
            if isBot { botVisitors[i].merge(serialized: sketch) } else { peopleVisitors[i].merge(serialized: sketch) }
        }
    }

    /// The slot of a tuple's value of `dimension` (the grouping's link dimension): decided once
    /// per value id, with no hashing of the value.
    mutating func tupleSlot(_ tuple: Int, _ dimension: StatsDimension) -> Int32 {
        if slotByTuple[tuple] != -2 { return slotByTuple[tuple] }
        let values = dimensionValues!
        let valueId = Int(values.ofTuple[tuple])
        if slotByValue[valueId] == -2 {
            let value = values.byId[valueId]
            slotByValue[valueId] = wanted.map { $0.contains(value) } ?? true ? newSlot(.value(value)) : -1
        }
        slotByTuple[tuple] = slotByValue[valueId]
        return slotByValue[valueId]
    }

    mutating func platformSlot(_ code: UInt8) -> Int32 {
        let i = Int(min(code, UInt8(Platform.allCases.count - 1)))
        if slotByPlatform[i] != -2 { return slotByPlatform[i] }
        let value: String? = Platform.fromCode(code).rawValue
        let found: Int32 = wanted.map { $0.contains(value) } ?? true ? slot(.value(value)) : -1
        slotByPlatform[i] = found
        return found
    }

    /// Adds the sums to the answer's groups.
    func addSums(into groups: inout [StatsGroupKey: CountsByAudience]) {
        groups.reserveCapacity(groups.count + keys.count)
        for (i, key) in keys.enumerated() {
            var counts = CountsByAudience()
            counts.people = ConversionCounts(vector: people[i])
            counts.people.clickVisitors = peopleVisitors[i]
            counts.bots = ConversionCounts(vector: bots[i])
            counts.bots.clickVisitors = botVisitors[i]
            groups[key, default: CountsByAudience()].add(counts)
        }
    }
}

/// The tuples a cube read wants, as `CubeReader` decided them once per tuple id.
struct AdmittedTuples: CubeTupleSelection {
    /// Per tuple id: whether it is wanted.
    let admitted: UnsafeBufferPointer<Bool>
    /// Per tuple id: how many tuples before it are wanted (one more element than `admitted`).
    let before: UnsafeBufferPointer<Int32>

    @inline(__always) func wantsGroup(first: Int, last: Int) -> Bool {
        let n = admitted.count
        return first < n && before[min(last, n - 1) + 1] > before[first]
    }

    @inline(__always) func wants(tuple: Int) -> Bool { tuple < admitted.count && admitted[tuple] }
}

extension StatsPlan {
    /// The rollup query's grouping key (an allow-listed name, never user text).
    var sqlKey: String {
        switch grouping {
        case .none: ""
        case .dimension(let d): d.rawValue
        case .buckets: "bucket"
        }
    }

    /// The group of a rollup query's row (`stats/rollup_counts.sql`: by its key).
    func groupKey(_ row: HotStatement) -> StatsGroupKey {
        switch grouping {
        case .none: .all
        case .dimension: .value(row.text(StatsRollupColumn.key).flatMap { $0.isEmpty ? nil : $0 })
        case .buckets: bucket(containing: row.int64(StatsRollupColumn.key))
        }
    }
}
