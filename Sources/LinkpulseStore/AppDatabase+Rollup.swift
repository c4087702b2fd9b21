import Foundation
import GRDB
import LinkpulseDomain

/// The rollup grains: cubes by every link dimension (`cube_parts`) and rows by platform only
/// (`rollups`), each numbered by its `grain` column.
enum RollupGrain: Int64, CaseIterable {
    /// 15-minute UTC buckets by every dimension (a cube).
    case quarterHour = 1
    /// UTC days by every dimension (a cube).
    case day = 2
    /// UTC hours by every dimension (a cube).
    case hour = 6
    /// 15-minute UTC buckets by platform only.
    case quarterHourByPlatform = 3
    /// UTC days by platform only.
    case dayByPlatform = 4
    /// UTC hours by platform only (local days of half-hour zones are mostly whole UTC hours).
    case hourByPlatform = 5

    var length: Int64 {
        switch self {
        case .quarterHour, .quarterHourByPlatform: TimeGrain.quarterHourMs
        case .hour, .hourByPlatform: TimeGrain.hourMs
        case .day, .dayByPlatform: TimeGrain.dayMs
        }
    }
    /// Whether the grain is by every link dimension, stored as a cube (else rows by platform only).
    var hasLinkDimensions: Bool { self == .quarterHour || self == .hour || self == .day }
}

/// The key of one rollup row.
struct RollupKey: Hashable {
    var grain: RollupGrain
    var bucket: Int64
    var platform: Platform
    var isBot: Bool
    var dimensions: LinkDimensions
}

/// One stored event as the rollup job reads it: what it counts and how it was attributed.
struct RollupSourceEvent {
    var seq: Int64
    var kind: EventKind
    var occurredAtMs: Int64
    /// The event's own dimensions, as sent.
    var dimensions: LinkDimensions
    var platform: Platform
    var deferred: Bool
    /// `VisitorSketch.hash` of the visitor id (clicks only; 0 for other events).
    var visitorHash: UInt64
    var isBot: Bool
    /// The stored attribution (nil for clicks and bots).
    var match: MatchType?
    var matchedClickSeq: Int64?
}

/// Which cube block a row of `cube_blocks` is.
struct CubeBlockID: Hashable {
    var level: Int
    var block: Int64
}

