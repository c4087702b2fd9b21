import Foundation

/// What one Segment message becomes.
public enum SegmentOutcome: Sendable, Equatable {
    /// A link event, in the shape `/v1/events` takes, for the same validator.
    case linkEvent(EventPayload)
    /// Accepted and counted, but not a link event (an SDK sends everything it tracks).
    case ignored
    /// Not a message at all (not an object, no `type`): quarantined with this reason.
    case invalid(EventError)
}

/// How Segment messages map onto Linkpulse events (the table of docs/sdk.md). Pure: the same message
/// always maps the same way.
///
/// - `track` events named like Segment's mobile lifecycle spec (`Application Installed` →
///   install, `Application Opened` and `Deep Link Opened` → open, `Deep Link Clicked` → click;
///   case-insensitive), plus the operator's own names; every other message is ignored.
/// - `messageId` → id; `timestamp`, and `sentAt` (the message's, else the batch's) → the clock
///   correction; `context.ip`, `context.userAgent`, `context.os.version`, `context.app.version`
///   → the same fields; `context.device.id` (else `anonymousId`) → device_id; `context.os.name`
///   (else `context.device.type`) → platform; `context.campaign.{name,source,medium}` (else the
///   link URL's `utm_*`) → campaign, source, medium; `properties.url`, `click_id`, `ref`,
///   `referrer`, `deferred` → the same fields; without `ref`, the link URL's `ref` parameter,
///   else its last path segment on one of the operator's link domains. Other properties stay
///   properties (nested values as their JSON text, nulls dropped).
public struct SegmentMapping: Sendable {
    /// Segment's mobile-spec names, lowercased.
    public static let standardNames: [String: EventKind] = [
        "application installed": .install,
        "application opened": .open,
        "deep link opened": .open,
        "deep link clicked": .click,
    ]

    /// Event names (lowercased) that are link events, and which kind each is.
    public let eventNames: [String: EventKind]
    /// The same names as the spec and the operator spell them ("Application Installed"), which
    /// is how SDKs send them: looked up first, so most messages' names are never lowercased.
    let spelledNames: [String: EventKind]
    /// Hosts (lowercased) whose link URLs carry the ref as their last path segment.
    public let linkDomains: Set<String>

    public init(extraNames: [String: EventKind] = [:], linkDomains: [String] = []) {
        var names = Self.standardNames
        var spelled = Dictionary(uniqueKeysWithValues: Self.standardNames.map { (Self.titleCased($0.key), $0.value) })
        for (name, kind) in extraNames {
            names[name.lowercased()] = kind
            spelled[name] = kind
        }
        // A spelling that lowercases to another kind's name must not shadow it.
        eventNames = names
        spelledNames = spelled.filter { names[$0.key.lowercased()] == $0.value }
        self.linkDomains = Set(linkDomains.map { $0.lowercased() })
    }

    /// "application installed" → "Application Installed", as Segment's spec spells its names.
    static func titleCased(_ name: String) -> String {
        name.split(separator: " ").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }

    /// The kind of link event `name` names, matched case-insensitively; nil for any other name.
    func kind(named name: String) -> EventKind? {
        spelledNames[name] ?? eventNames[name.lowercased()]
    }

