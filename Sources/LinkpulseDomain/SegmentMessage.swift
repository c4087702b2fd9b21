import Foundation

/// Any JSON value: what a Segment message and its open-ended parts (`properties`, `context`)
/// hold. The ingest path reads it with `FastEventParser.parseValue`; `Decodable` serves the
/// config file and the decoder's error message for a broken message.
public indirect enum JSONValue: Sendable, Decodable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let text = try? c.decode(String.self) {
            self = .string(text)
        } else if let flag = try? c.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? c.decode(Double.self) {
            self = .number(number)
        } else if let object = try? c.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try c.decode([JSONValue].self))
        }
    }

    /// The member `key` of an object (nil for anything else).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The value as the field of an `EventPayload`: a string, absent for null or missing, a
    /// wrong type otherwise (so the validator names it like `/v1/events` would).
    var stringField: Field<String> {
        switch self {
        case .string(let text): .value(text)
        case .null: .absent
        default: .wrongType(sent: typeName)
        }
    }

    var timeField: Field<TimeValue> {
        switch self {
        case .string(let text): .value(.text(text))
        case .number(let number): .value(.epochMillis(number))
        case .null: .absent
        default: .wrongType(sent: typeName)
        }
    }

    var typeName: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Compact JSON text of the value (for nested property values kept as text).
    var jsonText: String {
        switch self {
        case .string(let text):
            let data = (try? JSONEncoder().encode(text)) ?? Data()
            return String(decoding: data, as: UTF8.self)
        case .number(let number):
            return number.rounded() == number && abs(number) < 9.0e15 ? String(Int64(number)) : String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { JSONValue.string($0).jsonText + ":" + members[$0]!.jsonText }.joined(separator: ",") + "}"
        }
    }
}

/// The kinds of message of Segment's HTTP Tracking API (the `type` field, or the endpoint a
/// single message was posted to).
public enum SegmentMessageType: String, Sendable, CaseIterable {
    case track, screen, page, identify, group, alias
}

/// The request-level parts of a `/v1/batch` body that its messages inherit: the batch's
/// `sentAt` (a message's own wins) and `context` (merged under each message's own, member by
/// member), and the `writeKey` when sent in the body.
public struct SegmentEnvelope: Sendable {
    public var writeKey: String?
    public var sentAt: JSONValue?
    public var context: JSONValue?
    /// Whether the body has a `batch` member (a `/v1/batch` body; not a single message).
    public var hasBatch: Bool

    public init(writeKey: String? = nil, sentAt: JSONValue? = nil, context: JSONValue? = nil, hasBatch: Bool = false) {
        self.hasBatch = hasBatch
        self.writeKey = writeKey
        self.sentAt = sentAt
        self.context = context
    }

    /// The envelope of a body's top-level object.
    public init(_ top: [String: JSONValue]) {
        if case .string(let key)? = top["writeKey"] { writeKey = key }
        sentAt = top["sentAt"]
        context = top["context"]
        hasBatch = top["batch"] != nil
    }
}

/// A Segment request body read: its envelope and each message (in the order
/// `IngestBody.frame` found them), or why a message could not be read.
public struct SegmentBody: Sendable {
    public var envelope: SegmentEnvelope
    public var messages: [Result<JSONValue, EventError>]

    /// Reads `body`, framed by `IngestBody.frame`; nil when the body is not one JSON object.
    /// The whole body is parsed once; only when that fails (some message is broken) is each
    /// message parsed on its own, and the envelope read with the messages left out, so one
    /// broken message never spoils its neighbours.
    public static func read(_ body: [UInt8], framed: [FramedEvent]) -> SegmentBody? {
        let whole = body.withUnsafeBufferPointer { FastEventParser.parseValue($0, shape: SegmentMapping.bodyShape) }
        if let whole {
            guard case .object(let top) = whole else { return nil }
            let envelope = SegmentEnvelope(top)
            let items: [JSONValue]
            if envelope.hasBatch {
                guard case .array(let batch)? = top["batch"], batch.count == framed.count else { return nil }
                items = batch
            } else {
                items = [whole]
            }
            let messages = zip(items, framed).map { item, frame in
                frame.rejection.map { Result<JSONValue, EventError>.failure($0) } ?? .success(item)
            }
            return SegmentBody(envelope: envelope, messages: messages)
        }
        // Some message is broken: each on its own, and the rest of the body without them.
        var rest: [UInt8] = []
        rest.reserveCapacity(body.count)
        var position = 0
        var messages: [Result<JSONValue, EventError>] = []
        for frame in framed {
            rest.append(contentsOf: body[position..<frame.range.lowerBound])
            rest.append(contentsOf: Array("null".utf8))
            position = frame.range.upperBound
            if let rejection = frame.rejection {
                messages.append(.failure(rejection))
            } else if let value = body.withUnsafeBufferPointer({ FastEventParser.parseValue(UnsafeBufferPointer(rebasing: $0[frame.range]), shape: SegmentMapping.bodyShape) }) {
                messages.append(.success(value))
            } else {
                messages.append(.failure(EventError(code: "invalid_json", field: nil, message: "This message is not valid JSON: \(reason(Data(body[frame.range])))")))
            }
        }
        rest.append(contentsOf: body[position...])
        guard case .object(let top)? = rest.withUnsafeBufferPointer({ FastEventParser.parseValue($0, shape: SegmentMapping.bodyShape) }) else { return nil }
        let envelope = SegmentEnvelope(top)
        // A single message that is broken is the whole body: not JSON.
        guard envelope.hasBatch else { return nil }
        return SegmentBody(envelope: envelope, messages: messages)
    }

