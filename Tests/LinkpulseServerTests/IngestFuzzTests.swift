import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import LinkpulseDomain
@testable import LinkpulseServer
import NIOCore
import Testing

/// A corpus of malformed bodies, made from a seed, for `/v1/events`.
struct MalformedCorpus {
    /// One request of the corpus.
    struct Body {
        var kind: String
        var bytes: [UInt8]
        var headers: HTTPFields = [:]
    }

    var random: SplitMix64

    static let fields = [
        "id", "type", "ref", "campaign", "source", "medium", "platform", "timestamp", "sent_at", "device_id", "click_id",
        "click_id_source", "install_referrer", "deferred", "url", "referrer", "user_agent", "ip", "os_version", "app_version",
        "properties",
    ]
    static let wrongValues = [
        "5", "-1", "0.5", "true", "false", "null", "[]", "{}", #"[1,2,"x"]"#, #"{"a":{"b":1}}"#, #""""#, #""\u0000""#,
        "1e999999", "-1e999999", "123456789012345678901234567890123456789", "9223372036854775808", "-0", "1E+400",
        #""2026-13-45T99:99:99Z""#, #""not a time""#, "17952556200000000000", #""\ud800""#, #""\uDFFF\uD800""#,
        #"""# + String(repeating: "x", count: 5000) + #"""#, "0x1F", "NaN", "Infinity", "+1", ".5", "01",
    ]

    mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
    mutating func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }

    /// A valid event, to mutate.
    mutating func validEvent(_ n: Int) -> String {
        let type = pick(["click", "open", "install", "fallback"])
        return #"{"id":"fz-\#(n)-\#(random.next() % 1_000_000)","type":"\#(type)","ref":"r\#(n % 50)","campaign":"c","platform":"ios","properties":{"deep_link_value":"v"}}"#
    }

    mutating func body(_ n: Int) -> Body {
        switch n % 10 {
        case 0:  // invalid UTF-8 inside strings, keys, or as the whole body
            let junk: [[UInt8]] = [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xE2, 0x82]]
            var event = Array(validEvent(n).utf8)
            let at = number(1...(event.count - 1))
            event.insert(contentsOf: pick(junk), at: at)
            return Body(kind: "invalid-utf8", bytes: random.chance(0.2) ? pick(junk) + pick(junk) : event)
        case 1:  // truncated or corrupted gzip
            var gzipped = Zlib.gzip(Array(("[" + (0..<number(1...20)).map { validEvent(n * 100 + $0) }.joined(separator: ",") + "]").utf8))
            if random.chance(0.5) {
                gzipped = Array(gzipped.prefix(number(0...(gzipped.count - 1))))
            } else {
                let at = number(0...(gzipped.count - 1))
                gzipped[at] ^= UInt8(truncatingIfNeeded: number(1...255))
            }
            return Body(kind: "bad-gzip", bytes: gzipped, headers: [.contentEncoding: pick(["gzip", "deflate", "x-gzip"])])
        case 2:  // deep nesting, as the body or inside an event
            let depth = pick([17, 64, 1000, 10_000, 100_000])
            let open = random.chance(0.5) ? "[" : #"{"a":"#
            let close = open == "[" ? "]" : "}"
            let nested = String(repeating: open, count: depth) + "1" + String(repeating: close, count: random.chance(0.8) ? depth : depth / 2)
            let inside = #"{"type":"click","ref":"deep","properties":"# + nested + "}"
            return Body(kind: "deep", bytes: Array((random.chance(0.5) ? nested : inside).utf8))
        case 3:  // huge and odd numbers where numbers and strings go
            let field = pick(["timestamp", "sent_at", "deferred", "type", "id", "properties"])
            let value = pick(["1e999999", "-1e999999", "123456789012345678901234567890", "9223372036854775808", "-9223372036854775809", "1.7976931348623157e309", "4.9e-325", "-0", "253402300800000", "-62135596800001"])
            return Body(kind: "numbers", bytes: Array(#"{"type":"install","ref":"n","\#(field)":\#(value)}"#.utf8))
        case 4:  // wrong types for each field
            var members = [#""type":"open""#]
            for _ in 0..<number(1...4) { members.append("\"\(pick(Self.fields))\":\(pick(Self.wrongValues))") }
            return Body(kind: "wrong-types", bytes: Array(("{" + members.joined(separator: ",") + "}").utf8))
        case 5:  // NUL bytes, raw and escaped
            let raw: [UInt8] = Array(#"{"type":"click","ref":"a"#.utf8) + [0] + Array(#"b"}"#.utf8)
            let escaped = #"{"type":"click","ref":"a\u0000b","campaign":"\u0000","\u0000":"x"}"#
            let bare: [UInt8] = [0, 0, 0, 0]
            return Body(kind: "nul", bytes: pick([raw, Array(escaped.utf8), bare, Array(validEvent(n).utf8) + [0]]))
        case 6:  // duplicate keys
            let key = pick(["type", "id", "ref", "properties", "timestamp"])
            let first = pick([#""click""#, "1", #"{"a":1}"#, "null"]), second = pick([#""install""#, #""x""#, "[]", "2"])
            return Body(kind: "duplicate-keys", bytes: Array(#"{"type":"click","ref":"d","\#(key)":\#(first),"\#(key)":\#(second)}"#.utf8))
        case 7:  // random byte mutations of a valid batch
            var bytes = Array(("[" + validEvent(n) + "," + validEvent(n + 1) + "]").utf8)
            for _ in 0..<number(1...8) {
                let at = number(0...(bytes.count - 1))
                switch number(0...2) {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: at)
                default: bytes.insert(pick(Array(#"{}[]",:"\0x"#.utf8)), at: at)
                }
            }
            return Body(kind: "mutated", bytes: bytes)
        case 8:  // truncated JSON
            let bytes = Array(("[" + validEvent(n) + "," + validEvent(n + 1) + "]").utf8)
            return Body(kind: "truncated", bytes: Array(bytes.prefix(number(0...(bytes.count - 1)))))
        default:  // NDJSON with broken lines, and bodies that are not events at all
            let lines = (0..<number(2...6)).map { i in
                random.chance(0.3) ? pick(["{", "}", "[1]", "\"x\"", "", "{\"type\":}", "null"]) : validEvent(n * 10 + i)
            }
            if random.chance(0.5) {
                return Body(kind: "ndjson", bytes: Array(lines.joined(separator: "\n").utf8), headers: [.contentType: "application/x-ndjson"])
            }
            return Body(kind: "not-events", bytes: Array(pick(["1", "\"text\"", "true", "null", "[1,2,3]", "[[]]", "[null]", "{\"batch\":5}", "{\"batch\":[1]}", ""]).utf8))
        }
    }
}

/// 10,000 malformed bodies against the real router and writer: never a 5xx, never a crash,
/// and every event refused is in the quarantine (with nothing else there).
@Suite struct IngestFuzzTests {
    @Test func tenThousandMalformedBodiesGetClearAnswersAndEveryRejectedEventIsQuarantined() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let count = Int(ProcessInfo.processInfo.environment["LINKPULSE_FUZZ_BODIES"] ?? "") ?? 10_000
        var corpus = MalformedCorpus(random: SplitMix64(seed: 0x11_4b_5e))
        let bodies = (0..<count).map { corpus.body($0) }
        // What the answers say was kept: rejected events and bodies refused as a whole.
        struct Tally {
            var quarantined = 0, accepted = 0
            var statuses: [Int: Int] = [:]
            var serverErrors: [String] = []
        }
        let tally = Locked(Tally())

        try await installation.application().test(.router) { client in
            for (index, body) in bodies.enumerated() {
                var headers: HTTPFields = [.authorization: "Bearer \(TestInstallation.ingestKey)", .contentType: "application/json"]
                for field in body.headers { headers[field.name] = field.value }
                let response = try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(bytes: body.bytes))
                let status = Int(response.status.code)
                let text = String(buffer: response.body)
                let answer = try? JSONDecoder().decode(IngestAnswer.self, from: Data(buffer: response.body))
                tally.withLock { tally in
                    tally.statuses[status, default: 0] += 1
                    if let answer {
                        tally.quarantined += answer.rejected
                        tally.accepted += answer.accepted
                    } else if text.contains(#""code":"invalid_json""#) || text.contains(#""code":"invalid_encoding""#) {
                        tally.quarantined += 1
                    }
                    if status >= 500 || !text.hasPrefix("{") {
                        tally.serverErrors.append("\(body.kind) #\(index): \(status) \(text.prefix(200))")
                    }
                }
            }
        }
        let (quarantined, accepted, statuses, serverErrors) = tally.withLock { ($0.quarantined, $0.accepted, $0.statuses, $0.serverErrors) }
        #expect(serverErrors.isEmpty, "\(serverErrors.count) answers were 5xx or not JSON: \(serverErrors.prefix(5))")
        #expect(Set(statuses.keys).isSubset(of: [202, 400, 413]), "\(statuses)")
        #expect(try installation.count("SELECT count(*) FROM quarantine") == quarantined)
        #expect(try installation.count("SELECT count(*) FROM events") == accepted)
        #expect(quarantined > count / 2, "most of the corpus is refused: \(quarantined), statuses \(statuses)")
    }
}