    /// Why a Segment config file is refused.
    public struct ConfigError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the operator's config file: `{"event_names": {"Link Clicked": "click", …},
    /// "link_domains": ["go.example.com", …]}`, both optional; nothing else is allowed, so a
    /// misspelt key is an error rather than a setting silently ignored.
    public static func parse(_ data: Data) throws -> SegmentMapping {
        guard case .object(let top) = try JSONDecoder().decode(JSONValue.self, from: data) else {
            throw ConfigError(description: "the file must hold one JSON object with `event_names` and/or `link_domains`.")
        }
        if let unknown = top.keys.first(where: { $0 != "event_names" && $0 != "link_domains" }) {
            throw ConfigError(description: "unknown key `\(unknown)`; the keys are `event_names` and `link_domains`.")
        }
        var names: [String: EventKind] = [:]
        switch top["event_names"] {
        case nil: break
        case .object(let members)?:
            for (name, value) in members {
                guard case .string(let kindName) = value, let kind = EventKind(rawValue: kindName.lowercased()) else {
                    throw ConfigError(description: "`event_names.\(name)` must be one of click, open, install, fallback.")
                }
                names[name] = kind
            }
        case _?:
            throw ConfigError(description: "`event_names` must be an object such as {\"Link Clicked\": \"click\"}.")
        }
        var domains: [String] = []
        switch top["link_domains"] {
        case nil: break
        case .array(let items)?:
            for item in items {
                guard case .string(let host) = item, !host.isEmpty, !host.contains("/") else {
                    throw ConfigError(description: "`link_domains` must list host names such as \"go.example.com\".")
                }
                domains.append(host)
            }
        case _?:
            throw ConfigError(description: "`link_domains` must be an array of host names such as [\"go.example.com\"].")
        }
        return SegmentMapping(extraNames: names, linkDomains: domains)
    }

    /// Maps one message, given the envelope it came in and, for the single-message endpoints,
    /// the type the endpoint implies.
    public func map(_ m: SegmentMessage, envelope: SegmentEnvelope, endpointType: SegmentMessageType? = nil) -> SegmentOutcome {
        guard m.isObject else {
            return .invalid(EventError(
                code: "not_an_object", field: nil,
                message: "Each message must be a JSON object such as {\"type\":\"track\",\"event\":\"Application Opened\",\"messageId\":\"…\"}."))
        }
        let typeName: String
        switch m.type {
        case .string(let name)?: typeName = name == SegmentMessageType.track.rawValue ? name : name.lowercased()
        case nil, .null?:
            guard let endpointType else {
                return .invalid(EventError(
                    code: "missing_field", field: "type",
                    message: "Every message in a batch needs `type`: track, screen, page, identify, group or alias."))
            }
            typeName = endpointType.rawValue
        case let other?:
            return .invalid(EventError(
                code: "wrong_type", field: "type", message: "`type` must be a string such as \"track\" (got \(other.typeName))."))
        }
        guard typeName == SegmentMessageType.track.rawValue,
              case .string(let name)? = m.event, let kind = kind(named: name)
        else { return .ignored }
        return .linkEvent(payload(kind: kind, m, envelope: envelope))
    }

    func payload(kind: EventKind, _ m: SegmentMessage, envelope: SegmentEnvelope) -> EventPayload {
        let context = m.context.map { $0.over(envelope.context) } ?? envelope.context ?? SegmentContext()
        var p = EventPayload()
        p.type = .value(kind.rawValue)
        p.id = m.messageId?.stringField ?? .absent
        p.timestamp = m.timestamp?.timeField ?? .absent
        p.sentAt = (m.sentAt ?? envelope.sentAt)?.timeField ?? .absent
        p.ip = context.ip?.stringField ?? .absent
        p.userAgent = context.userAgent?.stringField ?? .absent
        p.osVersion = context.os?.version?.stringField ?? .absent
        p.appVersion = context.app?.version?.stringField ?? .absent
        p.deviceId = Self.firstString(context.device?.id, m.anonymousId)
        if let platform = Self.platform(osName: context.os?.name, deviceType: context.device?.type) {
            p.platform = .value(platform.rawValue)
        }
        let properties: SegmentPropertyMembers
        switch m.properties {
        case .members(let members)?: properties = members
        case .wrongType(let sent)?:
            properties = SegmentPropertyMembers()
            p.properties = .wrongType(sent: sent)  // the validator names it
        case nil: properties = SegmentPropertyMembers()
        }
        p.url = properties.url?.stringField ?? .absent
        p.clickId = properties.clickId?.stringField ?? .absent
        p.referrer = properties.referrer?.stringField ?? .absent
        switch properties.deferred {
        case .bool(let flag)?: p.deferred = .value(flag)
        case nil, .null?: break
        case let other?: p.deferred = .wrongType(sent: other.typeName)
        }
        // The link URL is parsed only when it has to stand in for a missing field.
        var parsedLink: LinkURL??
        func link() -> LinkURL? {
            if parsedLink == nil { parsedLink = .some(p.url.value.map(LinkURL.init)) }
            return parsedLink ?? nil
        }
        /// A field from its member, else from the link's query parameter.
        func linkField(_ member: JSONValue?, parameter: String) -> Field<String> {
            let sent = Self.firstString(member)
            guard sent == .absent, let value = link()?.parameter(parameter) else { return sent }
            return .value(value)
        }
        p.ref = Self.firstString(properties.ref)
        if p.ref == .absent, let ref = link()?.ref(linkDomains: linkDomains) { p.ref = .value(ref) }
        p.campaign = linkField(context.campaign?.name, parameter: "utm_campaign")
        p.source = linkField(context.campaign?.source, parameter: "utm_source")
        p.medium = linkField(context.campaign?.medium, parameter: "utm_medium")
        if !properties.others.isEmpty { p.properties = .value(properties.others) }
        return p
    }

