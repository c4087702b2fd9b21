import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// The flat cells a rollup pass counts into give exactly what `ConversionCounts` and
/// `VisitorSketch` give for the same events.
@Suite struct PassCellsTests {
    /// A key of the tests' cells.
    struct Name: PassCellKey, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        var name: String
        init(stringLiteral name: String) { self.name = name }
        init(integerLiteral n: Int) { name = "\(n)" }
        init(_ n: Int) { name = "\(n)" }
        // A poor hash on purpose: collisions must not matter.
        var cellHash: UInt64 { UInt64(name.utf8.count) }
    }

    /// Every kind of event, every match type, deferred or not, over three cells.
    static func events() -> [(cell: Int, event: CountedEvent)] {
        var events: [(Int, CountedEvent)] = []
        var generator = SystemRandomNumberGenerator()
        for i in 0..<3_000 {
            let kind = EventKind.allCases[i % EventKind.allCases.count]
            let match: MatchType? = kind == .click ? nil : MatchType.allCases[(i / 4) % MatchType.allCases.count]
            // Cell 2 gets more than `exactLimit` visitors (registers); repeats in every cell.
            let cell = i % 7 == 0 ? 0 : (i % 7 == 1 ? 1 : 2)
            let visitor = cell == 2 ? UInt64.random(in: 0...UInt64.max, using: &generator) : UInt64(i % 5)
            events.append((cell, CountedEvent(
                kind: kind, platform: .ios, isBot: false, deferred: i % 3 == 0, visitorHash: visitor,
                dimensions: LinkDimensions(), match: match)))
        }
        // More distinct visitors in cell 2 than one sketch keeps exactly.
        for i in 0..<(VisitorSketch.exactLimit + 50) {
            events.append((2, CountedEvent(
                kind: .click, platform: .ios, isBot: false, deferred: false, visitorHash: UInt64(i) &* 0x9E37_79B9_7F4A_7C15,
                dimensions: LinkDimensions(), match: nil)))
        }
        return events
    }

    @Test func cellsCountAndSketchWhatConversionCountsDo() {
        var cells = PassCells<Name>()
        var expected = [ConversionCounts](repeating: ConversionCounts(), count: 3)
        for (cell, event) in Self.events().shuffled() {
            cells.count(event, in: cells.cell(Name(cell)))
            expected[cell].add(event)
        }
        let visitors = cells.visitors()
        for (i, key) in cells.keys.enumerated() {
            let expected = expected[Int(key.name)!]
            #expect(cells.counts[i].widened == expected.vector, "cell \(key)")
            if expected.clickVisitors.count <= VisitorSketch.exactLimit {
                #expect(visitors.count(i) == expected.clickVisitors.count, "cell \(key)")
            }
            #expect(visitors.sketch(i) == (expected.clickVisitors.isEmpty ? nil : expected.clickVisitors.serialized), "cell \(key)")
        }
        #expect(VisitorSketch(serialized: visitors.sketch(cells.keys.firstIndex(of: 2)!)!).count > VisitorSketch.exactLimit)
    }

    /// Cells on both sides of what a sketch keeps exactly, with many repeats: more clicks than
    /// `exactLimit` but no more distinct visitors stays exact; one distinct visitor more is
    /// registers, the same bytes as a sketch built a visitor at a time. The zero hash counts
    /// as a visitor like any other.
    @Test func cellsAroundTheExactLimitSketchAsAVisitorAtATimeDoes() {
        let limit = VisitorSketch.exactLimit
        var generator = SystemRandomNumberGenerator()
        let distinct = (0..<(limit + 1)).map { _ in UInt64.random(in: 1...UInt64.max, using: &generator) }
        let runs: [Int: [UInt64]] = [
            0: Array(repeating: Array(distinct.prefix(limit)), count: 5).flatMap { $0 },  // 5,000 clicks, 1,000 visitors
            1: Array(repeating: distinct, count: 2).flatMap { $0 },  // 1,001 visitors, each twice
            2: [0, 0] + Array(distinct.prefix(limit - 1)) + Array(distinct.prefix(10)),  // 1,000 with the zero hash
            3: [0] + Array(distinct.prefix(limit)) + [0],  // 1,001 with the zero hash
            4: Array(distinct.prefix(3)),
        ]
        var cells = PassCells<Name>()
        var expected: [Int: VisitorSketch] = [:]
        for (cell, hashes) in runs {
            for hash in hashes {
                cells.count(CountedEvent(
                    kind: .click, platform: .ios, isBot: false, deferred: false, visitorHash: hash,
                    dimensions: LinkDimensions(), match: nil), in: cells.cell(Name(cell)))
                expected[cell, default: VisitorSketch()].insert(hash: hash)
            }
        }
        let visitors = cells.visitors()
        for (i, key) in cells.keys.enumerated() {
            let sketch = expected[Int(key.name)!]!
            #expect(visitors.sketch(i) == sketch.serialized, "cell \(key)")
            #expect(visitors.count(i) == min(Set(runs[Int(key.name)!]!).count, limit + 1), "cell \(key)")
        }
    }

    @Test func regroupingAddsCellsUpAndLeavesOutWhatItSkips() {
        var cells = PassCells<Name>()
        var everything = ConversionCounts()
        var odd = ConversionCounts()
        for (cell, event) in Self.events() {
            cells.count(event, in: cells.cell(Name(cell)))
            if cell != 1 { everything.add(event) }
            if cell == 1 { odd.add(event) }
        }
        let merged = cells.regrouped { cell, _ -> Name? in cell == 1 ? nil : "all" }
        #expect(merged.keys == ["all"])
        #expect(merged.counts[0].widened == everything.vector)
        #expect(merged.visitors().sketch(0) == everything.clickVisitors.serialized)
        let clicked = cells.regrouped { cell, counts -> Name? in counts[1] > 0 && cell == 1 ? cell : nil }
        #expect(clicked.keys == [1])
        #expect(clicked.counts[0].widened == odd.vector)
    }

    /// A pass whose cells are all in one 15-minute bucket rolls up into hours and days by
    /// relabelling (its counts shared, not copied): the same cells, counts and visitors as
    /// regrouping gives, and every cell found again by its new key. Cells in two buckets of one
    /// hour are still added up.
    @Test func coarserGrainsOfOneBucketAreTheSameCellsRelabelled() {
        let quarter = Int64(1_763_632_800_000) + 15 * 60_000
        func table(buckets: [Int64]) -> PassCells<CubeCell> {
            var cells = PassCells<CubeCell>()
            for (i, (_, event)) in Self.events().enumerated() {
                let key = CubeKey(tuple: UInt32(i % 50), platform: Platform.allCases[i % Platform.allCases.count], isBot: i % 11 == 0)
                cells.count(event, in: cells.cell(CubeCell(bucket: buckets[i % buckets.count], key: key)))
            }
            return cells
        }
        let one = table(buckets: [quarter])
        for length in [TimeGrain.hourMs, TimeGrain.dayMs] {
            let relabelled = one.coarser(length)
            let regrouped = one.regrouped { cell, _ in CubeCell(bucket: TimeGrain.floor(cell.bucket, length), key: cell.key) }
            #expect(relabelled.keys == regrouped.keys)
            #expect(relabelled.counts == regrouped.counts)
            let (a, b) = (relabelled.visitors(), regrouped.visitors())
            #expect(relabelled.keys.indices.allSatisfy { a.sketch($0) == b.sketch($0) })
            var lookedUp = relabelled
            #expect(relabelled.keys.enumerated().allSatisfy { lookedUp.cell($0.element) == $0.offset })
            #expect(lookedUp.count == relabelled.count)
        }
        let two = table(buckets: [quarter, quarter + 15 * 60_000])
        let hours = two.coarser(TimeGrain.hourMs)
        #expect(hours.count == one.count)
        #expect(hours.counts.reduce(PassCounts(), &+) == one.counts.reduce(PassCounts(), &+))
    }

    @Test func aCellWithoutClicksHasNoSketch() {
        var cells = PassCells<Name>()
        cells.count(CountedEvent(kind: .open, platform: .web, isBot: true, deferred: true, visitorHash: 9, dimensions: LinkDimensions(), match: .organic), in: cells.cell("a"))
        let visitors = cells.visitors()
        #expect(visitors.count(0) == 0)
        #expect(visitors.sketch(0) == nil)
        #expect(cells.counts[0][0] == 1 && cells.counts[0][7] == 1 && cells.counts[0][8] == 1)
    }
}

