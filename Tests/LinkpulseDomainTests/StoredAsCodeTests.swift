import LinkpulseDomain
import Testing

/// The stored codes of match types and click id sources read back as the cases they were
/// written from, and nothing else reads back at all.
struct StoredAsCodeTests {
    @Test func everyMatchTypeReadsBackFromItsCode() {
        checkRoundTrip(MatchType.self)
        #expect(Set(MatchType.allCases.map(\.code)) == Set(0..<MatchType.allCases.count))
    }

    @Test func everyClickIdSourceReadsBackFromItsCode() {
        checkRoundTrip(ClickIdSource.self)
        #expect(Set(ClickIdSource.allCases.map(\.code)) == Set(0..<ClickIdSource.allCases.count))
    }

    private func checkRoundTrip<T: StoredAsCode & Equatable>(_ type: T.Type) {
        for value in T.allCases {
            #expect(T(code: value.code) == value)
        }
        let used = Set(T.allCases.map(\.code))
        for code in -3...40 where !used.contains(code) {
            #expect(T(code: code) == nil, "code \(code)")
        }
    }
}
