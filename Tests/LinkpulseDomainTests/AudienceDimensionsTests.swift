import Foundation
import TestSupport
import Testing
import Yams

@testable import LinkpulseDomain

/// The audience dimensions without a store: countries from the Tor files Debian packages, user
/// agents by uap-core's expressions on this platform's regular expression engine, referrer
/// hosts and languages. The data files are read and the expressions run on a thread of their
/// own: in a debug build that takes seconds, which must not hold up the cooperative pool that
/// other suites' in-process daemons answer on.
@Suite struct AudienceDimensionsTests {
    static func torFile(_ name: String) -> [UInt8]? {
        for directory in AudienceDataDefaults.torGeoIPDirectories {
            if let data = FileManager.default.contents(atPath: "\(directory)/\(name)") { return Array(data) }
        }
        return nil
    }

    /// The country table, uap-core's rules and both files' ranges as their text says, read once.
    struct Data: Sendable {
        var table: CountryTable
        var rules: UserAgentRules
        var v4: [Range]
        var v6: [Range]
    }
    typealias Range = (first: String, last: String, code: String)

    static let loaded = Task {
        try await onThreadOfItsOwn { () throws -> Data in
            guard let v4 = torFile("geoip"), let v6 = torFile("geoip6") else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "Tor's geoip files are missing: ops/install-deps.sh test unpacks them"])
            }
            let text = try String(contentsOfFile: AudienceDataDefaults.userAgentRegexes, encoding: .utf8)
            return Data(table: try CountryTable(ipv4: v4, ipv6: v6), rules: try UserAgentRules(yaml: text), v4: ranges(v4), v6: ranges(v6))
        }
    }

    static var data: Data { get async throws { try await loaded.value } }

    /// The ranges of a Tor file as its text says, read here without the table's code.
    static func ranges(_ bytes: [UInt8]) -> [Range] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: ",").map(String.init) }
            .map { ($0[0], $0[1], $0[2]) }
    }

    static func dotted(_ n: UInt32) -> String { "\(n >> 24).\(n >> 16 & 255).\(n >> 8 & 255).\(n & 255)" }

    @Test func theFirstAndLastAddressOfIPv4RangesHaveTheirCountry() async throws {
        let data = try await Self.data
        let all = data.v4
        #expect(all.count > 100_000)
        // The first, the last and a spread of ranges in between, with the addresses just
        // outside them: inside another range, or in a gap (no country).
        for index in Array(stride(from: 0, to: all.count, by: all.count / 97)) + [all.count - 1] {
            let range = all[index]
            let (first, last) = (UInt32(range.first)!, UInt32(range.last)!)
            let expected = range.code == "??" ? "" : range.code
            #expect(data.table.country(of: Self.dotted(first)) == expected, "range \(index): \(range)")
            #expect(data.table.country(of: Self.dotted(last)) == expected, "range \(index): \(range)")
            // Mapped into IPv6, the same address.
            #expect(data.table.country(of: "::ffff:" + Self.dotted(first)) == expected)
            // The next address: the next range's when it starts there (the file is sorted),
            // else in a gap of no country.
            guard last < UInt32.max else { continue }
            let next = index + 1 < all.count && UInt32(all[index + 1].first)! == last + 1 ? all[index + 1].code : "??"
            #expect(data.table.country(of: Self.dotted(last + 1)) == (next == "??" ? "" : next), "after range \(index)")
        }
    }

    @Test func theFirstAndLastAddressOfIPv6RangesHaveTheirCountry() async throws {
        let data = try await Self.data
        let all = data.v6
        #expect(all.count > 100_000)
        let picked = stride(from: 0, to: all.count, by: all.count / 97).map { all[$0] } + [all[all.count - 1]]
        for range in picked {
            let expected = range.code == "??" ? "" : range.code
            #expect(data.table.country(of: range.first) == expected, "\(range)")
            #expect(data.table.country(of: range.last) == expected, "\(range)")
            // Written out in another notation, the same address.
            if let expanded = Self.expanded(range.last) {
                #expect(data.table.country(of: expanded) == expected, "\(range)")
            }
        }
    }

    /// An IPv6 address in full notation (eight groups of four digits, upper case).
    static func expanded(_ address: String) -> String? {
        var raw = in6_addr()
        guard inet_pton(AF_INET6, address, &raw) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &raw) { Array($0) }
        return stride(from: 0, to: 16, by: 2).map { String(format: "%02X%02X", bytes[$0], bytes[$0 + 1]) }.joined(separator: ":")
    }

    @Test func whatIsNotAnAddressHasNoCountry() async throws {
        let data = try await Self.data
        for text in ["", "localhost", "1.2.3", "1.2.3.4.5", "::ffff:1.2.3.999", "2001:db8::g", "256.0.0.1"] {
            #expect(data.table.country(of: text) == "", "\(text)")
        }
        // Loopback and private addresses are in no country's range.
        #expect(data.table.country(of: "127.0.0.1") == "")
        #expect(data.table.country(of: "10.1.2.3") == "")
        #expect(data.table.country(of: "::1") == "")
        #expect(data.table.generated?.contains("GMT") == true)
    }

    @Test func aMalformedFileIsRefusedWithItsLine() {
        #expect(throws: CountryTable.Malformed.self) { try CountryTable(ipv4: Array("1,2,US\nnot a range\n".utf8), ipv6: nil) }
        #expect(throws: CountryTable.Malformed.self) { try CountryTable(ipv4: Array("5,9,US\n7,12,DE\n".utf8), ipv6: nil) }
        let small = try! CountryTable(ipv4: Array("# Generated: today\n16777216,16777471,AU\n16777472,16778239,??\n".utf8), ipv6: nil)
        #expect(small.country(of: "1.0.0.0") == "AU")
        #expect(small.country(of: "1.0.0.255") == "AU")
        #expect(small.country(of: "1.0.1.0") == "")
        #expect(small.rangeCount == 1)
    }

    @Test func referrerHostsAndLanguages() {
        #expect(AudienceDimensions.referrerHost(of: "https://www.Google.com/search?q=x") == "www.google.com")
        #expect(AudienceDimensions.referrerHost(of: "https://l.instagram.com/?u=https%3A%2F%2Fexample.com") == "l.instagram.com")
        #expect(AudienceDimensions.referrerHost(of: "http://user:pw@news.example.org:8080/a") == "news.example.org")
        #expect(AudienceDimensions.referrerHost(of: "android-app://com.google.android.gm/") == "com.google.android.gm")
        #expect(AudienceDimensions.referrerHost(of: "http://[2001:db8::1]:80/") == "[2001:db8::1]")
        #expect(AudienceDimensions.referrerHost(of: "utm_source=google&utm_medium=cpc") == "")
        #expect(AudienceDimensions.referrerHost(of: "HTTPS://Example.COM.:443/x") == "example.com")
        #expect(AudienceDimensions.referrerHost(of: "https://") == "")
        #expect(AudienceDimensions.referrerHost(of: "https://a b/") == "")
        #expect(AudienceDimensions.referrerHost(of: "://host/") == "")
        #expect(AudienceDimensions.referrerHost(of: nil) == "")
        #expect(AudienceDimensions.referrerHost(of: "") == "")
        #expect(AudienceDimensions.primaryLanguage(of: "en-GB,en;q=0.9,de;q=0.8") == "en")
        #expect(AudienceDimensions.primaryLanguage(of: "PT-br") == "pt")
        #expect(AudienceDimensions.primaryLanguage(of: "*") == "")
        #expect(AudienceDimensions.primaryLanguage(of: "gsw;q=0.9") == "gsw")
        #expect(AudienceDimensions.primaryLanguage(of: nil) == "")
    }

    @Test func anAudienceIsStoredAsOneTextAndReadBack() {
        let audience = AudienceDimensions(country: "DE", device: .phone, os: "iOS", osMajor: "17", browser: "Instagram", language: "de")
        #expect(AudienceDimensions(stored: audience.stored) == audience)
        #expect(AudienceDimensions.unknown.stored == nil)
        #expect(AudienceDimensions(stored: nil) == .unknown)
        #expect(AudienceDimensions(stored: "garbage") == .unknown)
    }

    /// uap-core's own test cases, run on this platform's engine (ICU): the browser and system
    /// families uap-core expects, before this project names them.
    @Test func uapCoresOwnCasesGiveItsFamilies() async throws {
        let rules = try await Self.data.rules
        #expect(rules.skipped == 0)
        #expect(rules.count > 1_000)
        struct Cases: Decodable {
            struct Case: Decodable { var user_agent_string: String; var family: String; var major: String? }
            var test_cases: [Case]
        }
        for file in ["test_ua.yaml", "test_os.yaml"] {
            let (count, wrong) = try await onThreadOfItsOwn { () throws -> (Int, [String]) in
                let list = file == "test_ua.yaml" ? rules.browsers : rules.systems
                let text = try String(contentsOfFile: "/usr/share/uap-core/tests/\(file)", encoding: .utf8)
                let cases = try YAMLDecoder().decode(Cases.self, from: text)
                var wrong: [String] = []
                for c in cases.test_cases {
                    let found = UserAgentRules.firstMatch(list, in: c.user_agent_string as NSString, c.user_agent_string)
                    if (found?.family ?? "Other") != c.family { wrong.append("\(c.user_agent_string) → \(found?.family ?? "Other"), not \(c.family)") }
                }
                return (cases.test_cases.count, wrong)
            }
            #expect(count > 100)
            #expect(wrong.isEmpty, "\(file): \(wrong.count) of \(count) differ: \(wrong.prefix(5))")
        }
    }

    /// More than two hundred real user agents with the classes the stats should show them in.
    @Test func realUserAgentsGetTheirDeviceSystemAndBrowser() async throws {
        let classifier = UserAgentClassifier(rules: try await Self.data.rules)
        #expect(UserAgentTable.rows.count >= 200)
        let wrong = try await onThreadOfItsOwn { () -> [String] in
            var wrong: [String] = []
            for row in UserAgentTable.rows {
                let v = classifier.classify(row.userAgent)
                if row.device == .bot {
                    if v.device != .bot || v.botReason == nil { wrong.append("\(row.userAgent): \(v.device) \(v.botReason ?? "person")") }
                    continue
                }
                let found = (v.device, v.os, v.osMajor, v.browser)
                if found != (row.device, row.os, row.osMajor, row.browser) || v.botReason != nil {
                    wrong.append("\(row.userAgent): \(found) \(v.botReason ?? ""), not \((row.device, row.os, row.osMajor, row.browser))")
                }
            }
            return wrong
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(UserAgentTable.rows.count):\n\(wrong.joined(separator: "\n"))")
    }

    @Test func theClassifierRemembersVerdictsUntilTheRulesAreReplaced() async throws {
        let rules = try await Self.data.rules
        let classifier = UserAgentClassifier(rules: nil, capacity: 2)
        let ua = UserAgentTable.phones[0].userAgent
        let before = classifier.classify(ua)
        #expect(before.platform == .ios)
        #expect(before.browser == "")
        #expect(before.device == .other)
        classifier.replaceRules(rules)
        #expect(classifier.classify(ua).browser == "Safari")
        #expect(classifier.classify(ua).browser == "Safari")
        #expect(classifier.lookups.hits == 1)
        #expect(classifier.lookups.misses == 2)
        // Bounded: the third user agent starts the memory over.
        _ = classifier.classify(UserAgentTable.phones[1].userAgent)
        _ = classifier.classify(UserAgentTable.phones[2].userAgent)
        #expect(classifier.remembered == 1)
    }
}
