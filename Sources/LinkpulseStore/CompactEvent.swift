import Foundation
import GRDB
import LinkpulseDomain

/// How `event_rows` stores the text of an event in fewer bytes (see migration
/// `0004_compact_events.sql`, whose `events` view decodes every form written here back to the
/// exact text). Pure functions; the SQL functions at the bottom expose them to the migration.
enum CompactEvent {
    /// An id as stored: a canonical UUID as 16 bytes (lower case) or 17 (a 0x01 byte first,
    /// upper case), any other text as itself.
    enum StoredId: Equatable {
        case bytes([UInt8])
        case text(String)
    }

    /// The stored form of an event, device or click id.
    static func id(_ text: String) -> StoredId {
        guard text.utf8.count == 36 else { return .text(text) }
        var copy = text
        return copy.withUTF8 { uuidBytes($0) }.map(StoredId.bytes) ?? .text(text)
    }

    /// The 16 bytes of a canonical UUID in one letter case (17 with the 0x01 mark for upper
    /// case), or nil when the text is not one.
    static func uuidBytes(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard chars.count == 36 else { return nil }
        var out = [UInt8](repeating: 0, count: 16)
        var upper = false, lower = false, nibble = 0
        for (i, c) in chars.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = c - UInt8(ascii: "a") + 10; lower = true
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = c - UInt8(ascii: "A") + 10; upper = true
            default: return nil
            }
            out[nibble / 2] |= nibble % 2 == 0 ? value << 4 : value
            nibble += 1
        }
        if upper && lower { return nil }
        if upper { out.insert(1, at: 0) }
        return out
    }

    /// 32 lower-case hex digits (a keyed IP hash, a visitor id after its `v:`) as their 16
    /// bytes; nil for anything else.
    static func hexBytes(_ chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard chars.count == 32 else { return nil }
        var out = [UInt8](repeating: 0, count: 16)
        for (i, c) in chars.enumerated() {
            let value: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = c - UInt8(ascii: "a") + 10
            default: return nil
            }
            out[i / 2] |= i % 2 == 0 ? value << 4 : value
        }
        return out
    }

    /// The stored form of a keyed IP hash: its 16 bytes, or the text when it is not 32
    /// lower-case hex digits.
    static func hash(_ text: String) -> StoredId {
        var copy = text
        return copy.withUTF8 { hexBytes($0) }.map(StoredId.bytes) ?? .text(text)
    }

    /// The stored visitor: nil when it is the device id (the view gives the device id back),
    /// the 16 bytes of a `v:` keyed visitor id, else the text.
    static func visitor(_ visitorId: String, deviceId: String?) -> StoredId? {
        if visitorId == deviceId { return nil }
        var copy = visitorId
        let bytes = copy.withUTF8 { chars -> [UInt8]? in
            guard chars.count == 34, chars[0] == UInt8(ascii: "v"), chars[1] == UInt8(ascii: ":") else { return nil }
            return hexBytes(UnsafeBufferPointer(rebasing: chars[2...]))
        }
        return bytes.map(StoredId.bytes) ?? .text(visitorId)
    }

    /// The visitor id text of a stored visitor blob (`v:` and 32 hex digits), for hashing it
    /// exactly as the text was hashed.
    static func withVisitorText<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 + bytes.count * 2) { buffer in
            buffer[0] = UInt8(ascii: "v"); buffer[1] = UInt8(ascii: ":")
            for (i, byte) in bytes.enumerated() {
                buffer[2 + 2 * i] = hexDigit(byte >> 4)
                buffer[3 + 2 * i] = hexDigit(byte & 0x0f)
            }
            return body(UnsafeBufferPointer(buffer))
        }
    }

    /// The text of a stored id blob (a UUID, 16 bytes lower case or 17 upper case), as sent.
    static func withIdText<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let upper = bytes.count == 17
        let digits = upper ? UnsafeRawBufferPointer(rebasing: bytes[1...]) : bytes
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            var at = 0
            for (i, byte) in digits.prefix(16).enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { buffer[at] = UInt8(ascii: "-"); at += 1 }
                buffer[at] = hexDigit(byte >> 4, upper: upper)
                buffer[at + 1] = hexDigit(byte & 0x0f, upper: upper)
                at += 2
            }
            return body(UnsafeBufferPointer(rebasing: buffer[..<at]))
        }
    }

    private static func hexDigit(_ value: UInt8, upper: Bool = false) -> UInt8 {
        if upper { return value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10 }
        return value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The code `event_rows.type` stores for a kind (never renumber one).
    static func code(_ kind: EventKind) -> Int64 {
        switch kind {
        case .click: 0
        case .open: 1
        case .install: 2
        case .fallback: 3
        }
    }

    /// The kind of a stored type code.
    static func kind(code: Int64) -> EventKind {
        switch code {
        case 0: .click
        case 1: .open
        case 2: .install
        default: .fallback
        }
    }

    /// `lp_compact_id(text)`, `lp_hex_blob(text)` and `lp_compact_visitor(visitor, device)`:
    /// the encoders above for SQL (the migration that compacted the stored events uses them).
    static func register(in db: Database) {
        db.add(function: DatabaseFunction("lp_compact_id", argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return values[0] }
            return id(text).databaseValue
        })
        db.add(function: DatabaseFunction("lp_hex_blob", argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return values[0] }
            return hash(text).databaseValue
        })
        db.add(function: DatabaseFunction("lp_compact_visitor", argumentCount: 2, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return values[0] }
            return visitor(text, deviceId: String.fromDatabaseValue(values[1]))?.databaseValue ?? DatabaseValue.null
        })
    }
}

