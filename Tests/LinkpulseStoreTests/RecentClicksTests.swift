import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// The memory half of the click indexes on its own: what it holds, finds and hands to disk.
@Suite struct RecentClicksTests {
    static let ios = Fingerprint(ipKey: 7, platform: .ios)

    @Test func findsTheNewestAtOrBeforeAndTheFingerprintWindowNewestFirst() {
        var recent = RecentClicks(horizonMs: 100, throughSeq: 0, capacity: 1_000)
        let held = [
            recent.add(seq: 1, ms: 200, ref: "a", fingerprint: Self.ios, osVersion: "17.1"),
            recent.add(seq: 2, ms: 300, ref: "a", fingerprint: Self.ios, osVersion: nil),
            recent.add(seq: 3, ms: 300, ref: "a", fingerprint: nil, osVersion: nil),  // same instant, stored later
            recent.add(seq: 4, ms: 250, ref: "a", fingerprint: Self.ios, osVersion: "16.0"),  // late
            recent.add(seq: 5, ms: 99, ref: "a", fingerprint: Self.ios, osVersion: nil),  // before the horizon: for disk
        ]
        #expect(held == [true, true, true, true, false])
        #expect(recent.entries == 7)
        #expect(recent.newest(ref: "a", atOrBefore: 299) == .init(ms: 250, seq: 4))
        #expect(recent.newest(ref: "a", atOrBefore: 300) == .init(ms: 300, seq: 3))
        #expect(recent.newest(ref: "a", atOrBefore: 199) == nil)
        #expect(recent.newest(ref: "b", atOrBefore: 1_000) == nil)
        #expect(recent.clicks(with: Self.ios, from: 200, through: 299) == [
            .init(ms: 250, seq: 4, osVersion: "16.0"), .init(ms: 200, seq: 1, osVersion: "17.1"),
        ])
        #expect(recent.clicks(with: Fingerprint(ipKey: 7, platform: .android), from: 0, through: 1_000).isEmpty)
    }

    @Test func pastCapacityAboutHalfMovesToDiskInKeyOrder() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 0, capacity: 100)
        for seq in 1...60 {
            // Two entries a click; refs and addresses out of key order.
            _ = recent.add(
                seq: Int64(seq), ms: Int64(seq) * 10, ref: "r\((seq * 7) % 5)",
                fingerprint: Fingerprint(ipKey: Int64((seq * 13) % 4), platform: .ios), osVersion: seq % 2 == 0 ? "1.\(seq % 3)" : nil)
        }
        var rows: [RecentClicks.DiskRow] = []
        let spilled = recent.spill { rows.append($0) }
        let horizon = try #require(spilled)
        let again = recent.spill { rows.append($0) }
        #expect(again == nil)
        #expect(recent.horizonMs == horizon)
        #expect((40...80).contains(recent.entries))
        let byRef = rows.filter { $0.ref != nil }, byFingerprint = rows.filter { $0.fingerprint != nil }
        #expect(recent.entries + rows.count == 120 && byRef.count + byFingerprint.count == rows.count)
        #expect(rows.allSatisfy { $0.ms < horizon })
        #expect(byRef.map(\.ref!) == byRef.map(\.ref!).sorted())
        #expect(byFingerprint.map(\.fingerprint!.ipKey) == byFingerprint.map(\.fingerprint!.ipKey).sorted())
        // OS versions go along by name.
        let even = try #require(byFingerprint.first { $0.seq == 2 })
        #expect(even.osVersion == "1.2")
        // What stayed is still found; what left is not (disk answers for it).
        #expect(recent.newest(ref: "r0", atOrBefore: 600) == .init(ms: 600, seq: 60))
        #expect(recent.newest(ref: "r0", atOrBefore: horizon - 1) == nil)
        #expect(recent.clicks(with: Fingerprint(ipKey: 0, platform: .ios), from: 0, through: horizon - 1).isEmpty)
        let late = recent.add(seq: 61, ms: horizon - 1, ref: "r0", fingerprint: nil, osVersion: nil)
        #expect(!late)
    }

    /// A fingerprint's clicks are found newest first whatever order they arrive in, and the
    /// slots of clicks that left are reused without mixing fingerprints up.
    @Test func fingerprintChainsKeepTimeOrderAndReuseSlots() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 0, capacity: 40)
        let a = Fingerprint(ipKey: 1, platform: .android), b = Fingerprint(ipKey: 1, platform: .ios)
        var seq: Int64 = 0
        func add(_ ms: Int64, _ fingerprint: Fingerprint) {
            seq += 1
            _ = recent.add(seq: seq, ms: ms, ref: nil, fingerprint: fingerprint, osVersion: "\(ms)")
        }
        // Out of time order: late clicks go between older ones, after those of their instant.
        for ms: Int64 in [100, 300, 200, 300, 50, 400] { add(ms, a) }
        for ms: Int64 in [150, 350] { add(ms, b) }
        #expect(recent.clicks(with: a, from: 0, through: 1_000).map(\.seq) == [6, 4, 2, 3, 1, 5])
        #expect(recent.clicks(with: a, from: 100, through: 299).map(\.seq) == [3, 1])
        #expect(recent.clicks(with: b, from: 0, through: 1_000).map(\.seq) == [8, 7])
        // Many more clicks of b, later: past capacity, the oldest half leaves.
        for ms in stride(from: Int64(1_000), to: 1_040, by: 1) { add(ms, b) }
        var rows: [RecentClicks.DiskRow] = []
        let horizon = try #require(recent.spill { rows.append($0) })
        // In the disk table's key order: one hour, one address, then platform, time, seq.
        let keys = rows.map { ($0.fingerprint!.platform.code, $0.ms, $0.seq) }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
        #expect(Set(rows.map(\.seq)).count == rows.count && rows.allSatisfy { $0.ms < horizon && $0.osVersion == "\($0.ms)" })
        #expect(recent.clicks(with: a, from: 0, through: 10_000).isEmpty)
        // New clicks take the freed slots; each fingerprint still finds only its own.
        let keptOfB = recent.clicks(with: b, from: 0, through: 10_000).map(\.seq)
        for ms: Int64 in [2_000, 2_001] { add(ms, a) }
        add(1_500, b)
        #expect(recent.clicks(with: a, from: 0, through: 10_000).map(\.seq) == [seq - 1, seq - 2])
        #expect(recent.clicks(with: b, from: 0, through: 10_000).map(\.seq) == [seq] + keptOfB)
        #expect(recent.entries == 48 - rows.count + 3)
    }

    /// A move in steps: the entries that leave stay in memory and are found there until the
    /// move finishes; the horizon moves only then; its slices hand every entry that leaves over
    /// once; a click that arrives late during the move, before its horizon, is handed over at
    /// the finish (the slices do not hold it).
    @Test func aMoveKeepsItsEntriesFoundUntilItFinishes() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 60, capacity: 100)
        for seq in 1...60 {
            _ = recent.add(
                seq: Int64(seq), ms: Int64(seq) * 10, ref: "r\((seq * 7) % 5)", fingerprint: Fingerprint(ipKey: Int64(seq % 4), platform: .ios),
                osVersion: nil)
        }
        var asked: [Int] = []
        #expect(recent.beginMove { asked.append($0); return 3 })
        #expect(!recent.beginMove { _ in 1 }, "one move at a time")
        let move = try #require(recent.outgoing)
        let horizon = move.horizonMs
        #expect(asked == [max(move.refEntries, move.fingerprints.count)] && move.slices == 3 && move.beganThroughSeq == 60)
        #expect(move.refEntries > 0 && !move.fingerprints.isEmpty)
        // Nothing has left: the oldest click is still found, and the horizon has not moved.
        #expect(recent.horizonMs == 0 && recent.entries == 120)
        #expect(recent.newest(ref: "r2", atOrBefore: 10) == .init(ms: 10, seq: 1))
        #expect(recent.clicks(with: Fingerprint(ipKey: 1, platform: .ios), from: 0, through: 10) == [.init(ms: 10, seq: 1, osVersion: nil)])
        // A late click before the move's horizon, and one after it, arrive during the move.
        recent.throughSeq = 62
        let lateHeld = recent.add(seq: 61, ms: 5, ref: "late", fingerprint: Fingerprint(ipKey: 1, platform: .ios), osVersion: nil)
        let newHeld = recent.add(seq: 62, ms: 700, ref: "new", fingerprint: nil, osVersion: nil)
        #expect(lateHeld && newHeld)
        var slices: [[RecentClicks.DiskRow]] = []
        for slice in 0..<3 {
            var rows: [RecentClicks.DiskRow] = []
            recent.outgoingRows(slice: slice, of: 3) { rows.append($0) }
            slices.append(rows)
            recent.sliceMoved()
        }
        let rows = slices.flatMap { $0 }
        let byRef = rows.filter { $0.ref != nil }, byFingerprint = rows.filter { $0.fingerprint != nil }
        #expect(byRef.count == move.refEntries && byFingerprint.count == move.fingerprints.count)
        #expect(rows.allSatisfy { $0.ms < horizon && $0.seq <= 60 })
        #expect(byRef.map(\.ref!) == byRef.map(\.ref!).sorted(), "slices in key order, one after the other")
        #expect(Set(byRef.map(\.seq)).count == byRef.count && Set(byFingerprint.map(\.seq)).count == byFingerprint.count)
        #expect(recent.outgoing?.slicesDone == 3)
        let finished = recent.finishMove()
        let left = try #require(finished)
        #expect(recent.outgoing == nil && recent.horizonMs == horizon)
        #expect(left.horizonMs == horizon)
        #expect(left.late == [
            .init(seq: 61, ms: 5, ref: "late"), .init(seq: 61, ms: 5, fingerprint: Fingerprint(ipKey: 1, platform: .ios)),
        ])
        #expect(recent.entries == 123 - rows.count - 2)
        #expect(recent.newest(ref: "r2", atOrBefore: 10) == nil)
        #expect(recent.clicks(with: Fingerprint(ipKey: 1, platform: .ios), from: 0, through: 10).isEmpty)
        #expect(recent.newest(ref: "new", atOrBefore: 700) == .init(ms: 700, seq: 62))
        let again = recent.finishMove()
        #expect(again == nil)
    }

    @Test func clicksOfOneInstantLeaveTogether() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 0, capacity: 10)
        for seq in 1...20 { _ = recent.add(seq: Int64(seq), ms: 500, ref: "a", fingerprint: nil, osVersion: nil) }
        var rows: [RecentClicks.DiskRow] = []
        let horizon = recent.spill { rows.append($0) }
        #expect(rows.count == 20 && recent.entries == 0 && horizon == 501 && recent.horizonMs == 501)
        #expect(rows.map(\.seq) == Array(1...20))
    }

    /// Thousands of clicks in random order of time (some late, some with only a ref or only a
    /// fingerprint), moves to disk begun and finished among them, lookups after every step:
    /// the memory half always answers as a plain list of what it should hold, and what leaves
    /// is exactly what that list loses, each entry once.
    @Test func answersAsAListOfWhatItHoldsThroughRandomClicksAndMoves() throws {
        struct Click { var seq: Int64; var ms: Int64; var ref: String?; var fingerprint: Fingerprint?; var os: String? }
        var random = SplitMix64(seed: 12)
        var recent = RecentClicks(horizonMs: 1_000, throughSeq: 0, capacity: 400)
        var held: [Click] = []
        var moved: [RecentClicks.DiskRow] = []
        var seq: Int64 = 0
        var now: Int64 = 1_000
        let refs = (0..<12).map { "r\($0)" }
        let fingerprints = (0..<9).map { Fingerprint(ipKey: Int64($0 / 3), platform: [.ios, .android, .desktop][$0 % 3]) }

        func expectAnswersAsHeld() {
            #expect(recent.entries == held.reduce(0) { $0 + ($1.ref == nil ? 0 : 1) + ($1.fingerprint == nil ? 0 : 1) })
            for _ in 0..<8 {
                let ref = refs.randomElement(using: &random)!
                let at = Int64.random(in: recent.horizonMs - 50...now + 50, using: &random)
                let newest = held.filter { $0.ref == ref && $0.ms <= at }.max { ($0.ms, $0.seq) < ($1.ms, $1.seq) }
                #expect(recent.newest(ref: ref, atOrBefore: at) == newest.map { .init(ms: $0.ms, seq: $0.seq) })
                let fingerprint = fingerprints.randomElement(using: &random)!
                let from = Int64.random(in: recent.horizonMs - 50...now, using: &random)
                let through = from + Int64.random(in: 0...400, using: &random)
                let found = held.filter { $0.fingerprint == fingerprint && (from...through).contains($0.ms) }
                    .sorted { ($0.ms, $0.seq) > ($1.ms, $1.seq) }.map { RecentClicks.FingerprintMatch(ms: $0.ms, seq: $0.seq, osVersion: $0.os) }
                #expect(recent.clicks(with: fingerprint, from: from, through: through) == found)
            }
        }
        func rows(of clicks: [Click]) -> [RecentClicks.DiskRow] {
            clicks.flatMap { c in
                (c.ref.map { [RecentClicks.DiskRow(seq: c.seq, ms: c.ms, ref: $0)] } ?? [])
                    + (c.fingerprint.map { [RecentClicks.DiskRow(seq: c.seq, ms: c.ms, fingerprint: $0, osVersion: c.os)] } ?? [])
            }
        }
        func key(_ row: RecentClicks.DiskRow) -> String { "\(row.seq) \(row.ms) \(row.ref ?? "-") \(row.fingerprint.map { "\($0)" } ?? "-") \(row.osVersion ?? "-")" }
        func addClicks(_ count: Int) {
            for _ in 0..<count {
                seq += 1
                now += Int64.random(in: 0...3, using: &random)
                // One in eight arrives late, up to 300 ms; some have no ref or no fingerprint.
                let ms = Int.random(in: 0..<8, using: &random) == 0 ? now - Int64.random(in: 0...300, using: &random) : now
                let shape = Int.random(in: 0..<10, using: &random)
                let click = Click(
                    seq: seq, ms: ms, ref: shape == 0 ? nil : refs.randomElement(using: &random),
                    fingerprint: shape == 1 ? nil : fingerprints.randomElement(using: &random),
                    os: Bool.random(using: &random) ? "1\(Int.random(in: 0...3, using: &random)).0" : nil)
                let kept = recent.add(seq: click.seq, ms: click.ms, ref: click.ref, fingerprint: click.fingerprint, osVersion: click.os)
                #expect(kept == (ms >= recent.horizonMs))
                if kept { held.append(click) }
            }
            recent.throughSeq = seq
        }

        for _ in 0..<40 {
            addClicks(Int.random(in: 20...120, using: &random))
            expectAnswersAsHeld()
            guard recent.beginMove(slices: { _ in Int.random(in: 1...4, using: &random) }), let move = recent.outgoing else { continue }
            var slicesRows: [RecentClicks.DiskRow] = []
            for slice in 0..<move.slices {
                recent.outgoingRows(slice: slice, of: move.slices) { slicesRows.append($0) }
                recent.sliceMoved()
                // Clicks keep coming while the move is written; everything is still found.
                addClicks(Int.random(in: 0...30, using: &random))
                expectAnswersAsHeld()
            }
            let finished = recent.finishMove()
            let left = try #require(finished)
            #expect(left.horizonMs == move.horizonMs && recent.horizonMs == move.horizonMs)
            let leaving = held.filter { $0.ms < move.horizonMs }
            #expect((slicesRows + left.late).map(key).sorted() == rows(of: leaving).map(key).sorted())
            #expect(slicesRows.allSatisfy { $0.seq <= move.beganThroughSeq } && left.late.allSatisfy { $0.seq > move.beganThroughSeq })
            let byRef = slicesRows.filter { $0.ref != nil }.map { ($0.ref!, $0.ms, $0.seq) }
            #expect(byRef.map { "\($0.0)" } == byRef.map { "\($0.0)" }.sorted(), "the slices' ref rows in the table's key order")
            moved += slicesRows + left.late
            held.removeAll { $0.ms < move.horizonMs }
            expectAnswersAsHeld()
        }
        #expect(moved.count > 1_000, "enough moves to mean something: \(moved.count) rows")
    }
}
