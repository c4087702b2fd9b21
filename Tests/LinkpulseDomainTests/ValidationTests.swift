import Foundation
import Testing
@testable import LinkpulseDomain

/// Decodes one event from JSON text and validates it, as the ingest path does.
func validate(
    _ json: String, receivedAt: Int64 = 1_795_255_620_000, clientIP: String? = "198.51.100.9",
    userAgent: String? = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X)"
) -> Result<IngestEvent, EventError> {
    let validator = EventValidator(hasher: KeyedHasher(secret: Array(repeating: 7, count: 32)))
    let body = Array(json.utf8)
    let framed = try! IngestBody.frame(body, format: .json).get()
    let facts = RequestFacts(receivedAtMs: receivedAt, clientIP: clientIP, userAgent: userAgent)
    return PayloadDecoding.decode(body, framed)[0].flatMap { validator.validate($0, request: facts) }
}

func error(_ json: String) -> EventError? {
    if case .failure(let error) = validate(json) { return error }
    return nil
}

@Suite struct ValidationTests {
    @Test func acceptsAFullClick() throws {
        let event = try validate("""
            {"id":"c-1","type":"click","ref":"ab12cd","campaign":"winter_sale","source":"email","medium":"newsletter",
             "platform":"android","timestamp":"2026-11-21T10:00:00Z","device_id":"dev-9","url":"https://go.example.com/p/shoe?ref=ab12cd",
             "referrer":"https://mail.example.com/","os_version":"14","app_version":"5.2.0",
             "properties":{"deep_link_value":"shoe-123","deep_link_sub1":7,"vip":true},"unknown_field":{"a":[1,2]}}
            """).get()
        #expect(event.id == "c-1")
        #expect(event.kind == .click)
        #expect(event.ref == "ab12cd")
        #expect(event.campaign == "winter_sale")
        #expect(event.source == "email")
        #expect(event.medium == "newsletter")
        #expect(event.platform == .android)
        #expect(event.occurredAtMs == 1_795_255_200_000)
        #expect(event.receivedAtMs == 1_795_255_620_000)
        #expect(event.visitorId == "dev-9")
        #expect(event.propertiesJSON == #"{"deep_link_sub1":7,"deep_link_value":"shoe-123","vip":true}"#)
        #expect(event.botReason == nil)
        #expect(event.ipHash != nil)
    }

