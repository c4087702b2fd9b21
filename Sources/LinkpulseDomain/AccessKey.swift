import Crypto

/// What a key may do. `ingest` sends events and asks `/v1/resolve` (it ships inside apps and
/// landing pages, so it is public by nature); `read` reads stats, exports, the quarantine and
/// links; `admin` may do everything `read` may, and manage links and keys.
public enum AccessKind: String, Sendable, Codable, CaseIterable, Comparable {
    case ingest, read, admin

    /// Whether a key of this kind may use a route that needs `needed`.
    public func allows(_ needed: AccessKind) -> Bool {
        switch (self, needed) {
        case (.admin, .read), (.admin, .admin), (.read, .read), (.ingest, .ingest): true
        default: false
        }
    }

    /// The start of every key of this kind that Linkpulse makes (`lpi_`, `lpr_`, `lpa_`), so a
    /// person can tell them apart; keys given by flag may look like anything.
    public var prefix: String {
        switch self {
        case .ingest: "lpi_"
        case .read: "lpr_"
        case .admin: "lpa_"
        }
    }

    /// What a key of this kind may do, in a few words (error messages, the dashboard).
    public var powers: String {
        switch self {
        case .ingest: "send events and ask /v1/resolve"
        case .read: "read stats, exports, the quarantine and links"
        case .admin: "read everything, and manage links and keys"
        }
    }