extension AppDatabase {
    /// The seq through which every event is counted in the rollups.
    public func rolledThroughSeq() throws -> Int64 {
        try rollupQueue.inDatabase { db in try Self.watermark(db, queries.rollup.state) }
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

    /// Queues a rollup run (passes of `batch` events until caught up, or past `budget`) on the
    /// store's low-priority rollup thread and returns at once; nothing is queued while an
    /// earlier request is still queued or running (false then). `completion` gets how many
    /// events the run counted. For the rollup timer, which only triggers.
    @discardableResult
    public func requestRollUp(
        batch: Int, budget: Duration?, completion: @escaping @Sendable (Result<Int, any Error>) -> Void
    ) -> Bool {
        rollupRequests.request { [self] in completion(Result { try rollUpAll(batch: batch, budget: budget) }) }
    }

    /// Rolls up every event stored so far and beyond, until caught up, on the rollup thread;
    /// returns how many events it counted. For the admin endpoint.
    public func rollUpNow(batch: Int = 200_000) async throws -> Int {
        try await rollupThread.run { [self] in try rollUpAll(batch: batch) }
    }

    /// Rolls up every event stored when it is called, on the rollup thread (see
    /// `rollUpThroughCurrent`). For scheduled exports.
    public func rollUpStoredSoFar() async throws -> Int {
        try await rollupThread.run { [self] in try rollUpThroughCurrent() }
    }

    /// Returns once the rollup thread has finished the work queued before this call (for a
    /// graceful shutdown).
    public func rollupsSettled() async {
        _ = try? await rollupThread.run {}
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

    /// Forgets every rollup so that the next passes recompute them from the raw events and
    /// their stored attribution (`linkpulse rollup --rebuild`, and at open when the rollup file
    /// does not belong to the events database).
    public func resetRollups() throws {
        let databaseId = try self.databaseId()
        try rollupQueue.inDatabase { db in
            try db.inTransaction(.deferred) {
                try db.execute(sql: queries.rollup.reset, arguments: ["database_id": databaseId, "window_ms": attributionWindowMs])
                return .commit
            }
        }
    }

    /// One rollup pass over at most `maxEvents` events past the watermark: adds them, under the
    /// dimensions their stored attribution gives them, to every rollup grain, and advances the
    /// watermark, all in one transaction of the rollup file. Returns how many events it
    /// processed (0 when up to date). Idempotent and restartable: a pass that dies leaves
    /// nothing behind, and a finished one is never counted again.
    ///
    /// Never takes the events database's write lock, so it never blocks ingest. Synchronous;
    /// several callers (the timer, `linkpulse rollup`, the admin endpoint) are serialised by
    /// the rollup file's lock.
    public func rollUp(maxEvents: Int = 200_000) throws -> Int {
        // Only attributed events are counted: attribute this pass's worth first, if the
        // follower has not (bounded, so a pass never chases events stored after it began).
        try attributeAhead(of: try rolledThroughSeq(), by: maxEvents)
        return try rollupQueue.inDatabase { db in
            var processed = 0
            try db.inTransaction(.deferred) {
                // A write first: takes the rollup file's write lock (and only that one) before the
                // watermark is read, so two passes can never count the same events.
                try db.execute(sql: queries.rollup.lock)
                let state = try Row.fetchOne(db, sql: queries.rollup.state)
                let watermark: Int64 = state?[1] ?? 0
                let mergedThroughDay: Int64 = state?[4] ?? 0
                let attributed = try Self.watermark(db, queries.rollup.attributionState)
                var pass = try RollupPass(db: db, queries: queries, tuples: try linkTuples.current(db, sql: queries.rollup.tuplesAfter))
                guard let counted = try pass.count(after: watermark, through: attributed, limit: maxEvents) else { return .commit }
                let merged = try pass.flush(mergedThroughDay: mergedThroughDay)
                try db.execute(sql: queries.rollup.advanceWatermark, arguments: [counted.lastSeq, merged])
                processed = counted.count
                return .commit
            }
            return processed
        }
    }

    func databaseId() throws -> String {
        try pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM installation WHERE name = 'database_id'") ?? ""
        }
    }

    /// At open: ties the rollup file to this database, and starts it over when its state does
    /// not fit the events database (see `mismatch(ofDerivedState:)`) or it is ahead of the
    /// attribution.
    func prepareRollups() throws {
        let state = try rollupQueue.inDatabase { db -> Row? in
            try queries.prepareRollupStatements(db)
            return try Row.fetchOne(db, sql: queries.rollup.state)
        }
        guard let state else { return try resetRollups() }
        if let reason = try mismatch(ofDerivedState: state) {
            logger.warning("recomputing the rollups", metadata: ["reason": "\(reason)"])
            return try resetRollups()
        }
        let watermark: Int64 = state[1]
        if watermark > (try attributedThroughSeq()) {
            // Attribution was started over (its file deleted, or a version that moved it).
            logger.notice("the rollups are ahead of the attribution; recomputing them as it catches up")
            return try resetRollups()
        }
    }
}

/// One cell of a pass's cube deltas: a bucket's start (UTC ms) and the cube key.
struct CubeCell: Hashable {
    var bucket: Int64
    var key: CubeKey
}

/// The work of one rollup pass: each event counted once, under its stored attribution, into a
/// 15-minute cell keyed by integers (bucket, link tuple id, platform, audience); at the end the
/// cells are rolled up into hours and days, the rows by platform and the dimension deltas, and
/// written: one cube part per touched bucket and grain, one upsert per touched row.
struct RollupPass {
    /// The pass's counts by 15-minute bucket and cube key.
    var quarters: [CubeCell: ConversionCounts] = [:]
    /// The link tuples known before this pass (shared, never changed here: a copy of a million
    /// tuples a pass would cost more than the pass), and those it added (written at flush).
    let tuples: LinkTuples.Known
    var newTuples: [LinkDimensions] = []
    var newIds: [LinkDimensions: UInt32] = [:]
    /// The link tuples of the clicks read so far in this pass, by seq: most attributed events
    /// match a click stored shortly before them.
    var clicks: [Int64: UInt32] = [:]
    let db: Database
    // The pass's statements, looked up once (every one is left reset after each use).
    let eventsAfter, clickBySeq, upsert, readBlock, upsertBlock, upsertDay, dayParts: HotStatement
    let insertTuple, countParts, partsOfBucket, insertPart, deletePart: HotStatement

