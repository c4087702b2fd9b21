import Foundation
import LinkpulseDomain
import LinkpulseStore

/// Writes exports as CSV (see `CSVRows` for the format), chunk by chunk, for the HTTP
/// endpoints, `linkpulse export` and the scheduled jobs alike. Stats exports are the stats
/// API's answers (`StatsService`), so a CSV always equals the JSON for the same parameters; the
/// raw-event export is read page by page and never held whole in memory.
public struct CSVExporter: Sendable {
    let stats: StatsService
    let database: AppDatabase

    /// Events per page of a raw-event export (one read transaction and one chunk each).
    static let eventsPerPage = 4096
    /// Stats rows are flushed to the sink in chunks of about this many bytes.
    static let chunkBytes = 256 << 10

    /// The columns of `events.csv`: the ingest fields, then what the server added. No IP.
    public static let eventColumns = [
        "id", "type", "timestamp", "sent_at", "received_at", "ref", "campaign", "source", "medium", "platform",
        "device_id", "click_id", "deferred", "url", "referrer", "user_agent", "os_version", "app_version",
        "properties", "bot", "bot_reason", "visitor_id", "match_type", "matched_click_id",
    ]

    public init(stats: StatsService, database: AppDatabase) {
        self.stats = stats
        self.database = database
    }

    /// Writes `content` as CSV to `sink` (gzip-compressed with `gzip`); returns the number of
    /// data rows. The sink gets chunks in order and may suspend (backpressure).
    public func write(_ content: ExportContent, gzip: Bool, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        guard gzip else { return try await write(content, to: sink) }
        let stream = GzipStream()
        let rows = try await write(content) { chunk in
            let compressed = stream.compress(chunk)
            if !compressed.isEmpty { try await sink(compressed) }
        }
        try await sink(stream.finish())
        return rows
    }

    func write(_ content: ExportContent, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        switch content {
        case .breakdown(let query):
            let answer = try await stats.breakdown(query)
            var csv = CSVRows(reservingCapacity: Self.chunkBytes)
            csv.row([query.by.rawValue] + CSVRows.metricColumns)
            for row in answer.rows {
                csv.text(row.key)
                csv.metrics(row.metrics)
                csv.endRow()
                if csv.bytes.count >= Self.chunkBytes { try await flush(&csv, to: sink) }
            }
            try await sink(csv.bytes)
            return answer.rows.count
        case .series(let query, let interval):
            let answer = try await stats.timeseries(query, interval: interval)
            var csv = CSVRows()
            csv.row(["t"] + CSVRows.metricColumns)
            for point in answer.points {
                csv.text(point.t)
                csv.metrics(point.metrics)
                csv.endRow()
            }
            try await sink(csv.bytes)
            return answer.points.count
        case .events(let query):
            return try await writeEvents(query, to: sink)
        }
    }

    func flush(_ csv: inout CSVRows, to sink: (consuming [UInt8]) async throws -> Void) async throws {
        try await sink(csv.bytes)
        csv.removeAll()
    }

    /// Every stored event of the range, one page per chunk, times in the query's zone.
    func writeEvents(_ query: StatsQuery, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        var header = CSVRows()
        header.row(Self.eventColumns)
        try await sink(header.bytes)
        let range = RawEventQuery(fromMs: query.fromMs, toMs: query.toMs, filters: query.filters, includeBots: query.includeBots)
        var cursor: RawEventCursor? = try database.rawEventCursor()
        var total = 0
        let zone = query.zone
        while let current = cursor {
            let page = PageRows(zone: zone)
            let (filled, next) = try await database.rawEventsPage(range, cursor: current, limit: Self.eventsPerPage, into: page) { page, row in
                page.add(row)
            }
            cursor = next
            total += filled.count
            if filled.count > 0 { try await sink(filled.csv.bytes) }
        }
        return total
    }

    /// The CSV of one page of raw events, built inside the read.
    struct PageRows: @unchecked Sendable {
        // ZoneClock caches the current offset; each page has its own.
        let clock: ZoneClock
        var csv = CSVRows(reservingCapacity: CSVExporter.eventsPerPage * 320)
        var count = 0

        init(zone: String) {
            clock = ZoneClock(identifier: zone)!
        }

        // The text columns between the timestamps and flags, in `eventColumns` order.
        static let identity: [RawEventColumn] = [.eventId, .type]
        static let dimensions: [RawEventColumn] = [.ref, .campaign, .source, .medium, .platform, .deviceId, .clickId]
        static let details: [RawEventColumn] = [.url, .referrer, .userAgent, .osVersion, .appVersion, .properties]
        static let added: [RawEventColumn] = [.botReason, .visitorId, .matchType, .matchedClickId]

        mutating func add(_ row: RawEventRow) {
            for column in Self.identity { text(row, column) }
            csv.timestamp(row.int64(.occurredAt), clock: clock)
            csv.timestamp(row.int64(.sentAt), clock: clock)
            csv.timestamp(row.int64(.receivedAt), clock: clock)
            for column in Self.dimensions { text(row, column) }
            boolean(row.int64(.deferred))
            for column in Self.details { text(row, column) }
            boolean(row.int64(.bot))
            for column in Self.added { text(row, column) }
            csv.endRow()
            count += 1
        }

        mutating func text(_ row: RawEventRow, _ column: RawEventColumn) {
            if row.withText(column, { csv.text(utf8: $0) }) == nil { csv.text(nil) }
        }

        /// `true`/`false`, empty when not sent.
        mutating func boolean(_ value: Int64?) {
            csv.text(value.map { $0 != 0 ? "true" : "false" })
        }
    }

    /// A download's file name: `linkpulse_by-ref_2026-11-01_2026-11-07.csv` (local dates, `to`
    /// inclusive when the range ends at a midnight), with `.gz` when compressed as a file.
    public static func fileName(for content: ExportContent) -> String {
        let query = content.query
        let clock = ZoneClock(identifier: query.zone)!
        let from = clock.format(query.fromMs).prefix(10)
        let lastInstant = query.toMs - 1
        let to = clock.format(lastInstant).prefix(10)
        let range = from == to ? String(from) : "\(from)_\(to)"
        return "linkpulse_\(content.kindName)_\(range).csv"
    }
}
