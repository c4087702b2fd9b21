import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// The link tuples as value ids: every tuple reads back as it went in, is found by its
/// dimensions (and no other), and the filters decided on ids agree with `StatsFilters.admits`.
@Suite struct LinkTuplesTests {
    static let refs: [String?] = [nil, "shoes", "hats", "a-ref-name-longer-than-fifteen-bytes"]
    static let campaigns: [String?] = [nil, "spring", "fall"]
    static let sources: [String?] = [nil, "newsletter"]
    static let media: [String?] = [nil, "email", "cpc"]

    /// Every combination once, in a shuffled but fixed order.
    static func everyTuple() -> [LinkDimensions] {
        var all: [LinkDimensions] = []
        for ref in refs { for campaign in campaigns { for source in sources { for medium in media {
            all.append(LinkDimensions(ref: ref, campaign: campaign, source: source, medium: medium))
        } } } }
        var generator = SplitMix64(seed: 7)
        return all.shuffled(using: &generator)
    }

    @Test func tuplesReadBackAndAreFoundByTheirDimensions() {
        var known = LinkTuples.Known()
        let tuples = Self.everyTuple()
        #expect(known.count == 1 && known.id(of: tuples[0]) == nil)
        for (i, tuple) in tuples.enumerated() {
            #expect(known.id(of: tuple) == nil, "not known before it is added")
            known.append(tuple)
            #expect(known.id(of: tuple) == UInt32(i + 1))
        }
        #expect(known.count == tuples.count + 1)
        for (i, tuple) in tuples.enumerated() { #expect(known[i + 1] == tuple) }
        // A value no tuple has, in any dimension, finds nothing.
        #expect(known.id(of: LinkDimensions(ref: "boots", campaign: "spring")) == nil)
        #expect(known.id(of: LinkDimensions(ref: "shoes", campaign: "winter")) == nil)
    }

    /// Enough tuples for the table of ids to grow many times, sharing values in every
    /// dimension: each is found again after the last growth, and a combination never added
    /// (its values all known) is not.
    @Test func manyTuplesAreFoundAfterTheTableGrows() {
        var known = LinkTuples.Known()
        func tuple(_ i: Int) -> LinkDimensions {
            LinkDimensions(ref: "r\(i % 5_000)", campaign: "c\(i / 5_000)", source: i % 3 == 0 ? nil : "s\(i % 7)", medium: "m\(i % 2)")
        }
        for i in 0..<40_000 { known.append(tuple(i)) }
        #expect(known.count == 40_001)
        for i in stride(from: 0, to: 40_000, by: 7) { #expect(known.id(of: tuple(i)) == UInt32(i + 1), "tuple \(i)") }
        #expect(known.id(of: LinkDimensions(ref: "r1", campaign: "c1", source: "s1", medium: "m1")) == nil)
    }

    @Test func filtersDecidedOnValueIdsAgreeWithTheDomainRule() {
        var known = LinkTuples.Known()
        let tuples = Self.everyTuple()
        for tuple in tuples { known.append(tuple) }
        let filterSets: [StatsFilters] = [
            StatsFilters(campaign: "spring"), StatsFilters(ref: "hats", medium: "cpc"),
            StatsFilters(campaign: "fall", ref: "a-ref-name-longer-than-fifteen-bytes", source: "newsletter", medium: "email"),
            StatsFilters(ref: "boots"), StatsFilters(platform: .ios),
        ]
        let wantedSets: [(StatsDimension, Set<String?>)?] = [nil, (.ref, ["shoes", nil]), (.campaign, ["fall", "winter"]), (.medium, [])]
        for filters in filterSets {
            for wanted in wantedSets {
                let admitted = known.admitted(by: filters, wanted: wanted)
                #expect(admitted.count == known.count)
                for (i, tuple) in tuples.enumerated() {
                    let expected = filters.admitsLinks(tuple) && (wanted.map { $0.1.contains($0.0.linkValue(of: tuple)) } ?? true)
                    #expect(admitted[i + 1] == expected, "\(tuple) with \(filters), \(String(describing: wanted))")
                }
            }
        }
    }
}
