import ArgumentParser
import Foundation
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging

/// `linkpulse export`: the CSV of `/v1/export.csv` or `/v1/events.csv`, from the command line.
/// Safe beside a running `serve`. A file is written atomically (temporary name, fsync, rename).
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a CSV export: a breakdown (--by), a time series (--interval) or the raw events (--events).",
        discussion: "Same parameters and output as GET /v1/export.csv and /v1/events.csv, from the SQLite installation under --data-dir or the PostgreSQL database of --database. Example: linkpulse export --by ref --from 2026-11-01 --to 2026-11-21 --out refs.csv")

    @OptionGroup var storage: StorageOptions
    @OptionGroup var database: DatabaseOption

    @Option(help: "Break down by this dimension: ref, campaign, source, medium, platform, country, device, os, browser, referrer_host, language.")
    var by: String?

    @Option(help: "A time series instead: hour or day.")
    var interval: String?

    @Flag(help: "The raw events of the range instead (one row per stored event, bots included unless --no-include-bots).")
    var events = false

    @Option(help: "Start: RFC 3339 or a local date (default: 7 days before --to).")
    var from: String?

    @Option(help: "End: RFC 3339 (exclusive) or a local date (inclusive); default now.")
    var to: String?

    @Option(help: "IANA time zone of dates, days and hours (LINKPULSE_TIMEZONE, default UTC).")
    var tz: String = Environment.string("timezone") ?? "UTC"

    @Option(help: "Only this campaign.") var campaign: String?
    @Option(help: "Only this ref.") var ref: String?
    @Option(help: "Only this source.") var source: String?
    @Option(help: "Only this medium.") var medium: String?
    @Option(help: "Only this platform.") var platform: String?
    @Option(help: "Only this country (ISO 3166-1 alpha-2, such as DE).") var country: String?
    @Option(help: "Only this device: phone, tablet, desktop, tv, console, bot, other.") var device: String?
    @Option(help: "Only this operating system (iOS, Android, Windows…).") var os: String?
    @Option(help: "Only this browser (Safari, Chrome, Instagram…).") var browser: String?
    @Option(help: "Only this referrer host (www.instagram.com).") var referrerHost: String?
    @Option(help: "Only this language (primary subtag, such as de).") var language: String?

    @Flag(inversion: .prefixedNo, help: "Count bot traffic too (stats: default no; events: default yes).")
    var includeBots: Bool?

    @Option(help: "Breakdown sort metric (default clicks).") var sort: String?
    @Option(help: "Breakdown order: desc or asc.") var order: String?
    @Option(help: "Breakdown rows at most (default all).") var limit: Int?

    @Flag(help: "Compress the output with gzip.")
    var gzip = false

    @Option(help: "Output file, or - for standard output.")
    var out: String = "-"

    @Flag(inversion: .prefixedNo, help: "Roll up every stored event before reading, so the export is complete.")
    var rollup = true

    /// Whether `path` exists and is not a regular file (a device, a pipe, a socket).
    static func isSpecialFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG
    }

    /// The options as the HTTP endpoint's parameters, so both parse alike.
    var parameters: [String: String] {
        var p: [String: String] = ["tz": tz]
        let optional: [(String, String?)] = [
            ("by", by), ("interval", interval), ("from", from), ("to", to), ("campaign", campaign), ("ref", ref),
            ("source", source), ("medium", medium), ("platform", platform), ("country", country), ("device", device), ("os", os),
            ("browser", browser), ("referrer_host", referrerHost), ("language", language), ("sort", sort), ("order", order),
            ("limit", limit.map(String.init)), ("include_bots", includeBots.map { $0 ? "true" : "false" }),
        ]
        for case (let name, let value?) in optional { p[name] = value }
        return p
    }

    func content() throws -> ExportContent {
        do throws(ParameterError) {
            let query = try StatsQuery.parse(parameters, defaultZone: tz, nowMs: Int64(Date().timeIntervalSince1970 * 1000))
            if events {
                guard by == nil, interval == nil else { throw ParameterError("events", "--events takes no --by or --interval.") }
                return try ExportContent.parseEvents(parameters, query: query)
            }
            return try ExportContent.parseStats(parameters, query: query)
        } catch {
            throw ValidationError("--\(error.parameter.replacingOccurrences(of: "_", with: "-")): \(error.message)")
        }
    }

    mutating func validate() throws {
        _ = try content()
    }

    func run() async throws {
        let logger = storage.bootstrapLogging()
        let content = try content()
        let now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        if let location = database.location {
            let store = try await PostgresStore.open(location, logger: logger, nowMs: now())
            do {
                if rollup {
                    // Counts what is stored itself when no daemon does the derived work, else has
                    // that daemon count it.
                    var outcome = try await store.derived.tick()
                    while case .led(let attributed, let counted) = outcome, attributed + counted > 0 { outcome = try await store.derived.tick() }
                    if outcome == .standby { try await store.countStored(timeout: .seconds(300)) }
                }
                let stats = StatsService(reader: store.stats, defaultZone: tz, now: now)
                try await write(content, with: CSVExporter(stats: stats, reader: store.stats), logger: logger)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            return
        }
        let database = try AppDatabase(directory: storage.dataURL, tuning: .command, logger: logger)
        if rollup { try database.rollups.rollUpThroughCurrent() }
        let stats = StatsService(reader: database.stats, defaultZone: tz, now: now)
        try await write(content, with: CSVExporter(stats: stats, reader: database.stats), logger: logger)
        try database.close()
    }

    /// Writes `content` to `--out` (a file atomically, or standard output or a device as is).
    func write(_ content: ExportContent, with exporter: CSVExporter, logger: Logger) async throws {
        let rows: Int
        if out == "-" || Self.isSpecialFile(out) {
            // Standard output, or a device or pipe (/dev/null, a FIFO): written straight through,
            // since renaming a file over it would replace the device.
            let output = out == "-" ? FileHandle.standardOutput : try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            rows = try await exporter.write(content, gzip: gzip) { chunk in try output.write(contentsOf: chunk) }
        } else {
            let url = URL(fileURLWithPath: out)
            (rows, _) = try await ExportFiles.write(directory: url.deletingLastPathComponent(), name: url.lastPathComponent) { sink in
                try await exporter.write(content, gzip: gzip, to: sink)
            }
        }
        logger.info("exported", metadata: ["rows": "\(rows)", "out": "\(out)"])
    }
}
