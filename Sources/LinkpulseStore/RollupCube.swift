import Foundation
import GRDB
import LinkpulseDomain
import Synchronization

/// Which cell of a conversion cube an entry is: the link tuple (an id of `link_tuples`), the
/// platform and the audience, packed into one integer so that a pass aggregates by a cheap
/// integer key and a stored part sorts by tuple, then platform, then audience.
struct CubeKey: Hashable, Comparable {
    let packed: UInt64

    init(packed: UInt64) { self.packed = packed }

    init(tuple: UInt32, platform: Platform, isBot: Bool) {
        packed = UInt64(tuple) << 16 | UInt64(platform.code) << 8 | (isBot ? 1 : 0)
    }

    var tuple: Int { Int(packed >> 16) }
    var platformCode: UInt8 { UInt8(truncatingIfNeeded: packed >> 8) }
    var platform: Platform { Platform.fromCode(platformCode) }
    var isBot: Bool { packed & 1 != 0 }

    static func < (a: CubeKey, b: CubeKey) -> Bool { a.packed < b.packed }
}

/// The link dimensions rollups are counted under, dictionary-encoded: every distinct
/// (ref, campaign, source, medium) gets a small integer id once (`link_tuples` in the rollup
/// file), so cube entries, aggregation keys and filters work on integers, not strings.
///
/// Ids are dense (1, 2, 3…), assigned in a rollup pass's transaction and never reused or
/// deleted (not even by a rebuild), so a cache of them is valid for the life of the file.
/// One instance per store, shared by the rollup job and the stats readers.
final class LinkTuples: Sendable {
    /// The tuples known so far, each as four value ids (one per link dimension), and the id of
    /// each. About 40 bytes a tuple, where keeping each tuple's four strings and a dictionary
    /// keyed by them took about 200: at a million tuples (10,000 refs in 100 campaigns) that
    /// was most of the daemon's memory, and every pass that added a tuple copied all of it.
    struct Known: Sendable {
        /// Per link dimension (campaign, ref, source, medium, in `StatsDimension` order), the
        /// distinct values of the tuples as dense ids, and per tuple id the id of its value: a
        /// tuple is these four ids (a breakdown groups tuples by an array index instead of
        /// hashing each value's string).
        private(set) var values = [DimensionValues](repeating: DimensionValues(), count: 4)
        /// Every tuple id, found by its four value ids: an open-addressing table of the ids
        /// alone (0: empty), a slot's key read back from `values`. 5–11 bytes a tuple, where a
        /// dictionary keyed by the value ids took about 40 (at a million tuples, 30 MB of the
        /// daemon's memory).
        private var slots = [UInt32](repeating: 0, count: 16)

        /// A tuple as the ids of its four values.
        struct ValueIds: Hashable, PassCellKey {
            var campaign, ref, source, medium: Int32

            var cellHash: UInt64 {
                Self.mix(
                    UInt64(UInt32(bitPattern: campaign)) << 32 | UInt64(UInt32(bitPattern: ref)),
                    UInt64(UInt32(bitPattern: source)) << 32 | UInt64(UInt32(bitPattern: medium)))
            }
        }

        /// The value ids of tuple `id`.
        private func valueIds(of id: Int) -> ValueIds {
            ValueIds(campaign: values[0].ofTuple[id], ref: values[1].ofTuple[id], source: values[2].ofTuple[id], medium: values[3].ofTuple[id])
        }

        /// The slot that holds the tuple of `key`, or the empty slot where it would go.
        private func slot(of key: ValueIds) -> Int {
            let mask = slots.count - 1
            var i = Int(truncatingIfNeeded: key.cellHash) & mask
            while slots[i] != 0 && valueIds(of: Int(slots[i])) != key { i = (i + 1) & mask }
            return i
        }

        /// How many tuple ids there are, the unused id 0 included (ids are `1..<count`).
        var count: Int { values[0].ofTuple.count }

