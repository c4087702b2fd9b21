import Foundation

/// Segment request bodies read in one pass straight into `SegmentMessage`s: member names are
/// matched as bytes, only the members the mapping reads are built, and everything else is
/// checked for syntax and skipped. Building the whole message as `JSONValue` dictionaries (a
/// mobile SDK's message is three times the size of a Linkpulse event) cost `/v1/batch` twice the
/// CPU per event of `/v1/events`.
extension FastEventParser {
    /// A whole request body: a batch with its envelope, or a single message. Nil when the body is
    /// not exactly one valid JSON object.
    static func segmentBody(_ bytes: UnsafeBufferPointer<UInt8>) -> SegmentBodyParts? {
        var parser = Parser(bytes: bytes)
        parser.space()
        guard parser.peek == UInt8(ascii: "{") else { return nil }
        var body = SegmentBodyParts()
        let start = parser.i
        let read = parser.members(Parser.bodyNames) { parser, index in
            switch index {
            case Parser.writeKeyIndex?:
                return parser.scalar(into: &body.writeKey)
            case Parser.batchIndex?:
                body.hasBatch = true
                body.frames = []
                return parser.batch(into: &body.batch, frames: &body.frames)
            default:
                return parser.messageMember(index, into: &body.top, depth: 1)
            }
        }
        guard read else { return nil }
        // A single message is the whole object (its depth counts from it, as framing counts).
        if !body.hasBatch { body.frames = [(start..<parser.i, parser.deepest)] }
        parser.space()
        return parser.i == bytes.count ? body : nil
    }

    /// One message on its own (a batch element read apart from a broken neighbour). Nil when
    /// it is not exactly one valid JSON value; a value that is not an object is a message with
    /// `isObject` false.
    static func segmentMessage(_ bytes: UnsafeBufferPointer<UInt8>) -> SegmentMessage? {
        var parser = Parser(bytes: bytes)
        parser.space()
        guard let message = parser.message(depth: 0) else { return nil }
        parser.space()
        return parser.i == bytes.count ? message : nil
    }
}

extension FastEventParser.Parser {
    /// The members of a message, then the two only a batch body has, in index order.
    static let bodyNames: [[UInt8]] = [
        "type", "event", "messageId", "anonymousId", "timestamp", "sentAt", "context", "properties", "writeKey", "batch",
    ].map { Array($0.utf8) }
    static let writeKeyIndex = 8
    static let batchIndex = 9
    static let contextNames: [[UInt8]] = ["ip", "userAgent", "os", "app", "device", "campaign"].map { Array($0.utf8) }
    static let propertyFieldNames: [[UInt8]] = SegmentPropertyMembers.fieldNames.map { Array($0.utf8) }

    /// Where `raw` is in `names`, compared as bytes.
    static func index(of raw: UnsafeBufferPointer<UInt8>, in names: [[UInt8]]) -> Int? {
        for index in names.indices where names[index].count == raw.count {
            let equal = names[index].withUnsafeBufferPointer { memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }
            if equal { return index }
        }
        return nil
    }

    /// Walks the object at the cursor: for each member, `read` gets the index of its name in
    /// `names` (nil for any other name) and reads the value. False on a syntax error.
    mutating func members(_ names: [[UInt8]], _ read: (inout Self, Int?) -> Bool) -> Bool {
        members { parser, name in read(&parser, Self.index(of: name, in: names)) }
    }

