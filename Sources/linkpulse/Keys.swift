import ArgumentParser
import Foundation
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging

/// `linkpulse keys create|list|revoke`: the access keys, beside a running daemon on the same
/// `--data-dir` (or `--database`). A change reaches every running daemon within 2 s.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create, list and revoke access keys (ingest, read, admin) without a restart.",
        discussion: """
            Works on the SQLite installation under --data-dir, or the PostgreSQL database of --database, \
            beside running daemons: a key created or revoked here is accepted or refused by each of them within 2 s. \
            Only a keyed hash of a key is stored; `create` shows the key this once.
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    /// The keys of the installation the options name, handed to `body`, then closed.
    static func withKeys<T>(
        _ storage: StorageOptions, _ database: DatabaseOption, _ body: (AccessKeys) async throws -> T
    ) async throws -> T {
        let logger = storage.bootstrapLogging()
        if let location = database.location {
            let store = try await PostgresStore.open(location, logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000))
            do {
                let secrets = try await InstallationSecrets.loadOrCreate(store: store, logger: logger)
                let result = try await body(AccessKeys(store: store.accessKeys, hashSecret: secrets.hashSecretBytes))
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
        let secrets = try InstallationSecrets.loadOrCreate(directory: storage.dataURL, logger: logger)
        return try await storage.besideDaemon(
            feature: "access keys", open: AccessKeyLedger.beside(directory:), close: { try $0.close() }, logger: logger
        ) { ledger in try await body(AccessKeys(store: ledger, hashSecret: secrets.hashSecretBytes)) }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key; prints its id, kind and name, then the key itself on the last line (shown this once).")

        @OptionGroup var storage: StorageOptions
        @OptionGroup var database: DatabaseOption

        @Option(help: "ingest (events, resolve: ships inside apps), read (stats, exports), or admin (read, and links and keys).")
        var kind: String

        @Option(help: "Who uses the key, e.g. \"ios-app 7.2\" or \"BI export\" (1 to 100 characters).")
        var name: String

        mutating func validate() throws {
            guard AccessKind(rawValue: kind) != nil else { throw ValidationError("--kind must be one of ingest, read, admin.") }
            guard NewAccessKey.isValidName(name) else { throw ValidationError("--name must be 1 to 100 characters, without control characters.") }
        }

        func run() async throws {
            let key = try await Keys.withKeys(storage, database) { try await $0.create(kind: AccessKind(rawValue: kind)!, name: name) }
            print("\(key.record.id)\t\(key.record.kind.rawValue)\t\(key.record.name)")
            print(key.secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the stored keys (never their secrets): id, kind, name, created, last used, revoked.")

        @OptionGroup var storage: StorageOptions
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let records = try await Keys.withKeys(storage, database) { try await $0.list() }
            let rows = [["ID", "KIND", "NAME", "CREATED", "LAST USED", "REVOKED"]] + records.map { record in
                [record.id, record.kind.rawValue, record.name, Timestamp.formatUTC(record.createdAtMs),
                 record.lastUsedAtMs.map(Timestamp.formatUTC) ?? "-", record.revokedAtMs.map(Timestamp.formatUTC) ?? "-"]
            }
            let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                print(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                    .trimmingCharacters(in: .whitespaces))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key by its id (from `keys list`): every daemon refuses it within 2 s. It stays listed.")

        @OptionGroup var storage: StorageOptions
        @OptionGroup var database: DatabaseOption

        @Argument(help: "The key's id, key_…")
        var id: String

        func run() async throws {
            guard let revoked = try await Keys.withKeys(storage, database, { try await $0.revoke(id: id) }) else {
                throw ValidationError("no stored key has the id \(id); `linkpulse keys list` shows them.")
            }
            print("revoked \(revoked.id)\t\(revoked.kind.rawValue)\t\(revoked.name)")
        }
    }
}
