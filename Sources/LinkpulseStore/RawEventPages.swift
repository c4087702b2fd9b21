import Foundation
import GRDB
import LinkpulseDomain

/// What a raw-event export covers: events that happened in [from, to), optionally only those
/// whose stored dimensions match the filters (as sent, not as attributed), bots included or not.
public struct RawEventQuery: Sendable {
    public var fromMs: Int64
    public var toMs: Int64
    public var filters: StatsFilters
    public var includeBots: Bool

    public init(fromMs: Int64, toMs: Int64, filters: StatsFilters = StatsFilters(), includeBots: Bool = true) {
        self.fromMs = fromMs; self.toMs = toMs; self.filters = filters; self.includeBots = includeBots
    }
}

/// The columns of a raw-event export row, in the order the export queries return them.
public enum RawEventColumn: Int32, CaseIterable, Sendable {
    case seq, eventId, type, occurredAt, sentAt, receivedAt, ref, campaign, source, medium, platform
    case deviceId, clickId, deferred, url, referrer, userAgent, osVersion, appVersion, properties
    case bot, botReason, visitorId, matchType, matchedClickId, clickIdSource, installReferrer, audience
}

/// Where a raw-event export reads its pages (`events.csv`, scheduled event exports): the SQLite
/// store's `StatsReader` or the PostgreSQL store's `PostgresStatsReader`. Both read the events
/// stored when the export began in time order, then those stored meanwhile in store order.
public protocol RawEventSource: Sendable {
    /// Starts a raw-event export of `query` at the newest event stored so far; throws
    /// `ParameterError` (naming `from`) when it starts before the raw-event horizon.
    func rawEventCursor(for query: RawEventQuery) async throws -> RawEventCursor
    /// Reads the next page of at most `limit` events of `query`; returns it and the cursor to
    /// go on from (nil when the export is complete).
    func rawEventsPage(_ query: RawEventQuery, cursor: RawEventCursor, limit: Int) async throws -> (page: RawEventPage, next: RawEventCursor?)
}

/// One page of raw events copied out of the store: the integer columns as numbers, every other
/// column as UTF-8 bytes. Filled on a reader connection and formatted elsewhere, so reading the
/// next page overlaps with formatting this one.
public struct RawEventPage: Sendable {
    /// The integer columns, in this order per row.
    public static let integerColumns: [RawEventColumn] = [.occurredAt, .sentAt, .receivedAt, .deferred, .bot]
    /// The text columns, in this order per row.
    public static let textColumns: [RawEventColumn] = [
        .eventId, .type, .ref, .campaign, .source, .medium, .platform, .deviceId, .clickId, .url, .referrer,
        .userAgent, .osVersion, .appVersion, .properties, .botReason, .visitorId, .matchType, .matchedClickId, .clickIdSource,
        .installReferrer, .audience,
    ]

    /// Every text value of the page, back to back.
    var bytes: [UInt8] = []
    /// Per row and text column: where its value ends in `bytes` (it starts where the previous
    /// one ended); negative (−end − 1) for NULL.
    var ends: [Int32] = []
    /// Per row and integer column; `Int64.min` for NULL.
    var integers: [Int64] = []
    public private(set) var count = 0

    init(capacity: Int) {
        bytes.reserveCapacity(capacity * 320)
        ends.reserveCapacity(capacity * Self.textColumns.count)
        integers.reserveCapacity(capacity * Self.integerColumns.count)
    }

    mutating func append(_ s: HotStatement) {
        for column in Self.integerColumns {
            integers.append(s.isNull(column.rawValue) ? .min : s.int64(column.rawValue))
        }
        for column in Self.textColumns {
            let stored = appendText(s, column)
            ends.append(stored ? Int32(bytes.count) : -Int32(bytes.count) - 1)
        }
        count += 1
    }

    /// Appends a row given column by column: `integer` for each of `integerColumns`, `text`
    /// for each of `textColumns` (nil for NULL).
    mutating func append(integer: (RawEventColumn) throws -> Int64?, text: (RawEventColumn) throws -> String?) rethrows {
        for column in Self.integerColumns {
            integers.append(try integer(column) ?? .min)
        }
        for column in Self.textColumns {
            if let value = try text(column) {
                bytes.append(contentsOf: value.utf8)
                ends.append(Int32(bytes.count))
            } else {
                ends.append(-Int32(bytes.count) - 1)
            }
        }
        count += 1
    }

