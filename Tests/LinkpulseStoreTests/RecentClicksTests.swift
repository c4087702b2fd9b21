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
        let spilled = recent.spill()
        let spill = try #require(spilled)
        let again = recent.spill()
        #expect(again == nil)
        #expect(recent.horizonMs == spill.horizonMs)
        #expect((40...80).contains(recent.entries))
        #expect(recent.entries + spill.byRef.count + spill.byFingerprint.count == 120)
        #expect(spill.byRef.allSatisfy { $0.entry.ms < spill.horizonMs })
        #expect(spill.byFingerprint.allSatisfy { $0.entry.ms < spill.horizonMs })
        #expect(spill.byRef.map(\.ref) == spill.byRef.map(\.ref).sorted())
        #expect(spill.byFingerprint.map(\.fingerprint.ipKey) == spill.byFingerprint.map(\.fingerprint.ipKey).sorted())
        // OS versions go along by name.
        let even = try #require(spill.byFingerprint.first { $0.entry.seq == 2 })
        #expect(spill.osVersion(even.entry.os) == "1.2")
        // What stayed is still found; what left is not (disk answers for it).
        #expect(recent.newest(ref: "r0", atOrBefore: 600) == .init(ms: 600, seq: 60))
        #expect(recent.newest(ref: "r0", atOrBefore: spill.horizonMs - 1) == nil)
        let late = recent.add(seq: 61, ms: spill.horizonMs - 1, ref: "r0", fingerprint: nil, osVersion: nil)
        #expect(!late)
    }

    /// A move in steps: the entries that leave stay in memory and are found there until the
    /// move finishes; the horizon moves only then; a click that arrives late during the move,
    /// before its horizon, is handed over at the finish (the slices did not hold it).
    @Test func aMoveKeepsItsEntriesFoundUntilItFinishes() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 60, capacity: 100)
        for seq in 1...60 {
            _ = recent.add(
                seq: Int64(seq), ms: Int64(seq) * 10, ref: "r\((seq * 7) % 5)", fingerprint: Fingerprint(ipKey: Int64(seq % 4), platform: .ios),
                osVersion: nil)
        }
        var asked: [Int] = []
        #expect(recent.beginMove { asked.append($0.byRef.count); return 3 })
        #expect(!recent.beginMove { _ in 1 }, "one move at a time")
        let move = try #require(recent.outgoing)
        let horizon = move.spill.horizonMs
        #expect(asked == [move.spill.byRef.count] && move.slices == 3 && move.beganThroughSeq == 60)
        #expect(move.spill.byRef.allSatisfy { $0.entry.ms < horizon } && !move.spill.byRef.isEmpty)
        #expect(move.spill.byRef.map(\.ref) == move.spill.byRef.map(\.ref).sorted())
        // Nothing has left: the oldest click is still found, and the horizon has not moved.
        #expect(recent.horizonMs == 0 && recent.entries == 120)
        #expect(recent.newest(ref: "r2", atOrBefore: 10) == .init(ms: 10, seq: 1))
        #expect(recent.clicks(with: Fingerprint(ipKey: 1, platform: .ios), from: 0, through: 10) == [.init(ms: 10, seq: 1, osVersion: nil)])
        // A late click before the move's horizon, and one after it, arrive during the move.
        recent.throughSeq = 62
        let lateHeld = recent.add(seq: 61, ms: 5, ref: "late", fingerprint: nil, osVersion: nil)
        let newHeld = recent.add(seq: 62, ms: 700, ref: "new", fingerprint: nil, osVersion: nil)
        #expect(lateHeld && newHeld)
        for _ in 0..<3 { recent.sliceMoved() }
        #expect(recent.outgoing?.slicesDone == 3)
        let finished = recent.finishMove()
        let left = try #require(finished)
        #expect(recent.outgoing == nil && recent.horizonMs == horizon)
        #expect(left.horizonMs == horizon && left.byRef.map(\.ref) == ["late"] && left.byFingerprint.isEmpty)
        #expect(recent.entries == 122 - move.spill.byRef.count - move.spill.byFingerprint.count - 1)
        #expect(recent.newest(ref: "r2", atOrBefore: 10) == nil)
        #expect(recent.newest(ref: "new", atOrBefore: 700) == .init(ms: 700, seq: 62))
        let again = recent.finishMove()
        #expect(again == nil)
    }

    @Test func clicksOfOneInstantLeaveTogether() throws {
        var recent = RecentClicks(horizonMs: 0, throughSeq: 0, capacity: 10)
        for seq in 1...20 { _ = recent.add(seq: Int64(seq), ms: 500, ref: "a", fingerprint: nil, osVersion: nil) }
        let spilled = recent.spill()
        let spill = try #require(spilled)
        #expect(spill.byRef.count == 20 && recent.entries == 0 && recent.horizonMs == 501)
        #expect(spill.byRef.map(\.entry.seq) == Array(1...20))
    }
}