    init(db: Database, queries: SQLQueries, tuples: LinkTuples.Known) throws {
        self.db = db
        self.tuples = tuples
        func statement(_ sql: String) throws -> HotStatement { HotStatement(try db.cachedStatement(sql: sql), in: db) }
        eventsAfter = try statement(queries.rollup.eventsAfter)
        clickBySeq = try statement(queries.attribution.clickBySeq)
        upsert = try statement(queries.rollup.upsertRollup)
        readBlock = try statement(queries.rollup.cubeBlock)
        upsertBlock = try statement(queries.rollup.upsertCubeBlock)
        upsertDay = try statement(queries.rollup.upsertDimensionDay)
        dayParts = try statement(queries.rollup.dayParts)
        insertTuple = try statement(queries.rollup.insertTuple)
        countParts = try statement(queries.rollup.countCubeParts)
        partsOfBucket = try statement(queries.rollup.cubePartsOfBucket)
        insertPart = try statement(queries.rollup.insertCubePart)
        deletePart = try statement(queries.rollup.deleteCubePart)
    }

    /// Counts the events after the rollup watermark that attribution has already seen (through
    /// `attributed`), at most `limit`, in seq order, streamed from the events database; returns
    /// the last one's seq and how many were counted (nil when none).
    mutating func count(after watermark: Int64, through attributed: Int64, limit: Int) throws -> (lastSeq: Int64, count: Int)? {
        let read = eventsAfter
        try read.bind(1, watermark)
        try read.bind(2, attributed)
        try read.bind(3, Int64(limit))
        var last: Int64 = 0, count = 0
        while try read.step() {
            let kind = EventKind(rawValue: read.text(1) ?? "") ?? .click
            try add(RollupSourceEvent(
                seq: read.int64(0), kind: kind, occurredAtMs: read.int64(2),
                dimensions: LinkDimensions(ref: read.text(3), campaign: read.text(4), source: read.text(5), medium: read.text(6)),
                platform: Platform(rawValue: read.text(7) ?? "") ?? .other, deferred: read.int64(8) == 1,
                visitorHash: kind == .click ? read.withText(9) { VisitorSketch.hash(utf8: $0) } ?? 0 : 0, isBot: read.int64(10) != 0,
                match: read.text(11).flatMap(MatchType.init(rawValue:)), matchedClickSeq: read.isNull(12) ? nil : read.int64(12)))
            last = read.int64(0)
            count += 1
        }
        return count == 0 ? nil : (last, count)
    }

    mutating func add(_ event: RollupSourceEvent) throws {
        let counted = CountedEvent(
            kind: event.kind, platform: event.platform, isBot: event.isBot, deferred: event.deferred,
            visitorHash: event.visitorHash, own: event.dimensions,
            match: event.match, click: try event.matchedClickSeq.flatMap { try clickDimensions(seq: $0) })
        let tuple = tupleId(counted.dimensions)
        // A click is counted under its own dimensions: its tuple is what a match fills from.
        if event.kind == .click { clicks[event.seq] = tuple }
        let cell = CubeCell(
            bucket: TimeGrain.floor(event.occurredAtMs, TimeGrain.quarterHourMs),
            key: CubeKey(tuple: tuple, platform: event.platform, isBot: event.isBot))
        quarters[cell, default: ConversionCounts()].add(counted)
    }

    /// The id of a link tuple: known, or new in this pass (stored at flush).
    mutating func tupleId(_ dimensions: LinkDimensions) -> UInt32 {
        if let id = tuples.ids[dimensions] ?? newIds[dimensions] { return id }
        let id = UInt32(tuples.all.count + newTuples.count)
        newIds[dimensions] = id
        newTuples.append(dimensions)
        return id
    }

