import LinkpulseDomain
import Testing

@testable import LinkpulseStore

@Suite struct CubePartTests {
    @Test func dayBlocksCoverRangesExactlyWithFewBlocks() {
        for (from, to) in [(Int64(0), Int64(1)), (20_689, 20_779), (5, 300), (20_000, 20_400), (7, 8)] {
            let blocks = DayBlocks.cover(from: from, to: to)
            var day = from
            for (level, block) in blocks {
                #expect(block << level == day, "blocks are contiguous and aligned")
                day += Int64(1) << level
            }
            #expect(day == to)
            #expect(blocks.count <= 6 * DayBlocks.levels.count)
            #expect(blocks.allSatisfy { DayBlocks.levels.contains($0.level) })
        }
    }

    static func read(_ bytes: [UInt8]) -> [(CubeKey, CountsVector, [UInt8])] {
        var entries: [(CubeKey, CountsVector, [UInt8])] = []
        bytes.withUnsafeBytes { raw in CubePart.forEach(in: raw) { entries.append(($0, $1, Array($2))) } }
        return entries
    }

    @Test func partsRoundTripSortedWithTheirVisitors() {
        var clicks = ConversionCounts()
        for visitor in [UInt64(7), 3, 7] {
            clicks.add(CountedEvent(kind: .click, platform: .ios, isBot: false, deferred: false, visitorHash: visitor, dimensions: LinkDimensions(), match: nil))
        }
        var install = ConversionCounts()
        install.add(CountedEvent(kind: .install, platform: .android, isBot: true, deferred: false, visitorHash: 0, dimensions: LinkDimensions(), match: .fingerprint))
        install.events = 300  // a count past one varint byte
        let big = CubeKey(tuple: 4_000_000_000, platform: .other, isBot: true)
        let small = CubeKey(tuple: 1, platform: .android, isBot: true)
        let bytes = CubePart.serialize([(big, clicks), (small, install)])
        let entries = Self.read(bytes)
        #expect(entries.map(\.0) == [small, big])
        #expect(entries[0].0.tuple == 1 && entries[0].0.platform == .android && entries[0].0.isBot)
        #expect(entries[1].0.tuple == 4_000_000_000 && entries[1].0.platform == .other)
        #expect(ConversionCounts(vector: entries[0].1) == { var c = install; c.clickVisitors = VisitorSketch(); return c }())
        #expect(entries[0].2.isEmpty)
        #expect(ConversionCounts(vector: entries[1].1).clicks == 3)
        #expect(VisitorSketch(serialized: entries[1].2).count == 2)

        let twice = bytes.withUnsafeBytes { CubePart.merge([$0, $0]) }
        let merged = Self.read(twice)
        #expect(merged.map(\.0) == [small, big])
        #expect(merged[1].1[1] == 6 && VisitorSketch(serialized: merged[1].2).count == 2)
        #expect(merged[0].1[0] == 600 && merged[0].2.isEmpty)
    }

    /// A merge of parts read side by side gives what adding every entry up in a table and
    /// writing that gives: the union of the keys in order, counts added, visitors merged. Parts
    /// of several groups, keys in one, some or all of them, sketches on some entries only.
    @Test func aMergeOfPartsAddsUpEveryKeyAsATableWould() {
        var generator = SystemRandomNumberGenerator()
        var parts: [[UInt8]] = []
        var expected: [CubeKey: ConversionCounts] = [:]
        for p in 0..<5 {
            var cells: [CubeKey: ConversionCounts] = [:]
            for _ in 0..<(p == 4 ? 0 : Int.random(in: 1...300, using: &generator)) {
                let key = CubeKey(tuple: UInt32.random(in: 0..<400, using: &generator), platform: .ios, isBot: Bool.random(using: &generator))
                var counts = ConversionCounts()
                counts.events = Int.random(in: 1...1_000, using: &generator)
                counts.clicks = Int.random(in: 0...3, using: &generator)
                for _ in 0..<counts.clicks { counts.clickVisitors.insert(hash: UInt64.random(in: 1...50, using: &generator)) }
                cells[key, default: ConversionCounts()].add(counts)
                expected[key, default: ConversionCounts()].add(counts)
            }
            parts.append(CubePart.serialize(cells.map { ($0.key, $0.value) }))
        }
        let merged = Self.read(parts.withPointers { CubePart.merge($0) })
        #expect(merged.map(\.0) == expected.keys.sorted())
        for (key, counts, sketch) in merged {
            #expect(ConversionCounts(vector: counts).events == expected[key]?.events)
            #expect(ConversionCounts(vector: counts).clicks == expected[key]?.clicks)
            #expect(sketch == (expected[key]!.clickVisitors.isEmpty ? [] : expected[key]!.clickVisitors.serialized))
        }
        // Each part alone reads as `forEach` reads it, and a truncated one as far as its whole groups.
        for part in parts {
            #expect(Self.read([part].withPointers { CubePart.merge($0) }).map(\.0) == Self.read(part).map(\.0))
        }
        let truncated = Array(parts[0].prefix(parts[0].count - 1))
        #expect(Self.read([truncated].withPointers { CubePart.merge($0) }).count == Self.read(truncated).count)
    }

