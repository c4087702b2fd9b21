import ArgumentParser
import Foundation
import LinkpulseServer
import LinkpulseStore
import Logging

/// `linkpulse copy`: moves a SQLite installation over to PostgreSQL.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a SQLite installation (events, quarantine, export history, keys, hashing secret) into a PostgreSQL database.",
        discussion: """
            Copies what is not copied yet, in the order the events were stored, in commits of \
            --batch events: stopped, it goes on where it stopped when run again; run again after \
            the SQLite daemon stored more, it copies only those. The keys and the hashing secret \
            go first, so visitor ids stay the same: copy into a database no daemon has started on \
            yet (one that holds another hashing secret is refused). Then the copied events are attributed, \
            unless a daemon on the database already does that work. The export history (which \
            periods each scheduled job finished, which files it keeps) is copied too, so the jobs \
            go on after the last period they wrote: copy the export directory's files to the \
            --export-dir of the daemons on PostgreSQL yourself. The SQLite files are only read.
            """)

    @OptionGroup var storage: StorageOptions

    @Option(help: "The SQLite installation's data directory (default: --data-dir).")
    var from: String?

    @Option(help: "The PostgreSQL database URL, postgres://user[:password]@host[:port]/database.")
    var to: String

    @Option(help: "Events per commit.")
    var batch: Int = 5_000

    @OptionGroup var attribution: AttributionOptions

    mutating func validate() throws {
        guard batch > 0 else { throw ValidationError("--batch must be positive.") }
        do { _ = try PostgresLocation(url: to) } catch { throw ValidationError("--to: \(error)") }
    }

    func run() async throws {
        let logger = storage.bootstrapLogging()
        let source = from.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? storage.dataURL
        guard let data = FileManager.default.contents(atPath: source.appending(path: InstallationSecrets.fileName).path),
              let secrets = try? JSONDecoder().decode(InstallationSecrets.self, from: data)
        else { throw ValidationError("no readable \(InstallationSecrets.fileName) in \(source.path): is --from the installation's data directory?") }
        let location = try PostgresLocation(url: to)
        let store = try await PostgresStore.open(
            location, logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000), attributionWindowMs: attribution.windowMs)
        do {
            try await Self.adoptKeys(secrets, into: store)
            let start = ContinuousClock.now
            let summary = try await InstallationCopy.copy(from: source, to: store, batch: batch, logger: logger)
            // Keys an older version kept in clear in secrets.json, stored as keyed hashes here too.
            try await AccessKeys(store: store.accessKeys, hashSecret: secrets.hashSecretBytes).adopt(secrets.keptInClear)
            var attributed = 0
            while case .led(let count, let counted) = try await store.derived.tick(), count + counted > 0 { attributed += count }
            print("""
                copied \(summary.events) events into \(location) (through seq \(summary.throughSeq); \(summary.duplicates) were there \
                already), \(summary.quarantined) quarantined, the records of \(summary.exportJobs) export jobs and \(summary.exportFiles) \
                export files, \(summary.accessKeys) stored keys and \(summary.links) links; \(attributed) events attributed; in \(ContinuousClock.now - start)
                """)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// Stores the installation's hashing secret in the database, or fails when it holds another
    /// (its visitor ids would not match the copied events', nor its keys' hashes).
    static func adoptKeys(_ secrets: InstallationSecrets, into store: PostgresStore) async throws {
        let stored = try await store.installationValues(proposing: secrets.storedValues)
        guard stored == secrets.storedValues else {
            throw ValidationError(
                "\(store.location) already holds another hashing secret (a daemon started on it before the copy?): copy into a new, empty database.")
        }
    }
}