        /// The link dimensions of tuple `id` (`1..<count`).
        subscript(id: Int) -> LinkDimensions {
            LinkDimensions(
                ref: values[1].byId[Int(values[1].ofTuple[id])], campaign: values[0].byId[Int(values[0].ofTuple[id])],
                source: values[2].byId[Int(values[2].ofTuple[id])], medium: values[3].byId[Int(values[3].ofTuple[id])])
        }

        /// The id of a known tuple; nil when it is not known.
        func id(of tuple: LinkDimensions) -> UInt32? {
            guard let campaign = values[0].id(of: tuple.campaign), let ref = values[1].id(of: tuple.ref),
                  let source = values[2].id(of: tuple.source), let medium = values[3].id(of: tuple.medium)
            else { return nil }
            let id = slots[slot(of: ValueIds(campaign: campaign, ref: ref, source: source, medium: medium))]
            return id == 0 ? nil : id
        }

        mutating func append(_ tuple: LinkDimensions) {
            let id = count
            for i in values.indices { values[i].append(Self.linkDimensions[i].linkValue(of: tuple)) }
            // At most three quarters full: twice the slots, every id placed again.
            if id * 4 >= slots.count * 3 {
                slots = [UInt32](repeating: 0, count: slots.count * 2)
                for earlier in 1..<id { slots[slot(of: valueIds(of: earlier))] = UInt32(earlier) }
            }
            slots[slot(of: valueIds(of: id))] = UInt32(id)
        }

        /// The values of `dimension`, which must be a link dimension (not `platform`).
        func values(of dimension: StatsDimension) -> DimensionValues {
            values[Self.linkDimensions.firstIndex(of: dimension)!]
        }

        /// Per tuple id, whether the link filters admit it and, with `wanted`, whether its
        /// value of `dimension` is one of them: `filters.admits` (platform aside) decided on
        /// value ids, one comparison per filter and tuple, no string compared per tuple.
        func admitted(by filters: StatsFilters, wanted: (dimension: StatsDimension, values: Set<String?>)?) -> [Bool] {
            // Per link dimension, the one value id a filter admits (-1: a value no tuple has).
            let filtered: [(ofTuple: NarrowIds, id: Int32)] = zip(values, [filters.campaign, filters.ref, filters.source, filters.medium])
                .compactMap { values, filter in filter.map { (values.ofTuple, values.id(of: $0) ?? -1) } }
            var byValue: (ofTuple: NarrowIds, wanted: [Bool])?
            if let wanted {
                let values = values(of: wanted.dimension)
                byValue = (values.ofTuple, values.byId.map { wanted.values.contains($0) })
            }
            return (0..<count).map { tuple in
                filtered.allSatisfy { $0.ofTuple[tuple] == $0.id } && (byValue.map { $0.wanted[Int($0.ofTuple[tuple])] } ?? true)
            }
        }

        static let linkDimensions: [StatsDimension] = [.campaign, .ref, .source, .medium]
    }

    /// The distinct values one link dimension takes among the tuples.
    struct DimensionValues: Sendable {
        /// Per tuple id, the id of its value (index 0, the unused tuple, has the missing value),
        /// each in as few bytes as the largest id needs.
        private(set) var ofTuple = NarrowIds([0])
        /// Per value id, the value (nil: missing).
        private(set) var byId: [String?] = [nil]
        private var idOf: [String?: Int32] = [nil: 0]

        /// The id of `value`, nil when no tuple has it.
        func id(of value: String?) -> Int32? { idOf[value] }

        mutating func append(_ value: String?) {
            if let id = idOf[value] { ofTuple.append(id); return }
            let id = Int32(byId.count)
            idOf[value] = id
            byId.append(value)
            ofTuple.append(id)
        }
    }

    private let known = Mutex(Known())

    /// How many tuples this process knows (read from the rollup file so far).
    var knownCount: Int { known.withLock { $0.count - 1 } }

