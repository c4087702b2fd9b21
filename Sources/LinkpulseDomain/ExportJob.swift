import Foundation

/// What a CSV export holds: a breakdown by one dimension, a time series, or the raw events.
/// The same parameters as the JSON stats API (`/v1/export.csv` mirrors it), so one parser
/// serves the endpoint, `linkpulse export` and the scheduled jobs.
public enum ExportContent: Sendable {
    case breakdown(BreakdownQuery)
    case series(StatsQuery, SeriesInterval)
    /// Every stored event of the range (bots included unless `include_bots=false`).
    case events(StatsQuery)

    /// Reads a breakdown (`by`) or a series (`interval`) from stats parameters; a breakdown
    /// has every row unless `limit` says otherwise.
    public static func parseStats(_ parameters: [String: String], query: StatsQuery) throws(ParameterError) -> ExportContent {
        if parameters["interval"] != nil {
            guard parameters["by"] == nil else {
                throw ParameterError("interval", "Give either `by` (a breakdown) or `interval` (a time series), not both.")
            }
            _ = try BreakdownQuery.Page.parse(parameters, defaultLimit: Int.max, maxLimit: Int.max)
            return .series(query, try SeriesInterval.parse(parameters, stats: query))
        }
        guard parameters["by"] != nil else {
            throw ParameterError("by", "Give `by` (\(StatsDimension.allCases.map(\.rawValue).joined(separator: ", "))) for a breakdown or `interval` (hour, day) for a time series.")
        }
        return .breakdown(try BreakdownQuery.parse(parameters, stats: query, defaultLimit: Int.max, maxLimit: Int.max))
    }

    /// Reads a raw-event export: the common parameters, bots included by default.
    public static func parseEvents(_ parameters: [String: String], query: StatsQuery) throws(ParameterError) -> ExportContent {
        if let name = StatsDimension.audience.first(where: { parameters[$0.rawValue] != nil })?.rawValue {
            throw ParameterError(name, "The raw events are filtered by link dimensions only; every row has its `\(name)` column to filter on.")
        }
        var query = query
        query.includeBots = try StatsQuery.flag(parameters, "include_bots") ?? true
        return .events(query)
    }

    /// The stats query (range, zone, filters) underneath.
    public var query: StatsQuery {
        get {
            switch self {
            case .breakdown(let b): b.stats
            case .series(let q, _), .events(let q): q
            }
        }
        set {
            switch self {
            case .breakdown(var b):
                b.stats = newValue
                self = .breakdown(b)
            case .series(_, let interval): self = .series(newValue, interval)
            case .events: self = .events(newValue)
            }
        }
    }

    /// A short name of what is exported: `by-ref`, `hourly`, `events`.
    public var kindName: String {
        switch self {
        case .breakdown(let b): "by-\(b.by.rawValue)"
        case .series(_, let interval): interval == .hour ? "hourly" : "daily"
        case .events: "events"
        }
    }
}

/// A scheduled export, as declared in the exports config file (see `ops/exports.example.json`).
public struct ExportJob: Sendable {
    /// Letters, digits, `-` and `_`; starts the file names.
    public var name: String
    /// What each file holds; its range is replaced by the period's.
    public var content: ExportContent
    public var schedule: ExportSchedule
    public var gzip: Bool
    /// How many of the job's newest files are kept (older ones are deleted).
    public var keep: Int

    /// `daily-by-ref_2026-11-21.csv.gz`.
    public func fileName(for period: ExportSchedule.Period) -> String {
        "\(name)_\(period.label).csv" + (gzip ? ".gz" : "")
    }

    /// Whether the job exports raw events (`events.csv`): retention then waits for its periods.
    public var exportsRawEvents: Bool {
        if case .events = content { true } else { false }
    }

    /// The content with its range set to `period`.
    public func content(for period: ExportSchedule.Period) -> ExportContent {
        var content = content
        content.query.fromMs = period.startMs
        content.query.toMs = period.endMs
        return content
    }

    /// Whether `name` may name a job (and so start a file name).
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.first != UInt8(ascii: "-")
            && name.utf8.allSatisfy { isSafeFileByte($0) && $0 != UInt8(ascii: ".") }
    }

    /// Letters, digits, `-`, `_` and `.`: the bytes export file names are made of.
    public static func isSafeFileByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
        default: false
        }
    }
}

