import Testing
@testable import LinkpulseDomain

func frame(_ text: String, _ format: BodyFormat = .json) -> Result<[FramedEvent], BodyError> {
    IngestBody.frame(Array(text.utf8), format: format)
}

func texts(_ text: String, _ format: BodyFormat = .json) -> [String] {
    let bytes = Array(text.utf8)
    return (try? IngestBody.frame(bytes, format: format).get())?.map { String(decoding: bytes[$0.range], as: UTF8.self) } ?? ["<failed>"]
}

@Suite struct FramingTests {
    @Test func singleObject() {
        #expect(texts(#"  {"type":"click","ref":"a"}  "#) == [#"{"type":"click","ref":"a"}"#])
    }

    @Test func arrayOfEvents() {
        #expect(texts(#"[{"a":"]"}, {"b":[1,{"c":"}"}]} ,3]"#) == [#"{"a":"]"}"#, #"{"b":[1,{"c":"}"}]}"#, "3"])
        #expect(texts("[]") == [])
        #expect(texts("\u{FEFF}[{}]") == ["{}"])
    }

    @Test func batchWrapper() {
        #expect(texts(#"{"sent_by":"sdk","batch":[{"type":"open"},{"type":"install"}],"v":2}"#) == [#"{"type":"open"}"#, #"{"type":"install"}"#])
        // An object without a batch array is one event.
        #expect(texts(#"{"type":"open","batch":"x"}"#) == [#"{"type":"open","batch":"x"}"#])
    }

    @Test func escapedQuotesInStrings() {
        #expect(texts(#"[{"ref":"a\"]b\\"},{}]"#) == [#"{"ref":"a\"]b\\"}"#, "{}"])
    }

    @Test(arguments: ["", "   ", "garbage", "[{]", "[{}", "{\"a\":1", "[{},]", "[,{}]", "[{}] x", "\"text", "{} {}", "[{}}]",
                           #"{"batch":[{}],}"#, #"{"batch":[{}] "x":1}"#, #"{"batch":[{}],"x":}"#, #"{"batch":[{}],"x" 1}"#, #"{"batch":[{}]"#, #"{"batch":[{}],x:1}"#])
    func notJSON(text: String) {
        guard case .failure(let error) = frame(text) else {
            Issue.record("framed \(text)")
            return
        }
        #expect(error.kind == .notJSON)
    }

    @Test func tooManyEvents() {
        let ok = "[" + Array(repeating: "{}", count: 1000).joined(separator: ",") + "]"
        let over = "[" + Array(repeating: "{}", count: 1001).joined(separator: ",") + "]"
        #expect((try? frame(ok).get())?.count == 1000)
        guard case .failure(let error) = frame(over) else {
            Issue.record("1001 events framed")
            return
        }
        #expect(error.kind == .tooManyEvents)
        let lines = Array(repeating: "{}", count: 1001).joined(separator: "\n")
        #expect((try? frame(lines, .ndjson).get()) == nil)
    }

    @Test func oversizedAndDeepEventsAreRejectedAlone() throws {
        let big = #"{"type":"open","url":""# + String(repeating: "u", count: 33 * 1024) + #""}"#
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        let fine = String(repeating: "[", count: 15) + String(repeating: "]", count: 15)
        let events = try frame("[\(big),{\"type\":\"open\"},{\"p\":\(deep)},{\"p\":\(fine)}]").get()
        #expect(events.count == 4)
        #expect(events[0].rejection?.code == "event_too_large")
        #expect(events[1].rejection == nil)
        #expect(events[2].rejection?.code == "too_deep")
        #expect(events[3].rejection == nil)
    }

    @Test func ndjsonLines() throws {
        let body = "{\"type\":\"open\"}\r\n\n  {\"type\":\"install\"}  \nnot json\n{\"a\":1} {\"b\":2}\n[1]\n"
        let events = try frame(body, .ndjson).get()
        #expect(events.count == 5)
        #expect(events[0].rejection == nil)
        #expect(events[1].rejection == nil)
        #expect(events[2].rejection?.code == "invalid_json")
        #expect(events[3].rejection?.code == "invalid_json")
        #expect(events[4].rejection == nil)  // framed; the validator says it is not an object
        #expect(texts(body, .ndjson)[1] == #"{"type":"install"}"#)
    }

    @Test func brokenJSONInsideAnEventIsThatEventsProblem() {
        let body = Array(#"[{"type":"click","ref":"a"},{"type": clik}]"#.utf8)
        let framed = try! IngestBody.frame(body, format: .json).get()
        let decoded = PayloadDecoding.decode(body, framed)
        #expect((try? decoded[0].get()) != nil)
        guard case .failure(let error) = decoded[1] else {
            Issue.record("decoded broken JSON")
            return
        }
        #expect(error.code == "invalid_json")
    }
}

@Suite struct QuarantineTests {
    let hasher = KeyedHasher(secret: Array(repeating: 3, count: 32))

    @Test func scrubsAddresses() {
        let facts = RequestFacts(receivedAtMs: 0, clientIP: "198.51.100.9", userAgent: nil)
        let raw = #"{"type":"nope","ip" : "203.0.113.7","note":"from 198.51.100.9 via 192.0.2.1"}"#
        let record = QuarantinedEvent.make(
            raw: Array(raw.utf8), index: 0, error: EventError(code: "x", field: nil, message: "x"),
            request: facts, forwardedFor: ["192.0.2.1"], hasher: hasher)
        #expect(!record.rawText.contains("203.0.113.7"))
        #expect(!record.rawText.contains("198.51.100.9"))
        #expect(!record.rawText.contains("192.0.2.1"))
        #expect(record.rawText.contains(hasher.ipHash("203.0.113.7")))
        #expect(record.rawText.hasPrefix(#"{"type":"nope","ip" : "ip_hash:"#))
        #expect(!record.truncated)
    }

    @Test func keepsAtMost32KiBOnACharacterBoundary() {
        let raw = Array(("{\"u\":\"" + String(repeating: "é", count: 20_000) + "\"}").utf8)
        let record = QuarantinedEvent.make(
            raw: raw, index: 3, error: EventError(code: "event_too_large", field: nil, message: "x"),
            request: RequestFacts(receivedAtMs: 0, clientIP: nil, userAgent: nil), forwardedFor: [], hasher: hasher)
        #expect(record.truncated)
        #expect(record.rawText.utf8.count <= QuarantinedEvent.maxRawBytes)
        #expect(record.rawText.utf8.count > QuarantinedEvent.maxRawBytes - 4)
        #expect(record.rawText.hasSuffix("é"))
    }
}