    /// Every tuple visible in `db`'s snapshot (and possibly newer ones another reader saw):
    /// reads only the rows added since the last call. `sql` is `queries/rollup/tuples_after.sql`
    /// (or the reader variant naming the attached file).
    func current(_ db: Database, sql: String) throws -> Known {
        let after = known.withLock { Int64($0.count - 1) }
        let read = HotStatement(try db.cachedStatement(sql: sql), in: db)
        try read.bind(":after_id", after)
        var added: [(Int64, LinkDimensions)] = []
        while try read.step() {
            typealias C = LinkTupleColumn
            func column(_ c: C) -> String? { read.text(c).flatMap { $0.isEmpty ? nil : $0 } }
            added.append((read.int64(C.id), LinkDimensions(ref: column(.ref), campaign: column(.campaign), source: column(.source), medium: column(.medium))))
        }
        return known.withLock { state in
            for (id, tuple) in added where Int(id) == state.count { state.append(tuple) }
            return state
        }
    }
}

/// Ids (0 and up), each stored in one, two or four bytes: as few as the largest id appended so
/// far needs (all are widened at once when one needs more).
///
/// Why: the link tuples keep, per link dimension, the id of each tuple's value. Campaigns,
/// sources and mediums have a few hundred values at most, refs tens of thousands, and the
/// tuples can be a million (`ops/bench/events.lua` pairs 10,000 refs with 100 campaigns at
/// random). In four arrays of `Int32`, grown by doubling, that took 16.8 MB of the daemon's
/// memory at 720,000 tuples, the largest single item of its heap under load; in one and two
/// bytes, about a third of that.
struct NarrowIds: Sendable, Equatable {
    private enum Storage: Sendable, Equatable {
        case bytes([UInt8])
        case halves([UInt16])
        case words([Int32])
    }

    private var storage: Storage

    init(_ ids: [Int32] = []) {
        storage = .bytes([])
        for id in ids { append(id) }
    }

    var count: Int {
        switch storage {
        case .bytes(let a): a.count
        case .halves(let a): a.count
        case .words(let a): a.count
        }
    }

    /// How many bytes each id takes.
    var width: Int {
        switch storage {
        case .bytes: 1
        case .halves: 2
        case .words: 4
        }
    }

    subscript(i: Int) -> Int32 {
        switch storage {
        case .bytes(let a): Int32(a[i])
        case .halves(let a): Int32(a[i])
        case .words(let a): a[i]
        }
    }

    mutating func append(_ id: Int32) {
        precondition(id >= 0, "ids are not negative")
        // The array is taken out of `storage` while it changes, so it stays uniquely referenced.
        switch storage {
        case .bytes(var a) where id <= UInt8.max:
            storage = .bytes([])
            a.append(UInt8(id))
            storage = .bytes(a)
        case .bytes(let a) where id <= UInt16.max:
            var wider = a.map(UInt16.init)
            wider.append(UInt16(id))
            storage = .halves(wider)
        case .bytes(let a):
            storage = .words(a.map(Int32.init) + [id])
        case .halves(var a) where id <= UInt16.max:
            storage = .bytes([])
            a.append(UInt16(id))
            storage = .halves(a)
        case .halves(let a):
            storage = .words(a.map(Int32.init) + [id])
        case .words(var a):
            storage = .bytes([])
            a.append(id)
            storage = .words(a)
        }
    }
}

/// The counts of one cell of a cube as a vector: lanes 0…14 are the fifteen counts of
/// `ConversionCounts` in `CountedEvent.countLane` and `openMatchLane` order (so thousands of
/// entries add up quickly).
typealias CountsVector = SIMD16<Int64>

extension ConversionCounts {
    /// The fifteen counts as a vector (lanes 0…14, see `CountedEvent.countLane`).
    var vector: CountsVector {
        var v = CountsVector()
        v[0] = Int64(events); v[1] = Int64(clicks); v[2] = Int64(fallbacks); v[3] = Int64(installsClickId)
        v[4] = Int64(installsRef); v[5] = Int64(installsFingerprint); v[6] = Int64(installsOrganic)
        v[7] = Int64(opens); v[8] = Int64(deferredOpens); v[9] = Int64(installsInstallReferrer)
        v[10] = Int64(opensInstallReferrer); v[11] = Int64(opensClickId); v[12] = Int64(opensRef)
        v[13] = Int64(opensFingerprint); v[14] = Int64(opensOrganic)
        return v
    }