    /// The link dimensions of a tuple id, known or new in this pass.
    func tuple(_ id: Int) -> LinkDimensions {
        id < tuples.all.count ? tuples.all[id] : newTuples[id - tuples.all.count]
    }

    /// The link dimensions of the click stored under `seq`: from this pass, else from the
    /// events database (then remembered for the rest of the pass).
    mutating func clickDimensions(seq: Int64) throws -> LinkDimensions? {
        if let known = clicks[seq] { return tuple(Int(known)) }
        try clickBySeq.bind(1, seq)
        guard try clickBySeq.step() else { return nil }
        defer { clickBySeq.finish() }
        let dimensions = LinkDimensions(ref: clickBySeq.text(2), campaign: clickBySeq.text(3), source: clickBySeq.text(4), medium: clickBySeq.text(5))
        clicks[seq] = tupleId(dimensions)
        return dimensions
    }

    /// Writes everything the pass counted: new link tuples, the cube parts of every touched
    /// 15-minute, hour and day bucket, the rows by platform only, and the dimension blocks and
    /// days (see `writeDimensions`). Returns the new `mergedThroughDay`.
    func flush(mergedThroughDay: Int64) throws -> Int64 {
        let firstNew = tuples.all.count
        for (i, t) in newTuples.enumerated() {
            try insertTuple.bind(1, Int64(firstNew + i))
            try insertTuple.bind(2, t.ref ?? "")
            try insertTuple.bind(3, t.campaign ?? "")
            try insertTuple.bind(4, t.source ?? "")
            try insertTuple.bind(5, t.medium ?? "")
            try insertTuple.run()
        }
        let hours = Self.coarser(quarters, TimeGrain.hourMs)
        let days = Self.coarser(hours, TimeGrain.dayMs)
        try writeCube(.quarterHour, quarters)
        try writeCube(.hour, hours)
        try writeCube(.day, days)
        for (grain, cells) in [(RollupGrain.quarterHourByPlatform, quarters), (.hourByPlatform, hours), (.dayByPlatform, days)] {
            var rows: [RollupKey: ConversionCounts] = [:]
            for (cell, c) in cells {
                let key = RollupKey(grain: grain, bucket: cell.bucket, platform: cell.key.platform, isBot: cell.key.isBot, dimensions: LinkDimensions())
                rows[key, default: ConversionCounts()].add(c)
            }
            try upsertRows(rows)
        }
        try writeDimensionVisitors(days)
        return try writeBlocks(days, mergedThroughDay: mergedThroughDay)
    }

    /// Merges the click visitors of the day cells into `dimension_days`, by every dimension's
    /// value. Values are numbered once per tuple, so cells are grouped by integers.
    func writeDimensionVisitors(_ days: [CubeCell: ConversionCounts]) throws {
        struct Key: Hashable {
            var dimension: Int
            var value: Int
            var day: Int64
            var isBot: Bool
        }
        let dimensions = StatsDimension.allCases
        var names: [[String]] = dimensions.map { _ in [] }
        var numbers: [[String: Int]] = dimensions.map { _ in [:] }
        var numbersOfTuple: [Int: [Int]] = [:]
        func number(_ tuple: Int) -> [Int] {
            if let known = numbersOfTuple[tuple] { return known }
            let numbered = dimensions.enumerated().map { d, dimension in
                let value = dimension == .platform ? "" : dimension.linkValue(of: self.tuple(tuple)) ?? ""
                if let n = numbers[d][value] { return n }
                numbers[d][value] = names[d].count
                names[d].append(value)
                return names[d].count - 1
            }
            numbersOfTuple[tuple] = numbered
            return numbered
        }
        var visitors: [Key: VisitorSketchUnion] = [:]
        for (cell, c) in days where !c.clickVisitors.isEmpty {
            let numbered = number(cell.key.tuple)
            for (d, dimension) in dimensions.enumerated() {
                // The platform is not part of the tuple: its number is its code.
                let value = dimension == .platform ? Int(cell.key.platformCode) : numbered[d]
                visitors[Key(dimension: d, value: value, day: cell.bucket / TimeGrain.dayMs, isBot: cell.key.isBot), default: VisitorSketchUnion()]
                    .add(c.clickVisitors)
            }
        }
        for (key, union) in visitors {
            let dimension = dimensions[key.dimension]
            try upsertDay.bind(1, dimension.rawValue)
            try upsertDay.bind(2, dimension == .platform ? Platform.fromCode(UInt8(key.value)).rawValue : names[key.dimension][key.value])
            try upsertDay.bind(3, key.day)
            try upsertDay.bind(4, key.isBot)
            try upsertDay.bind(5, union.sketch.serialized)
            try upsertDay.run()
        }
    }

