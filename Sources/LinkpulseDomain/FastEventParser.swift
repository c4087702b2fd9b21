/// A single-pass parser for the common case: one well-formed event object.
///
/// Foundation's `JSONDecoder` costs about 8 µs per event here through `EventPayload`'s lenient
/// `Decodable` (4–5 µs even for a plain synthesized struct), more than all the rest of the
/// ingest path per event; this parser does the same job in about one. It returns exactly the
/// `EventPayload` the decoder would (differential tests hold it to that), and gives up —
/// returning nil — on anything unusual (escaped keys, invalid UTF-8, syntax errors, duplicate
/// known keys), leaving those events to `JSONDecoder`, whose error messages the API reports.
enum FastEventParser {
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> EventPayload? {
        var parser = Parser(bytes: bytes)
        return parser.event()
    }

    /// Any JSON document (RFC 8259, at most 64 levels deep) as a `JSONValue`; nil when it is
    /// not exactly one valid JSON value. A click's stored `properties` are read with it for a
    /// resolve's deep link (Segment's nested property values with `anyValue`, its core), where
    /// `JSONDecoder` into a recursive enum costs several times the rest of the work.
    static func parseValue(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        var parser = Parser(bytes: bytes)
        parser.space()
        guard let value = parser.anyValue(depth: 0) else { return nil }
        parser.space()
        return parser.i == bytes.count ? value : nil
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        /// How many objects and arrays enclose the cursor, and the most that enclosed it since
        /// `deepest` was last set: a Segment message's nesting depth, measured as it is read
        /// (see `SegmentBody.read`).
        var nesting = 0
        var deepest = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        /// A scalar or container as read, before it is matched to a field's type.
        enum Value {
            case string(String)
            case number(Double)
            case bool(Bool)
            case null
            case object([String: PropertyValue]?)  // nil: not a flat object of scalars
            case array
        }

        mutating func event() -> EventPayload? {
            space()
            guard peek == UInt8(ascii: "{") else { return nil }
            i += 1
            var payload = EventPayload()
            var seen: UInt32 = 0
            space()
            if peek == UInt8(ascii: "}") {
                i += 1
            } else {
                while true {
                    space()
                    guard let key = rawKey() else { return nil }
                    space()
                    guard peek == UInt8(ascii: ":") else { return nil }
                    i += 1
                    space()
                    let field = EventPayload.Key.field(for: key)
                    if let field {
                        let bit: UInt32 = 1 << field.index
                        // A repeated key: the decoders of this world disagree; let JSONDecoder say.
                        guard seen & bit == 0 else { return nil }
                        seen |= bit
                        guard let value = value(flatObject: field.key == .properties) else { return nil }
                        assign(value, to: field.key, in: &payload)
                    } else {
                        guard skip(depth: 0) else { return nil }
                    }
                    space()
                    guard let c = peek else { return nil }
                    i += 1
                    if c == UInt8(ascii: "}") { break }
                    guard c == UInt8(ascii: ",") else { return nil }
                }
            }
            space()
            return i == bytes.count ? payload : nil
        }

        var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func space() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        /// A key's raw bytes; nil when it has escapes (rare: left to the decoder).
        mutating func rawKey() -> UnsafeBufferPointer<UInt8>? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            var j = start
            while j < bytes.count, bytes[j] != UInt8(ascii: "\"") {
                if bytes[j] == UInt8(ascii: "\\") || bytes[j] < 0x20 { return nil }
                j += 1
            }
            guard j < bytes.count else { return nil }
            i = j + 1
            return UnsafeBufferPointer(rebasing: bytes[start..<j])
        }

        /// Steps into the object or array at the cursor.
        mutating func open() {
            i += 1
            nesting += 1
            if nesting > deepest { deepest = nesting }
        }