    @Test func sumsAddUpEachTuplesPlatformsByAudience() {
        var cells: [CubeKey: CountsVector] = [:]
        for tuple in [UInt32(3), 70, 71] {
            for (i, platform) in [Platform.ios, .android, .other].enumerated() {
                var v = CountsVector()
                v[0] = Int64(tuple) + Int64(i); v[1] = 1
                cells[CubeKey(tuple: tuple, platform: platform, isBot: false)] = v
                if tuple == 70 { cells[CubeKey(tuple: tuple, platform: platform, isBot: true)] = v &* 10 }
            }
        }
        let sums = CubePart.serialize(vectors: cells).withUnsafeBytes { CubeSums(decoding: $0) }
        var got: [String] = []
        sums.forEach { tuple, isBot, v in got.append("\(tuple)\(isBot ? "b" : "p"):\(v[0]),\(v[1])") }
        #expect(got == ["3p:12,3", "70p:213,3", "70b:2130,30", "71p:216,3"])
        // Sums added up: the union of their keys, in order, equal keys added.
        let other = CubePart.serialize(vectors: [CubeKey(tuple: 70, platform: .web, isBot: false): CountsVector(repeating: 1),
                                                 CubeKey(tuple: 5, platform: .web, isBot: true): CountsVector(repeating: 2)])
            .withUnsafeBytes { CubeSums(decoding: $0) }
        var added: [String] = []
        sums.adding(other).forEach { tuple, isBot, v in added.append("\(tuple)\(isBot ? "b" : "p"):\(v[0]),\(v[1])") }
        #expect(added == ["3p:12,3", "5b:2,2", "70p:214,4", "70b:2130,30", "71p:216,3"])
        #expect(CubeSums().adding(sums).keys == sums.keys && sums.adding(CubeSums()).keys == sums.keys)
    }

    @Test func theSumsCacheKeepsTheMostRecentlyUsedWithinItsBound() {
        let bytes = CubePart.serialize(vectors: Dictionary(uniqueKeysWithValues: (1...100).map { (CubeKey(tuple: UInt32($0), platform: .ios, isBot: false), CountsVector(repeating: 1)) }))
        let sums = bytes.withUnsafeBytes { CubeSums(decoding: $0) }
        let cache = CubeSumsCache(limitBytes: 3 * sums.bytes)
        for tag in Int64(1)...3 { cache.keep(sums, key: [tag]) }
        #expect(cache.sums(key: [1]) != nil)  // 1 is now more recent than 2
        cache.keep(sums, key: [4])
        #expect(cache.usage.count == 3 && cache.usage.bytes <= cache.limitBytes)
        #expect(cache.sums(key: [2]) == nil, "the least recently used went first")
        #expect(cache.sums(key: [1]) != nil && cache.sums(key: [3]) != nil && cache.sums(key: [4]) != nil)
        let huge = CubeSumsCache(limitBytes: sums.bytes - 1)
        huge.keep(sums, key: [9])
        #expect(huge.usage.count == 0, "sums larger than the whole bound are not kept")
    }

