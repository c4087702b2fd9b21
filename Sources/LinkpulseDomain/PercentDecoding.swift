/// Percent-decoding of URL parts, over their UTF-8 bytes (Foundation's `String` methods bridge
/// to `NSString` on Linux and cost microseconds a call on the request path).
enum PercentDecoding {
    /// `raw` with each `%XX` escape decoded, and `+` read as a space when `plusIsSpace` (form
    /// encoding); nil when an escape is broken or the decoded bytes are not UTF-8, as
    /// Foundation's `removingPercentEncoding` answers.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool = false) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            switch raw[i] {
            case UInt8(ascii: "%"):
                guard i + 2 < raw.count, let high = hexValue(raw[i + 1]), let low = hexValue(raw[i + 2]) else { return nil }
                out.append(high << 4 | low)
                i += 3
            case UInt8(ascii: "+") where plusIsSpace:
                out.append(UInt8(ascii: " "))
                i += 1
            case let byte:
                out.append(byte)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
