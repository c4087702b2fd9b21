import Foundation
import GRDB
import LinkpulseDomain

/// What one request hands to the writer: its valid events and its rejected ones.
public struct IngestWork: Sendable {
    public var events: [IngestEvent]
    public var quarantine: [QuarantinedEvent]

    public init(events: [IngestEvent], quarantine: [QuarantinedEvent]) {
        self.events = events
        self.quarantine = quarantine
    }
}

/// What became of one valid event.
public enum StoredOutcome: Sendable, Equatable {
    /// Newly stored under this seq.
    case stored(seq: Int64)
    /// Its id was already stored (earlier, or earlier in the same commit); nothing written.
    case duplicate
}

extension AppDatabase {
    /// Stores the events and quarantine rows of several requests in ONE transaction (group
    /// commit) and returns, per request and per event, whether it was stored or a duplicate.
    /// When this returns, everything reported `.stored` is committed with the configured
    /// durability. Exactly once: an id already stored, or seen earlier in `work`, is a duplicate.
    ///
    /// Only the ingest writer may call this (writes are serialised by the pool anyway).
    public func ingest(_ work: [IngestWork]) async throws -> [[StoredOutcome]] {
        try await pool.writeWithoutTransaction { db in
            self.resetWALIfWanted(db)
            return try self.ingestSync(db, work)
        }
    }

    func ingestSync(_ db: Database, _ work: [IngestWork]) throws -> [[StoredOutcome]] {
        tail.withLock { $0.applyPendingPrune() }
        var outcomes: [[StoredOutcome]] = []
        var added: [(key: Int64, seq: Int64)] = []
        try db.inTransaction(.deferred) {
            outcomes = []
            added = []
            var seenInCommit: [String: Int64] = [:]
            let insert = try db.cachedStatement(sql: queries.insertEvent)
            let lookups = IdLookups(
                indexed: try db.cachedStatement(sql: queries.indexedSeqsForKey),
                stored: try db.cachedStatement(sql: queries.eventIdAtSeq))
            let quarantine = try db.cachedStatement(sql: queries.insertQuarantine)
            for request in work {
                var results: [StoredOutcome] = []
                results.reserveCapacity(request.events.count)
                for event in request.events {
                    if seenInCommit[event.id] != nil {
                        results.append(.duplicate)
                        continue
                    }
                    let key = EventIdKey.of(event.id)
                    if try isStored(db, id: event.id, key: key, lookups) {
                        results.append(.duplicate)
                        continue
                    }
                    try Self.insert(event, key: key, with: HotStatement(insert, in: db))
                    let seq = db.lastInsertedRowID
                    seenInCommit[event.id] = seq
                    added.append((key, seq))
                    results.append(.stored(seq: seq))
                }
                for rejected in request.quarantine {
                    try quarantine.execute(arguments: [
                        rejected.receivedAtMs, rejected.index, rejected.error.code, rejected.error.field,
                        rejected.error.message, rejected.rawText, rejected.truncated, rejected.userAgent,
                    ])
                }
                outcomes.append(results)
            }
            return .commit
        }
        // Only after the commit: a rolled-back insert must not look stored.
        tail.withLock { tail in
            for entry in added { tail.add(key: entry.key, seq: entry.seq) }
        }
        return outcomes
    }

    /// Whether an event with exactly this id is stored: candidates by key from the in-memory
    /// tail and the on-disk id index, confirmed by comparing the stored id.
    /// The two statements of an id lookup, prepared once per commit.
    struct IdLookups {
        let indexed: Statement
        let stored: Statement
    }

    func isStored(_ db: Database, id: String, key: Int64, _ lookups: IdLookups) throws -> Bool {
        var candidates = tail.withLock { $0.seqs(for: key) }
        if filter.withLock({ $0.mayContain(key) }) {
            let indexed = HotStatement(lookups.indexed, in: db)
            indexed.bind(1, key)
            try indexed.forEachInt64 { candidates.append($0) }
        }
        for seq in candidates {
            let stored = HotStatement(lookups.stored, in: db)
            stored.bind(1, seq)
            if try stored.firstText() == id { return true }
        }
        return false
    }

    /// Binds an event to `insert_event.sql` in its parameter order and runs it.
    static func insert(_ e: IngestEvent, key: Int64, with statement: HotStatement) throws {
        statement.bind(1, e.id)
        statement.bind(2, key)
        statement.bind(3, e.kind.rawValue)
        statement.bind(4, e.occurredAtMs)
        statement.bind(5, e.receivedAtMs)
        statement.bind(6, e.sentAtMs)
        statement.bind(7, e.ref)
        statement.bind(8, e.campaign)
        statement.bind(9, e.source)
        statement.bind(10, e.medium)
        statement.bind(11, e.platform.rawValue)
        statement.bind(12, e.deviceId)
        statement.bind(13, e.clickId)
        statement.bind(14, e.deferred)
        statement.bind(15, e.url)
        statement.bind(16, e.referrer)
        statement.bind(17, e.userAgent)
        statement.bind(18, e.ipHash)
        statement.bind(19, e.visitorId)
        statement.bind(20, e.osVersion)
        statement.bind(21, e.appVersion)
        statement.bind(22, e.propertiesJSON)
        statement.bind(23, e.isBot)
        statement.bind(24, e.botReason)
        try statement.run()
    }

    /// The newest quarantined events, newest first (for operators).
    public func recentQuarantine(limit: Int) async throws -> [QuarantineRecord] {
        try await pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: self.queries.recentQuarantine), arguments: [limit]).map {
                QuarantineRecord(
                    id: $0[0], receivedAtMs: $0[1], eventIndex: $0[2], code: $0[3], field: $0[4],
                    message: $0[5], rawText: $0[6], rawTruncated: $0[7], userAgent: $0[8])
            }
        }
    }
}

/// One row of the quarantine table.
public struct QuarantineRecord: Sendable, Codable, Equatable {
    public var id: Int64
    public var receivedAtMs: Int64
    public var eventIndex: Int?
    public var code: String
    public var field: String?
    public var message: String
    public var rawText: String
    public var rawTruncated: Bool
    public var userAgent: String?

    enum CodingKeys: String, CodingKey {
        case id, receivedAtMs = "received_at_ms", eventIndex = "event_index", code, field, message
        case rawText = "raw_text", rawTruncated = "raw_truncated", userAgent = "user_agent"
    }
}
