import Foundation
import Logging

/// The installation's access keys and hashing secret, generated at first start and kept in
/// `data/secrets.json` (mode 0600). Keys given by flag or environment take precedence and are
/// not written to the file.
public struct InstallationSecrets: Sendable, Codable, Equatable {
    /// Write-only key shipped inside apps and web pages (public by nature).
    public var ingestKey: String
    /// Secret key for reading stats and admin endpoints.
    public var readKey: String
    /// 32 random bytes as hex: the HMAC key for IP addresses and visitor ids. Changing it
    /// changes every visitor id, so it is never rotated silently.
    public var hashSecret: String

    enum CodingKeys: String, CodingKey {
        case ingestKey = "ingest_key", readKey = "read_key", hashSecret = "hash_secret"
    }

    public static let fileName = "secrets.json"

    public init(ingestKey: String, readKey: String, hashSecret: String) {
        self.ingestKey = ingestKey
        self.readKey = readKey
        self.hashSecret = hashSecret
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

    /// Loads `secrets.json` from `directory`, creating it (and any missing value) on first use,
    /// then applies the overrides. Newly generated keys are logged once, at notice level.
    public static func loadOrCreate(
        directory: URL, ingestKey: String?, readKey: String?, logger: Logger
    ) throws -> InstallationSecrets {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appending(path: fileName)
        var stored: InstallationSecrets
        if let data = try? Data(contentsOf: file) {
            stored = try JSONDecoder().decode(InstallationSecrets.self, from: data)
        } else {
            stored = InstallationSecrets(
                ingestKey: "lpi_" + randomHex(bytes: 16), readKey: "lpr_" + randomHex(bytes: 16),
                hashSecret: randomHex(bytes: 32))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try write(encoder.encode(stored), directory: directory)
            logger.notice(
                "generated access keys; they are kept in the data directory",
                metadata: [
                    "ingest_key": .string(ingestKey == nil ? stored.ingestKey : "(given)"),
                    "read_key": .string(readKey == nil ? stored.readKey : "(given)"),
                    "file": .string(file.path),
                ])
        }
        if let ingestKey, !ingestKey.isEmpty { stored.ingestKey = ingestKey }
        if let readKey, !readKey.isEmpty { stored.readKey = readKey }
        return stored
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
