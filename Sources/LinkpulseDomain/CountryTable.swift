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
        _ address: (UnsafePointer<UInt8>, Int) -> T?
    ) throws {
        // Reserved up front: growing by doubling could leave up to half of each array unused.
        let lines = Self.newlines(in: bytes)
        starts.reserveCapacity(lines + lines / 8)
        codes.reserveCapacity(lines + lines / 8)
        var end: T?
        try Self.lines(bytes, file: file, header: &header) { first, firstLength, last, lastLength, code in
            guard let a = address(first, firstLength), let b = address(last, lastLength), a <= b else { return false }
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

    /// Calls `range` with each line's two addresses (where each starts and its length) and its
    /// code packed in two bytes (nil for `??`); it answers whether the addresses were well formed.
    /// Reads the bytes in place through a pointer, finding separators with `memchr`: the files
    /// hold some 660,000 lines, read at every start, and this is quick in a debug build too
    /// (where the daemons of the test suite run).
    private static func lines(
        _ bytes: [UInt8], file: String, header: inout String?,
        _ range: (UnsafePointer<UInt8>, Int, UnsafePointer<UInt8>, Int, UInt16?) throws -> Bool
    ) throws {
        try bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return }
            let limit = base + all.count
            var number = 0
            var line = base
            while line < limit {
                number += 1
                let newline = find(UInt8(ascii: "\n"), from: line, to: limit) ?? limit
                defer { line = newline + 1 }
                var end = newline
                while end > line, end[-1] == 13 || end[-1] == 32 || end[-1] == 9 { end -= 1 }
                if end == line { continue }
                if line[0] == UInt8(ascii: "#") {
                    if header == nil {
                        let text = String(decoding: UnsafeBufferPointer(start: line, count: end - line), as: UTF8.self)
                        if let at = text.range(of: "Generated:") { header = text[at.upperBound...].trimmingCharacters(in: .whitespaces) }
                    }
                    continue
                }
                guard let comma1 = find(UInt8(ascii: ","), from: line, to: end),
                    let comma2 = find(UInt8(ascii: ","), from: comma1 + 1, to: end),
                    end - comma2 == 3
                else { throw Malformed(file: file, line: number) }
                let (c1, c2) = (comma2[1], comma2[2])
                var code: UInt16?
                if c1 >= UInt8(ascii: "A"), c1 <= UInt8(ascii: "Z"), c2 >= UInt8(ascii: "A"), c2 <= UInt8(ascii: "Z") {
                    code = UInt16(c1) << 8 | UInt16(c2)
                } else if c1 != UInt8(ascii: "?") || c2 != UInt8(ascii: "?") {
                    throw Malformed(file: file, line: number)
                }
                guard try range(line, comma1 - line, comma1 + 1, comma2 - comma1 - 1, code) else {
                    throw Malformed(file: file, line: number)
                }
            }
        }
    }

    /// How many lines `bytes` holds (counted with `memchr`).
    private static func newlines(in bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { all in
            guard var at = all.baseAddress else { return 0 }
            let limit = at + all.count
            var count = 0
            while let found = find(UInt8(ascii: "\n"), from: at, to: limit) {
                count += 1
                at = found + 1
            }
            return count
        }
    }

    /// The first `byte` in `start..<end` (with `memchr`).
    private static func find(_ byte: UInt8, from start: UnsafePointer<UInt8>, to end: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        guard start < end, let found = memchr(start, Int32(byte), end - start) else { return nil }
        return UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
    }

    /// An IPv4 address written as one decimal integer.
    private static func decimal(_ digits: UnsafePointer<UInt8>, _ count: Int) -> UInt32? {
        guard count > 0, count <= 10 else { return nil }
        var value: UInt64 = 0
        for i in 0..<count {
            let d = digits[i]
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt64(d - UInt8(ascii: "0"))
        }
        return value <= UInt64(UInt32.max) ? UInt32(value) : nil
    }

    /// An IPv6 address in its usual notation.
    private static func ipv6(_ text: UnsafePointer<UInt8>, _ count: Int) -> UInt128? {
        guard count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            memcpy(buffer.baseAddress!, text, count)
            buffer[count] = 0
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, buffer.baseAddress!, &v6) == 1 else { return nil }
            return IPAddress.value(of: v6)
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
        let value = Self.value(of: v6)
        if value >> 32 == 0xFFFF {
            self = .v4(UInt32(truncatingIfNeeded: value))
        } else {
            self = .v6(value)
        }
    }

    /// The 128-bit number an IPv6 address is (network order, most significant byte first).
    static func value(of address: in6_addr) -> UInt128 {
        withUnsafeBytes(of: address) { bytes in
            var value: UInt128 = 0
            for i in 0..<16 { value = value << 8 | UInt128(bytes[i]) }
            return value
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