    /// The stored properties text is what JSONEncoder (sorted keys, slashes as is) writes, byte
    /// for byte, for keys and values that need escaping, ordering and number formatting.
    @Test func propertiesAreStoredAsJSONEncoderWroteThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let tricky: [String: PropertyValue] = [
            "b": .number(1.5), "B": .number(1e20), "a10": .number(0.1), "a9": .number(-0.0), "a": .number(1e-7),
            "\u{e9}": .string("x\u{1}\u{8}\u{c}\u{d}\u{1f}\u{7f}/\"\\\n\t\u{2028}\u{e9}\u{1F600}"), "Z": .bool(true), "_": .bool(false),
            "e\u{301}x": .number(123456789.125), "a b": .number(-3), "ab": .number(9.1e15), "tiny": .number(5e-324),
            "huge": .number(1.7976931348623157e308), "sum": .number(0.30000000000000004), "\u{20AC}": .number(1e15 + 0.5),
            "neg": .number(-1e-5), "big": .number(8_999_999_999_999_999), "line/sep": .string(""), "\"q\"": .string("a\\b"),
        ]
        for properties in [tricky, ["only": .string("one")], ["n": .number(-42)]] {
            let written = JSONText.properties(properties)
            let encoded = String(decoding: try encoder.encode(properties), as: UTF8.self)
            #expect(written == encoded)
        }
    }

    @Test func typeIsRequiredAndChecked() {
        #expect(error(#"{"ref":"x"}"#)?.code == "missing_field")
        #expect(error(#"{"ref":"x"}"#)?.field == "type")
        #expect(error(#"{"type":"view","ref":"x"}"#)?.code == "invalid_value")
        #expect(error(#"{"type":3,"ref":"x"}"#)?.code == "invalid_type")
        #expect(error(#"{"type":3,"ref":"x"}"#)?.message.contains("not a number") == true)
        // Old SDKs shout; the kind is still clear.
        #expect((try? validate(#"{"type":"CLICK","ref":"x"}"#).get())?.kind == .click)
    }

    @Test func refIsRequiredForClicksAndFallbacks() {
        #expect(error(#"{"type":"click"}"#)?.field == "ref")
        #expect(error(#"{"type":"fallback","ref":""}"#)?.field == "ref")
        #expect(error(#"{"type":"click","ref":null}"#)?.code == "missing_field")
        #expect((try? validate(#"{"type":"install"}"#).get()) != nil)
        #expect((try? validate(#"{"type":"open"}"#).get()) != nil)
    }

    @Test func lengthsAreLimited() {
        let long = String(repeating: "x", count: 129)
        #expect(error(#"{"type":"open","id":"\#(long)"}"#)?.code == "too_long")
        #expect(error(#"{"type":"open","id":"\#(long)"}"#)?.field == "id")
        #expect((try? validate(#"{"type":"open","id":"\#(String(repeating: "é", count: 128))"}"#).get()) != nil)
        #expect(error(#"{"type":"click","ref":"\#(String(repeating: "r", count: 257))"}"#)?.field == "ref")
        #expect(error(#"{"type":"open","campaign":"\#(String(repeating: "c", count: 257))"}"#)?.field == "campaign")
    }

    /// U+0000 is refused in every string field, sent escaped or percent-encoded in an install
    /// referrer (PostgreSQL's text cannot hold it; both stores refuse it alike).
    @Test func aNulCharacterIsRefusedWhereverItIs() {
        for field in ["id", "ref", "campaign", "source", "medium", "device_id", "click_id", "url", "referrer", "user_agent", "os_version", "app_version"] {
            let found = error(#"{"type":"open",\#(field == "ref" ? "" : #""ref":"r","#)"\#(field)":"a\u0000b"}"#)
            #expect(found?.code == "invalid_character" && found?.field == field, "\(field): \(String(describing: found))")
        }
        #expect(error(#"{"type":"install","install_referrer":"utm_campaign=spring%00sale"}"#)?.field == "install_referrer")
        #expect(error(#"{"type":"install","properties":{"note":"a\u0000b"}}"#) == nil, "properties are stored as JSON text, escaped")
    }

    @Test func stringFieldsMustBeStrings() {
        #expect(error(#"{"type":"open","campaign":12}"#)?.field == "campaign")
        #expect(error(#"{"type":"open","device_id":["a"]}"#)?.message.contains("an array") == true)
        #expect(error(#"{"type":"open","deferred":"yes"}"#)?.field == "deferred")
    }

    @Test func generatesAnIdWhenAbsent() throws {
        let a = try validate(#"{"type":"open"}"#).get()
        let b = try validate(#"{"type":"open"}"#).get()
        #expect(a.id.count == 36)
        #expect(a.id != b.id)
    }

    @Test func platformIsCheckedOrDerived() throws {
        #expect(try validate(#"{"type":"open"}"#).get().platform == .ios)
        #expect(try validate(#"{"type":"open","platform":"WEB"}"#).get().platform == .web)
        #expect(try validate(#"{"type":"open","user_agent":"Mozilla/5.0 (Linux; Android 14)"}"#).get().platform == .android)
        #expect(error(#"{"type":"open","platform":"symbian"}"#)?.field == "platform")
    }

    @Test func timestampsInBothForms() throws {
        #expect(try validate(#"{"type":"open","timestamp":1795255200000}"#).get().occurredAtMs == 1_795_255_200_000)
        #expect(try validate(#"{"type":"open","timestamp":"2026-11-21T15:30:00+05:30"}"#).get().occurredAtMs == 1_795_255_200_000)
        #expect(try validate(#"{"type":"open"}"#).get().occurredAtMs == 1_795_255_620_000)
        #expect(error(#"{"type":"open","timestamp":"yesterday"}"#)?.code == "invalid_timestamp")
        #expect(error(#"{"type":"open","timestamp":1795255200}"#)?.message.contains("epoch seconds") == true)
        #expect(error(#"{"type":"open","timestamp":true}"#)?.code == "invalid_type")
        #expect(error(#"{"type":"open","timestamp":"1999-12-31T23:59:59Z"}"#)?.code == "timestamp_out_of_range")
        #expect(error(#"{"type":"open","timestamp":"2026-11-23T10:08:00Z"}"#)?.code == "timestamp_out_of_range")
    }

    @Test func clockSkewIsCorrected() throws {
        // The device clock runs 1 h fast: it says the event happened at 11:00 and was sent at
        // 11:05; the server received it at 10:07, so it happened at 10:02.
        let event = try validate(#"{"type":"open","timestamp":"2026-11-21T11:00:00Z","sent_at":"2026-11-21T11:05:00Z"}"#).get()
        #expect(event.occurredAtMs == Timestamp.parseRFC3339("2026-11-21T10:02:00Z"))
        #expect(event.sentAtMs == Timestamp.parseRFC3339("2026-11-21T11:05:00Z"))
        // A clock days ahead is corrected back into range instead of rejected.
        let fast = try validate(#"{"type":"open","timestamp":1795600000000,"sent_at":1795600000000}"#).get()
        #expect(fast.occurredAtMs == 1_795_255_620_000)
        // sent_at alone: the event happened when it was received.
        #expect(try validate(#"{"type":"open","sent_at":"2026-11-21T11:05:00Z"}"#).get().occurredAtMs == 1_795_255_620_000)
        #expect(error(#"{"type":"open","sent_at":"soon"}"#)?.field == "sent_at")
    }

    @Test func addressesAreHashedNeverKept() throws {
        let forwarded = try validate(#"{"type":"click","ref":"r","ip":"203.0.113.7"}"#).get()
        let own = try validate(#"{"type":"click","ref":"r"}"#).get()
        let mapped = try validate(#"{"type":"click","ref":"r","ip":"::ffff:203.0.113.7"}"#).get()
        #expect(forwarded.ipHash != own.ipHash)
        #expect(forwarded.ipHash == mapped.ipHash)
        let dump = "\(forwarded)"
        #expect(!dump.contains("203.0.113.7"))
        #expect(!dump.contains("198.51.100.9"))
        #expect(error(#"{"type":"click","ref":"r","ip":"300.1.1.1"}"#)?.field == "ip")
        #expect(try validate(#"{"type":"open","ip":"2001:DB8::1"}"#).get().ipHash == (try validate(#"{"type":"open","ip":"2001:db8:0::1"}"#).get().ipHash))
    }

    @Test func visitorIdFallsBackToHashOfAddressAndAgent() throws {
        let a = try validate(#"{"type":"open"}"#).get()
        let b = try validate(#"{"type":"open","user_agent":"Other/1.0"}"#).get()
        let c = try validate(#"{"type":"open","device_id":"idfv-1"}"#).get()
        #expect(a.visitorId.hasPrefix("v:"))
        #expect(a.visitorId != b.visitorId)
        #expect(c.visitorId == "idfv-1")
    }

    @Test func propertiesMustBeFlatAndSmall() {
        #expect(error(#"{"type":"open","properties":{"a":{"b":1}}}"#)?.field == "properties")
        #expect(error(#"{"type":"open","properties":{"a":[1]}}"#)?.field == "properties")
        #expect(error(#"{"type":"open","properties":{"a":null}}"#)?.field == "properties")
        #expect(error(#"{"type":"open","properties":"x"}"#)?.code == "invalid_type")
        let many = (0...32).map { #""k\#($0)":1"# }.joined(separator: ",")
        #expect(error(#"{"type":"open","properties":{\#(many)}}"#)?.code == "too_many_properties")
    }

    @Test func botsAreFlaggedNotRejected() throws {
        let event = try validate(#"{"type":"click","ref":"r"}"#, userAgent: "Slackbot-LinkExpanding 1.0").get()
        #expect(event.botReason == "preview:slack")
        let forwarded = try validate(#"{"type":"click","ref":"r","user_agent":"facebookexternalhit/1.1"}"#).get()
        #expect(forwarded.botReason == "preview:facebook")
    }

    @Test func nonObjectsAreRejected() {
        #expect(error("5")?.code == "not_an_object")
        #expect(error(#""click""#)?.code == "not_an_object")
    }
}
