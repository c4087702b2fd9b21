/// Compact JSON written by hand where `JSONEncoder` (with `.sortedKeys` and
/// `.withoutEscapingSlashes`) was the largest single cost: an event's stored `properties` and
/// the `/v1/resolve` answer. Byte for byte what the encoder wrote (tests hold both to that):
/// keys in UTF-8 byte order, strings escaped the minimal way (`"`, `\` and control characters;
/// `/` as is), integral numbers below 9·10¹⁵ without a fraction, other numbers as Swift prints
/// them.
public enum JSONText {
    /// The stored text of an event's flat `properties`.
    static func properties(_ properties: [String: PropertyValue]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(16 + properties.count * 24)
        out.append(UInt8(ascii: "{"))
        for (index, (key, value)) in properties.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): appendString(text, to: &out)
            case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
            case .number(let number):
                if number.rounded() == number, abs(number) < 9.0e15 {
                    out.append(contentsOf: String(Int64(number)).utf8)
                } else {
                    out.append(contentsOf: number.description.utf8)
                }
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string (the PostgreSQL store writes its batches with it too).
    public static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            // Runs that need no escape are copied whole.
            var start = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                appendEscaped(byte, to: &out)
                start = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// One byte that JSON does not take as it is: a quote, a backslash or a control character.
    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
