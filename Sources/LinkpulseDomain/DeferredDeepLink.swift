import Foundation

/// What Android's Play Install Referrer API hands the app on first launch: the `referrer`
/// parameter the landing page put into the Play Store URL, as URL-encoded key/value pairs,
/// e.g. `lp_click=2f0c…&utm_source=newsletter&utm_campaign=spring`.
public struct InstallReferrer: Sendable, Equatable {
    /// The parameter that carries the click's event id.
    public static let clickParameter = "lp_click"

    /// The click id (`lp_click`), when present.
    public var clickId: String?
    /// `utm_campaign`, `utm_source`, `utm_medium`, when present.
    public var campaign: String?
    public var source: String?
    public var medium: String?

    /// Parses the raw string. Pairs are separated by `&`, keys and values percent-decoded
    /// (`+` is a space); a string that was encoded once more on its way (no `=`, but `%3D`) is
    /// decoded first. Unknown keys are ignored, empty values are absent, the first of a
    /// repeated key wins. Leading and trailing blanks (tabs and Unicode space separators) are
    /// not part of it. Works on the UTF-8 bytes: this runs for every resolve.
    public init(parsing raw: String) {
        var bytes = Array(Self.trimmed(raw).utf8)
        if !bytes.contains(UInt8(ascii: "=")), Self.containsEncodedEquals(bytes),
           let once = bytes.withUnsafeBufferPointer({ PercentDecoding.decode($0) }) {
            bytes = Array(once.utf8)
        }
        bytes.withUnsafeBufferPointer { text in
            var start = 0
            while start < text.count {
                let end = text[start...].firstIndex(of: UInt8(ascii: "&")) ?? text.count
                defer { start = end + 1 }
                guard let equals = text[start..<end].firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = Self.decode(UnsafeBufferPointer(rebasing: text[start..<equals]))
                let field: WritableKeyPath<InstallReferrer, String?>
                switch key {
                case Self.clickParameter: field = \.clickId
                case "utm_campaign": field = \.campaign
                case "utm_source": field = \.source
                case "utm_medium": field = \.medium
                default: continue
                }
                guard self[keyPath: field] == nil else { continue }
                let value = Self.decode(UnsafeBufferPointer(rebasing: text[(equals + 1)..<end]))
                if !value.isEmpty { self[keyPath: field] = value }
            }
        }
    }

    /// A key or value: percent-decoded with `+` as a space; as sent (with `+` as a space) when
    /// an escape is broken or decodes to something that is not UTF-8.
    static func decode(_ part: UnsafeBufferPointer<UInt8>) -> String {
        PercentDecoding.decode(part, plusIsSpace: true)
            ?? String(decoding: part.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    /// `raw` without leading and trailing tabs and space separators (Unicode category Zs).
    static func trimmed(_ raw: String) -> Substring {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = raw.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }), let last = scalars.lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return Substring(scalars[first...last])
    }

    /// Whether the bytes hold `%3D` (an encoded `=`), in either case.
    static func containsEncodedEquals(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3 else { return false }
        return (0...(bytes.count - 3)).contains { i in
            bytes[i] == UInt8(ascii: "%") && bytes[i + 1] == UInt8(ascii: "3") && bytes[i + 2] | 0x20 == UInt8(ascii: "d")
        }
    }
}

/// The content an app opens for a link: AppsFlyer's `deep_link_value` and
/// `deep_link_sub1`…`deep_link_sub10`, from a click's `properties`, else from the same-named
/// query parameters of its `url` (properties win, key by key).
public struct DeepLinkContent: Sendable, Equatable {
    /// `value`, `sub1`…`sub10`, only those that are set, in that order.
    public var fields: [(key: String, value: String)]

    /// The answer's keys in order, with the property / query parameter each is read from.
    public static let keys: [(answer: String, parameter: String)] =
        [("value", "deep_link_value")] + (1...10).map { ("sub\($0)", "deep_link_sub\($0)") }

    /// - Parameters:
    ///   - properties: the click's stored `properties` (canonical JSON object), if any.
    ///   - url: the click's `url`, if any.
    public init(properties: String?, url: String?) {
        let stored = Self.properties(properties)
        let link = url.map(LinkURL.init)
        fields = Self.keys.compactMap { key in
            guard let value = stored[key.parameter] ?? link?.parameter(key.parameter), !value.isEmpty else { return nil }
            return (key.answer, value)
        }
    }

