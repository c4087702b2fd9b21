import Foundation
@testable import LinkpulseDomain
import Testing

/// Segment messages onto link events: the mapping table of docs/sdk.md, rule by rule.
@Suite struct SegmentMappingTests {
    static func message(_ json: String) throws -> SegmentMessage {
        try #require(Array(json.utf8).withUnsafeBufferPointer(FastEventParser.segmentMessage), "\(json)")
    }

    static func payload(
        _ json: String, mapping: SegmentMapping = SegmentMapping(), envelope: SegmentEnvelope = SegmentEnvelope(),
        endpoint: SegmentMessageType? = nil
    ) throws -> EventPayload {
        guard case .linkEvent(let payload) = mapping.map(try message(json), envelope: envelope, endpointType: endpoint) else {
            Issue.record("not a link event: \(json)")
            return EventPayload()
        }
        return payload
    }

    @Test func lifecycleNamesAreLinkEventsWhateverTheirCase() throws {
        let cases: [(String, EventKind)] = [
            ("Application Installed", .install), ("application opened", .open), ("DEEP LINK OPENED", .open),
            ("Deep Link Clicked", .click),
        ]
        for (name, kind) in cases {
            let p = try Self.payload(#"{"type":"track","event":"\#(name)","messageId":"m1"}"#)
            #expect(p.type == .value(kind.rawValue), "\(name)")
            #expect(p.id == .value("m1"))
        }
    }

    /// Names spelled as sent are looked up before lowercasing: the answer is always the one
    /// the lowercased name gives, whatever the operator's names and their case.
    @Test func aNameSpelledAsSentMeansWhatItsLowercaseMeans() throws {
        let mappings = [
            SegmentMapping(),
            SegmentMapping(extraNames: ["Application Installed": .click, "Link Clicked": .click, "link clicked": .open]),
            SegmentMapping(extraNames: ["LINK OPENED": .open]),
        ]
        let names = [
            "Application Installed", "application installed", "Application Opened", "Deep Link Opened", "Deep Link Clicked",
            "Link Clicked", "link clicked", "LINK CLICKED", "Link Opened", "LINK OPENED", "Order Completed", "",
        ]
        for mapping in mappings {
            for name in names {
                #expect(mapping.kind(named: name) == mapping.eventNames[name.lowercased()], "\(name)")
            }
        }
        #expect(SegmentMapping().kind(named: "Application Installed") == .install)
        #expect(SegmentMapping.titleCased("deep link clicked") == "Deep Link Clicked")
    }

    @Test func everyOtherMessageIsIgnoredNotRefused() throws {
        let mapping = SegmentMapping()
        for json in [
            #"{"type":"track","event":"Order Completed"}"#, #"{"type":"screen","name":"Home"}"#,
            #"{"type":"page","name":"Pricing"}"#, #"{"type":"identify","userId":"u1"}"#,
            #"{"type":"group","groupId":"g"}"#, #"{"type":"alias","previousId":"a"}"#,
            #"{"type":"track"}"#, #"{"type":"screen","event":"Application Opened"}"#,
        ] {
            #expect(mapping.map(try Self.message(json), envelope: SegmentEnvelope()) == .ignored, "\(json)")
        }
    }

    @Test func theOperatorsNamesAddToTheStandardOnes() throws {
        let mapping = try SegmentMapping.parse(Data(#"{"event_names":{"Link Clicked":"click"},"link_domains":["Go.Example.com"]}"#.utf8))
        #expect(try Self.payload(#"{"type":"track","event":"link clicked"}"#, mapping: mapping).type == .value("click"))
        #expect(try Self.payload(#"{"type":"track","event":"Application Opened"}"#, mapping: mapping).type == .value("open"))
        #expect(mapping.map(try Self.message(#"{"type":"track","event":"Link Clicked"}"#), envelope: SegmentEnvelope()) != .ignored)
        #expect(SegmentMapping().map(try Self.message(#"{"type":"track","event":"Link Clicked"}"#), envelope: SegmentEnvelope()) == .ignored)
    }

    @Test func configMistakesAreNamed() {
        for (json, fragment) in [
            (#"{"event_name":{}}"#, "unknown key `event_name`"),
            (#"{"event_names":{"X":"purchase"}}"#, "`event_names.X`"),
            (#"{"link_domains":"go.example.com"}"#, "`link_domains` must be an array"),
            (#"{"link_domains":["https://go.example.com/"]}"#, "host names"),
            (#"[]"#, "one JSON object"),
        ] {
            do {
                _ = try SegmentMapping.parse(Data(json.utf8))
                Issue.record("accepted: \(json)")
            } catch {
                #expect(error is SegmentMapping.ConfigError && "\(error)".contains(fragment), "\(json): \(error)")
            }
        }
    }

    @Test func contextFillsTheEventFields() throws {
        let p = try Self.payload("""
            {"type":"track","event":"Application Installed","messageId":"m2","anonymousId":"anon-1",
             "timestamp":"2026-11-20T10:00:00.123456+00:00","sentAt":"2026-11-20T10:00:05Z",
             "context":{"ip":"203.0.113.9","userAgent":"Shop/2.1 (iPhone; iOS 17.2)","os":{"name":"iOS","version":"17.2.1"},
                        "app":{"version":"2.1.0"},"device":{"id":"dev-9","type":"ios"},
                        "campaign":{"name":"winter","source":"newsletter","medium":"email"}},
             "properties":{"click_id":"c-1","ref":"ab12","url":"https://shop.example/p/1","referrer":"https://mail.example/",
                           "from_background":false,"referring_application":"com.mail","version":"2.1.0","build":210,
                           "deferred":true,"extra":{"a":[1,"x"]},"gone":null}}
            """)
        #expect(p.id == .value("m2"))
        #expect(p.timestamp == .value(.text("2026-11-20T10:00:00.123456+00:00")))
        #expect(p.sentAt == .value(.text("2026-11-20T10:00:05Z")))
        #expect(p.ip == .value("203.0.113.9"))
        #expect(p.userAgent == .value("Shop/2.1 (iPhone; iOS 17.2)"))
        #expect(p.osVersion == .value("17.2.1"))
        #expect(p.appVersion == .value("2.1.0"))
        #expect(p.deviceId == .value("dev-9"))
        #expect(p.platform == .value("ios"))
        #expect(p.campaign == .value("winter"))
        #expect(p.source == .value("newsletter"))
        #expect(p.medium == .value("email"))
        #expect(p.clickId == .value("c-1"))
        #expect(p.ref == .value("ab12"))
        #expect(p.url == .value("https://shop.example/p/1"))
        #expect(p.referrer == .value("https://mail.example/"))
        #expect(p.deferred == .value(true))
        #expect(p.properties == .value([
            "from_background": .bool(false), "referring_application": .string("com.mail"),
            "version": .string("2.1.0"), "build": .number(210), "extra": .string(#"{"a":[1,"x"]}"#),
        ]))
    }

    @Test func theRefComesFromTheLinkWhenNotSent() throws {
        let mapping = SegmentMapping(linkDomains: ["go.example.com"])
        func ref(_ url: String) throws -> Field<String> {
            try Self.payload(#"{"type":"track","event":"Deep Link Opened","properties":{"url":"\#(url)"}}"#, mapping: mapping).ref
        }
        #expect(try ref("https://shop.example/p/1?ref=spring&utm_source=x") == .value("spring"))
        #expect(try ref("https://go.example.com/summer") == .value("summer"))
        #expect(try ref("https://GO.example.com/a/b/autumn/") == .value("autumn"))
        #expect(try ref("https://other.example/summer") == .absent)
        #expect(try ref("myapp://product/42") == .absent)
        // UTM parameters of the link stand in for context.campaign.
        let p = try Self.payload(
            #"{"type":"track","event":"Deep Link Opened","properties":{"url":"https://go.example.com/x?utm_campaign=c&utm_source=s&utm_medium=m"}}"#,
            mapping: mapping)
        #expect((p.campaign, p.source, p.medium) == (.value("c"), .value("s"), .value("m")))
    }

    /// For well-formed URLs the hand-read link agrees with `URLComponents`: host, path segments
    /// and the first non-empty value of each query parameter, percent-decoded.
    @Test func linkURLsAreReadAsURLComponentsReadsThem() throws {
        let urls = [
            "https://go.example.com/summer", "https://GO.Example.com:8443/a/b/autumn/?ref=r%20x&utm_source=a+b#frag?x=1",
            "https://user:pw@go.example.com/p%2Fq/last?utm_campaign=&utm_campaign=second&ref", "myapp://product/42?deep_link_value=shoe%2D123",
            "https://shop.example/p/1?ref=spring&utm_source=x&ref=later", "http://[2001:db8::1]:80/x?y=%C3%A9t%C3%A9",
            "go.example.com/no-scheme?ref=z", "mailto:someone@example.com?subject=hi", "https://example.com", "https://example.com/?&&a=1&=2&b",
        ]
        for text in urls {
            let components = try #require(URLComponents(string: text), "\(text)")
            var query: [String: String] = [:]
            for item in components.queryItems ?? [] where query[item.name] == nil {
                if let value = item.value, !value.isEmpty { query[item.name] = value }
            }
            let link = LinkURL(text)
            #expect(link.host == components.host?.lowercased(), "\(text)")
            #expect(link.pathSegments == components.path.split(separator: "/").map(String.init), "\(text)")
            #expect(link.query == query, "\(text)")
        }
        // Malformed: read as far as it goes.
        #expect(LinkURL("https://go.example.com/a b?ref=x y").query["ref"] == "x y")
        #expect(LinkURL("https://go.example.com/%zz").pathSegments == ["%zz"])
    }

    @Test func aMessagesOwnSentAtAndContextWinOverTheBatches() throws {
        let top = try #require(Array("""
            {"batch":[],"sentAt":"2026-11-20T10:00:09Z","writeKey":"k",
             "context":{"ip":"198.51.100.1","os":{"name":"Android","version":"14"},"app":{"version":"1.0"}}}
            """.utf8).withUnsafeBufferPointer(FastEventParser.segmentBody))
        let envelope = SegmentEnvelope(top)
        #expect(envelope.hasBatch && envelope.writeKey == "k")
        let inherited = try Self.payload(#"{"type":"track","event":"Application Opened"}"#, envelope: envelope)
        #expect(inherited.sentAt == .value(.text("2026-11-20T10:00:09Z")))
        #expect(inherited.ip == .value("198.51.100.1"))
        #expect(inherited.platform == .value("android"))
        let own = try Self.payload(
            #"{"type":"track","event":"Application Opened","sentAt":1763632800000,"context":{"os":{"name":"iPadOS","version":"18"}}}"#,
            envelope: envelope)
        #expect(own.sentAt == .value(.epochMillis(1_763_632_800_000)))
        #expect(own.platform == .value("ios"))
        #expect(own.osVersion == .value("18"))
        #expect(own.ip == .value("198.51.100.1"))
        #expect(own.appVersion == .value("1.0"))
    }

    @Test func singleMessageEndpointsImplyTheType() throws {
        #expect(try Self.payload(#"{"event":"Application Opened"}"#, endpoint: .track).type == .value("open"))
        #expect(SegmentMapping().map(try Self.message(#"{"event":"Application Opened"}"#), envelope: SegmentEnvelope(), endpointType: .screen) == .ignored)
    }

    @Test func notAMessageIsInvalidWithAReason() throws {
        let mapping = SegmentMapping()
        guard case .invalid(let noType) = mapping.map(try Self.message(#"{"event":"Application Opened"}"#), envelope: SegmentEnvelope()) else {
            Issue.record("a batch message without type must be invalid")
            return
        }
        #expect(noType.field == "type")
        guard case .invalid(let notObject) = mapping.map(try Self.message(#""hello""#), envelope: SegmentEnvelope()) else {
            Issue.record("a string must be invalid")
            return
        }
        #expect(notObject.code == "not_an_object")
        // A wrong type in a mapped field reaches the validator as such.
        let p = try Self.payload(#"{"type":"track","event":"Deep Link Clicked","context":{"ip":42}}"#)
        #expect(p.ip == .wrongType(sent: "a number"))
        let listed = try Self.payload(#"{"type":"track","event":"Application Opened","properties":["a"]}"#)
        #expect(listed.properties == .wrongType(sent: "an array"))
        // An empty ref is no ref: the link stands in.
        let empty = try Self.payload(
            #"{"type":"track","event":"Deep Link Clicked","properties":{"ref":"","url":"https://x.example/?ref=r9"}}"#)
        #expect(empty.ref == .value("r9"))
    }

    @Test func aBrokenMessageSpoilsOnlyItself() throws {
        let body = Array(#"{"batch":[{"type":"track"}, {"type": tru}, [1,2.5e1,"\u00e9\ud83d\ude00"]],"writeKey":"k","sentAt":"2026-11-20T10:00:00Z"}"#.utf8)
        guard case .success(let framed) = IngestBody.frame(body, format: .json), let read = SegmentBody.read(body, framed: framed) else {
            Issue.record("not read")
            return
        }
        #expect(read.envelope.writeKey == "k" && read.envelope.hasBatch)
        #expect(read.envelope.sentAt == .string("2026-11-20T10:00:00Z"))
        #expect(read.messages.count == 3)
        #expect((try? read.message(at: 0).get())?.type == .string("track"))
        #expect((try? read.message(at: 1).get()) == nil)
        #expect((try? read.message(at: 2).get())?.isObject == false)
    }

    @Test func theFastParserAgreesWithJSONDecoder() throws {
        let documents = [
            #"{"a":[1,-2.5,3e2,true,false,null],"b":{"c":"\"q\" \\ \/ \n\t","d":{}},"e":[]}"#,
            #"  {"batch":[{"type":"track","properties":{"nested":{"deep":[{"x":1}]}}}]}  "#,
            #""just a string""#, "42", "[]",
        ]
        for text in documents {
            let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            let parsed = Array(text.utf8).withUnsafeBufferPointer { FastEventParser.parseValue($0) }
            #expect(parsed == expected, "\(text)")
        }
        for broken in [#"{"a":}"#, #"{"a":1,}"#, "[1 2]", #"{"a":"\x"}"#, "{} {}", "tru", String(repeating: "[", count: 70) + String(repeating: "]", count: 70)] {
            #expect(Array(broken.utf8).withUnsafeBufferPointer { FastEventParser.parseValue($0) } == nil, "\(broken)")
        }
    }

    /// The one-pass message parser reads what a reading of the whole tree by `JSONDecoder`
    /// finds at the same places (the reference below), for messages shaped every way the
    /// mapping cares about.
    @Test func theMessageParserAgreesWithTheDecodedTree() throws {
        let messages = [
            #"{"type":"track","event":"Application Opened","messageId":"m1","anonymousId":"a","timestamp":"2026-11-20T10:00:00Z","sentAt":1763632800000}"#,
            #"{"type":"track","event":"Deep Link Clicked","context":{"ip":"203.0.113.9","userAgent":"UA","os":{"name":"iOS","version":"17.2","x":[1]},"app":{"version":"2.1.0","build":"210"},"device":{"id":"d","type":"ios","model":"iPhone15,2"},"campaign":{"name":"c","source":"s","medium":"m","term":"t"},"library":{"name":"analytics-swift"},"locale":"en-US","screen":{"width":390}}}"#,
            #"{"type":"track","event":"x","context":{"os":"iOS","app":null,"device":[1,2],"campaign":{}}}"#,
            #"{"type":"track","context":"not an object","properties":["a"]}"#,
            #"{"type":"track","context":null,"properties":null}"#,
            #"{"type":"track","properties":{"url":"https://go.example.com/a?ref=r","click_id":"c-1","ref":"","referrer":null,"deferred":true,"build":210,"vip":false,"name":"n","nested":{"b":[1,"x",null],"a":{}},"gone":null,"\u00e9t\u00e9":"\ud83d\ude00","esc\"aped":"\/\n"}}"#,
            #"{"type":"track","properties":{"url":7,"click_id":{"x":1},"ref":[],"deferred":"yes","list":[]}}"#,
            #"{"type":3,"event":true,"messageId":{"a":1},"anonymousId":[],"timestamp":null,"sentAt":"s","userId":"u","integrations":{"All":true}}"#,
            #"{"t\u0079pe":"track","ev\u0065nt":"Application Installed","caf\u00e9":1}"#,
            #"{}"#, #"[1,2]"#, #""hello""#, "null", "  42  ",
        ]
        for text in messages {
            let tree = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(try Self.message(text) == SegmentMessage(reference: tree), "\(text)")
        }
        for broken in [#"{"type":}"#, #"{"type":"track",}"#, #"{"context":{"os":{"name":"iOS"}}"#, #"{"properties":{"a":tru}}"#, #"{"a":"\x"}"#] {
            #expect(Array(broken.utf8).withUnsafeBufferPointer(FastEventParser.segmentMessage) == nil, "\(broken)")
        }
    }

    /// A body that parses as a whole is framed by that parse: each message's bytes and its
    /// rejection (too large, too deep) as `IngestBody.frame` gives them, the same messages as
    /// reading it framed, and too many messages refused the same way. Bodies that do not parse
    /// go through the framing itself.
    @Test func framingByTheParseAgreesWithIngestBodyFrame() throws {
        func nested(_ levels: Int) -> String {
            String(repeating: #"{"a":"#, count: levels) + "1" + String(repeating: "}", count: levels)
        }
        func list(_ levels: Int) -> String { String(repeating: "[", count: levels) + String(repeating: "]", count: levels) }
        let big = String(repeating: "x", count: IngestLimits.maxEventBytes)
        let messages = [
            #"{"type":"track","event":"Application Opened","messageId":"m1"}"#,
            #"{"type":"track","properties":{"n":\#(nested(14))}}"#,  // 16 levels: the limit
            #"{"type":"track","properties":{"n":\#(nested(15))}}"#,  // 17: too deep
            #"{"type":"track","context":{"os":{"x":\#(list(14))}}}"#,  // 17 levels in context
            #"{"type":"track","context":{"library":\#(nested(13))}}"#,  // 16, in a skipped member
            #"{"type":"track","messageId":\#(nested(16))}"#,  // 17, in a scalar's place
            #"{"type":"track","integrations":\#(list(15))}"#,  // 16, skipped
            #"{"type":"track","properties":{"big":"\#(big)"}}"#,  // too large
            #"{}"#, "[]", "[[1]]", "42", #""s""#, "null",
        ]
        var bodies = messages.map { #"{"batch":[\#($0)],"writeKey":"k"}"# }
        bodies += messages.filter { $0.hasPrefix("{") }
        bodies.append(#"{"sentAt":"2026-11-20T10:00:00Z","batch":[ "#
            + messages.joined(separator: " , ") + #" ] , "context":{"ip":"203.0.113.9","deep":\#(nested(20))}}"#)
        bodies.append(#"{"batch":[\#(messages[0]), {"type": tru}]}"#)  // broken: framed, then read apart
        bodies.append(#"{"batch":5}"#)
        bodies.append(#"{"batch":[]}"#)
        for text in bodies {
            let body = Array(text.utf8)
            let framing = IngestBody.frame(body, format: .json)
            let (byParse, read) = SegmentBody.read(body)
            #expect(byParse == framing, "\(text.prefix(120))")
            guard case .success(let framed) = framing else { continue }
            let reference = SegmentBody.read(body, framed: framed)
            #expect(read?.messages == reference?.messages, "\(text.prefix(120))")
            #expect(read?.unreadable == reference?.unreadable, "\(text.prefix(120))")
            #expect(read?.envelope.writeKey == reference?.envelope.writeKey && read?.envelope.context == reference?.envelope.context)
        }
        let tooMany = Array((#"{"batch":["# + Array(repeating: "{}", count: IngestLimits.maxEventsPerRequest + 1).joined(separator: ",") + "]}").utf8)
        #expect(SegmentBody.read(tooMany).framing == IngestBody.frame(tooMany, format: .json))
        #expect(SegmentBody.read(tooMany).body == nil)
    }

    @Test func aBodyThatIsNotOneObjectIsNotRead() {
        for text in [#"[{"type":"track"}]"#, #"{"batch":{"type":"track"}}"#, #"{"type": tru}"#] {
            let body = Array(text.utf8)
            guard case .success(let framed) = IngestBody.frame(body, format: .json) else { continue }
            #expect(SegmentBody.read(body, framed: framed) == nil, "\(text)")
        }
    }
}

extension SegmentMessage {
    /// The members of a message as found in `JSONDecoder`'s tree of it: what the one-pass parser
    /// must agree with.
    init(reference tree: JSONValue) {
        self.init(isObject: false)
        guard case .object(let m) = tree else { return }
        isObject = true
        /// A scalar member: an object or array in its place is kept as its kind only.
        func scalar(_ value: JSONValue?) -> JSONValue? {
            switch value {
            case .object?: .object([:])
            case .array?: .array([])
            default: value
            }
        }
        (type, event, messageId, anonymousId) = (scalar(m["type"]), scalar(m["event"]), scalar(m["messageId"]), scalar(m["anonymousId"]))
        (timestamp, sentAt) = (scalar(m["timestamp"]), scalar(m["sentAt"]))
        if case .object(let c)? = m["context"] {
            var context = SegmentContext()
            context.ip = scalar(c["ip"])
            context.userAgent = scalar(c["userAgent"])
            func object<Object: SegmentContextObject>(_ value: JSONValue?) -> Object? {
                guard let value else { return nil }
                var object = Object()
                for (index, name) in Object.memberNames.enumerated() {
                    object[member: index] = scalar(value[String(decoding: name, as: UTF8.self)])
                }
                return object
            }
            (context.os, context.app, context.device, context.campaign) = (object(c["os"]), object(c["app"]), object(c["device"]), object(c["campaign"]))
            self.context = context
        }
        switch m["properties"] {
        case nil, .null?: properties = nil
        case .object(let p)?:
            var members = SegmentPropertyMembers()
            for (key, value) in p {
                if let field = SegmentPropertyMembers.fieldNames.firstIndex(of: key) {
                    members[field: field] = scalar(value)
                } else {
                    members.keep(key, value)
                }
            }
            properties = .members(members)
        case let other?: properties = .wrongType(sent: other.typeName)
        }
    }
}
