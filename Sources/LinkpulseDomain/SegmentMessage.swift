import Foundation

/// Any JSON value: a scalar member of a Segment message, or a nested property value (kept as
/// its JSON text). The ingest path reads it with `FastEventParser`; `Decodable` serves the
/// config file and the decoder's error message for a broken message.
public enum JSONValue: Sendable, Decodable, Equatable {
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


/// The members of one Segment message that the mapping reads, as `FastEventParser` reads them
/// in one pass: scalar members as their JSON values (an object or array in a scalar's place is
/// kept only as its kind, `.object([:])` or `.array([])`: its kind is all a wrong-type error
/// names), the parts of `context` the mapping reads, and `properties` split into the members
/// that become event fields and the rest. Nothing else of the message is built.
public struct SegmentMessage: Sendable, Equatable {
    /// False for a batch element that is not a JSON object (quarantined as `not_an_object`).
    public var isObject = true
    public var type: JSONValue?
    public var event: JSONValue?
    public var messageId: JSONValue?
    public var anonymousId: JSONValue?
    public var timestamp: JSONValue?
    public var sentAt: JSONValue?
    /// The message's `context`; nil when absent or not an object (it then adds nothing).
    public var context: SegmentContext?
    /// The message's `properties`; nil when absent or null.
    public var properties: SegmentProperties?

    public init(isObject: Bool = true) {
        self.isObject = isObject
    }
}

/// The members of a Segment `context` the mapping reads. A member sent is taken whole: a
/// message's `os` replaces the batch's `os`, even when it lacks `version`.
public struct SegmentContext: Sendable, Equatable {
    public var ip: JSONValue?
    public var userAgent: JSONValue?
    /// Each nil when absent; present but not an object, it is there with no members.
    public var os: OS?
    public var app: App?
    public var device: Device?
    public var campaign: Campaign?

    public init() {}

    /// `context.os`: `name` (the platform) and `version`.
    public struct OS: SegmentContextObject {
        public var name: JSONValue?
        public var version: JSONValue?
        public init() {}
        static let memberNames: [[UInt8]] = ["name", "version"].map { Array($0.utf8) }
        subscript(member index: Int) -> JSONValue? {
            get { index == 0 ? name : version }
            set { if index == 0 { name = newValue } else { version = newValue } }
        }
    }

    /// `context.app`: `version`.
    public struct App: SegmentContextObject {
        public var version: JSONValue?
        public init() {}
        static let memberNames: [[UInt8]] = ["version"].map { Array($0.utf8) }
        subscript(member index: Int) -> JSONValue? {
            get { version }
            set { version = newValue }
        }
    }

    /// `context.device`: `id` and `type`.
    public struct Device: SegmentContextObject {
        public var id: JSONValue?
        public var type: JSONValue?
        public init() {}
        static let memberNames: [[UInt8]] = ["id", "type"].map { Array($0.utf8) }
        subscript(member index: Int) -> JSONValue? {
            get { index == 0 ? id : type }
            set { if index == 0 { id = newValue } else { type = newValue } }
        }
    }

    /// `context.campaign`: `name`, `source` and `medium` (the UTM parameters).
    public struct Campaign: SegmentContextObject {
        public var name: JSONValue?
        public var source: JSONValue?
        public var medium: JSONValue?
        public init() {}
        static let memberNames: [[UInt8]] = ["name", "source", "medium"].map { Array($0.utf8) }
        subscript(member index: Int) -> JSONValue? {
            get { index == 0 ? name : index == 1 ? source : medium }
            set {
                switch index {
                case 0: name = newValue
                case 1: source = newValue
                default: medium = newValue
                }
            }
        }
    }