    /// The candidate as a payload field when it holds anything but null or an empty string,
    /// else the fallback the same way; a wrong type is reported as such.
    static func firstString(_ candidate: JSONValue?, _ fallback: JSONValue? = nil) -> Field<String> {
        switch candidate {
        case nil, .null?: fallback.map { firstString($0) } ?? .absent
        case .string(let text)? where text.isEmpty: fallback.map { firstString($0) } ?? .absent
        case let value?: value.stringField
        }
    }

    /// The platform `context.os.name` names (iOS and iPadOS → ios, Android → android), else
    /// `context.device.type`; nil leaves it to the user agent.
    static func platform(osName: JSONValue?, deviceType: JSONValue?) -> Platform? {
        func named(_ value: JSONValue?) -> Platform? {
            guard case .string(let name)? = value else { return nil }
            switch name.lowercased() {
            case "ios", "ipados", "iphone os": return .ios
            case "android": return .android
            default: return nil
            }
        }
        return named(osName) ?? named(deviceType)
    }
}

/// The parts of a link URL the mapping reads: its host, path and query parameters.
///
/// Read by hand rather than through `URLComponents` (which cost as much as the rest of mapping a
/// message): for a well-formed URL the same host (lowercased), path segments and query items
/// (names and values percent-decoded, `+` left as is); a malformed one is read as far as it
/// goes instead of not at all. Opening one only finds where its parts are; a parameter is looked
/// up by scanning the query's bytes, so a message that needs two parameters builds two strings,
/// not a dictionary of every parameter.
struct LinkURL {
    let text: String
    /// Where the host is in `text`'s UTF-8 (nil without `scheme://`), the path, and the query
    /// after `?` (nil without one); a `#fragment` is in none of them.
    private let hostBytes: Range<Int>?
    private let pathBytes: Range<Int>
    private let queryBytes: Range<Int>?

    init(_ text: String) {
        self.text = text
        (hostBytes, pathBytes, queryBytes) = Self.withBytes(of: text, Self.ranges)
    }

    /// The host, lowercased and percent-decoded; nil when the URL has no `scheme://` authority.
    var host: String? { hostBytes.map { range in Self.withBytes(of: text) { Self.decoded($0, range).lowercased() } } }

    /// The path's non-empty segments, split after percent-decoding.
    var pathSegments: [String] {
        Self.withBytes(of: text) { Self.decoded($0, pathBytes) }.split(separator: "/").map(String.init)
    }

    /// The first non-empty value of each query parameter.
    var query: [String: String] {
        var query: [String: String] = [:]
        Self.withBytes(of: text) { url in
            Self.eachItem(url, queryBytes) { name, value in
                let name = Self.decoded(url, name)
                if query[name] == nil, !value.isEmpty { query[name] = Self.decoded(url, value) }
                return false
            }
        }
        return query
    }

