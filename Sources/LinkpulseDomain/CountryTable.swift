import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The country of an IP address, from the ranges of the IPFire location database in the text
/// form Tor ships (Debian's `tor-geoipdb`: `/usr/share/tor/geoip` and `geoip6`): one range a
/// line, `FIRST,LAST,CC`, addresses as decimal integers (IPv4) or in IPv6 notation, `??` for
/// ranges of no country. Pure: it is built from the files' bytes and looks up in sorted arrays
/// (a binary search, no allocation).
///
/// The ranges nearly all follow each other without a gap, so only where each starts is kept
/// (with its country, or none for a gap): some 690,000 starts in about 8 MB, where keeping both
/// ends took 13 MB.
public struct CountryTable: Sendable, CountryLookup {
    private var v4Starts: [UInt32] = []
    private var v4Codes: [UInt16] = []
    private var v6Starts: [UInt128] = []
    private var v6Codes: [UInt16] = []
    /// Ranges of a country held.
    public private(set) var rangeCount = 0
    /// The export's date as the file's header states it (`Generated: …`), if it does.
    public private(set) var generated: String?

    /// A file's line that is not a range, or a range that overlaps the one before it.
    public struct Malformed: Error, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var description: String { "\(file): line \(line) is not FIRST,LAST,CC after the range before it" }
    }

    /// Reads the IPv4 file's bytes and, when given, the IPv6 file's.
    public init(ipv4: [UInt8], ipv6: [UInt8]?) throws {
        var count = 0
        try Self.read(ipv4, file: "geoip", header: &generated, count: &count, starts: &v4Starts, codes: &v4Codes, Self.decimal)
        if let ipv6 {
            try Self.read(ipv6, file: "geoip6", header: &generated, count: &count, starts: &v6Starts, codes: &v6Codes, Self.ipv6)
        }
        rangeCount = count
    }

    /// The country of `address` (dotted IPv4 or IPv6 text; an IPv4 address mapped into IPv6,
    /// `::ffff:a.b.c.d`, is looked up as IPv4), `""` when unknown or not an address.
    public func country(of address: String) -> String {
        switch IPAddress(address) {
        case .v4(let a)?: Self.find(a, v4Starts, v4Codes)
        case .v6(let a)?: Self.find(a, v6Starts, v6Codes)
        case nil: ""
        }
    }

    private static func find<T: FixedWidthInteger>(_ x: T, _ starts: [T], _ codes: [UInt16]) -> String {
        // The last start at or before x.
        var (lo, hi) = (0, starts.count)
        while lo < hi {
            let mid = (lo + hi) / 2
            if starts[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0, codes[lo - 1] != 0 else { return "" }
        // Two ASCII letters: a small string, held inline.
        return withUnsafeBytes(of: codes[lo - 1].bigEndian) { String(decoding: $0, as: UTF8.self) }
    }

    /// Reads one file's ranges into `starts` and `codes` (0 for none): a gap before a range, or
    /// after the last one, is a start of no country.
    private static func read<T: FixedWidthInteger>(
        _ bytes: [UInt8], file: String, header: inout String?, count: inout Int, starts: inout [T], codes: inout [UInt16],
        _ address: (UnsafeRawBufferPointer) -> T?
    ) throws {
        let lines = bytes.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        starts.reserveCapacity(lines + lines / 8)
        codes.reserveCapacity(lines + lines / 8)
        var end: T?
        try Self.lines(bytes, file: file, header: &header) { first, last, code in
            guard let a = address(first), let b = address(last), a <= b else { return false }
            if let end {
                guard a > end else { return false }
                if a != end &+ 1 { starts.append(end &+ 1); codes.append(0) }
            }
            starts.append(a)
            codes.append(code ?? 0)
            if code != nil { count += 1 }
            end = b
            return true
        }
        if let end, end < T.max { starts.append(end + 1); codes.append(0) }
    }

    /// Calls `range` with each line's three fields (the code packed in two bytes, nil for `??`);
    /// it answers whether the addresses were well formed. Reads the bytes in place: the files
    /// hold some 660,000 lines, read at every start.
    private static func lines(
        _ bytes: [UInt8], file: String, header: inout String?,
        _ range: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UInt16?) throws -> Bool
    ) throws {
        try bytes.withUnsafeBytes { all in
            var number = 0
            var start = 0
            while start < all.count {
                var end = start
                while end < all.count, all[end] != UInt8(ascii: "\n") { end += 1 }
                number += 1
                let line = UnsafeRawBufferPointer(rebasing: all[start..<end])
                start = end + 1
                if line.first == UInt8(ascii: "#") {
                    if header == nil {
                        let text = String(decoding: line, as: UTF8.self)
                        if let at = text.range(of: "Generated:") { header = text[at.upperBound...].trimmingCharacters(in: .whitespaces) }
                    }
                    continue
                }
                if line.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
                guard let comma1 = line.firstIndex(of: UInt8(ascii: ",")),
                    let comma2 = line[(comma1 + 1)...].firstIndex(of: UInt8(ascii: ","))
                else { throw Malformed(file: file, line: number) }
                var cc = line[(comma2 + 1)...]
                while let last = cc.last, last == 13 || last == 32 { cc = cc.dropLast() }
                var code: UInt16?
                if cc.count == 2, cc.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) {
                    code = UInt16(cc[cc.startIndex]) << 8 | UInt16(cc[cc.startIndex + 1])
                } else if cc.elementsEqual("??".utf8) {
                    code = nil
                } else {
                    throw Malformed(file: file, line: number)
                }
                let first = UnsafeRawBufferPointer(rebasing: line[..<comma1])
                let last = UnsafeRawBufferPointer(rebasing: line[(comma1 + 1)..<comma2])
                guard try range(first, last, code) else { throw Malformed(file: file, line: number) }
            }
        }
    }

    /// A decimal IPv4 address as the Tor file writes it.
    private static func decimal(_ digits: UnsafeRawBufferPointer) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 10 else { return nil }
        var value: UInt64 = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt64(d - UInt8(ascii: "0"))
        }
        return value <= UInt64(UInt32.max) ? UInt32(value) : nil
    }

    /// An IPv6 address's text as a number (`inet_pton` on a NUL-terminated copy).
    private static func ipv6(_ text: UnsafeRawBufferPointer) -> UInt128? {
        guard text.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            for (i, byte) in text.enumerated() { buffer[i] = CChar(bitPattern: byte) }
            buffer[text.count] = 0
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, buffer.baseAddress!, &v6) == 1 else { return nil }
            return withUnsafeBytes(of: &v6) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
        }
    }
}