/// The exports config file: `{"jobs": [ … ]}`. Each job:
/// `name`, `period` (`daily` | `hourly`), `at` (`"02:00"` daily, `":05"` hourly; default
/// `"00:10"` / `":10"`), `timezone` (IANA, default the server's), `gzip` (default true), `keep`
/// (default 30 daily / 48 hourly), and either `"events": true` or `query`: the parameters of
/// `/v1/export.csv` as strings (`{"by": "ref", "campaign": "spring"}` or `{"interval": "hour"}`).
public struct ExportConfig: Sendable {
    public var jobs: [ExportJob]

    public init(jobs: [ExportJob]) { self.jobs = jobs }

    /// A config file that cannot be used: which job, which field, what is wrong.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    struct JobText: Decodable {
        var name: String
        var period: String
        var at: String?
        var timezone: String?
        var gzip: Bool?
        var keep: Int?
        var events: Bool?
        var query: [String: String]?
    }

    struct FileText: Decodable {
        var jobs: [JobText]
    }

    /// Reads and checks a config file's JSON.
    public static func parse(_ data: Data, defaultZone: String) throws(Problem) -> ExportConfig {
        let file: FileText
        do {
            file = try JSONDecoder().decode(FileText.self, from: data)
        } catch {
            throw Problem(description: "The exports config is not the expected JSON ({\"jobs\": [{\"name\": …, \"period\": …}]}): \(error)")
        }
        var jobs: [ExportJob] = []
        for (index, text) in file.jobs.enumerated() {
            let job = try parseJob(text, index: index, defaultZone: defaultZone)
            guard !jobs.contains(where: { $0.name == job.name }) else {
                throw Problem(description: "jobs[\(index)]: the name \"\(job.name)\" is used twice; job names must be unique.")
            }
            jobs.append(job)
        }
        return ExportConfig(jobs: jobs)
    }

    static func parseJob(_ text: JobText, index: Int, defaultZone: String) throws(Problem) -> ExportJob {
        let at = "jobs[\(index)] (\(text.name))"
        guard ExportJob.isValidName(text.name) else {
            throw Problem(description: "jobs[\(index)].name \"\(text.name)\" must be 1–64 letters, digits, - or _ (not starting with -).")
        }
        guard let cadence = ExportSchedule.Cadence(rawValue: text.period) else {
            throw Problem(description: "\(at).period must be daily or hourly, not \"\(text.period)\".")
        }
        let atText = text.at ?? (cadence == .daily ? "00:10" : ":10")
        guard let delay = ExportSchedule.delay(parsing: atText, cadence: cadence) else {
            throw Problem(description: "\(at).at must be \(cadence == .daily ? "a local time \"HH:MM\"" : "minutes past the hour \":MM\""), not \"\(atText)\".")
        }
        let zone = text.timezone ?? defaultZone
        guard ZoneClock(identifier: zone) != nil else {
            throw Problem(description: "\(at).timezone must be an IANA time zone name such as Europe/Berlin, not \"\(zone)\".")
        }
        let keep = text.keep ?? (cadence == .daily ? 30 : 48)
        guard keep >= 1 else { throw Problem(description: "\(at).keep must be 1 or more.") }
        var parameters = text.query ?? [:]
        for fixed in ["from", "to", "tz", "key"] where parameters[fixed] != nil {
            throw Problem(description: "\(at).query.\(fixed) is set by the schedule; remove it.")
        }
        parameters["tz"] = zone
        let content: ExportContent
        do throws(ParameterError) {
            let query = try StatsQuery.parse(parameters, defaultZone: zone, nowMs: TimeGrain.dayMs)
            if text.events == true {
                content = try ExportContent.parseEvents(parameters, query: query)
            } else {
                guard text.query != nil else {
                    throw ParameterError("query", "give `query` ({\"by\": \"ref\"} or {\"interval\": \"hour\"}) or \"events\": true.")
                }
                content = try ExportContent.parseStats(parameters, query: query)
            }
        } catch {
            throw Problem(description: "\(at).query.\(error.parameter): \(error.message)")
        }
        return ExportJob(
            name: text.name, content: content, schedule: ExportSchedule(cadence: cadence, delayMs: delay, zone: zone),
            gzip: text.gzip ?? true, keep: keep)
    }
}