    /// Counts from a vector (lanes 0…14), with no visitors.
    init(vector v: CountsVector) {
        self.init()
        events = Int(v[0]); clicks = Int(v[1]); fallbacks = Int(v[2]); installsClickId = Int(v[3])
        installsRef = Int(v[4]); installsFingerprint = Int(v[5]); installsOrganic = Int(v[6])
        opens = Int(v[7]); deferredOpens = Int(v[8]); installsInstallReferrer = Int(v[9])
        opensInstallReferrer = Int(v[10]); opensClickId = Int(v[11]); opensRef = Int(v[12])
        opensFingerprint = Int(v[13]); opensOrganic = Int(v[14])
    }

    /// Whether `lane` counts events of one kind, so that lane 0 (events) is their sum: not the
    /// deferred opens (8) nor the opens by match (10…14), which are parts of the opens.
    static func isKindLane(_ lane: Int) -> Bool { lane != 8 && lane < 10 }
}

/// One stored part of a conversion cube (`cube_parts.entries`): the counts of every cell of one
/// grain's bucket that a rollup pass touched, sorted by key. A bucket may have several parts
/// (one per pass that touched it; small ones are merged into one once there are
/// `CubePart.mergeAt`); readers add them all up. Cube blocks (`cube_blocks.entries`) have the
/// same format, without sketches.
///
/// Format (all integers LEB128 varints): the format number (`format`); the entry count; the number of
/// groups; per group, its first entry's tuple id (as a difference from the previous group's)
/// and its length in bytes; then the groups. A group is `groupSize` entries (the last one
/// fewer), each: the key as a difference from the previous entry's key of the group (the
/// first from 0), the length of the rest of the entry, the counts (nine lanes in format 1, ten in
/// format 2, the lanes that are not zero in formats 3 and 4: see `appendCounts`), and the serialized
/// `VisitorSketch` of the clicks' visitors as a length and its bytes (length 0: none). The
/// group index lets a filtered read (one campaign's or one ref's tuples) skip every group that
/// holds none of its tuples, and the entry length every entry it does not want.
enum CubePart {
    /// How many small parts a bucket may have before the next pass that touches it merges them.
    static let mergeAt = 8
    /// Parts from this size on are left as they are (a hot bucket then gains a part a pass
    /// instead of a rewrite of everything it holds).
    static let mergeBytes = 1 << 20
    /// Entries per group of the index.
    static let groupSize = 32
    /// The format number every part starts with: 4 since opens are counted by match type
    /// (lanes 10…14, the header bits 9…13). Parts of format 3 (the same layout, never naming
    /// those lanes), 2 (ten lanes each written) and 1 (nine, before installs by install
    /// referrer) are still read. A reader treats another number as empty.
    static let format: UInt64 = 4

    /// How the entries of a part hold their counts.
    enum CountsLayout {
        /// Every lane, this many of them, each a varint (formats 1 and 2).
        case everyLane(Int)
        /// A header naming the lanes that are not zero, then their values (formats 3 and 4).
        case nonZeroLanes

        /// The layout of a part of this format, nil for an unknown format.
        init?(format: UInt64) {
            switch format {
            case 1: self = .everyLane(9)
            case 2: self = .everyLane(10)
            case 3, 4: self = .nonZeroLanes
            default: return nil
            }
        }
    }

    /// Lanes 1…14 in the order of their bits in a header: those most entries have (clicks,
    /// fallbacks, opens, deferred opens, installs by install referrer) first, so that most
    /// headers take one byte; the opens by match type last (format 4 added them after the
    /// nine of format 3, whose headers read the same).
    static let headerLanes = [1, 2, 7, 8, 9, 4, 5, 3, 6, 10, 11, 12, 13, 14]
    /// `headerLanes` a nibble each (bit b's lane in bits 4b…4b+3), for the reader's loop: a
    /// constant, where the array is a global read through a lazy initializer.
    static let headerLaneNibbles: UInt64 = 0xED_CBA6_3549_8721