    /// The cells added up into buckets `length` long.
    static func coarser(_ cells: [CubeCell: ConversionCounts], _ length: Int64) -> [CubeCell: ConversionCounts] {
        var result: [CubeCell: ConversionCounts] = [:]
        result.reserveCapacity(cells.count)
        for (cell, c) in cells {
            result[CubeCell(bucket: TimeGrain.floor(cell.bucket, length), key: cell.key), default: ConversionCounts()].add(c)
        }
        return result
    }

    /// Adds the cells of one grain to its cube: one new part per bucket, or, for a bucket that
    /// has `CubePart.mergeAt - 1` small parts already (under `CubePart.mergeBytes`), one part
    /// merged from them. Large parts are never read here, so a pass's memory stays bounded
    /// however many cells a hot bucket gathers.
    func writeCube(_ grain: RollupGrain, _ cells: [CubeCell: ConversionCounts]) throws {
        var byBucket: [Int64: [(key: CubeKey, counts: ConversionCounts)]] = [:]
        for (cell, c) in cells { byBucket[cell.bucket, default: []].append((cell.key, c)) }
        for (bucket, list) in byBucket {
            try countParts.bind(1, grain.rawValue)
            try countParts.bind(2, bucket)
            try countParts.bind(3, Int64(CubePart.mergeBytes))
            let parts = try countParts.step() ? countParts.int64(0) : 0
            countParts.finish()
            var entries = list
            if parts >= Int64(CubePart.mergeAt - 1) {
                var merged = Dictionary(list, uniquingKeysWith: { a, _ in a })
                var ids: [Int64] = []
                try partsOfBucket.bind(1, grain.rawValue)
                try partsOfBucket.bind(2, bucket)
                try partsOfBucket.bind(3, Int64(CubePart.mergeBytes))
                while try partsOfBucket.step() {
                    ids.append(partsOfBucket.int64(0))
                    if let bytes = partsOfBucket.blob(1) { CubePart.add(bytes, to: &merged) }
                }
                for id in ids {
                    try deletePart.bind(1, id)
                    try deletePart.run()
                }
                entries = merged.map { ($0.key, $0.value) }
            }
            try insertPart.bind(1, grain.rawValue)
            try insertPart.bind(2, bucket)
            try insertPart.bind(3, CubePart.serialize(entries))
            try insertPart.run()
        }
    }

    /// Adds deltas to rows of `rollups` (the grains by platform only), one upsert per row.
    func upsertRows(_ rows: [RollupKey: ConversionCounts]) throws {
        for (key, c) in rows {
            try upsert.bind(1, key.grain.rawValue)
            try upsert.bind(2, key.bucket)
            try upsert.bind(3, key.platform.rawValue)
            try upsert.bind(4, key.isBot)
            try upsert.bind(5, key.dimensions.ref ?? "")
            try upsert.bind(6, key.dimensions.campaign ?? "")
            try upsert.bind(7, key.dimensions.source ?? "")
            try upsert.bind(8, key.dimensions.medium ?? "")
            try Self.bindCounts(c, to: upsert, from: 9)
            try upsert.bind(18, c.clickVisitors.isEmpty ? nil : c.clickVisitors.serialized)
            try upsert.run()
        }
    }

