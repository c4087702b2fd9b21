import LinkpulseDomain
import Testing

@Suite struct VisitorSketchTests {
    static func sketch(_ range: Range<Int>, prefix: String = "v") -> VisitorSketch {
        var sketch = VisitorSketch()
        for i in range { sketch.insert(hash: VisitorSketch.hash("\(prefix)\(i)")) }
        return sketch
    }

    @Test func exactUpToOneThousand() {
        for n in [0, 1, 2, 999, 1000] {
            var s = Self.sketch(0..<n)
            s.insert(hash: VisitorSketch.hash("v0"))  // a repeat changes nothing
            #expect(s.count == max(n, 1))
        }
        var merged = Self.sketch(0..<600)
        merged.merge(Self.sketch(300..<1000))
        #expect(merged.count == 1000)
    }

    @Test(arguments: [1_001, 5_000, 40_000, 100_000, 1_000_000])
    func withinTwoPercentBeyond(n: Int) {
        let estimate = Double(Self.sketch(0..<n).count)
        #expect(abs(estimate - Double(n)) / Double(n) < 0.02, "\(n) visitors estimated as \(estimate)")
    }

    @Test func mergeIsTheUnion() {
        var a = Self.sketch(0..<30_000)
        let b = Self.sketch(20_000..<60_000)
        a.merge(b)
        #expect(abs(Double(a.count) - 60_000) / 60_000 < 0.02)
        // Merging small exact sets into a large sketch and the other way round agree.
        var small = Self.sketch(0..<500, prefix: "w")
        small.merge(Self.sketch(0..<10_000))
        var large = Self.sketch(0..<10_000)
        large.merge(Self.sketch(0..<500, prefix: "w"))
        #expect(small == large)
    }

    @Test func mergingStoredBytesEqualsMergingSketches() {
        for (a, b) in [(Self.sketch(0..<50), Self.sketch(0..<5_000, prefix: "w")), (Self.sketch(0..<3_000), Self.sketch(0..<4_000, prefix: "w")),
                       (Self.sketch(0..<3_000), Self.sketch(0..<20)), (VisitorSketch(), Self.sketch(0..<5_000)),
                       (Self.sketch(0..<600), Self.sketch(0..<700, prefix: "w")), (Self.sketch(0..<10), Self.sketch(5..<30))] {
            var viaObject = a
            viaObject.merge(b)
            var viaBytes = a
            b.serialized.withUnsafeBytes { viaBytes.merge(serialized: $0) }
            #expect(viaBytes == viaObject)
        }
    }

    @Test func storedHashesOutOfOrderOrRepeatedMergeIntoRegistersAsTheirSet() {
        // Writers store sorted hashes; a stored list in another order (or with repeats) still
        // means its set, whether merged as bytes or read back first.
        let hashes = (0..<40).map { VisitorSketch.hash("x\($0)") }
        var stored: [UInt8] = [0]
        for h in hashes.reversed() + hashes.prefix(5) { withUnsafeBytes(of: h.littleEndian) { stored.append(contentsOf: $0) } }
        var viaBytes = Self.sketch(0..<2_000)
        stored.withUnsafeBytes { viaBytes.merge(serialized: $0) }
        var viaObject = Self.sketch(0..<2_000)
        viaObject.merge(VisitorSketch(serialized: stored))
        #expect(viaBytes == viaObject)
        var expected = Self.sketch(0..<2_000)
        for h in hashes { expected.insert(hash: h) }
        #expect(viaBytes == expected)
    }

    @Test func serializedFormRoundTrips() {
        for sketch in [VisitorSketch(), Self.sketch(0..<10), Self.sketch(0..<5_000)] {
            #expect(VisitorSketch(serialized: sketch.serialized) == sketch)
        }
        #expect(VisitorSketch(serialized: [7, 1, 2]).count == 0)  // garbage reads as empty
    }

    @Test func hashIsStable() {
        // Stored sketches must mean the same in every process and version.
        #expect(VisitorSketch.hash("device-1") == VisitorSketch.hash("device-1"))
        #expect(VisitorSketch.hash("device-1") == 0xe340_ac1c_4190_ad44)
    }
}