    /// Why `JSONDecoder` refuses a message (only for messages already known to be broken).
    static func reason(_ data: Data) -> String {
        do {
            _ = try JSONDecoder().decode(JSONValue.self, from: data)
            return "unexpected content"
        } catch {
            return PayloadDecoding.describe(error)
        }
    }
}

/// What one Segment message becomes.
public enum SegmentOutcome: Sendable, Equatable {
    /// A link event, in the shape `/v1/events` takes, for the same validator.
    case linkEvent(EventPayload)
    /// Accepted and counted, but not a link event (an SDK sends everything it tracks).
    case ignored
    /// Not a message at all (not an object, no `type`): quarantined with this reason.
    case invalid(EventError)
}

/// How Segment messages map onto Linkpulse events (the README's table). Pure: the same message
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
    /// Hosts (lowercased) whose link URLs carry the ref as their last path segment.
    public let linkDomains: Set<String>

    public init(extraNames: [String: EventKind] = [:], linkDomains: [String] = []) {
        var names = Self.standardNames
        for (name, kind) in extraNames { names[name.lowercased()] = kind }
        eventNames = names
        self.linkDomains = Set(linkDomains.map { $0.lowercased() })
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

    /// What the mapping reads of a message's `context`; the rest (library, locale, screen…)
    /// is checked but never built.
    static let contextShape: JSONShape = .members([
        "ip": .all, "userAgent": .all, "os": .members(["name": .all, "version": .all]), "app": .members(["version": .all]),
        "device": .members(["id": .all, "type": .all]), "campaign": .members(["name": .all, "source": .all, "medium": .all]),
    ])

    /// What the mapping reads of a message.
    static let messageMembers: [String: JSONShape] = [
        "type": .all, "event": .all, "messageId": .all, "anonymousId": .all, "timestamp": .all, "sentAt": .all,
        "context": contextShape, "properties": .all,
    ]

    /// What is read of a request body: a single message, or a batch with its envelope.
    static let bodyShape: JSONShape = .members(messageMembers.merging([
        "writeKey": .all, "batch": .elements(.members(messageMembers)),
    ]) { $1 })

    /// Properties that become event fields rather than properties.
    static let consumedProperties: Set<String> = ["url", "click_id", "ref", "referrer", "deferred"]

    /// Maps one message, given the envelope it came in and, for the single-message endpoints,
    /// the type the endpoint implies.
    public func map(_ message: JSONValue, envelope: SegmentEnvelope, endpointType: SegmentMessageType? = nil) -> SegmentOutcome {
        guard case .object(let m) = message else {
            return .invalid(EventError(
                code: "not_an_object", field: nil,
                message: "Each message must be a JSON object such as {\"type\":\"track\",\"event\":\"Application Opened\",\"messageId\":\"…\"}."))
        }
        let typeName: String
        switch m["type"] {
        case .string(let name)?: typeName = name.lowercased()
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
              case .string(let name)? = m["event"], let kind = eventNames[name.lowercased()]
        else { return .ignored }
        return .linkEvent(payload(kind: kind, m, envelope: envelope))
    }

    func payload(kind: EventKind, _ m: [String: JSONValue], envelope: SegmentEnvelope) -> EventPayload {
        let context = Self.merged(envelope.context, m["context"])
        let properties: [String: JSONValue] = if case .object(let p)? = m["properties"] { p } else { [:] }
        var p = EventPayload()
        p.type = .value(kind.rawValue)
        p.id = m["messageId"]?.stringField ?? .absent
        p.timestamp = m["timestamp"]?.timeField ?? .absent
        p.sentAt = (m["sentAt"] ?? envelope.sentAt)?.timeField ?? .absent
        p.ip = context["ip"]?.stringField ?? .absent
        p.userAgent = context["userAgent"]?.stringField ?? .absent
        p.osVersion = context["os"]?["version"]?.stringField ?? .absent
        p.appVersion = context["app"]?["version"]?.stringField ?? .absent
        p.deviceId = Self.firstString(context["device"]?["id"], m["anonymousId"])
        if let platform = Self.platform(osName: context["os"]?["name"], deviceType: context["device"]?["type"]) {
            p.platform = .value(platform.rawValue)
        }
        p.url = properties["url"]?.stringField ?? .absent
        p.clickId = properties["click_id"]?.stringField ?? .absent
        p.referrer = properties["referrer"]?.stringField ?? .absent
        switch properties["deferred"] {
        case .bool(let flag)?: p.deferred = .value(flag)
        case nil, .null?: break
        case let other?: p.deferred = .wrongType(sent: other.typeName)
        }
        // The link URL is parsed only when it has to stand in for a missing field.
        var parsedLink: LinkURL??
        func link() -> LinkURL? {
            if parsedLink == nil { parsedLink = .some(p.url.value.flatMap(LinkURL.init)) }
            return parsedLink ?? nil
        }
        p.ref = Self.firstString(properties["ref"])
        if p.ref == .absent, let ref = link()?.ref(linkDomains: linkDomains) { p.ref = .value(ref) }
        let campaign = context["campaign"]
        for (field, member, parameter) in [(\EventPayload.campaign, "name", "utm_campaign"), (\.source, "source", "utm_source"), (\.medium, "medium", "utm_medium")] {
            p[keyPath: field] = Self.firstString(campaign?[member])
            if p[keyPath: field] == .absent, let value = link()?.query[parameter] { p[keyPath: field] = .value(value) }
        }
        var kept: [String: PropertyValue] = [:]
        for (key, value) in properties where !Self.consumedProperties.contains(key) {
            switch value {
            case .string(let text): kept[key] = .string(text)
            case .number(let number): kept[key] = .number(number)
            case .bool(let flag): kept[key] = .bool(flag)
            case .null: break
            case .array, .object: kept[key] = .string(value.jsonText)
            }
        }
        if !kept.isEmpty { p.properties = .value(kept) }
        switch m["properties"] {
        case nil, .null?, .object?: break
        case let other?: p.properties = .wrongType(sent: other.typeName)  // the validator names it
        }
        return p
    }

    /// The first of `candidates` that holds a non-empty string, as a payload field; a wrong
    /// type in the first present candidate is reported as such.
    static func firstString(_ candidates: JSONValue?...) -> Field<String> {
        for candidate in candidates {
            switch candidate {
            case nil, .null?: continue
            case .string(let text)? where text.isEmpty: continue
            case let value?: return value.stringField
            }
        }
        return .absent
    }

    /// The batch's context with the message's own members over it.
    static func merged(_ batch: JSONValue?, _ own: JSONValue?) -> JSONValue {
        guard case .object(var members)? = batch else { return own ?? .object([:]) }
        if case .object(let mine)? = own { members.merge(mine) { $1 } }
        return .object(members)
    }

    /// The platform `context.os.name` names (iOS and iPadOS → ios, Android → android), else
    /// `context.device.type`; nil leaves it to the user agent.
    static func platform(osName: JSONValue?, deviceType: JSONValue?) -> Platform? {
        for case .string(let name)? in [osName, deviceType] {
            switch name.lowercased() {
            case "ios", "ipados", "iphone os": return .ios
            case "android": return .android
            default: continue
            }
        }
        return nil
    }
}

/// The parts of a link URL the mapping reads: its host, path and query parameters.
struct LinkURL {
    let host: String?
    let pathSegments: [String]
    let query: [String: String]

    init?(_ text: String) {
        guard let components = URLComponents(string: text) else { return nil }
        host = components.host?.lowercased()
        pathSegments = components.path.split(separator: "/").map(String.init)
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] where query[item.name] == nil {
            if let value = item.value, !value.isEmpty { query[item.name] = value }
        }
        self.query = query
    }

    /// The `ref` parameter, else the last path segment when the host is a link domain.
    func ref(linkDomains: Set<String>) -> String? {
        if let ref = query["ref"] { return ref }
        guard let host, linkDomains.contains(host) else { return nil }
        return pathSegments.last
    }
}