    /// Adds the day cells of the pass to the cube blocks (levels above one day). Days before
    /// `mergedThroughDay` go into every level; later ones stay in their day cubes only, and
    /// days that fall behind the horizon are added up from their stored day cubes (which
    /// already hold this pass), once (see `DayBlocks`). Returns the new `mergedThroughDay`.
    func writeBlocks(_ days: [CubeCell: ConversionCounts], mergedThroughDay: Int64) throws -> Int64 {
        var blocks: [CubeBlockID: [CubeKey: CountsVector]] = [:]
        func add(_ key: CubeKey, _ counts: CountsVector, day: Int64) {
            for level in DayBlocks.levels where level > 0 {
                blocks[CubeBlockID(level: level, block: day >> level), default: [:]][key, default: CountsVector()] &+= counts
            }
        }
        var newestDay = Int64.min
        for (cell, c) in days {
            let day = cell.bucket / TimeGrain.dayMs
            newestDay = max(newestDay, day)
            if day < mergedThroughDay { add(cell.key, c.vector, day: day) }
        }
        let merged = max(mergedThroughDay, newestDay - DayBlocks.horizonDays)
        if merged > mergedThroughDay {
            try dayParts.bind(1, RollupGrain.day.rawValue)
            try dayParts.bind(2, mergedThroughDay * TimeGrain.dayMs)
            try dayParts.bind(3, merged * TimeGrain.dayMs)
            while try dayParts.step() {
                guard let bytes = dayParts.blob(1) else { continue }
                let day = dayParts.int64(0) / TimeGrain.dayMs
                CubePart.forEach(in: bytes) { key, counts, _ in add(key, counts, day: day) }
            }
        }
        // Each touched block: read it, add this pass's counts, write it back whole.
        for (id, delta) in blocks {
            try readBlock.bind(1, Int64(id.level))
            try readBlock.bind(2, id.block)
            var block = delta
            if try readBlock.step() {
                if let bytes = readBlock.blob(0) {
                    CubePart.forEach(in: bytes) { key, counts, _ in block[key, default: CountsVector()] &+= counts }
                }
                readBlock.finish()
            }
            try upsertBlock.bind(1, Int64(id.level))
            try upsertBlock.bind(2, id.block)
            try upsertBlock.bind(3, CubePart.serialize(vectors: block))
            try upsertBlock.run()
        }
        return merged
    }

    /// Binds the nine counts, in the column order of the rollup tables, from parameter `first`.
    static func bindCounts(_ c: ConversionCounts, to statement: HotStatement, from first: Int32) throws {
        let values = [c.events, c.clicks, c.fallbacks, c.installsClickId, c.installsRef, c.installsFingerprint,
                      c.installsOrganic, c.opens, c.deferredOpens]
        for (i, value) in values.enumerated() { try statement.bind(first + Int32(i), Int64(value)) }
    }
}

/// How far the rollups (and so every stats answer) are behind the stored events.
public struct RollupProgress: Sendable, Equatable {
    /// The newest stored seq.
    public var storedThroughSeq: Int64
    /// Every event with a seq up to this one is counted.
    public var countedThroughSeq: Int64
    /// When the oldest event not yet counted was received, UTC ms; nil when all are counted.
    public var oldestUncountedReceivedAtMs: Int64?

    /// Events stored but not yet counted.
    public var backlog: Int64 { max(storedThroughSeq - countedThroughSeq, 0) }

    /// How long the oldest event not yet counted has been waiting at `nowMs`, in seconds (0 when
    /// every stored event is counted): every event received longer ago than this is in the stats.
    public func lagSeconds(nowMs: Int64) -> Double {
        guard let oldest = oldestUncountedReceivedAtMs else { return 0 }
        return Double(max(nowMs - oldest, 0)) / 1000
    }
}

extension AppDatabase {
    /// The rollups' progress, read in one snapshot of both files. For `/metrics` and the
    /// admin API; cheap (two index lookups).
    public func rollupProgress() async throws -> RollupProgress {
        let sql = queries.rollup.progress
        return try await pool.read { db in
            let row = try Row.fetchOne(db, sql: sql)
            return RollupProgress(
                storedThroughSeq: row?[0] ?? 0, countedThroughSeq: row?[1] ?? 0, oldestUncountedReceivedAtMs: row?[2])
        }
    }
}