        mutating func value(flatObject: Bool) -> Value? {
            guard let c = peek else { return nil }
            switch c {
            case UInt8(ascii: "\""):
                return string().map(Value.string)
            case UInt8(ascii: "t"):
                return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .null : nil
            case UInt8(ascii: "{"):
                if flatObject { return object() }
                return skip(depth: 0) ? .object(nil) : nil
            case UInt8(ascii: "["):
                return skip(depth: 0) ? .array : nil
            default:
                return number().map(Value.number)
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard i + count <= bytes.count else { return false }
            for k in 0..<count where bytes[i + k] != word.utf8Start[k] { return false }
            i += count
            return true
        }

        /// A JSON number, by the grammar of RFC 8259.
        mutating func number() -> Double? {
            let start = i
            if peek == UInt8(ascii: "-") { i += 1 }
            guard let first = peek, first >= 48, first <= 57 else { return nil }
            i += 1
            if first != 48 { digits() }
            if peek == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return nil }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                i += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { return nil }
            }
            return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
        }

        @discardableResult
        mutating func digits() -> Int {
            let start = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            return i - start
        }

        /// A string value, unescaped; nil on invalid UTF-8, raw control characters or bad escapes.
        mutating func string() -> String? {
            let start = i + 1
            guard let ascii = plainString() else { return nil }
            if bytes[i - 1] == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)])
                // Plain ASCII needs no validation (the generic validating initializer costs more
                // than the whole scan).
                return ascii ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
            }
            i -= 1
            // Escapes: build the bytes, then validate the whole as UTF-8.
            var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
            while i < bytes.count {
                let c = bytes[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    return String(validating: out, as: UTF8.self)
                }
                guard c >= 0x20 else { return nil }
                guard c == UInt8(ascii: "\\") else {
                    out.append(c)
                    i += 1
                    continue
                }
                guard i + 1 < bytes.count else { return nil }
                let e = bytes[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        // A high surrogate must be followed by an escaped low surrogate.
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { return nil }
                        i += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        return nil
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    return nil
                }
            }
            return nil
        }

        /// Scans a string from its opening quote up to its closing quote or its first escape,
        /// and moves past that character; whether the bytes scanned are all ASCII, nil on a raw
        /// control character or a missing end.
        mutating func plainString() -> Bool? {
            i += 1
            var high: UInt8 = 0
            while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") {
                guard bytes[i] >= 0x20 else { return nil }
                high |= bytes[i]
                i += 1
            }
            guard i < bytes.count else { return nil }
            i += 1
            return high < 0x80
        }

        /// Checks a string without building it; false on what `string()` refuses.
        mutating func skipString() -> Bool {
            let start = i
            if plainString() == true, bytes[i - 1] == UInt8(ascii: "\"") { return true }
            i = start
            return string() != nil
        }

        mutating func hex4() -> UInt32? {
            guard i + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                let digit: UInt32
                switch c {
                case 48...57: digit = UInt32(c - 48)
                case 65...70: digit = UInt32(c - 55)
                case 97...102: digit = UInt32(c - 87)
                default: return nil
                }
                value = value << 4 | digit
                i += 1
            }
            return value
        }

        /// A flat object of scalar values; `.object(nil)` when a value is null or nested, as
        /// `[String: PropertyValue]` decoding would fail there.
        mutating func object() -> Value? {
            open()
            var result: [String: PropertyValue]? = [:]
            space()
            if peek == UInt8(ascii: "}") {
                i += 1
                nesting -= 1
                return .object(result)
            }
            while true {
                space()
                guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                space()
                guard peek == UInt8(ascii: ":") else { return nil }
                i += 1
                space()
                guard let v = value(flatObject: false) else { return nil }
                switch v {
                case .string(let s): result?[key] = .string(s)
                case .number(let n): result?[key] = .number(n)
                case .bool(let b): result?[key] = .bool(b)
                case .null, .object, .array: result = nil
                }
                space()
                guard let c = peek else { return nil }
                i += 1
                if c == UInt8(ascii: "}") {
                    nesting -= 1
                    return .object(result)
                }
                guard c == UInt8(ascii: ",") else { return nil }
            }
        }

        /// Any JSON value, containers included (the last object member of a repeated key wins).
        mutating func anyValue(depth: Int) -> JSONValue? {
            guard depth < 64, let c = peek else { return nil }
            switch c {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = c == UInt8(ascii: "{")
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                var members: [String: JSONValue] = [:]
                var items: [JSONValue] = []
                open()
                space()
                if peek == close {
                    i += 1
                } else {
                    while true {
                        space()
                        if isObject {
                            guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                            space()
                            guard peek == UInt8(ascii: ":") else { return nil }
                            i += 1
                            space()
                            guard let item = anyValue(depth: depth + 1) else { return nil }
                            members[key] = item
                        } else {
                            guard let item = anyValue(depth: depth + 1) else { return nil }
                            items.append(item)
                        }
                        space()
                        guard let next = peek else { return nil }
                        i += 1
                        if next == close { break }
                        guard next == UInt8(ascii: ",") else { return nil }
                    }
                }
                nesting -= 1
                return isObject ? .object(members) : .array(items)
            default:
                switch value(flatObject: false) {
                case .string(let text)?: return .string(text)
                case .number(let number)?: return .number(number)
                case .bool(let flag)?: return .bool(flag)
                case .null?: return .null
                default: return nil
                }
            }
        }

        /// Skips any JSON value, checking its syntax.
        mutating func skip(depth: Int) -> Bool {
            guard depth < 512, let c = peek else { return false }
            switch c {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                open()
                space()
                if peek == close {
                    i += 1
                    nesting -= 1
                    return true
                }
                while true {
                    space()
                    if close == UInt8(ascii: "}") {
                        guard peek == UInt8(ascii: "\""), skipString() else { return false }
                        space()
                        guard peek == UInt8(ascii: ":") else { return false }
                        i += 1
                        space()
                    }
                    guard skip(depth: depth + 1) else { return false }
                    space()
                    guard let next = peek else { return false }
                    i += 1
                    if next == close {
                        nesting -= 1
                        return true
                    }
                    guard next == UInt8(ascii: ",") else { return false }
                }
            case UInt8(ascii: "\""):
                return skipString()
            default:
                return value(flatObject: false) != nil
            }
        }

        func assign(_ value: Value, to key: EventPayload.Key, in p: inout EventPayload) {
            switch key {
            case .id: p.id = text(value)
            case .type: p.type = text(value)
            case .ref: p.ref = text(value)
            case .campaign: p.campaign = text(value)
            case .source: p.source = text(value)
            case .medium: p.medium = text(value)
            case .platform: p.platform = text(value)
            case .timestamp: p.timestamp = time(value)
            case .sentAt: p.sentAt = time(value)
            case .deviceId: p.deviceId = text(value)
            case .clickId: p.clickId = text(value)
            case .clickIdSource: p.clickIdSource = text(value)
            case .installReferrer: p.installReferrer = text(value)
            case .deferred:
                switch value {
                case .bool(let b): p.deferred = .value(b)
                case .null: p.deferred = .absent
                default: p.deferred = .wrongType(sent: Self.describe(value))
                }
            case .url: p.url = text(value)
            case .referrer: p.referrer = text(value)
            case .userAgent: p.userAgent = text(value)
            case .ip: p.ip = text(value)
            case .osVersion: p.osVersion = text(value)
            case .appVersion: p.appVersion = text(value)
            case .properties:
                switch value {
                case .object(let flat?): p.properties = .value(flat)
                case .null: p.properties = .absent
                case .object(nil): p.properties = .wrongType(sent: "an object with nested or null values")
                default: p.properties = .wrongType(sent: Self.describe(value))
                }
            }
        }

        func text(_ value: Value) -> Field<String> {
            switch value {
            case .string(let s): .value(s)
            case .null: .absent
            default: .wrongType(sent: Self.describe(value))
            }
        }

        func time(_ value: Value) -> Field<TimeValue> {
            switch value {
            case .string(let s): .value(.text(s))
            case .number(let n): .value(.epochMillis(n))
            case .null: .absent
            default: .wrongType(sent: Self.describe(value))
            }
        }

        /// The same wording as `EventPayload.describe`.
        static func describe(_ value: Value) -> String {
            switch value {
            case .string: "a string"
            case .bool: "a boolean"
            case .number: "a number"
            case .array: "an array"
            case .object: "an object"
            case .null: "null"
            }
        }
    }
}

extension EventPayload.Key {
    /// The field a raw key names, with a bit index for duplicate detection.
    static func field(for raw: UnsafeBufferPointer<UInt8>) -> (key: EventPayload.Key, index: Int)? {
        FastEventParser.Parser.index(of: raw, in: names).map { (allCases[$0], $0) }
    }

    /// Wire names in `allCases` order, as bytes.
    static let names: [[UInt8]] = allCases.map { Array($0.rawValue.utf8) }
}