    /// This context's members over `batch`'s (the batch `context` a message inherits).
    public func over(_ batch: SegmentContext?) -> SegmentContext {
        guard let batch else { return self }
        var merged = self
        merged.ip = ip ?? batch.ip
        merged.userAgent = userAgent ?? batch.userAgent
        merged.os = os ?? batch.os
        merged.app = app ?? batch.app
        merged.device = device ?? batch.device
        merged.campaign = campaign ?? batch.campaign
        return merged
    }
}

/// A small object inside `context` whose scalar members the parser fills by index.
protocol SegmentContextObject: Sendable, Equatable {
    init()
    /// The members read, in index order.
    static var memberNames: [[UInt8]] { get }
    subscript(member index: Int) -> JSONValue? { get set }
}

/// A message's `properties`.
public enum SegmentProperties: Sendable, Equatable {
    /// An object: its link members and the rest.
    case members(SegmentPropertyMembers)
    /// Not an object (the validator names what was sent).
    case wrongType(sent: String)
}

/// The `properties` of a message: the members that become event fields, and every other one as
/// an event property (a nested value as its JSON text; a null dropped).
public struct SegmentPropertyMembers: Sendable, Equatable {
    public var url: JSONValue?
    public var clickId: JSONValue?
    public var ref: JSONValue?
    public var referrer: JSONValue?
    public var deferred: JSONValue?
    public var others: [String: PropertyValue] = [:]

    public init() {}

    /// The members that become event fields, in index order.
    static let fieldNames = ["url", "click_id", "ref", "referrer", "deferred"]
    subscript(field index: Int) -> JSONValue? {
        get {
            switch index {
            case 0: url
            case 1: clickId
            case 2: ref
            case 3: referrer
            default: deferred
            }
        }
        set {
            switch index {
            case 0: url = newValue
            case 1: clickId = newValue
            case 2: ref = newValue
            case 3: referrer = newValue
            default: deferred = newValue
            }
        }
    }

    /// Keeps `value` as the property `key` (the last of a repeated key wins; null removes it).
    mutating func keep(_ key: String, _ value: JSONValue) {
        switch value {
        case .string(let text): others[key] = .string(text)
        case .number(let number): others[key] = .number(number)
        case .bool(let flag): others[key] = .bool(flag)
        case .null: others[key] = nil
        case .array, .object: others[key] = .string(value.jsonText)
        }
    }
}

/// The request-level parts of a `/v1/batch` body that its messages inherit: the batch's
/// `sentAt` (a message's own wins) and `context` (member by member under each message's own),
/// and the `writeKey` when sent in the body.
public struct SegmentEnvelope: Sendable {
    public var writeKey: String?
    public var sentAt: JSONValue?
    public var context: SegmentContext?
    /// Whether the body has a `batch` member (a `/v1/batch` body; not a single message).
    public var hasBatch: Bool

    public init(writeKey: String? = nil, sentAt: JSONValue? = nil, context: SegmentContext? = nil, hasBatch: Bool = false) {
        self.hasBatch = hasBatch
        self.writeKey = writeKey
        self.sentAt = sentAt
        self.context = context
    }

    /// The envelope of a body read by `FastEventParser.segmentBody`.
    init(_ body: SegmentBodyParts) {
        if case .string(let key)? = body.writeKey { writeKey = key }
        sentAt = body.top.sentAt
        context = body.top.context
        hasBatch = body.hasBatch
    }
}

/// A Segment request body as parsed: its top-level object read as a message (a single-message
/// body is one), the members only a batch body has, and the batch's messages.
struct SegmentBodyParts {
    var top = SegmentMessage()
    var writeKey: JSONValue?
    /// Whether there is a `batch` member at all.
    var hasBatch = false
    /// The messages of `batch`; nil when it is not an array.
    var batch: [SegmentMessage]?
    /// Each message's bytes in the body and how deeply it nests (1 for an object of scalars):
    /// the batch's elements, or the whole body when it is a single message.
    var frames: [(range: Range<Int>, depth: Int)] = []
}

/// A Segment request body read: its envelope and each message (in the order
/// `IngestBody.frame` found them), and why any message could not be read.
public struct SegmentBody: Sendable {
    public var envelope: SegmentEnvelope
    /// The messages; one that could not be read is there as a non-object.
    public var messages: [SegmentMessage]
    /// Why the message at an index could not be read (too large, too deep, not JSON).
    public var unreadable: [Int: EventError]

