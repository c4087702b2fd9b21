/// How a request body is laid out.
public enum BodyFormat: Sendable {
    /// One event object, an array of events, or `{"batch":[…]}`.
    case json
    /// One event per line (`application/x-ndjson`).
    case ndjson
}

/// A failure of the request as a whole (as opposed to one event in it).
public struct BodyError: Error, Sendable, Equatable {
    public enum Kind: Sendable { case notJSON, tooManyEvents }
    public var kind: Kind
    public var message: String
}

/// One event's place in the body: its byte range, and the reason it is rejected before any
/// decoding when framing alone condemns it (too large, too deep, an unparseable NDJSON line).
public struct FramedEvent: Sendable, Equatable {
    public var range: Range<Int>
    public var rejection: EventError?
}

/// Splits a request body into events without decoding them: a single pass that matches
/// brackets and strings, so each event can be checked for size and depth, decoded on its own
/// and quarantined with its own raw text. Full JSON syntax inside an event is left to the
/// decoder; a body whose brackets or strings do not balance is not JSON at all.
public enum IngestBody {
    public static func frame(_ body: [UInt8], format: BodyFormat) -> Result<[FramedEvent], BodyError> {
        body.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            switch format {
            case .json: return scanner.frameJSON()
            case .ndjson: return scanner.frameNDJSON()
            }
        }
    }

    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            // A UTF-8 byte order mark is tolerated at the start.
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        }

        static let notJSON = BodyError(
            kind: .notJSON,
            message: "The body is not valid JSON. Send one event object, an array of events, {\"batch\":[…]}, or NDJSON with Content-Type: application/x-ndjson.")

        static func tooMany(_ count: Int) -> BodyError {
            BodyError(
                kind: .tooManyEvents,
                message: "A request may carry at most \(IngestLimits.maxEventsPerRequest) events (this one has more); split it into smaller batches.")
        }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 {
                i += 1
            }
        }

        /// Skips one JSON value starting at `i`. Returns its nesting depth, or nil when the
        /// value's brackets or strings do not balance before `limit`.
        mutating func skipValue(limit: Int) -> Int? {
            guard i < limit else { return nil }
            var stack: [UInt8] = []
            var maxDepth = 0
            repeat {
                let c = bytes[i]
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    stack.append(c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                    maxDepth = max(maxDepth, stack.count)
                    i += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard stack.last == c else { return nil }
                    stack.removeLast()
                    i += 1
                case UInt8(ascii: "\""):
                    i += 1
                    while i < limit, bytes[i] != UInt8(ascii: "\"") {
                        i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1
                    }
                    guard i < limit else { return nil }
                    i += 1
                default:
                    if stack.isEmpty {
                        // A scalar at the top: it runs to the next delimiter.
                        let start = i
                        while i < limit, !Self.isDelimiter(bytes[i]) { i += 1 }
                        return i > start ? 0 : nil
                    }
                    i += 1
                }
            } while !stack.isEmpty && i < limit
            return stack.isEmpty ? maxDepth : nil
        }

        static func isDelimiter(_ c: UInt8) -> Bool {
            c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c == UInt8(ascii: "}") || c == 0x20 || c == 0x0A
                || c == 0x0D || c == 0x09 || c == UInt8(ascii: ":")
        }

        static func check(_ range: Range<Int>, depth: Int) -> EventError? {
            if range.count > IngestLimits.maxEventBytes {
                return EventError(
                    code: "event_too_large", field: nil,
                    message: "This event is \(range.count) bytes; the limit is \(IngestLimits.maxEventBytes). Trim `properties`, `url` or `referrer`.")
            }
            if depth > IngestLimits.maxDepth {
                return EventError(
                    code: "too_deep", field: nil,
                    message: "This event nests objects or arrays \(depth) levels deep; the limit is \(IngestLimits.maxDepth).")
            }
            return nil
        }

        mutating func frameJSON() -> Result<[FramedEvent], BodyError> {
            skipSpace()
            guard i < bytes.count else { return .failure(Self.notJSON) }
            let start = i
            let events: [FramedEvent]
            switch bytes[i] {
            case UInt8(ascii: "["):
                switch elements() {
                case .success(let list): events = list
                case .failure(let error): return .failure(error)
                }
            case UInt8(ascii: "{"):
                if let batch = batchArrayStart() {
                    i = batch
                    switch elements() {
                    case .success(let list): events = list
                    case .failure(let error): return .failure(error)
                    }
                    // The rest of the wrapper object (`batchArrayStart` checked the members before it).
                    guard finishObject() else { return .failure(Self.notJSON) }
                } else {
                    guard let depth = skipValue(limit: bytes.count) else { return .failure(Self.notJSON) }
                    events = [FramedEvent(range: start..<i, rejection: Self.check(start..<i, depth: depth))]
                }
            default:
                // A bare scalar is JSON, just not an event: framed so validation can say so.
                guard skipValue(limit: bytes.count) != nil, isScalar(start..<i) else { return .failure(Self.notJSON) }
                events = [FramedEvent(range: start..<i, rejection: nil)]
            }
            skipSpace()
            guard i == bytes.count else { return .failure(Self.notJSON) }
            return .success(events)
        }

        /// Whether the bytes are one JSON string, number, `true`, `false` or `null`.
        func isScalar(_ range: Range<Int>) -> Bool {
            let token = UnsafeBufferPointer(rebasing: bytes[range])
            if token.first == UInt8(ascii: "\"") { return true }  // skipValue matched the quotes
            if token.elementsEqual("true".utf8) || token.elementsEqual("false".utf8) || token.elementsEqual("null".utf8) {
                return true
            }
            return !token.isEmpty && token.allSatisfy { Array("0123456789+-.eE".utf8).contains($0) }
        }

        /// Reads the array at `i` into events; leaves `i` after its closing bracket.
        mutating func elements() -> Result<[FramedEvent], BodyError> {
            i += 1  // "["
            var events: [FramedEvent] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .success(events)
            }
            while true {
                skipSpace()
                let start = i
                guard let depth = skipValue(limit: bytes.count) else { return .failure(Self.notJSON) }
                events.append(FramedEvent(range: start..<i, rejection: Self.check(start..<i, depth: depth)))
                if events.count > IngestLimits.maxEventsPerRequest { return .failure(Self.tooMany(events.count)) }
                skipSpace()
                guard i < bytes.count else { return .failure(Self.notJSON) }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .success(events)
                }
                guard bytes[i] == UInt8(ascii: ",") else { return .failure(Self.notJSON) }
                i += 1
            }
        }

        /// Checks the members left in an object after the value at `i`, and its closing brace.
        mutating func finishObject() -> Bool {
            while true {
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return true
                }
                guard bytes[i] == UInt8(ascii: ",") else { return false }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\""), skipValue(limit: bytes.count) != nil else { return false }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
                i += 1
                skipSpace()
                guard skipValue(limit: bytes.count) != nil else { return false }
            }
        }

        /// When the object at `i` has a member `"batch"` whose value is an array, the offset
        /// of that array; `i` is left unchanged.
        mutating func batchArrayStart() -> Int? {
            let saved = i
            defer { i = saved }
            i += 1  // "{"
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
                let keyStart = i + 1
                guard skipValue(limit: bytes.count) != nil else { return nil }
                let key = UnsafeBufferPointer(rebasing: bytes[keyStart..<(i - 1)])
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                skipSpace()
                if key.elementsEqual("batch".utf8), i < bytes.count, bytes[i] == UInt8(ascii: "[") {
                    return i
                }
                guard skipValue(limit: bytes.count) != nil else { return nil }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }

        mutating func frameNDJSON() -> Result<[FramedEvent], BodyError> {
            var events: [FramedEvent] = []
            while i < bytes.count {
                var end = i
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                var lineEnd = end
                while lineEnd > i, [0x0D, 0x20, 0x09].contains(bytes[lineEnd - 1]) { lineEnd -= 1 }
                skipSpace()
                if i < lineEnd {
                    let start = i
                    var rejection: EventError?
                    if let depth = skipValue(limit: lineEnd), i == lineEnd {
                        rejection = Self.check(start..<lineEnd, depth: depth)
                    } else {
                        rejection = Self.check(start..<lineEnd, depth: 0)
                            ?? EventError(
                                code: "invalid_json", field: nil,
                                message: "This NDJSON line is not one JSON object; each line must hold exactly one event.")
                    }
                    events.append(FramedEvent(range: start..<lineEnd, rejection: rejection))
                    if events.count > IngestLimits.maxEventsPerRequest { return .failure(Self.tooMany(events.count)) }
                }
                i = end + 1
            }
            return .success(events)
        }
    }
}