    @Test func blocksKeepCountsWithoutVisitorsAndMalformedPartsReadAsFarAsTheyGo() {
        var v = CountsVector()
        v[1] = 5
        let key = CubeKey(tuple: 9, platform: .web, isBot: false)
        let bytes = CubePart.serialize(vectors: [key: v, CubeKey(tuple: 10, platform: .ios, isBot: false): v])
        #expect(Self.read(bytes).map(\.0.tuple) == [9, 10])
        #expect(Self.read(bytes).allSatisfy { $0.1[1] == 5 && $0.2.isEmpty })
        #expect(Self.read(Array(bytes.dropLast(3))).isEmpty)  // a torn group is left out whole
        #expect(Self.read([0xff]).isEmpty)
        #expect(Self.read([9] + bytes.dropFirst()).isEmpty)  // another format
    }

    /// Format 3 writes only the lanes that are not zero: any counts read back the same, and
    /// the entries most parts hold (one click; an install and an open of one link; events that
    /// are the sum of their kinds, each 1) take one byte of counts.
    @Test func countsOfEveryShapeRoundTripAndTheCommonOnesTakeOneByte() {
        var rng = SplitMix64(seed: 12)
        var cells: [CubeKey: CountsVector] = [:]
        for tuple in 1...400 {
            var v = CountsVector()
            for lane in 1..<10 where rng.chance(0.3) { v[lane] = Int64(rng.chance(0.5) ? 1 : rng.below(100_000) + 1) }
            v[0] = rng.chance(0.5) ? (1..<10).filter { $0 != 8 }.reduce(0) { $0 + v[$1] } : Int64(rng.below(1_000))
            cells[CubeKey(tuple: UInt32(tuple), platform: .ios, isBot: rng.chance(0.5))] = v
        }
        let read = Self.read(CubePart.serialize(vectors: cells))
        #expect(read.count == cells.count)
        for (key, v, _) in read { #expect(cells[key] == v, "tuple \(key.tuple)") }

        func countBytes(_ lanes: [Int: Int64]) -> Int {
            var v = CountsVector()
            for (lane, n) in lanes { v[lane] = n }
            var bytes: [UInt8] = []
            CubePart.appendCounts(v, to: &bytes)
            return bytes.count
        }
        #expect(countBytes([0: 1, 1: 1]) == 1)  // a click
        #expect(countBytes([0: 2, 1: 1, 2: 1]) == 1)  // a click and a fallback
        #expect(countBytes([0: 2, 7: 1, 8: 1, 9: 1]) == 1)  // an install by referrer and its deferred open
        #expect(countBytes([:]) == 1)
        #expect(countBytes([0: 5, 1: 2]) == 3)  // events beside a count past 1
    }

    /// A part of an older format by hand: one entry of `key`, its lanes each a varint.
    static func part(format: UInt64, key: CubeKey, lanes: [UInt64]) -> [UInt8] {
        var entry: [UInt8] = []
        for lane in lanes { CubePart.appendVarint(lane, to: &entry) }
        entry.append(0)  // no visitors
        var group: [UInt8] = []
        CubePart.appendVarint(key.packed, to: &group)
        CubePart.appendVarint(UInt64(entry.count), to: &group)
        group += entry
        var bytes: [UInt8] = []
        for n in [format, 1, 1, UInt64(key.tuple), UInt64(group.count)] { CubePart.appendVarint(n, to: &bytes) }  // format, count, groups, index
        return bytes + group
    }

    /// Parts of format 2 (every one of the ten lanes written) are still read.
    @Test func partsOfTheTenLaneFormatAreStillRead() {
        let key = CubeKey(tuple: 4, platform: .ios, isBot: true)
        let read = Self.read(Self.part(format: 2, key: key, lanes: (0..<10).map { UInt64($0 * 3) }))
        #expect(read.map(\.0) == [key])
        #expect((0..<10).map { read.first?.1[$0] } == (0..<10).map { Int64($0 * 3) })
    }

    /// Parts written before installs by install referrer had their lane (format 1, nine
    /// counts an entry) are still read, with that count 0: no rebuild at the upgrade.
    @Test func partsOfTheNineLaneFormatAreStillRead() {
        let key = CubeKey(tuple: 9, platform: .android, isBot: false)
        let read = Self.read(Self.part(format: 1, key: key, lanes: (1...9).map { UInt64($0) }))
        #expect(read.map(\.0) == [key])
        #expect((0..<10).map { read.first?.1[$0] } == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0])
        #expect(read.first.map { ConversionCounts(vector: $0.1).installsInstallReferrer } == 0)
    }

    @Test func aFilteredReadSkipsGroupsWithoutItsTuples() {
        var v = CountsVector()
        v[0] = 1
        var cells: [CubeKey: CountsVector] = [:]
        for tuple in 1...100 { cells[CubeKey(tuple: UInt32(tuple), platform: .ios, isBot: false)] = v }
        let bytes = CubePart.serialize(vectors: cells)
        #expect(Self.read(bytes).map(\.0.tuple) == Array(1...100))
        var seen: [Int] = []
        let selection = OneTupleAsked(tuple: 70)
        bytes.withUnsafeBytes { raw in
            CubePart.forEach(in: raw, selecting: selection) { key, _, _ in seen.append(key.tuple) }
        }
        #expect(selection.groupsAsked.count == 4, "one question per group of \(CubePart.groupSize)")
        #expect(selection.tuplesAsked == Array(65...96), "only the entries of the group that holds it")
        #expect(seen == [70])
    }

    @Test func headerLaneNibblesHoldTheHeaderLanes() {
        #expect((0..<CubePart.headerLanes.count).map { CubePart.headerLane(bit: $0) } == CubePart.headerLanes)
    }
}

/// Wants one tuple, and records what a read asked it.
private final class OneTupleAsked: CubeTupleSelection {
    let tuple: Int
    var groupsAsked: [ClosedRange<Int>] = []
    var tuplesAsked: [Int] = []

