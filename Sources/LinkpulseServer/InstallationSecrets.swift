import Foundation
import Logging
import LinkpulseDomain

/// The installation's hashing secret, generated at first start and kept in `data/secrets.json`
/// (mode 0600): the HMAC key of IP addresses, visitor ids and access keys. Access keys are not
/// kept here (only their keyed hashes, in the store); a file an older version wrote may still
/// hold its generated keys in clear (`keptInClear`), which `serve` adopts as stored keys and
/// then removes from the file.
public struct InstallationSecrets: Sendable, Codable, Equatable {
    /// 32 random bytes as hex. Changing it changes every visitor id and voids every stored
    /// key, so it is never rotated silently.
    public var hashSecret: String
    /// Access keys an older version kept in clear in this file (`ingest_key`, `read_key`).
    public var keptInClear: [AccessKind: String]

    enum CodingKeys: String, CodingKey {
        case ingestKey = "ingest_key", readKey = "read_key", hashSecret = "hash_secret"
    }

    public static let fileName = "secrets.json"

    public init(hashSecret: String, keptInClear: [AccessKind: String] = [:]) {
        self.hashSecret = hashSecret
        self.keptInClear = keptInClear
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        hashSecret = try c.decode(String.self, forKey: .hashSecret)
        keptInClear = [:]
        if let key = try c.decodeIfPresent(String.self, forKey: .ingestKey) { keptInClear[.ingest] = key }
        if let key = try c.decodeIfPresent(String.self, forKey: .readKey) { keptInClear[.read] = key }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(hashSecret, forKey: .hashSecret)
        try c.encodeIfPresent(keptInClear[.ingest], forKey: .ingestKey)
        try c.encodeIfPresent(keptInClear[.read], forKey: .readKey)
    }

    /// The hashing secret as bytes.
    public var hashSecretBytes: [UInt8] {
        var bytes: [UInt8] = []
        var iterator = hashSecret.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(Self.nibble(high) << 4 | Self.nibble(low))
        }
        return bytes
    }

    static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        case 65...70: c - 55
        default: 0
        }
    }

    /// Loads `secrets.json` from `directory`, creating it (with a new hashing secret) on first use.
    public static func loadOrCreate(directory: URL, logger: Logger) throws -> InstallationSecrets {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appending(path: fileName)
        if let data = try? Data(contentsOf: file) {
            return try JSONDecoder().decode(InstallationSecrets.self, from: data)
        }
        let created = InstallationSecrets(hashSecret: randomHex(bytes: 32))
        try created.save(directory: directory)
        logger.info("generated the installation's hashing secret", metadata: ["file": "\(file.path)"])
        return created
    }

    /// Writes these secrets as the secrets file of `directory` (see `write`).
    public func save(directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try Self.write(encoder.encode(self), directory: directory)
    }

    /// Writes `data` as the secrets file of `directory` (mode 0600): under a temporary name,
    /// flushed and renamed, so there is never half a file. `linkpulse restore` writes the
    /// file a backup carries this way.
    public static func write(_ data: Data, directory: URL) throws {
        let file = directory.appending(path: fileName)
        let temporary = directory.appending(path: fileName + ".tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        let handle = try FileHandle(forWritingTo: temporary)
        try handle.synchronize()
        try handle.close()
        guard rename(temporary.path, file.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }

    static func randomHex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).leftPadded(to: 2)
        }.joined()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension AccessKeys {
    /// Readies the keys at a daemon's start: stores the keys an older version kept in clear
    /// (`keptInClear`) as keys of their kind, then has `forgetClearCopies` delete those copies
    /// (only once they are stored), loads every stored key, and says in the log how many of
    /// each kind are accepted and how to make one where there is none. No secret is logged.
    public func prepare(keptInClear: [AccessKind: String], forgetClearCopies: () async throws -> Void, logger: Logger) async throws {
        if !keptInClear.isEmpty {
            let adopted = try await adopt(keptInClear)
            try await forgetClearCopies()
            logger.notice(
                "the access keys kept in clear are now stored as keyed hashes, and the clear copies removed",
                metadata: ["kinds": "\(keptInClear.keys.sorted().map(\.rawValue).joined(separator: ","))", "adopted": "\(adopted.joined(separator: ","))"])
        }
        try await reload()
        let counts = acceptedCounts
        logger.info("access keys", metadata: [
            "ingest": "\(counts[.ingest] ?? 0)", "read": "\(counts[.read] ?? 0)", "admin": "\(counts[.admin] ?? 0)",
        ])
        for kind in AccessKind.allCases where (counts[kind] ?? 0) == 0 {
            logger.notice(
                "no \(kind.rawValue) key yet: make one with `linkpulse keys create --kind \(kind.rawValue) --name NAME` (beside this daemon), or pass --\(kind.rawValue)-key")
        }
    }
}
