import Foundation
import LinkpulseDomain
import LinkpulseStore

/// Writes exports as CSV (see `CSVRows` for the format), chunk by chunk, for the HTTP
/// endpoints, `linkpulse export` and the scheduled jobs alike. Stats exports are the stats
/// API's answers (`StatsService`), so a CSV always equals the JSON for the same parameters; the
/// raw-event export is read page by page and never held whole in memory.
public struct CSVExporter: Sendable {
    let stats: StatsService
    /// The SQLite store's reader or the PostgreSQL store's.
    let reader: any RawEventSource

    /// Events per page of a raw-event export (one read transaction and one chunk each).
    static let eventsPerPage = 4096
    /// Stats rows are flushed to the sink in chunks of about this many bytes.
    static let chunkBytes = 256 << 10

    /// The columns of `events.csv`: the ingest fields, then what the server added, the audience
    /// last (empty when unknown). No IP.
    public static let eventColumns = [
        "id", "type", "timestamp", "sent_at", "received_at", "ref", "campaign", "source", "medium", "platform",
        "device_id", "click_id", "deferred", "url", "referrer", "user_agent", "os_version", "app_version",
        "properties", "bot", "bot_reason", "visitor_id", "match_type", "matched_click_id", "click_id_source",
        "install_referrer", "country", "device", "os", "os_major", "browser", "language", "referrer_host",
    ]

    public init(stats: StatsService, reader: any RawEventSource) {
        self.stats = stats
        self.reader = reader
    }

    /// Writes `content` as CSV to `sink` (gzip-compressed with `gzip`); returns the number of
    /// data rows. The sink gets chunks in order and may suspend (backpressure).
    public func write(_ content: ExportContent, gzip: Bool, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        try await write(.content(content), gzip: gzip, to: sink)
    }

    /// What `write` reads from.
    enum Source {
        case content(ExportContent)
        case started(StartedEvents)
    }

    func write(_ source: Source, gzip: Bool, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        guard gzip else { return try await write(source, to: sink) }
        let stream = GzipStream()
        let rows = try await write(source) { chunk in
            let compressed = stream.compress(chunk)
            if !compressed.isEmpty { try await sink(compressed) }
        }
        try await sink(stream.finish())
        return rows
    }

    func write(_ source: Source, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        switch source {
        case .content(let content): try await write(content, to: sink)
        case .started(let started): try await writeEvents(started, to: sink)
        }
    }

    /// A raw-event export whose first page is already read: a database that fails shows up
    /// before the first byte is sent (the HTTP endpoint answers 503 then).
    public struct StartedEvents: Sendable {
        let query: StatsQuery
        let range: RawEventQuery
        let first: (page: RawEventPage, next: RawEventCursor?)
    }

    /// Reads the first page of a raw-event export.
    public func startEvents(_ query: StatsQuery) async throws -> StartedEvents {
        let range = RawEventQuery(fromMs: query.fromMs, toMs: query.toMs, filters: query.filters, includeBots: query.includeBots)
        let first = try await reader.rawEventsPage(range, cursor: try await reader.rawEventCursor(for: range), limit: Self.eventsPerPage)
        return StartedEvents(query: query, range: range, first: first)
    }

    /// Writes a started raw-event export (see `write(_:gzip:to:)`).
    public func write(_ started: StartedEvents, gzip: Bool, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        try await write(.started(started), gzip: gzip, to: sink)
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
            return try await writeEvents(try await startEvents(query), to: sink)
        }
    }

    func flush(_ csv: inout CSVRows, to sink: (consuming [UInt8]) async throws -> Void) async throws {
        try await sink(csv.bytes)
        csv.removeAll()
    }

    /// Every stored event of the range, one page per chunk, times in the query's zone. The next
    /// page is read (on a reader connection's thread) while this one is formatted and written,
    /// so the two cores share the work; at most two pages are in memory.
    func writeEvents(_ started: StartedEvents, to sink: (consuming [UInt8]) async throws -> Void) async throws -> Int {
        var csv = CSVRows(reservingCapacity: Self.eventsPerPage * 360)
        csv.row(Self.eventColumns)
        try await sink(csv.bytes)
        let (reader, range) = (self.reader, started.range)
        let clock = ZoneClock(identifier: started.query.zone)!
        var total = 0
        var current = started.first
        while true {
            let reading = current.next.map { cursor in
                Task { try await reader.rawEventsPage(range, cursor: cursor, limit: Self.eventsPerPage) }
            }
            if current.page.count > 0 {
                csv.removeAll()
                Self.format(current.page, clock: clock, into: &csv)
                total += current.page.count
                do {
                    try await sink(csv.bytes)
                } catch {
                    reading?.cancel()
                    throw error
                }
            }
            guard let reading else { return total }
            current = try await reading.value
        }
    }

    /// Appends a page's rows in `eventColumns` order.
    static func format(_ page: RawEventPage, clock: ZoneClock, into csv: inout CSVRows) {
        // Indexes into RawEventPage.textColumns / integerColumns.
        let (id, type, dimensions, details, added, referrer, audience) = (0, 1, 2..<9, 9..<15, 15..<21, 10, 21)
        let (occurred, sent, received, deferred, bot) = (0, 1, 2, 3, 4)
        for row in 0..<page.count {
            text(page, row, id, &csv)
            text(page, row, type, &csv)
            csv.timestamp(page.integer(row: row, occurred), clock: clock)
            csv.timestamp(page.integer(row: row, sent), clock: clock)
            csv.timestamp(page.integer(row: row, received), clock: clock)
            for column in dimensions { text(page, row, column, &csv) }
            boolean(page.integer(row: row, deferred), &csv)
            for column in details { text(page, row, column, &csv) }
            boolean(page.integer(row: row, bot), &csv)
            for column in added { text(page, row, column, &csv) }
            // The audience's six fields (read from the stored text's bytes); empty cells when
            // none is known.
            page.withText(row: row, audience) { stored in
                guard let stored, stored.count(where: { $0 == 0x1F }) == 5 else {
                    for _ in 0..<6 { csv.text("") }
                    return
                }
                var start = 0
                for (i, byte) in stored.enumerated() where byte == 0x1F {
                    csv.text(utf8: UnsafeBufferPointer(rebasing: stored[start..<i]))
                    start = i + 1
                }
                csv.text(utf8: UnsafeBufferPointer(rebasing: stored[start...]))
            }
            page.withText(row: row, referrer) { bytes in
                csv.text(bytes.map(AudienceDimensions.referrerHost(utf8:)) ?? "")
            }
            csv.endRow()
        }
    }

    static func text(_ page: RawEventPage, _ row: Int, _ column: Int, _ csv: inout CSVRows) {
        page.withText(row: row, column) { bytes in
            if let bytes { csv.text(utf8: bytes) } else { csv.text(nil) }
        }
    }

    /// `true`/`false`, empty when not sent.
    static func boolean(_ value: Int64?, _ csv: inout CSVRows) {
        csv.text(value.map { $0 != 0 ? "true" : "false" })
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