    @inline(__always) static func headerLane(bit: Int) -> Int { Int(truncatingIfNeeded: headerLaneNibbles >> UInt64(4 * bit) & 0xF) }

    /// A part of cells with their visitors.
    static func serialize(_ cells: [(key: CubeKey, counts: ConversionCounts)]) -> [UInt8] {
        // Sorted by position, not by moving the (large) elements around.
        let order = cells.indices.sorted { cells[$0].key < cells[$1].key }
        return serialize(count: cells.count, key: { cells[order[$0]].key }) { i, bytes in
            let c = cells[order[i]].counts
            appendCounts(c.vector, to: &bytes)
            let sketch = c.clickVisitors.isEmpty ? [] : c.clickVisitors.serialized
            appendSketchField(length: sketch.count, to: &bytes) { $0.append(contentsOf: sketch) }
        }
    }

    /// Appends an entry's visitor field: its length (0 without click visitors), then the
    /// sketch that `write` appends (`length` bytes; not called for 0).
    static func appendSketchField(length: Int, to bytes: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        appendVarint(UInt64(length), to: &bytes)
        if length > 0 { write(&bytes) }
    }

    /// A part of counts alone (no visitors), as cube blocks keep them.
    static func serialize(vectors cells: [CubeKey: CountsVector]) -> [UInt8] {
        let keys = cells.keys.sorted()
        return serialize(sortedKeys: keys, vectors: keys.map { cells[$0]! })
    }

    /// A part of counts alone, from keys in ascending order without repeats and their counts.
    static func serialize(sortedKeys keys: [CubeKey], vectors: [CountsVector]) -> [UInt8] {
        serialize(count: keys.count, key: { keys[$0] }) { i, bytes in
            appendCounts(vectors[i], to: &bytes)
            bytes.append(0)
        }
    }

    /// Writes `count` entries in key order: the header, the group index and the groups;
    /// `entry` appends the i-th entry's counts and sketch.
    static func serialize(count: Int, key: (Int) -> CubeKey, entry: (Int, inout [UInt8]) -> Void) -> [UInt8] {
        var writer = Writer(expectedCount: count)
        for i in 0..<count { writer.append(key(i)) { entry(i, &$0) } }
        return writer.finish()
    }

    /// Writes a part entry by entry, in key order (without knowing their number first).
    struct Writer {
        private var data: [UInt8] = []
        private var index: [UInt8] = []
        private var body: [UInt8] = []
        private var count = 0
        private var groupStart = 0
        private var previousKey: UInt64 = 0
        private var groupFirst: UInt64 = 0
        private var previousFirst: UInt64 = 0

        init(expectedCount: Int = 0) { data.reserveCapacity(expectedCount * 24) }

        /// Appends the entry of `key`, which follows every key appended before; `entry` appends
        /// its counts and sketch.
        mutating func append(_ key: CubeKey, entry: (inout [UInt8]) -> Void) {
            if count % groupSize == 0 {
                if count > 0 { closeGroup() }
                groupStart = data.count
                previousKey = 0
                groupFirst = UInt64(key.tuple)
            }
            appendVarint(key.packed - previousKey, to: &data)
            previousKey = key.packed
            body.removeAll(keepingCapacity: true)
            entry(&body)
            appendVarint(UInt64(body.count), to: &data)
            data.append(contentsOf: body)
            count += 1
        }

        private mutating func closeGroup() {
            appendVarint(groupFirst - previousFirst, to: &index)
            previousFirst = groupFirst
            appendVarint(UInt64(data.count - groupStart), to: &index)
        }

        /// The part: the header, the group index and the groups.
        mutating func finish() -> [UInt8] {
            if count > 0 { closeGroup() }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(16 + index.count + data.count)
            appendVarint(format, to: &bytes)
            appendVarint(UInt64(count), to: &bytes)
            appendVarint(UInt64((count + groupSize - 1) / groupSize), to: &bytes)
            bytes.append(contentsOf: index)
            bytes.append(contentsOf: data)
            return bytes
        }
    }

