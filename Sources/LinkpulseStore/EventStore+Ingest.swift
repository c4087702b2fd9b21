import Foundation
import GRDB
import LinkpulseDomain

/// What one request hands to the writer: its valid events and its rejected ones.
public struct IngestWork: Sendable {
    public var events: [IngestEvent]
    public var quarantine: [QuarantinedEvent]
    /// A person waits for this work's answer (a tap on a hosted link): ingest pacing never
    /// holds it, as it never holds a resolve.
    public var personWaiting: Bool

    public init(events: [IngestEvent], quarantine: [QuarantinedEvent], personWaiting: Bool = false) {
        self.events = events
        self.quarantine = quarantine
        self.personWaiting = personWaiting
    }
}

/// Where the ingest writer commits what requests bring: the SQLite store (`AppDatabase`) or
/// the PostgreSQL one (`PostgresStore`).
public protocol IngestStore: Sendable {
    /// Stores the events and quarantine rows of several requests in ONE transaction (group
    /// commit) and returns, per request and per event, whether it was stored or a duplicate.
    /// When it returns, everything reported `.stored` is durable; an id stored before, or
    /// earlier in `work`, is a duplicate.
    func ingest(_ work: [IngestWork]) async throws -> [[StoredOutcome]]
}

/// What became of one valid event.
public enum StoredOutcome: Sendable, Equatable {
    /// Newly stored under this seq.
    case stored(seq: Int64)
    /// Its id was already stored (earlier, or earlier in the same commit); nothing written.
    case duplicate
}

extension EventStore {
    /// Stores the events and quarantine rows of several requests in ONE transaction (group
    /// commit) and returns, per request and per event, whether it was stored or a duplicate.
    /// When this returns, everything reported `.stored` is committed with the configured
    /// durability. Exactly once: an id already stored, or seen earlier in `work`, is a
    /// duplicate. Only the ingest writer calls it, through `AppDatabase.ingest`.
    /// `committed` runs on the writer's thread right after the commit, before the caller
    /// resumes: what must follow a commit at once (waking the attribution round an app waits
    /// for) does not wait for a cooperative thread first.
    func store(
        _ work: [IngestWork], committed: @escaping @Sendable ([[StoredOutcome]]) -> Void = { _ in }
    ) async throws -> [[StoredOutcome]] {
        do {
            let outcomes = try await pool.writeWithoutTransaction { db in
                self.resetWALIfWanted(db)
                let outcomes = try self.ingestSync(db, work)
                committed(outcomes)
                return outcomes
            }
            lastIngestFailed.withLock { $0 = false }
            return outcomes
        } catch {
            lastIngestFailed.withLock { $0 = true }
            throw error
        }
    }

    func ingestSync(_ db: Database, _ work: [IngestWork]) throws -> [[StoredOutcome]] {
        tail.withLock { $0.applyPendingPrune() }
        var outcomes: [[StoredOutcome]] = []
        var added: [(key: Int64, seq: Int64)] = []
        // The writer is the dictionary cache's only user: it holds it for the whole commit.
        try dictionary.withLock { dictionary in
            do {
                try db.inTransaction(.deferred) {
                    outcomes = []
                    added = []
                    var seenInCommit: [String: Int64] = [:]
                    let insert = try db.cachedStatement(sql: queries.insertEvent)
                    let lookups = try idLookups(db)
                    let quarantine = try db.cachedStatement(sql: queries.insertQuarantine)
                    let dictionaryStatements = try EventDictionary.Statements(db, queries)
                    for request in work {
                        var results: [StoredOutcome] = []
                        results.reserveCapacity(request.events.count)
                        for event in request.events {
                            if seenInCommit[event.id] != nil {
                                results.append(.duplicate)
                                continue
                            }
                            let key = EventIdKey.of(event.id)
                            if try storedSeq(db, id: event.id, key: key, lookups) != nil {
                                results.append(.duplicate)
                                continue
                            }
                            try Self.insert(event, with: HotStatement(insert, in: db), dictionary: &dictionary, dictionaryStatements, db)
                            let seq = db.lastInsertedRowID
                            seenInCommit[event.id] = seq
                            added.append((key, seq))
                            results.append(.stored(seq: seq))
                        }
                        for rejected in request.quarantine {
                            try quarantine.execute(arguments: [
                                "received_at_ms": rejected.receivedAtMs, "event_index": rejected.index, "code": rejected.error.code,
                                "field": rejected.error.field, "message": rejected.error.message, "raw_text": rejected.rawText,
                                "raw_truncated": rejected.truncated, "user_agent": rejected.userAgent,
                            ])
                        }
                        outcomes.append(results)
                    }
                    return .commit
                }
            } catch {
                // Ids the rolled-back transaction added to the dictionary no longer exist.
                dictionary.clear()
                throw error
            }
        }
        // Only after the commit: a rolled-back insert must not look stored.
        tail.withLock { tail in
            for entry in added { tail.add(key: entry.key, seq: entry.seq) }
        }
        return outcomes
    }