    public static func == (a: DeepLinkContent, b: DeepLinkContent) -> Bool {
        a.fields.elementsEqual(b.fields) { $0.key == $1.key && $0.value == $1.value }
    }

    /// The `deep_link_*` properties as text (a number as JSON writes it, a boolean as
    /// `true`/`false`).
    static func properties(_ json: String?) -> [String: String] {
        guard let json, case .object(let object)? = Array(json.utf8).withUnsafeBufferPointer(FastEventParser.parseValue) else { return [:] }
        var texts: [String: String] = [:]
        for (key, value) in object where key.hasPrefix("deep_link_") {
            switch value {
            case .string(let text): texts[key] = text
            case .bool(let flag): texts[key] = flag ? "true" : "false"
            case .number(let number):
                texts[key] = number.rounded() == number && abs(number) < 9.0e15 ? String(Int64(number)) : String(number)
            case .null, .array, .object: continue
            }
        }
        return texts
    }
}

extension DeepLinkContent: Encodable {
    struct FieldKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// As an object of the fields that are set: `{"value":…,"sub1":…}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKey.self)
        for field in fields { try c.encode(field.value, forKey: FieldKey(stringValue: field.key)) }
    }
}

/// A stored click as an answer shows it: its link fields only (never who clicked).
public struct AnsweredClick: Sendable, Equatable {
    public var id: String
    public var occurredAtMs: Int64
    public var url: String?
    /// The click's `properties` (canonical JSON object), if any.
    public var properties: String?
    public var dimensions: LinkDimensions

    public init(id: String, occurredAtMs: Int64, url: String?, properties: String?, dimensions: LinkDimensions) {
        self.id = id; self.occurredAtMs = occurredAtMs; self.url = url; self.properties = properties; self.dimensions = dimensions
    }
}

/// One stored install or open with what attribution decided for it: what an answer to the app
/// is made of.
public struct AttributedEvent: Sendable, Equatable {
    public var seq: Int64
    public var kind: EventKind
    public var isBot: Bool
    /// Whether it came through `/v1/resolve`.
    public var isResolve: Bool
    /// Its own link dimensions, `url` and `properties`, as stored.
    public var own: LinkDimensions
    public var url: String?
    public var properties: String?
    /// The match type (nil for a bot, which attribution does not look at).
    public var match: MatchType?
    /// The click it is counted under (see `Attribution.clickSeq`), when there is one.
    public var click: AnsweredClick?
    /// For a fingerprint match, how many clicks fitted (stored since `candidates` exists).
    public var candidates: Int?
    /// The seq of its device's first resolve, when it resolved.
    public var firstResolveSeq: Int64?

    public init(
        seq: Int64, kind: EventKind, isBot: Bool, isResolve: Bool, own: LinkDimensions, url: String?, properties: String?,
        match: MatchType?, click: AnsweredClick?, candidates: Int?, firstResolveSeq: Int64?
    ) {
        self.seq = seq; self.kind = kind; self.isBot = isBot; self.isResolve = isResolve; self.own = own; self.url = url
        self.properties = properties; self.match = match; self.click = click; self.candidates = candidates
        self.firstResolveSeq = firstResolveSeq
    }
}

/// The answer to an app's first-launch call (`POST /v1/resolve`), and to `GET
/// /v1/attributions/{id}`: the attribution the stats count, told the app's way.
///
/// - `ref`, `campaign`, `source`, `medium`: what the event is counted under.
/// - `certain`: install_referrer, click_id and ref matches (the app knew the link).
/// - `click`: the matched click (install_referrer, click_id, fingerprint); a ref match names
///   no click, since the newest click of a ref is somebody's, not necessarily this person's.
/// - `deep_link`: from the matched click (its properties, else its URL's query), for a ref
///   match from the event's own properties and URL.
/// - `candidates`: fingerprint: how many clicks fitted (the newest won); 1 for the other
///   matches, 0 organic.
public struct ResolveAnswer: Sendable, Equatable, Encodable {
    public var matched: Bool
    public var matchType: MatchType
    public var certain: Bool
    public var dimensions: LinkDimensions
    public var click: AnsweredClick?
    public var deepLink: DeepLinkContent
    public var candidates: Int
    /// Whether this was the device's first resolve; nil for an event that did not resolve.
    public var firstSession: Bool?