    /// Reads a stored part entry by entry, in key order, as far as it is well-formed (a group
    /// whose length runs past the end is left out, and what follows it; a part of another format
    /// reads as empty): `forEach` for a merge, which reads several parts side by side.
    struct Cursor {
        private let bytes: UnsafeRawBufferPointer
        private var layout = CountsLayout.everyLane(0)
        private var left = 0
        private var inGroup = 0
        private var indexOffset = 0
        private var at = 0
        private var groupEnd = 0
        private var key: UInt64 = 0
        /// The entry read last (after `next` answered true): its key, counts and sketch bytes.
        private(set) var entry: (key: CubeKey, counts: CountsVector, sketch: UnsafeRawBufferPointer)?

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            var offset = 0
            guard let layout = readVarint(bytes, &offset).flatMap(CountsLayout.init(format:)), let count = readVarint(bytes, &offset),
                  let groups = readVarint(bytes, &offset), groups <= count else { return }
            indexOffset = offset
            for _ in 0..<(2 * groups) { guard readVarint(bytes, &offset) != nil else { return } }
            self.layout = layout
            left = Int(count)
            at = offset
            groupEnd = offset
        }

        /// Reads the next entry into `entry`; false (and `entry` nil) at the end.
        mutating func next() -> Bool {
            entry = nil
            guard left > 0 else { return false }
            if inGroup == 0 {
                // The group's length, from the index; its first tuple is not needed here.
                guard readVarint(bytes, &indexOffset) != nil, let length = readVarint(bytes, &indexOffset),
                      groupEnd + Int(length) <= bytes.count else { return end() }
                at = groupEnd
                groupEnd += Int(length)
                inGroup = min(groupSize, left)
                key = 0
            }
            let group = UnsafeRawBufferPointer(rebasing: bytes[..<groupEnd])
            guard let delta = readVarint(group, &at), let size = readVarint(group, &at), at + Int(size) <= groupEnd else { return end() }
            key &+= delta
            let entryEnd = at + Int(size)
            guard let (v, sketch) = readCounts(group, &at, layout: layout, end: entryEnd) else { return end() }
            entry = (CubeKey(packed: key), v, sketch)
            at = entryEnd
            left -= 1
            inGroup -= 1
            return true
        }