    /// The seq of the event stored under exactly this id, or nil (a reader; the writer's tail
    /// and the id index, as at ingest).
    public func storedSeq(ofEventId id: String) async throws -> Int64? {
        try await pool.read { db in
            try self.storedSeq(db, id: id, key: EventIdKey.of(id), try self.idLookups(db))
        }
    }

    /// The two statements of an id lookup, prepared once per commit, and whether retention
    /// has deleted raw events (read once per commit, not once per event).
    struct IdLookups {
        let indexed: Statement
        let stored: Statement
        /// A candidate whose row is gone may be this id (see `storedSeq`).
        let expiredMayMatch: Bool
    }

    /// `IdLookups` on `db`.
    func idLookups(_ db: Database) throws -> IdLookups {
        try ensureIdFilter()
        return IdLookups(
            indexed: try db.cachedStatement(sql: queries.indexedSeqsForKey),
            stored: try db.cachedStatement(sql: queries.eventIdAtSeq),
            expiredMayMatch: rawHorizon.ms != nil)
    }

    /// The seq of the event stored with exactly this id, or nil: candidates by key from the
    /// in-memory tail and the on-disk id index, confirmed by comparing the stored id. Once
    /// retention has deleted raw events, a candidate whose row is gone counts as this id (its
    /// id can no longer be compared): an event resent after its raw row expired stays counted
    /// once. The price is a 64-bit key collision with an expired id (one new event in 2·10^10
    /// when a billion ids have expired), which is then taken for a duplicate.
    func storedSeq(_ db: Database, id: String, key: Int64, _ lookups: IdLookups) throws -> Int64? {
        var candidates = tail.withLock { $0.seqs(for: key) }
        if filter.withLock({ $0.mayContain(key) }) {
            let indexed = HotStatement(lookups.indexed, in: db)
            try indexed.bind(":id_key", key)
            try indexed.forEachInt64 { candidates.append($0) }
        }
        for seq in candidates {
            let stored = HotStatement(lookups.stored, in: db)
            try stored.bind(":seq", seq)
            switch try stored.firstText() {
            case id?: return seq
            case nil where lookups.expiredMayMatch: return seq
            default: continue
            }
        }
        return nil
    }

    /// Binds an event to `insert_event.sql`, in its compact form (texts
    /// through the dictionary), and runs it.
    static func insert(
        _ e: IngestEvent, with statement: HotStatement, dictionary: inout EventDictionary,
        _ statements: EventDictionary.Statements, _ db: Database
    ) throws {
        typealias P = InsertEventParameter
        try statement.bind(P.eventId, CompactEvent.id(e.id))
        try statement.bind(P.type, CompactEvent.code(e.kind))
        try statement.bind(P.platform, Int64(e.platform.code))
        try statement.bind(P.bot, e.isBot)
        try statement.bind(P.occurredAtMs, e.occurredAtMs)
        try statement.bind(P.receivedDelta, e.receivedAtMs - e.occurredAtMs)
        try statement.bind(P.sentDelta, e.sentAtMs.map { $0 - e.occurredAtMs })
        try statement.bind(P.ref, e.ref)
        try statement.bind(P.campaign, e.campaign)
        try statement.bind(P.source, e.source)
        try statement.bind(P.medium, e.medium)
        try statement.bind(P.deferred, e.deferred)
        try statement.bind(P.visitor, CompactEvent.visitor(e.visitorId, deviceId: e.deviceId))
        try statement.bind(P.ipHash, e.ipHash.map(CompactEvent.hash))
        try statement.bind(P.deviceId, e.deviceId.map(CompactEvent.id))
        try statement.bind(P.clickId, e.clickId.map(CompactEvent.id))
        try statement.bind(P.url, e.url)
        try statement.bind(P.referrer, e.referrer)
        try statement.bind(P.userAgent, try dictionary.textId(e.userAgent, db, statements))
        try statement.bind(P.osVersion, try dictionary.textId(e.osVersion, db, statements))
        try statement.bind(P.appVersion, try dictionary.textId(e.appVersion, db, statements))
        try statement.bind(P.botReason, try dictionary.textId(e.botReason, db, statements))
        try statement.bind(P.properties, e.propertiesJSON)
        try statement.bind(P.clickIdSource, e.clickIdSource.map { Int64($0.code) })
        try statement.bind(P.resolve, e.isResolve ? Int64(1) : nil)
        try statement.bind(P.installReferrer, e.installReferrer)
        try statement.bind(P.audience, try dictionary.textId(e.audienceText, db, statements))
        try statement.run()
    }

    /// The newest quarantined events, newest first (for operators).
    public func recentQuarantine(limit: Int) async throws -> [QuarantineRecord] {
        try await pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: self.queries.recentQuarantine), arguments: ["limit": limit]).map {
                QuarantineRecord(
                    id: $0["id"], receivedAtMs: $0["received_at_ms"], eventIndex: $0["event_index"], code: $0["code"], field: $0["field"],
                    message: $0["message"], rawText: $0["raw_text"], rawTruncated: $0["raw_truncated"], userAgent: $0["user_agent"])
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