    /// The first non-empty value of the query parameter `name` (as `query[name]`, without
    /// decoding any other parameter).
    func parameter(_ name: String) -> String? {
        var found: String?
        Self.withBytes(of: text) { url in
            Self.eachItem(url, queryBytes) { nameBytes, value in
                guard !value.isEmpty, Self.names(url, nameBytes, equal: name) else { return false }
                found = Self.decoded(url, value)
                return true
            }
        }
        return found
    }

    /// The `ref` parameter, else the last path segment when the host is a link domain.
    func ref(linkDomains: Set<String>) -> String? {
        if let ref = parameter("ref") { return ref }
        guard !linkDomains.isEmpty, let host, linkDomains.contains(host) else { return nil }
        return pathSegments.last
    }

    static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        text.utf8.withContiguousStorageIfAvailable(body) ?? Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the name and value ranges of each `name=value` item of the query (items
    /// without `=` are skipped) until it returns true.
    static func eachItem(_ url: UnsafeBufferPointer<UInt8>, _ query: Range<Int>?, _ body: (Range<Int>, Range<Int>) -> Bool) {
        guard let query else { return }
        var itemStart = query.lowerBound
        while itemStart <= query.upperBound {
            let itemEnd = url[itemStart..<query.upperBound].firstIndex(of: UInt8(ascii: "&")) ?? query.upperBound
            if let equals = url[itemStart..<itemEnd].firstIndex(of: UInt8(ascii: "=")),
               body(itemStart..<equals, (equals + 1)..<itemEnd) {
                return
            }
            itemStart = itemEnd + 1
        }
    }

    /// Whether the bytes in `range`, percent-decoded, spell `name`.
    static func names(_ url: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, equal name: String) -> Bool {
        let raw = UnsafeBufferPointer(rebasing: url[range])
        if raw.contains(UInt8(ascii: "%")) { return decoded(url, range) == name }
        return name.utf8.elementsEqual(raw)
    }

    /// Where the host, path and query of the URL in `url` are.
    static func ranges(_ url: UnsafeBufferPointer<UInt8>) -> (Range<Int>?, Range<Int>, Range<Int>?) {
        var end = url.firstIndex(of: UInt8(ascii: "#")) ?? url.count
        var query: Range<Int>?
        if let mark = url[..<end].firstIndex(of: UInt8(ascii: "?")) {
            query = (mark + 1)..<end
            end = mark
        }
        var position = 0
        var host: Range<Int>?
        if let colon = url[..<end].firstIndex(of: UInt8(ascii: ":")), isScheme(url[..<colon]) {
            position = colon + 1
            if end - position >= 2, url[position] == UInt8(ascii: "/"), url[position + 1] == UInt8(ascii: "/") {
                position += 2
                let authorityEnd = url[position..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
                var hostStart = position
                if let at = url[position..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { hostStart = at + 1 }
                var hostEnd = authorityEnd
                if let port = url[hostStart..<authorityEnd].lastIndex(of: UInt8(ascii: ":")),
                   url[hostStart] != UInt8(ascii: "[") || url[port - 1] == UInt8(ascii: "]") {
                    hostEnd = port
                }
                host = hostStart..<hostEnd
                position = authorityEnd
            }
        }
        return (host, position..<end, query)
    }

    /// Whether the bytes are a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
    static func isScheme(_ text: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        guard let first = text.first, isLetter(first) else { return false }
        return text.allSatisfy { byte in
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }

    /// The bytes in `range`, percent-decoded; as they are when an escape is broken or decodes
    /// to something that is not UTF-8.
    static func decoded(_ url: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let raw = UnsafeBufferPointer(rebasing: url[range])
        guard raw.contains(UInt8(ascii: "%")) else { return String(decoding: raw, as: UTF8.self) }
        return PercentDecoding.decode(raw) ?? String(decoding: raw, as: UTF8.self)
    }
}
