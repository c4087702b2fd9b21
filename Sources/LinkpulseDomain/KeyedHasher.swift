import Crypto

/// Keyed hashing of personal data (IP addresses, IP+user agent pairs) with a per-installation
/// secret, so the same visitor hashes the same way across restarts but the raw value cannot be
/// recovered or looked up in a precomputed table.
public struct KeyedHasher: Sendable {
    /// The HMAC already keyed: each hash copies this state instead of rekeying.
    private let keyed: KeyedHMAC

    /// - Parameter secret: the installation secret (32 random bytes, kept under `data/`).
    public init(secret: [UInt8]) {
        self.keyed = KeyedHMAC(HMAC<SHA256>(key: SymmetricKey(data: secret)))
    }

    /// HMAC-SHA256 of an IP address, as 32 hex digits (the first 128 bits).
    public func ipHash(_ ip: String) -> String {
        hex(keyed.code("ip", ip, nil), bytes: 16)
    }

    /// The visitor id of an event without a `device_id`, as `v:` and 32 hex digits: SHA-256 of
    /// the IP's keyed hash (`ipHash`, so the id is keyed too) and the user agent; an HMAC of the
    /// user agent alone when there is no address. One keyed hash per event instead of two.
    public func visitorId(ipHash: String?, userAgent: String?) -> String {
        guard let ipHash else { return "v:" + hex(keyed.code("visitor", "", userAgent ?? ""), bytes: 16) }
        var sha = SHA256()
        sha.update(data: Array("visitor\u{0}\(ipHash)\u{0}\(userAgent ?? "")".utf8))
        return "v:" + hex(sha.finalize(), bytes: 16)
    }
}

/// A keyed HMAC state, copied for each message (the copy is a plain value; the key is never
/// set up again).
struct KeyedHMAC: @unchecked Sendable {
    // HMAC is a value type, but swift-crypto does not declare it Sendable; it is never mutated
    // here, only copied.
    let state: HMAC<SHA256>

    init(_ state: HMAC<SHA256>) { self.state = state }

    /// The code of the NUL-separated parts (domain, then one or two values).
    func code(_ domain: String, _ first: String, _ second: String?) -> HMAC<SHA256>.MAC {
        var message: [UInt8] = []
        message.reserveCapacity(domain.utf8.count + first.utf8.count + (second?.utf8.count ?? 0) + 2)
        message.append(contentsOf: domain.utf8)
        message.append(0)
        message.append(contentsOf: first.utf8)
        if let second {
            message.append(0)
            message.append(contentsOf: second.utf8)
        }
        var hmac = state
        hmac.update(data: message)
        return hmac.finalize()
    }
}

/// The key under which an event id is indexed for deduplication: the first 6 bytes of SHA-256
/// of the id, as a signed 48-bit integer (SQLite stores it in 6 bytes). Not secret and stable
/// (the id index's migration 0003 made the 8-byte keys of before into these); equal keys are
/// always confirmed by comparing the ids themselves, so a collision can cost a lookup but
/// never an event.
public enum EventIdKey {
    /// How many bits a key has (the range of keys is -2^47 ..< 2^47).
    public static let bits = 48

    public static func of(_ id: String) -> Int64 {
        var id = id
        return id.withUTF8 { of(utf8: $0) }
    }

    /// The key of an id given as its UTF-8 bytes.
    public static func of(utf8 id: UnsafeBufferPointer<UInt8>) -> Int64 {
        let digest = SHA256.hash(data: UnsafeRawBufferPointer(id))
        return digest.withUnsafeBytes { raw in
            var value: UInt64 = 0
            for i in 0..<8 { value = value << 8 | UInt64(raw[i]) }
            // The first 6 bytes, sign-extended (`>>` of the 8-byte key of before, as in SQL).
            return Int64(bitPattern: value) >> (64 - bits)
        }
    }
}

private let hexDigits = Array("0123456789abcdef".utf8)

func hex(_ bytes: some Sequence<UInt8>, bytes count: Int) -> String {
    var out = [UInt8]()
    out.reserveCapacity(count * 2)
    for byte in bytes.prefix(count) {
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// Compares two secrets in time that depends only on their lengths, not on where they differ.
public func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
    // Walk the expected secret's full length whatever the candidate's length.
    for i in 0..<y.count {
        let candidate = i < x.count ? x[i] : 0
        difference |= candidate ^ y[i]
    }
    return difference == 0 && x.count == y.count
}