    /// Walks the object at the cursor: for each member, `read` gets its name (unescaped, valid
    /// UTF-8) and reads the value. False on a syntax error.
    mutating func members(_ read: (inout Self, UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        open()
        space()
        if peek == UInt8(ascii: "}") {
            i += 1
            nesting -= 1
            return true
        }
        while true {
            space()
            guard peek == UInt8(ascii: "\"") else { return false }
            let start = i
            let readMember: Bool
            if let raw = rawKey(), raw.allSatisfy({ $0 < 0x80 }) {
                guard colon() else { return false }
                readMember = read(&self, raw)
            } else {
                // Escaped or not ASCII: decoded and validated like any string.
                i = start
                guard let name = string(), colon() else { return false }
                readMember = Array(name.utf8).withUnsafeBufferPointer { read(&self, $0) }
            }
            guard readMember else { return false }
            space()
            guard let next = peek else { return false }
            i += 1
            if next == UInt8(ascii: "}") {
                nesting -= 1
                return true
            }
            guard next == UInt8(ascii: ",") else { return false }
        }
    }

    /// Moves past the `:` after a member name.
    mutating func colon() -> Bool {
        space()
        guard peek == UInt8(ascii: ":") else { return false }
        i += 1
        space()
        return true
    }

    /// A scalar member's value; an object or array in its place is checked and kept as its
    /// kind only. False on a syntax error.
    mutating func scalar(into slot: inout JSONValue?) -> Bool {
        switch value(flatObject: false) {
        case .string(let text)?: slot = .string(text)
        case .number(let number)?: slot = .number(number)
        case .bool(let flag)?: slot = .bool(flag)
        case .null?: slot = .null
        case .object?: slot = .object([:])
        case .array?: slot = .array([])
        case nil: return false
        }
        return true
    }

    /// One message (or whatever else a batch holds in its place).
    mutating func message(depth: Int) -> SegmentMessage? {
        guard peek == UInt8(ascii: "{") else { return skip(depth: depth) ? SegmentMessage(isObject: false) : nil }
        var message = SegmentMessage()
        let read = members(Self.bodyNames) { parser, index in
            // A message's own `writeKey` or `batch` is nothing the mapping reads.
            index == Self.writeKeyIndex || index == Self.batchIndex
                ? parser.skip(depth: depth + 1) : parser.messageMember(index, into: &message, depth: depth + 1)
        }
        return read ? message : nil
    }

    /// The value of the message member named `bodyNames[index]`.
    mutating func messageMember(_ index: Int?, into message: inout SegmentMessage, depth: Int) -> Bool {
        switch index {
        case 0?: scalar(into: &message.type)
        case 1?: scalar(into: &message.event)
        case 2?: scalar(into: &message.messageId)
        case 3?: scalar(into: &message.anonymousId)
        case 4?: scalar(into: &message.timestamp)
        case 5?: scalar(into: &message.sentAt)
        case 6?: context(into: &message.context, depth: depth)
        case 7?: properties(into: &message.properties, depth: depth)
        default: skip(depth: depth)
        }
    }

    /// `batch`: its messages when it is an array, nil otherwise; and where each message is
    /// in the body and how deeply it nests (see `SegmentBody.read`).
    mutating func batch(into slot: inout [SegmentMessage]?, frames: inout [(range: Range<Int>, depth: Int)]) -> Bool {
        guard peek == UInt8(ascii: "[") else {
            slot = nil
            return skip(depth: 1)
        }
        var messages: [SegmentMessage] = []
        open()
        space()
        if peek == UInt8(ascii: "]") {
            i += 1
            nesting -= 1
            slot = messages
            return true
        }
        while true {
            space()
            let (start, base) = (i, nesting)
            deepest = base
            guard let message = message(depth: 2) else { return false }
            messages.append(message)
            frames.append((start..<i, deepest - base))
            space()
            guard let next = peek else { return false }
            i += 1
            if next == UInt8(ascii: "]") { break }
            guard next == UInt8(ascii: ",") else { return false }
        }
        nesting -= 1
        slot = messages
        return true
    }

    /// `context`: the members the mapping reads, nil when it is not an object.
    mutating func context(into slot: inout SegmentContext?, depth: Int) -> Bool {
        guard peek == UInt8(ascii: "{") else {
            slot = nil
            return skip(depth: depth)
        }
        var context = SegmentContext()
        let read = members(Self.contextNames) { parser, index in
            switch index {
            case 0?: parser.scalar(into: &context.ip)
            case 1?: parser.scalar(into: &context.userAgent)
            case 2?: parser.contextObject(into: &context.os, depth: depth + 1)
            case 3?: parser.contextObject(into: &context.app, depth: depth + 1)
            case 4?: parser.contextObject(into: &context.device, depth: depth + 1)
            case 5?: parser.contextObject(into: &context.campaign, depth: depth + 1)
            default: parser.skip(depth: depth + 1)
            }
        }
        slot = context
        return read
    }

    /// `context.os` and its siblings: the scalar members read, none when it is not an object.
    mutating func contextObject<Object: SegmentContextObject>(into slot: inout Object?, depth: Int) -> Bool {
        var object = Object()
        slot = object
        guard peek == UInt8(ascii: "{") else { return skip(depth: depth) }
        let read = members(Object.memberNames) { parser, index in
            guard let index else { return parser.skip(depth: depth + 1) }
            return parser.scalar(into: &object[member: index])
        }
        slot = object
        return read
    }

    /// `properties`: the members that become event fields, the rest as event properties.
    mutating func properties(into slot: inout SegmentProperties?, depth: Int) -> Bool {
        guard peek == UInt8(ascii: "{") else {
            var sent: JSONValue?
            guard scalar(into: &sent), let sent else { return false }
            slot = sent == .null ? nil : .wrongType(sent: sent.typeName)
            return true
        }
        var properties = SegmentPropertyMembers()
        let read = members { parser, name in
            if let field = Self.index(of: name, in: Self.propertyFieldNames) {
                return parser.scalar(into: &properties[field: field])
            }
            guard let value = parser.anyValue(depth: depth + 1) else { return false }
            properties.keep(String(decoding: name, as: UTF8.self), value)
            return true
        }
        slot = .members(properties)
        return read
    }
}
