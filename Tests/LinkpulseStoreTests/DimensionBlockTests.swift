import LinkpulseDomain
import Testing

@testable import LinkpulseStore

@Suite struct DimensionBlockTests {
    @Test func dayBlocksCoverRangesExactlyWithFewBlocks() {
        for (from, to) in [(Int64(0), Int64(1)), (20_689, 20_779), (5, 300), (20_000, 20_400), (7, 8)] {
            let blocks = DayBlocks.cover(from: from, to: to)
            var day = from
            for (level, block) in blocks {
                #expect(block << level == day, "blocks are contiguous and aligned")
                day += Int64(1) << level
            }
            #expect(day == to)
            #expect(blocks.count <= 2 * DayBlocks.levels.count)
        }
    }

    @Test func blocksRoundTripAndSumInStep() {
        var a = DimensionBlock(), b = DimensionBlock()
        var click = ConversionCounts()
        click.add(CountedEvent(kind: .click, platform: .ios, isBot: false, deferred: false, visitorHash: 1, dimensions: LinkDimensions(), match: nil))
        var install = ConversionCounts()
        install.add(CountedEvent(kind: .install, platform: .ios, isBot: false, deferred: false, visitorHash: 0, dimensions: LinkDimensions(), match: .fingerprint))
        a.add(click, value: "zeta", isBot: false)
        a.add(click, value: "alpha", isBot: true)
        a.add(install, value: "", isBot: false)
        b.add(click, value: "alpha", isBot: false)
        b.add(install, value: "zeta", isBot: false)
        b.add(click, value: "émoji 🚀", isBot: false)
        let read = a.serialized.withUnsafeBytes { DimensionBlock($0) }
        #expect(read.entries.count == 3)
        #expect(read.entries[.init(value: "alpha", isBot: true)]?.clicks == 1)
        let sums = DimensionBlock.sum([a.serialized, b.serialized])
        #expect(sums.map(\.value) == ["", "alpha", "zeta", "émoji 🚀"])
        let alpha = sums[1]
        #expect(DimensionBlock.counts(alpha.people).clicks == 1 && DimensionBlock.counts(alpha.bots).clicks == 1)
        let zeta = sums[2]
        #expect(DimensionBlock.counts(zeta.people).clicks == 1 && DimensionBlock.counts(zeta.people).installsFingerprint == 1)
        #expect(DimensionBlock.sum([[1, 2]]).isEmpty)  // a malformed blob reads as empty
    }
}