/// Where an address's country comes from: the Tor files (`CountryTable`) or an MMDB file.
public protocol CountryLookup: Sendable {
    /// ISO 3166-1 alpha-2 of `address`, `""` when unknown.
    func country(of address: String) -> String
}

/// An IP address as a number.
public enum IPAddress: Equatable, Sendable {
    case v4(UInt32)
    case v6(UInt128)

    /// Parses dotted IPv4 or IPv6 text; an IPv4 address mapped into IPv6 is `.v4`.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let value = withUnsafeBytes(of: &v6) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
        if value >> 32 == 0xFFFF {
            self = .v4(UInt32(truncatingIfNeeded: value))
        } else {
            self = .v6(value)
        }
    }

    /// `text` as a country lookup takes it: an IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`)
    /// as its dotted IPv4 text (databases keep IPv4 networks apart from the mapped range), any
    /// other text unchanged.
    public static func unmappingIPv4(_ text: String) -> String {
        guard text.contains(":"), case .v4(let a)? = IPAddress(text) else { return text }
        return "\(a >> 24).\(a >> 16 & 255).\(a >> 8 & 255).\(a & 255)"
    }
}

/// The daemon's country data, replaced whole on a reload: nil until loaded, or when the files
/// are missing (every country is then `""`).
public final class CountrySource: Sendable {
    /// The lookup behind one reference (one retain to read it, whatever the lookup holds).
    private final class Held: Sendable {
        let lookup: any CountryLookup
        init(_ lookup: any CountryLookup) { self.lookup = lookup }
    }
    private let held: Mutex<Held?>

    public init(_ lookup: (any CountryLookup)? = nil) {
        held = Mutex(lookup.map(Held.init))
    }

    /// Uses `lookup` from now on.
    public func replace(with lookup: (any CountryLookup)?) {
        let next = lookup.map(Held.init)
        held.withLock { $0 = next }
    }

    /// Whether country data is loaded.
    public var isLoaded: Bool { held.withLock { $0 != nil } }

    /// The country of `address`, `""` when unknown, not an address, or without data.
    public func country(of address: String?) -> String {
        guard let address, let current = held.withLock({ $0 }) else { return "" }
        return current.lookup.country(of: address)
    }
}