    public init(_ event: AttributedEvent) {
        let match = event.isBot ? .organic : (event.match ?? .organic)
        matched = match != .organic
        matchType = match
        certain = [.installReferrer, .clickId, .ref].contains(match)
        let clickLink = event.click?.dimensions
        dimensions = match.countedDimensions(own: event.own, click: clickLink)
        click = match == .ref || match == .organic ? nil : event.click
        if let click {
            deepLink = DeepLinkContent(properties: click.properties, url: click.url)
        } else if match == .ref {
            deepLink = DeepLinkContent(properties: event.properties, url: event.url)
        } else {
            deepLink = DeepLinkContent(properties: nil, url: nil)
        }
        candidates = switch match {
        case .organic: 0
        case .fingerprint: event.candidates ?? 1
        default: 1
        }
        firstSession = event.isResolve ? event.firstResolveSeq.map { $0 == event.seq } ?? true : nil
    }

    enum Keys: String, CodingKey {
        case matched, matchType = "match_type", certain, ref, campaign, source, medium, click
        case deepLink = "deep_link", candidates, firstSession = "first_session"
    }

    enum ClickKeys: String, CodingKey { case id, timestamp, url }

    /// The answer as the response body: what `encode(to:)` gives `JSONEncoder` with sorted keys
    /// and slashes as is, byte for byte (a test holds it to that), written by hand: a resolve
    /// is small, and the encoder's generic containers were a tenth of its CPU.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        func key(_ name: String) {
            JSONText.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
        }
        func text(_ value: String?) {
            if let value { JSONText.appendString(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        func flag(_ value: Bool) { out.append(contentsOf: (value ? "true" : "false").utf8) }
        out.append(UInt8(ascii: "{"))
        key("campaign"); text(dimensions.campaign); out.append(UInt8(ascii: ","))
        key("candidates"); out.append(contentsOf: String(candidates).utf8); out.append(UInt8(ascii: ","))
        key("certain"); flag(certain); out.append(UInt8(ascii: ","))
        key("click")
        if let click {
            out.append(UInt8(ascii: "{"))
            key("id"); text(click.id); out.append(UInt8(ascii: ","))
            key("timestamp"); text(Timestamp.formatUTC(click.occurredAtMs)); out.append(UInt8(ascii: ","))
            key("url"); text(click.url)
            out.append(UInt8(ascii: "}"))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(UInt8(ascii: ","))
        key("deep_link")
        out.append(UInt8(ascii: "{"))
        for (index, field) in deepLink.fields.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            key(field.key); text(field.value)
        }
        out.append(contentsOf: "},".utf8)
        if let firstSession { key("first_session"); flag(firstSession); out.append(UInt8(ascii: ",")) }
        key("match_type"); text(matchType.rawValue); out.append(UInt8(ascii: ","))
        key("matched"); flag(matched); out.append(UInt8(ascii: ","))
        key("medium"); text(dimensions.medium); out.append(UInt8(ascii: ","))
        key("ref"); text(dimensions.ref); out.append(UInt8(ascii: ","))
        key("source"); text(dimensions.source)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Dimensions and `click` are `null` when absent; `deep_link` holds only what is set;
    /// `first_session` is left out for an event that did not resolve.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(matched, forKey: .matched)
        try c.encode(matchType, forKey: .matchType)
        try c.encode(certain, forKey: .certain)
        try c.encode(dimensions.ref, forKey: .ref)
        try c.encode(dimensions.campaign, forKey: .campaign)
        try c.encode(dimensions.source, forKey: .source)
        try c.encode(dimensions.medium, forKey: .medium)
        if let click {
            var nested = c.nestedContainer(keyedBy: ClickKeys.self, forKey: .click)
            try nested.encode(click.id, forKey: .id)
            try nested.encode(Timestamp.formatUTC(click.occurredAtMs), forKey: .timestamp)
            try nested.encode(click.url, forKey: .url)
        } else {
            try c.encodeNil(forKey: .click)
        }
        try c.encode(deepLink, forKey: .deepLink)
        try c.encode(candidates, forKey: .candidates)
        try c.encodeIfPresent(firstSession, forKey: .firstSession)
    }
}