    init(tuple: Int) { self.tuple = tuple }

    func wantsGroup(first: Int, last: Int) -> Bool {
        groupsAsked.append(first...min(last, 1_000))
        return (first...last).contains(tuple)
    }

    func wants(tuple: Int) -> Bool {
        tuplesAsked.append(tuple)
        return tuple == self.tuple
    }
}

extension Array where Element == [UInt8] {
    /// Calls `body` with a pointer to every array's bytes, in order.
    func withPointers<R>(_ body: ([UnsafeRawBufferPointer]) -> R) -> R {
        func nest(_ i: Int, _ pointers: [UnsafeRawBufferPointer]) -> R {
            i == count ? body(pointers) : self[i].withUnsafeBytes { nest(i + 1, pointers + [$0]) }
        }
        return nest(0, [])
    }
}

@Suite struct NarrowIdsTests {
    @Test func idsReadBackAsAppendedWhileTheWidthGrows() {
        var ids = NarrowIds()
        var appended: [Int32] = []
        func append(_ id: Int32) {
            ids.append(id)
            appended.append(id)
            #expect((0..<ids.count).map { ids[$0] } == appended)
        }
        append(0); append(255)
        #expect(ids.width == 1)
        append(256)
        #expect(ids.width == 2)
        append(7); append(65_535)
        #expect(ids.width == 2)
        append(65_536)
        #expect(ids.width == 4)
        append(Int32.max); append(3)
        #expect(ids.width == 4)
        #expect(NarrowIds([70_000, 1]).width == 4, "wide from the first id")
        #expect(NarrowIds(appended) == ids)
    }

    @Test func aCopyKeepsItsIdsWhenTheOriginalGrows() {
        var ids = NarrowIds([1, 2, 3])
        let copy = ids
        ids.append(300)
        ids.append(1)
        #expect(copy.count == 3 && copy.width == 1)
        #expect((0..<copy.count).map { copy[$0] } == [1, 2, 3])
        #expect((0..<ids.count).map { ids[$0] } == [1, 2, 3, 300, 1])
    }
}
