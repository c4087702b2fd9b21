import ArgumentParser
import Foundation
import LinkpulseServer
import LinkpulseStore
import Logging

/// Reads `LINKPULSE_…` environment variables as option defaults.
enum Environment {
    static func name(_ option: String) -> String {
        "LINKPULSE_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    static func string(_ option: String) -> String? {
        ProcessInfo.processInfo.environment[name(option)].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func int(_ option: String) -> Int? { string(option).flatMap(Int.init) }

    /// Booleans accept 1/0/true/false/yes/no.
    static func bool(_ option: String) -> Bool? {
        switch string(option)?.lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }

    /// Fails when a variable is set to something the option cannot take, naming it.
    static func validate(ints: [String] = [], bools: [String] = [], choices: [String: [String]] = [:]) throws {
        for option in ints where string(option) != nil && int(option) == nil {
            throw ValidationError("\(name(option)) must be a whole number, not \"\(string(option)!)\".")
        }
        for option in bools where string(option) != nil && bool(option) == nil {
            throw ValidationError("\(name(option)) must be 1, 0, true or false, not \"\(string(option)!)\".")
        }
        for (option, allowed) in choices where string(option).map({ !allowed.contains($0) }) ?? false {
            throw ValidationError("\(name(option)) must be one of \(allowed.joined(separator: ", ")), not \"\(string(option)!)\".")
        }
    }
}

/// Options every subcommand that touches the database shares.
struct StorageOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory of the SQLite files and secrets (LINKPULSE_DATA_DIR).")
    var dataDirectory: String = Environment.string("data-dir") ?? "./data"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (LINKPULSE_LOG_LEVEL).")
    var logLevel: String = Environment.string("log-level") ?? "info"

    var dataURL: URL { URL(fileURLWithPath: dataDirectory, isDirectory: true) }

    mutating func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    /// Sets up logging once for the process and returns the root logger.
    func bootstrapLogging() -> Logger {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        return Logger(label: "linkpulse")
    }
}

/// `--database`: the PostgreSQL database to use instead of the SQLite files under `--data-dir`.
struct DatabaseOption: ParsableArguments {
    @Option(help: "PostgreSQL database URL, postgres://user[:password]@host[:port]/database (LINKPULSE_DATABASE). Without it: SQLite under --data-dir.")
    var database: String? = Environment.string("database")

    /// Where the PostgreSQL store is, or nil for SQLite.
    var location: PostgresLocation? { database.flatMap { try? PostgresLocation(url: $0) } }

    mutating func validate() throws {
        if let database {
            do { _ = try PostgresLocation(url: database) } catch { throw ValidationError("--database: \(error)") }
        }
    }
}

extension StorageOptions {
    /// Hands `body` what `open` makes of the SQLite installation's events database beside a
    /// running daemon (`linkpulse keys`, `linkpulse links`), then `close`s it. A new
    /// installation is created and migrated first, unless a daemon serves it: one of a version
    /// without `feature` is refused (upgrade and restart it first).
    func besideDaemon<Ledger, T>(
        feature: String, open: (URL) throws -> Ledger?, close: (Ledger) throws -> Void, logger: Logger,
        _ body: (Ledger) async throws -> T
    ) async throws -> T {
        let directory = dataURL
        if let ledger = try open(directory) {
            try close(ledger)
        } else {
            guard !DataDirectoryLock.isHeld(in: directory) else {
                throw ValidationError("the daemon serving \(directory.path) is of a version without \(feature): upgrade and restart it first.")
            }
            try AppDatabase(directory: directory, tuning: .command, idFilter: .atFirstUse, logger: logger).close()
        }
        guard let ledger = try open(directory) else {
            throw ValidationError("no Linkpulse events database with \(feature) in \(directory.path)")
        }
        do {
            let result = try await body(ledger)
            try close(ledger)
            return result
        } catch {
            try? close(ledger)
            throw error
        }
    }
}