    public static func < (a: AccessKind, b: AccessKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One stored access key as both stores keep it: never the secret, only its keyed hash.
/// Times are UTC milliseconds.
public struct AccessKeyRecord: Sendable, Equatable {
    /// `key_` and 16 hex digits: how the API and the CLI name the key (not secret).
    public var id: String
    /// The operator's name for it ("ios-app 7.2", "BI export").
    public var name: String
    public var kind: AccessKind
    /// `AccessKeyHasher.digest` of the secret, 64 hex digits.
    public var digest: String
    public var createdAtMs: Int64
    /// When a daemon last saw it used, to the minute at best (see `AccessKeyTable.markUse`).
    public var lastUsedAtMs: Int64?
    /// When it was revoked; a revoked key is refused everywhere and stays listed.
    public var revokedAtMs: Int64?

    public init(
        id: String, name: String, kind: AccessKind, digest: String, createdAtMs: Int64, lastUsedAtMs: Int64? = nil, revokedAtMs: Int64? = nil
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.digest = digest
        self.createdAtMs = createdAtMs
        self.lastUsedAtMs = lastUsedAtMs
        self.revokedAtMs = revokedAtMs
    }
}

/// A new key: its record (to store) and its secret (to show once, never to store).
public struct NewAccessKey: Sendable {
    public var record: AccessKeyRecord
    public var secret: String

    /// A key of `kind` named `name`: a secret of 128 random bits after the kind's prefix, and an
    /// id of 64 random bits.
    public init(kind: AccessKind, name: String, hasher: AccessKeyHasher, nowMs: Int64) {
        secret = kind.prefix + randomHex(bytes: 16)
        record = AccessKeyRecord(
            id: "key_" + randomHex(bytes: 8), name: name, kind: kind, digest: hasher.digest(of: secret), createdAtMs: nowMs)
    }

    /// The record of a key whose secret already exists (given by flag, or kept in clear by an
    /// older version): its id is derived from the secret's digest, so every daemon that adopts
    /// the same secret names it alike and stores it once.
    public static func adopted(secret: String, kind: AccessKind, name: String, hasher: AccessKeyHasher, nowMs: Int64) -> AccessKeyRecord {
        let digest = hasher.digest(of: secret)
        return AccessKeyRecord(id: "key_" + digest.prefix(16), name: name, kind: kind, digest: digest, createdAtMs: nowMs)
    }

    /// Whether `name` is a name a key may have: 1 to 100 characters, no control characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 100 && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// Hashes access keys with the installation's secret (HMAC-SHA256 under its own domain, apart
/// from the visitor hashes), so a stolen database without `secrets.json` cannot be checked
/// against guessed keys.
public struct AccessKeyHasher: Sendable {
    /// Keyed once; each digest copies the state (a request's key costs one HMAC, no key setup).
    private let keyed: KeyedHMAC

    /// - Parameter secret: the installation's hashing secret (`InstallationSecrets.hashSecretBytes`).
    public init(secret: [UInt8]) {
        keyed = KeyedHMAC(HMAC<SHA256>(key: SymmetricKey(data: secret)))
    }

    /// The key's digest as 64 hex digits.
    public func digest(of secret: String) -> String {
        hex(keyed.code("access-key", secret, nil), bytes: 32)
    }
}

/// Who a request's key says it is: what `AccessKeyTable.find` answers.
public struct AccessGrant: Sendable, Equatable {
    /// The stored key's id, or `flag:KIND` for a key given by flag.
    public var id: String
    public var name: String
    public var kind: AccessKind
    /// Whether the key lives in the daemon's configuration (a flag), not in the store.
    public var configured: Bool

    public init(id: String, name: String, kind: AccessKind, configured: Bool) {
        self.id = id
        self.name = name
        self.kind = kind
        self.configured = configured
    }
}

/// The keys a daemon accepts at one moment: the stored ones not revoked, and the ones given by
/// flag, by digest. Built anew at each change; a lookup is one dictionary read.
public struct AccessKeyTable: Sendable {
    /// The accepted keys by the first 16 hex digits of their digest, with the whole digest.
    private var byPrefix: [Substring: [(digest: String, grant: AccessGrant)]] = [:]
    /// - Parameters:
    ///   - records: every stored key (revoked ones are left out of the lookup).
    ///   - configured: the keys given by flag, by kind, already hashed (`digest`).
    public init(records: [AccessKeyRecord], configured: [(kind: AccessKind, digest: String)] = []) {
        var accepted: [String: AccessGrant] = [:]
        for record in records where record.revokedAtMs == nil {
            accepted[record.digest] = AccessGrant(id: record.id, name: record.name, kind: record.kind, configured: false)
        }
        // A flag names its kind: it wins over a stored key with the same secret.
        for key in configured {
            accepted[key.digest] = AccessGrant(id: "flag:\(key.kind.rawValue)", name: "--\(key.kind.rawValue)-key", kind: key.kind, configured: true)
        }
        for (digest, grant) in accepted { byPrefix[digest.prefix(16), default: []].append((digest, grant)) }
    }

    /// The key whose digest is `digest`, or nil when none is accepted (unknown or revoked). The
    /// digest is a keyed hash of the presented secret, found by its first digits and confirmed
    /// whole in constant time, so the time a lookup takes tells nothing about any secret.
    public func find(digest: String) -> AccessGrant? {
        byPrefix[digest.prefix(16)]?.first { constantTimeEquals(digest, $0.digest) }?.grant
    }

    /// How many keys of each kind are accepted.
    public var acceptedCounts: [AccessKind: Int] {
        byPrefix.values.joined().reduce(into: [:]) { $0[$1.grant.kind, default: 0] += 1 }
    }
}

/// Which keys were used when, kept in memory so a request never writes: a key's use is noted
/// at most once a minute (`note` says when), and `drain` hands the noted uses to whoever
/// writes them.
public struct AccessKeyUses: Sendable {
    /// The minute (UTC ms / 60,000) each key was last noted in.
    private var notedMinute: [String: Int64] = [:]
    private var pending: [String: Int64] = [:]

    public init() {}

    /// Notes that key `id` was used at `nowMs`; true when that is the key's first use this
    /// minute (and so will be written).
    public mutating func note(_ id: String, nowMs: Int64) -> Bool {
        let minute = nowMs / 60_000
        guard (notedMinute[id] ?? Int64.min) < minute else { return false }
        notedMinute[id] = minute
        pending[id] = nowMs
        return true
    }

    /// The uses noted since the last drain (key id → UTC ms), and forgets them.
    public mutating func drain() -> [String: Int64] {
        defer { pending = [:] }
        return pending
    }

    /// Puts back uses a failed write could not store, keeping a later use of the same key.
    public mutating func restore(_ uses: [String: Int64]) {
        pending.merge(uses) { max($0, $1) }
    }
}

/// `count` random bytes as lower-case hex.
func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in
        let byte = UInt8.random(in: 0...255, using: &generator)
        return (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }.joined()
}