    /// The message at `index`, or why it could not be read.
    public func message(at index: Int) -> Result<SegmentMessage, EventError> {
        if let problem = unreadable[index] { return .failure(problem) }
        return .success(messages[index])
    }

    /// Reads `body` and frames its messages (as `IngestBody.frame` does: each one's bytes, and
    /// a rejection when it is too large or nests too deeply). A body that parses as a whole,
    /// the common case, is framed by that parse; any other is framed by `IngestBody.frame` and
    /// read message by message (`read(_:framed:)`). `body` is nil when the request is not a
    /// Segment body (see there), the framing a failure when it is not JSON or carries too
    /// many messages.
    public static func read(_ body: [UInt8]) -> (framing: Result<[FramedEvent], BodyError>, body: SegmentBody?) {
        guard let whole = body.withUnsafeBufferPointer(FastEventParser.segmentBody), !whole.hasBatch || whole.batch != nil else {
            let framing = IngestBody.frame(body, format: .json)
            guard case .success(let framed) = framing else { return (framing, nil) }
            return (framing, read(body, framed: framed))
        }
        if whole.frames.count > IngestLimits.maxEventsPerRequest {
            return (.failure(IngestBody.Scanner.tooMany(whole.frames.count)), nil)
        }
        var unreadable: [Int: EventError] = [:]
        let framed = whole.frames.enumerated().map { index, frame in
            let rejection = IngestBody.Scanner.check(frame.range, depth: frame.depth)
            if let rejection { unreadable[index] = rejection }
            return FramedEvent(range: frame.range, rejection: rejection)
        }
        let messages = whole.hasBatch ? whole.batch ?? [] : [whole.top]
        return (.success(framed), SegmentBody(envelope: SegmentEnvelope(whole), messages: messages, unreadable: unreadable))
    }

    /// Reads `body`, framed by `IngestBody.frame`; nil when the body is not one JSON object.
    /// The whole body is parsed once; only when that fails (some message is broken) is each
    /// message parsed on its own, and the envelope read with the messages left out, so one
    /// broken message never spoils its neighbours.
    public static func read(_ body: [UInt8], framed: [FramedEvent]) -> SegmentBody? {
        if let whole = body.withUnsafeBufferPointer(FastEventParser.segmentBody) {
            let messages: [SegmentMessage]
            if whole.hasBatch {
                guard let batch = whole.batch, batch.count == framed.count else { return nil }
                messages = batch
            } else {
                guard framed.count == 1 else { return nil }
                messages = [whole.top]
            }
            var unreadable: [Int: EventError] = [:]
            for (index, frame) in framed.enumerated() where frame.rejection != nil { unreadable[index] = frame.rejection }
            return SegmentBody(envelope: SegmentEnvelope(whole), messages: messages, unreadable: unreadable)
        }
        // Some message is broken: each on its own, and the rest of the body without them.
        var rest: [UInt8] = []
        rest.reserveCapacity(body.count)
        var position = 0
        var messages: [SegmentMessage] = []
        var unreadable: [Int: EventError] = [:]
        for (index, frame) in framed.enumerated() {
            rest.append(contentsOf: body[position..<frame.range.lowerBound])
            rest.append(contentsOf: Array("null".utf8))
            position = frame.range.upperBound
            if let rejection = frame.rejection {
                unreadable[index] = rejection
            } else if let message = body.withUnsafeBufferPointer({ FastEventParser.segmentMessage(UnsafeBufferPointer(rebasing: $0[frame.range])) }) {
                messages.append(message)
                continue
            } else {
                unreadable[index] = EventError(code: "invalid_json", field: nil, message: "This message is not valid JSON: \(reason(Data(body[frame.range])))")
            }
            messages.append(SegmentMessage(isObject: false))
        }
        rest.append(contentsOf: body[position...])
        guard let top = rest.withUnsafeBufferPointer(FastEventParser.segmentBody), top.hasBatch else { return nil }
        // (A single message that is broken is the whole body: not JSON.)
        return SegmentBody(envelope: SegmentEnvelope(top), messages: messages, unreadable: unreadable)
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
