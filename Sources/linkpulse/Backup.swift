import ArgumentParser
import Foundation
import LinkpulseServer
import LinkpulseStore

/// `linkpulse backup --out FILE`: an online, checked copy of the installation, while `serve`
/// keeps running.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the installation (events, quarantine, export ledger, keys, hashing secret) into one file, online.",
        discussion: """
            The copy is one consistent snapshot: every event acknowledged before the backup \
            started is in it. It is written beside FILE under a temporary name, checked with \
            SQLite's integrity check and only then renamed to FILE (mode 0600: it holds the \
            keys). Derived state (id index, attribution, rollups) is not copied; a restored \
            installation rebuilds it from the events at its first start. Keys given to serve \
            by flag or environment are not part of the installation: give them again.
            """)

    @OptionGroup var storage: StorageOptions

    @Option(help: "The backup file to write; an existing file is replaced only once the new copy is complete and checked.")
    var out: String

    func run() throws {
        let directory = storage.dataURL
        let secretsFile = directory.appending(path: InstallationSecrets.fileName)
        guard let secrets = FileManager.default.contents(atPath: secretsFile.path) else {
            throw ValidationError("no \(InstallationSecrets.fileName) in \(directory.path): is --data-dir the installation's data directory?")
        }
        let started = Date()
        let summary = try StoreBackup.backup(
            directory: directory, secrets: secrets, to: URL(fileURLWithPath: out),
            nowMs: Int64(started.timeIntervalSince1970 * 1000))
        let derived = try StoreBackup.inspect(URL(fileURLWithPath: out)).derived
        print("""
            backup written to \(out): \(summary.events) events (through seq \(summary.maxSeq)), \
            \(summary.quarantined) quarantined, \(summary.bytes) bytes, integrity ok, \
            in \(String(format: "%.1f", Date().timeIntervalSince(started))) s
            """)
        if !derived.isEmpty {
            print("""
                retention has deleted raw events, so the rollups, attribution and id index are copied beside it \
                (\(derived.map { "\(out).\($0)" }.joined(separator: ", "))): keep them with it
                """)
        }
    }
}

/// `linkpulse restore FILE --data-dir D`: brings a backup back into an empty data directory.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup made by `linkpulse backup` into a data directory (stop the daemon first).",
        discussion: """
            The directory must be empty, or --force replaces the installation in it (its \
            databases and secrets; other files such as exports stay). The restored events get \
            a new database id, so the id index, attribution and rollups are rebuilt from them \
            when serve starts: every restored event is counted once. A backup taken after \
            retention deleted raw events carries those files beside it (FILE.rollups, \
            FILE.attribution, FILE.ids); they are restored with it and counting goes on from them.
            """)

    @Argument(help: "The backup file.")
    var file: String

    @OptionGroup var storage: StorageOptions

    @Flag(help: "Replace the installation already in --data-dir.")
    var force = false

    func run() throws {
        let backup = URL(fileURLWithPath: file)
        let contents = try StoreBackup.inspect(backup)
        // The secrets must be usable before anything in the directory is touched.
        guard (try? JSONDecoder().decode(InstallationSecrets.self, from: contents.secrets)) != nil else {
            throw ValidationError("\(file) carries no readable \(InstallationSecrets.fileName); it cannot bring the keys back.")
        }
        let directory = storage.dataURL
        let restored = try StoreBackup.restore(backup, into: directory, replace: force, otherFiles: [InstallationSecrets.fileName])
        try InstallationSecrets.write(restored.secrets, directory: directory)
        let created = Date(timeIntervalSince1970: Double(restored.summary.createdAtMs) / 1000)
        print("""
            restored \(restored.summary.events) events and \(restored.summary.quarantined) quarantined bodies \
            (backup of \(created.formatted(.iso8601))) into \(directory.path); \
            \(restored.derived.isEmpty
                ? "start serve to rebuild the id index, attribution and rollups"
                : "with its rollups, attribution and id index; start serve to go on from them")
            """)
    }
}