/// The packed keys of a pass's rows by audience give back what they were made of.
@Suite struct AudienceCellTests {
    @Test func keysGiveBackTheirParts() {
        let day = TimeGrain.dayMs
        for (bucket, isBot, text, host) in [
            (Int64(0), false, Int64(0), UInt32(0)), (20_400 * day, true, 1, 1), (20_789 * day, false, (1 << 40) - 1, UInt32((1 << 24) - 1)),
            (-3 * day, true, 123_456_789, 77),
        ] {
            let key = AudienceKey(text: text, host: host)
            #expect(key.text == text && key.host == host)
            let cell = AudienceCell(bucket: bucket, audience: key, isBot: isBot)
            #expect(cell.bucket == bucket && cell.isBot == isBot && cell.audience == key, "\(bucket) \(isBot)")
        }
        // Neighbouring days, people and bots, and neighbouring texts and hosts are all apart.
        let cells = [(0, false, 1, 1), (1, false, 1, 1), (0, true, 1, 1), (0, false, 2, 1), (0, false, 1, 2)].map { day, bot, text, host in
            AudienceCell(bucket: Int64(day) * TimeGrain.dayMs, audience: AudienceKey(text: Int64(text), host: UInt32(host)), isBot: bot)
        }
        #expect(Set(cells).count == cells.count && Set(cells.map(\.cellHash)).count == cells.count)
    }
}
