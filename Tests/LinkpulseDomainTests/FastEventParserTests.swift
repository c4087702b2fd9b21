import Foundation
import Testing
@testable import LinkpulseDomain

/// A small seeded generator, so a failing case can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random event objects as JSON text: every known field in every JSON type, escapes, non-ASCII,
/// nested unknown fields, odd whitespace.
struct EventTextGenerator {
    var rng: SplitMix

    mutating func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &rng)] }

    mutating func space() -> String { pick(["", "", " ", "\n", " \t ", "\r\n"]) }

    mutating func string() -> String {
        let pieces = ["a", "click", "ref-12", "é", "日本", "😀", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u00e9", "\\u65e5", "\\ud83d\\ude00", " ", "=1+2", "<b>", ","]
        return "\"" + (0..<Int.random(in: 0...6, using: &rng)).map { _ in pick(pieces) }.joined() + "\""
    }

    mutating func scalar() -> String {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0, 1: return string()
        case 2: return pick(["0", "-1", "3.5", "1795255200000", "1e3", "-0.25E-2", "12345678901234"])
        case 3: return pick(["true", "false"])
        case 4: return "null"
        case 5: return "[" + space() + pick(["", "1", "\"x\", {\"a\":[]}"]) + space() + "]"
        default: return "{" + space() + pick(["", "\"k\":1", "\"deep_link_value\":\"shoe\",\"n\":2.5,\"b\":true", "\"x\":{\"y\":null}", "\"a\":null"]) + space() + "}"
        }
    }

    mutating func event() -> String {
        var keys = EventPayload.Key.allCases.map(\.rawValue).shuffled(using: &rng)
        keys = Array(keys.prefix(Int.random(in: 0...keys.count, using: &rng)))
        keys += ["unknown", "extra_\(Int.random(in: 0..<3, using: &rng))"].prefix(Int.random(in: 0...2, using: &rng))
        let members = keys.map { key in "\"\(key)\"" + space() + ":" + space() + scalar() }
        return space() + "{" + space() + members.joined(separator: space() + "," + space()) + space() + "}" + space()
    }
}

@Suite struct FastEventParserTests {
    func decoded(_ text: String) -> EventPayload? {
        try? JSONDecoder().decode(EventPayload.self, from: Data(text.utf8))
    }

    func fast(_ text: String) -> EventPayload? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { FastEventParser.parse($0) }
    }

    @Test func agreesWithJSONDecoderOnRandomEvents() {
        var generator = EventTextGenerator(rng: SplitMix(state: 20_261_122))
        var parsedFast = 0
        for _ in 0..<5000 {
            let text = generator.event()
            guard let quick = fast(text) else { continue }
            parsedFast += 1
            #expect(quick == decoded(text), "\(text)")
        }
        // It must take the common path for nearly everything it is given here.
        #expect(parsedFast > 4900)
    }

    @Test func readsEscapesAndUnicode() throws {
        let payload = try #require(fast(#"{"type":"click","ref":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n","campaign":"日本"}"#))
        #expect(payload.ref == .value("café 😀 \"q\" \\ / \n"))
        #expect(payload.campaign == .value("日本"))
    }

    @Test(arguments: [
        #"{"type":"click""#, #"{"type":clik}"#, #"{"type":"a"} x"#, #"{"ty\u0070e":"click"}"#,
        #"{"type":"click","type":"open"}"#, "{\"ref\":\"a\u{01}b\"}", #"{"ref":"\ud83d"}"#, #"{"ref":"\x"}"#,
        #"{"n":01}"#, #"{"n":1.}"#, #"{"n":-}"#, #"[{"type":"click"}]"#, #"{"a":[1,}"#, #"{"a":tru}"#,
    ])
    func declinesAnythingUnusual(text: String) {
        #expect(fast(text) == nil)
    }

    @Test func declinesInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"ref":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(bytes.withUnsafeBufferPointer { FastEventParser.parse($0) } == nil)
    }
}