        private mutating func end() -> Bool {
            left = 0
            return false
        }
    }

    /// One part of every entry of `parts` (stored parts, each in key order): the counts of a
    /// key added up, its click visitors merged. In one pass over them side by side, so a merge
    /// holds the parts and the new part, not a table of every cell (which took 38 MB for a hot
    /// bucket's parts under overload).
    static func merge(_ parts: [UnsafeRawBufferPointer]) -> [UInt8] {
        var cursors = parts.map(Cursor.init)
        var live: [Int] = []
        for i in cursors.indices where cursors[i].next() { live.append(i) }
        var writer = Writer(expectedCount: parts.reduce(0) { $0 + $1.count } / 24)
        var sketches: [UnsafeRawBufferPointer] = []
        while !live.isEmpty {
            let key = live.lazy.map { cursors[$0].entry!.key }.min()!
            var counts = CountsVector()
            sketches.removeAll(keepingCapacity: true)
            var k = 0
            while k < live.count {
                let i = live[k]
                guard let entry = cursors[i].entry, entry.key == key else {
                    k += 1
                    continue
                }
                counts &+= entry.counts
                if !entry.sketch.isEmpty { sketches.append(entry.sketch) }
                if cursors[i].next() { k += 1 } else { live.remove(at: k) }
            }
            writer.append(key) { bytes in
                appendCounts(counts, to: &bytes)
                switch sketches.count {
                case 0: appendSketchField(length: 0, to: &bytes) { _ in }
                case 1: appendSketchField(length: sketches[0].count, to: &bytes) { $0.append(contentsOf: sketches[0]) }
                default:
                    var sketch = VisitorSketch(serialized: sketches[0])
                    for other in sketches.dropFirst() { sketch.merge(serialized: other) }
                    let merged = sketch.serialized
                    appendSketchField(length: merged.count, to: &bytes) { $0.append(contentsOf: merged) }
                }
            }
        }
        return writer.finish()
    }

    /// Appends an entry's counts (negative ones as 0) in format 3: a header, then the events
    /// when they are not the sum of the kinds, then the lanes that are not zero unless all of
    /// them are 1. The header is `mask << 2 | derived << 1 | ones`: bit b of `mask` for lane
    /// `headerLanes[b]` not zero, `derived` when lane 0 (events) is the sum of the kind lanes
    /// (`ConversionCounts.isKindLane`), `ones` when every lane named is 1. Most entries are
    /// one click, or an install with its link: one byte (an open, with its match lane, two),
    /// against ten lanes of one byte each in format 2 (a quarter of the rollup file).
    static func appendCounts(_ v: CountsVector, to bytes: inout [UInt8]) {
        var mask: UInt64 = 0
        var ones = true
        var kinds: Int64 = 0
        for (bit, lane) in headerLanes.enumerated() where v[lane] > 0 {
            mask |= 1 << UInt64(bit)
            if v[lane] != 1 { ones = false }
            if ConversionCounts.isKindLane(lane) { kinds &+= v[lane] }
        }
        let events = max(v[0], 0)
        let derived = events == kinds
        appendVarint(mask << 2 | (derived ? 2 : 0) | (ones ? 1 : 0), to: &bytes)
        if !derived { appendVarint(UInt64(events), to: &bytes) }
        if !ones {
            for lane in headerLanes where v[lane] > 0 { appendVarint(UInt64(v[lane]), to: &bytes) }
        }
    }

    /// Calls `body` with every entry of a stored part: its key, its counts and its sketch's bytes
    /// (empty when it has none).
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (CubeKey, CountsVector, UnsafeRawBufferPointer) -> Void) {
        forEach(in: bytes, selecting: EveryTuple(), body)
    }

    /// Calls `body` with the entries of a stored part whose tuples `selection` wants: a group
    /// whose tuple ids lie in a range it wants none of is skipped unread, and so is every
    /// entry of a tuple it does not want. A malformed part is read as far as it is
    /// well-formed (a torn group is left out whole); a part of another format reads as empty.
    /// Generic rather than a closure, so the test per entry is inlined into the loop (a closure
    /// there cost a retain and a release an entry).
    static func forEach<Selection: CubeTupleSelection>(
        in bytes: UnsafeRawBufferPointer, selecting selection: Selection,
        _ body: (CubeKey, CountsVector, UnsafeRawBufferPointer) -> Void
    ) {
        var offset = 0
        guard let layout = readVarint(bytes, &offset).flatMap(CountsLayout.init(format:)), let count = readVarint(bytes, &offset),
              let groups = readVarint(bytes, &offset), groups <= count else { return }
        // The index (two varints a group) is read alongside the groups it describes.
        var indexOffset = offset
        for _ in 0..<(2 * groups) { guard readVarint(bytes, &offset) != nil else { return } }
        var data = offset
        var first = 0
        guard var firstDelta = readVarint(bytes, &indexOffset), var length = readVarint(bytes, &indexOffset) else { return }
        for g in 0..<Int(groups) {
            first += Int(firstDelta)
            let groupStart = data
            data += Int(length)
            var last = Int.max
            if g + 1 < Int(groups) {
                guard let d = readVarint(bytes, &indexOffset), let l = readVarint(bytes, &indexOffset) else { return }
                firstDelta = d
                length = l
                last = first + Int(d)
            }
            guard data <= bytes.count else { return }
            if !selection.wantsGroup(first: first, last: last) { continue }
            let group = UnsafeRawBufferPointer(rebasing: bytes[groupStart..<data])
            var at = 0
            var key: UInt64 = 0
            for _ in 0..<min(groupSize, Int(count) - g * groupSize) {
                guard let delta = readVarint(group, &at), let size = readVarint(group, &at), at + Int(size) <= group.count else { return }
                key &+= delta
                let end = at + Int(size)
                defer { at = end }
                if !selection.wants(tuple: Int(key >> 16)) { continue }
                guard let (v, sketch) = readCounts(group, &at, layout: layout, end: end) else { return }
                body(CubeKey(packed: key), v, sketch)
            }
        }
    }

    /// Reads an entry's counts (in `layout`) and its sketch field at `at`, within the
    /// entry's `end`: nil when they run past it.
    @inline(__always)
    static func readCounts(
        _ group: UnsafeRawBufferPointer, _ at: inout Int, layout: CountsLayout, end: Int
    ) -> (CountsVector, UnsafeRawBufferPointer)? {
        var v = CountsVector()
        switch layout {
        case .everyLane(let lanes):
            for lane in 0..<lanes {
                guard let n = readVarint(group, &at) else { return nil }
                v[lane] = Int64(truncatingIfNeeded: n)
            }
        case .nonZeroLanes:
            guard let header = readVarint(group, &at) else { return nil }
            var mask = header >> 2
            guard mask >> 14 == 0 else { return nil }  // fourteen header lanes
            let derived = header & 2 != 0, ones = header & 1 != 0
            if !derived {
                guard let n = readVarint(group, &at) else { return nil }
                v[0] = Int64(truncatingIfNeeded: n)
            }
            var kinds: Int64 = 0
            while mask != 0 {
                let lane = headerLane(bit: mask.trailingZeroBitCount)
                mask &= mask - 1
                var n: Int64 = 1
                if !ones {
                    guard let read = readVarint(group, &at) else { return nil }
                    n = Int64(truncatingIfNeeded: read)
                }
                v[lane] = n
                if ConversionCounts.isKindLane(lane) { kinds &+= n }
            }
            if derived { v[0] = kinds }
        }
        guard let sketch = readVarint(group, &at), at + Int(sketch) <= end else { return nil }
        return (v, UnsafeRawBufferPointer(rebasing: group[at..<(at + Int(sketch))]))
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var x = value
        while x >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: x) | 0x80)
            x >>= 7
        }
        bytes.append(UInt8(x))
    }

    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        // Most numbers here (counts, key differences) fit in one byte.
        if offset < bytes.count, bytes[offset] < 0x80 {
            offset += 1
            return UInt64(bytes[offset - 1])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count && shift < 64 {
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        return nil
    }
}

