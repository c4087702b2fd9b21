import Crypto

/// Keyed hashing of personal data (IP addresses, IP+user agent pairs) with a per-installation
/// secret, so the same visitor hashes the same way across restarts but the raw value cannot be
/// recovered or looked up in a precomputed table.
public struct KeyedHasher: Sendable {
    // Kept as bytes: SymmetricKey is not Sendable; making one per hash costs one allocation.
    private let secret: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// - Parameter secret: the installation secret (32 random bytes, kept under `data/`).
    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// HMAC-SHA256 of an IP address, as 32 hex digits (the first 128 bits).
    public func ipHash(_ ip: String) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Array(("ip\u{0}" + ip).utf8), using: key), bytes: 16)
    }

    /// The visitor id of an event without a `device_id`: HMAC-SHA256 of IP and user agent, as
    /// `v:` and 32 hex digits. Either part may be missing.
    public func visitorId(ip: String?, userAgent: String?) -> String {
        let message = "visitor\u{0}" + (ip ?? "") + "\u{0}" + (userAgent ?? "")
        return "v:" + hex(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key), bytes: 16)
    }
}

/// The 64-bit key under which an event id is indexed for deduplication: the first 8 bytes of
/// SHA-256 of the id. Not secret and stable forever; equal keys are always confirmed by
/// comparing the ids themselves, so a collision can cost a lookup but never an event.
public enum EventIdKey {
    public static func of(_ id: String) -> Int64 {
        let digest = SHA256.hash(data: Array(id.utf8))
        return digest.withUnsafeBytes { raw in
            var value: UInt64 = 0
            for i in 0..<8 { value = value << 8 | UInt64(raw[i]) }
            return Int64(bitPattern: value)
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