    /// Appends a text column's value to `bytes`, decoded from its stored form (see
    /// `CompactEvent`: type and platform codes, ids and visitors as bytes, a NULL visitor meaning
    /// the device id); false for NULL.
    private mutating func appendText(_ s: HotStatement, _ column: RawEventColumn) -> Bool {
        switch column {
        case .type:
            bytes.append(contentsOf: CompactEvent.kind(code: s.int64(column.rawValue)).rawValue.utf8)
            return true
        case .platform:
            bytes.append(contentsOf: Platform.fromCode(UInt8(truncatingIfNeeded: s.int64(column.rawValue))).rawValue.utf8)
            return true
        case .eventId, .deviceId, .clickId, .matchedClickId:
            return s.withStoredId(column.rawValue) { bytes.append(contentsOf: $0) } != nil
        case .matchType:
            guard let match = s.matchType(column.rawValue) else { return false }
            bytes.append(contentsOf: match.rawValue.utf8)
            return true
        case .clickIdSource:
            guard !s.isNull(column.rawValue), let source = ClickIdSource(code: Int(s.int64(column.rawValue))) else { return false }
            bytes.append(contentsOf: source.rawValue.utf8)
            return true
        case .visitorId:
            return s.withStoredVisitor(visitor: column.rawValue, device: RawEventColumn.deviceId.rawValue) { bytes.append(contentsOf: $0) } != nil
        default:
            return s.withText(column.rawValue) { bytes.append(contentsOf: $0) } != nil
        }
    }

    /// An integer column of a row; nil when NULL. `column` indexes `integerColumns`.
    public func integer(row: Int, _ column: Int) -> Int64? {
        let value = integers[row * Self.integerColumns.count + column]
        return value == .min ? nil : value
    }

    /// Calls `body` with a text column's bytes (valid only inside it), or with nil when NULL.
    /// `column` indexes `textColumns`.
    public func withText<R>(row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        let index = row * Self.textColumns.count + column
        let end = ends[index]
        if end < 0 { return body(nil) }
        let start = index == 0 ? 0 : Int(ends[index - 1] < 0 ? -ends[index - 1] - 1 : ends[index - 1])
        return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<Int(end)])) }
    }
}

/// Where a paged raw-event export stands. The events stored when the export began are read in
/// time order, then those stored meanwhile in arrival order, so that an export running beside
/// ingest neither repeats nor misses an event.
public struct RawEventCursor: Sendable {
    /// Events up to this seq (the newest when the export began) are read in time order; later
    /// ones in seq order.
    let snapshotSeq: Int64
    var inTail = false
    /// The last row read (time, seq); nil before the first page.
    var afterMs: Int64?
    var afterSeq: Int64 = -1
}

extension StatsReader: RawEventSource {
    /// Starts a raw-event export of `query` at the newest event stored so far; throws
    /// `ParameterError` (naming `from`) when it starts before the raw-event horizon.
    public func rawEventCursor(for query: RawEventQuery) async throws -> RawEventCursor {
        if let horizon = rawHorizon.ms, query.fromMs < horizon { throw ParameterError.rawEventsExpired("from", horizonMs: horizon) }
        let sql = queries.installation.maxSeq
        return RawEventCursor(snapshotSeq: try await pool.read { db in try Int64.fetchOne(db, sql: sql) ?? 0 })
    }

    /// Reads the next page of at most `limit` events of `query`; returns it and the cursor to
    /// go on from (nil when the export is complete). Each page is its own read transaction on a
    /// reader connection.
    public func rawEventsPage(
        _ query: RawEventQuery, cursor: RawEventCursor, limit: Int
    ) async throws -> (page: RawEventPage, next: RawEventCursor?) {
        let statements = queries.export
        return try await pool.read { db in
            var page = RawEventPage(capacity: limit)
            var cursor = cursor
            if !cursor.inTail {
                let s = HotStatement(try db.cachedStatement(sql: statements.eventsInTime), in: db)
                try s.bind(":after_ms", max(query.fromMs, cursor.afterMs ?? query.fromMs))
                try s.bind(":to_ms", query.toMs)
                try s.bind(":snapshot_seq", cursor.snapshotSeq)
                try s.bind(":after_seq", cursor.afterMs == nil ? -1 : cursor.afterSeq)
                try Self.bindFilters(s, query)
                try s.bind(":limit", Int64(limit))
                while try s.step() {
                    page.append(s)
                    cursor.afterMs = s.int64(RawEventColumn.occurredAt.rawValue)
                    cursor.afterSeq = s.int64(RawEventColumn.seq.rawValue)
                }
                if page.count == limit { return (page, cursor) }
                cursor.inTail = true
                cursor.afterSeq = -1
            }
            let s = HotStatement(try db.cachedStatement(sql: statements.eventsTail), in: db)
            try s.bind(":from_ms", query.fromMs)
            try s.bind(":to_ms", query.toMs)
            try s.bind(":snapshot_seq", cursor.snapshotSeq)
            try s.bind(":after_seq", cursor.afterSeq)
            try Self.bindFilters(s, query)
            try s.bind(":limit", Int64(limit - page.count))
            while try s.step() {
                page.append(s)
                cursor.afterSeq = s.int64(RawEventColumn.seq.rawValue)
            }
            return (page, page.count == limit ? cursor : nil)
        }
    }

    static func bindFilters(_ s: HotStatement, _ query: RawEventQuery) throws {
        let f = query.filters
        try s.bind(":ref", f.ref)
        try s.bind(":campaign", f.campaign)
        try s.bind(":source", f.source)
        try s.bind(":medium", f.medium)
        try s.bind(":platform", f.platform.map { Int64($0.code) })
        try s.bind(":include_bots", query.includeBots)
    }
}