/// Which tuples a read of cube parts wants (`CubePart.forEach(in:selecting:_:)`).
protocol CubeTupleSelection {
    /// Whether any tuple id in [first, last] is wanted (`last` is `Int.max` for a part's last group).
    func wantsGroup(first: Int, last: Int) -> Bool
    /// Whether the entries of this tuple id are wanted.
    func wants(tuple: Int) -> Bool
}

/// Every tuple of a part.
struct EveryTuple: CubeTupleSelection {
    @inline(__always) func wantsGroup(first: Int, last: Int) -> Bool { true }
    @inline(__always) func wants(tuple: Int) -> Bool { true }
}

/// Blocks of whole UTC days at power-of-two sizes, for breakdowns over long ranges.
///
/// Level 0 (one day) is the day cube, which holds every day. The levels above (`cube_blocks`)
/// hold only the days before the rollup file's `blocks_merged_through_day`, which trails the
/// newest day counted by `horizonDays`: fresh events then touch only day cubes, and each day
/// is added to the levels above once.
enum DayBlocks {
    /// Blocks of 1, 4, 16, 64 and 256 days: every day is added to four blocks, and a range
    /// of whole days is read in at most six blocks a level.
    static let levels = [0, 2, 4, 6, 8]
    /// How many of the newest days stay in day cubes only.
    static let horizonDays: Int64 = 2

    /// The fewest aligned blocks that exactly cover the days [from, to): (level, block) pairs.
    static func cover(from: Int64, to: Int64) -> [(level: Int, block: Int64)] {
        var blocks: [(level: Int, block: Int64)] = []
        var day = from
        while day < to {
            // The largest block that starts at `day` and ends by `to`.
            let level = levels.last { day % (Int64(1) << $0) == 0 && day + (Int64(1) << $0) <= to } ?? 0
            blocks.append((level, day >> level))
            day += Int64(1) << level
        }
        return blocks
    }
}