extension CompactEvent.StoredId {
    var databaseValue: DatabaseValue {
        switch self {
        case .bytes(let bytes): Data(bytes).databaseValue
        case .text(let text): text.databaseValue
        }
    }
}

extension HotStatement {
    /// Calls `body` with the text of an id column as it was sent (decoding the bytes of a
    /// UUID), or returns nil when the column is NULL.
    func withStoredId<R>(_ column: some ColumnIndex, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        if columnIsBlob(column), let bytes = blob(column) { return CompactEvent.withIdText(bytes, body) }
        return withText(column, body)
    }

    /// Calls `body` with the visitor id text of a row (the device id's when the visitor column
    /// is NULL, a `v:` id from its bytes), or returns nil when neither is stored.
    func withStoredVisitor<R>(visitor: some ColumnIndex, device: some ColumnIndex, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        if isNull(visitor) { return withStoredId(device, body) }
        if columnIsBlob(visitor), let bytes = blob(visitor) { return CompactEvent.withVisitorText(bytes, body) }
        return withText(visitor, body)
    }

    /// Binds a stored id (or NULL).
    func bind(_ parameter: some StatementParameter, _ value: CompactEvent.StoredId?) throws {
        switch value {
        case nil: try bind(parameter, nil as Int64?)
        case .bytes(let bytes): try bind(parameter, bytes)
        case .text(let text): try bind(parameter, text)
        }
    }
}

/// An event id as attribution compares them without making text of it: a stored UUID's 16
/// bytes and its letter case, any other id as its text. Equal exactly when the ids as sent are
/// equal (the stored form is a function of the text, and gives it back).
enum StoredIdKey: Hashable {
    case uuid(UInt64, UInt64, upper: Bool)
    case text(String)

    /// The key of an id as sent.
    init(_ text: String) {
        switch CompactEvent.id(text) {
        case .bytes(let bytes): self = bytes.withUnsafeBytes { Self(bytes: $0) }
        case .text(let text): self = .text(text)
        }
    }

    /// The key of an id column of `event_rows` (event_id, click_id) in the current row; nil when
    /// it is NULL.
    init?(_ statement: HotStatement, column: some ColumnIndex) {
        if statement.columnIsBlob(column), let bytes = statement.blob(column) {
            self.init(bytes: bytes)
        } else if let text = statement.text(column) {
            self = .text(text)
        } else {
            return nil
        }
    }

    /// From the stored bytes of a UUID (16, or 17 with the upper-case mark first).
    private init(bytes: UnsafeRawBufferPointer) {
        let upper = bytes.count == 17
        let digits = upper ? UnsafeRawBufferPointer(rebasing: bytes[1...]) : bytes
        guard digits.count == 16 else {
            self = .text(CompactEvent.withIdText(bytes) { String(decoding: $0, as: UTF8.self) })
            return
        }
        self = .uuid(
            digits.loadUnaligned(fromByteOffset: 0, as: UInt64.self), digits.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            upper: upper)
    }
}
