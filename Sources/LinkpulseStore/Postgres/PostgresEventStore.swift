import Foundation
import LinkpulseDomain
import Logging
import PostgresNIO

/// Raw events, the ids they were stored under, and the quarantine, in PostgreSQL: the part of
/// `PostgresStore` the ingest writer writes. Exactly once across daemons: an id is stored once,
/// whichever daemon receives it, concurrently or later (`lp_event_ids`), and seqs follow commit
/// order across daemons (see `queries/postgres/migrations/0001_events.sql`).
public struct PostgresEventStore: Sendable {
    let client: PostgresClient
    let queries: PostgresQueries
    let logger: Logger

    /// Stores the events and quarantine rows of several requests in ONE transaction (group
    /// commit, committed with `synchronous_commit` on) and returns, per request and per event,
    /// whether it was stored or a duplicate: an id stored before by any daemon, or earlier in
    /// `work`, is a duplicate. The same contract as the SQLite store's `EventStore.store`.
    ///
    /// - Parameter progress: an installation value (key, value) to set in the same transaction
    ///   (how far `linkpulse copy` has come).
    public func store(_ work: [IngestWork], progress: (key: String, value: String)? = nil) async throws -> [[StoredOutcome]] {
        let commit = IngestCommit(work)
        let (firstSeq, storedOrdinals) = try await client.withTransaction(logger: logger) { connection in
            var stored: Set<Int64> = []
            var firstSeq: Int64 = 0
            if !commit.unique.isEmpty {
                for try await next in try await connection.query(queries.ingest.lockSeq.query(), logger: logger).decode(Int64.self) {
                    firstSeq = next
                }
                let rows = try await connection.query(
                    queries.ingest.insertEvents.query(["events": commit.eventsJSON(), "first_seq": firstSeq]), logger: logger)
                for try await seq in rows.decode(Int64.self) { stored.insert(seq - firstSeq) }
                try await connection.query(
                    queries.ingest.advanceSeq.query(["next_seq": firstSeq + Int64(commit.unique.count)]), logger: logger)
                if commit.unique.contains(where: \.isResolve) {
                    // An app waits for the answer: the daemon doing attribution hears it at commit.
                    try await connection.query(queries.attribution.notify.query(["payload": PostgresDerivedWork.resolveNotice]), logger: logger)
                }
            }
            if commit.hasQuarantine {
                try await connection.query(queries.ingest.insertQuarantine.query(["rows": commit.quarantineJSON()]), logger: logger)
            }
            if let progress {
                try await connection.query(queries.schema.setInstallationValue.query(["key": progress.key, "value": progress.value]), logger: logger)
            }
            return (firstSeq, stored)
        }
        return commit.outcomes(firstSeq: firstSeq, stored: storedOrdinals)
    }

    /// The seq of the event stored under exactly this id, or nil.
    public func storedSeq(ofEventId id: String) async throws -> Int64? {
        for try await seq in try await client.query(queries.ingest.storedSeq.query(["event_id": id]), logger: logger).decode(Int64.self) {
            return seq
        }
        return nil
    }

    /// Up to `limit` stored events with a seq above `afterSeq`, in seq order, as they were
    /// validated (what the derived work replays and a copy reads).
    public func events(afterSeq: Int64, limit: Int) async throws -> [(seq: Int64, event: IngestEvent)] {
        try await client.withConnection { connection in
            try await Self.events(after: afterSeq, limit: limit, sql: queries.ingest.eventsAfter, on: connection, logger: logger)
        }
    }

    /// `events(afterSeq:limit:)` on `connection` (inside its transaction, when it has one).
    static func events(
        after afterSeq: Int64, limit: Int, sql: PostgresStatement, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(seq: Int64, event: IngestEvent)] {
        let rows = try await connection.query(sql.query(["after_seq": afterSeq, "limit": Int64(limit)]), logger: logger)
        var events: [(seq: Int64, event: IngestEvent)] = []
        for try await row in rows {
            let c = row.makeRandomAccess()
            typealias E = PostgresEventColumn
            var event = IngestEvent(
                id: try c[E.eventId].decode(String.self), kind: CompactEvent.kind(code: Int64(try c[E.type].decode(Int16.self))),
                occurredAtMs: try c[E.occurredAtMs].decode(Int64.self), receivedAtMs: try c[E.receivedAtMs].decode(Int64.self),
                sentAtMs: try c[E.sentAtMs].decode(Int64?.self),
                ref: try c[E.ref].decode(String?.self), campaign: try c[E.campaign].decode(String?.self), source: try c[E.source].decode(String?.self),
                medium: try c[E.medium].decode(String?.self), platform: Platform.fromCode(UInt8(truncatingIfNeeded: try c[E.platform].decode(Int16.self))),
                deviceId: try c[E.deviceId].decode(String?.self), clickId: try c[E.clickId].decode(String?.self),
                clickIdSource: try c[E.clickIdSource].decode(Int16?.self).flatMap { ClickIdSource(code: Int($0)) },
                deferred: try c[E.deferred].decode(Bool?.self), url: try c[E.url].decode(String?.self), referrer: try c[E.referrer].decode(String?.self),
                userAgent: try c[E.userAgent].decode(String?.self), ipHash: try c[E.ipHash].decode(String?.self),
                visitorId: try c[E.visitorId].decode(String.self),
                osVersion: try c[E.osVersion].decode(String?.self), appVersion: try c[E.appVersion].decode(String?.self),
                propertiesJSON: try c[E.properties].decode(String?.self), botReason: try c[E.botReason].decode(String?.self),
                installReferrer: try c[E.installReferrer].decode(String?.self))
            event.isResolve = try c[E.resolve].decode(Bool.self)
            event.audienceText = try c[E.audience].decode(String?.self)
            events.append((try c[E.seq].decode(Int64.self), event))
        }
        return events
    }

    /// Deletes the quarantined events received before `beforeMs`, `batch` rows a statement
    /// (ingest commits between them); returns how many it deleted.
    @discardableResult
    public func deleteQuarantine(receivedBefore beforeMs: Int64, batch: Int = 10_000) async throws -> Int {
        var deleted = 0
        while true {
            var count = 0
            let rows = try await client.query(queries.ingest.deleteOldQuarantine.query(["before_ms": beforeMs, "batch": Int64(batch)]), logger: logger)
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            deleted += count
            if count < batch { return deleted }
        }
    }

    /// The newest quarantined events, newest first (for operators).
    public func recentQuarantine(limit: Int) async throws -> [QuarantineRecord] {
        let rows = try await client.query(queries.ingest.recentQuarantine.query(["limit": Int64(limit)]), logger: logger)
        var records: [QuarantineRecord] = []
        for try await row in rows {
            let c = row.makeRandomAccess()
            typealias Q = PostgresQuarantineColumn
            records.append(QuarantineRecord(
                id: try c[Q.id].decode(Int64.self), receivedAtMs: try c[Q.receivedAtMs].decode(Int64.self),
                eventIndex: try c[Q.eventIndex].decode(Int32?.self).map(Int.init),
                code: try c[Q.code].decode(String.self), field: try c[Q.field].decode(String?.self), message: try c[Q.message].decode(String.self),
                rawText: try c[Q.rawText].decode(String.self), rawTruncated: try c[Q.rawTruncated].decode(Bool.self),
                userAgent: try c[Q.userAgent].decode(String?.self)))
        }
        return records
    }
}

/// One group commit's events as the PostgreSQL writer sends them: every id once (the first
/// occurrence in the commit; later ones are duplicates without asking the database), numbered
/// by ordinal, written as the JSON arrays `insert_events.sql` and `insert_quarantine.sql` read.
struct IngestCommit: Sendable {
    let work: [IngestWork]
    /// The first occurrence of each id, in order; an event's ordinal is its index here.
    let unique: [IngestEvent]
    /// For each request and event: its ordinal, or nil when its id came earlier in the commit.
    let ordinals: [[Int64?]]

    init(_ work: [IngestWork]) {
        self.work = work
        var seen: [String: Int64] = [:]
        var unique: [IngestEvent] = []
        ordinals = work.map { request in
            request.events.map { event in
                guard seen[event.id] == nil else { return nil }
                let ordinal = Int64(unique.count)
                seen[event.id] = ordinal
                unique.append(event)
                return ordinal
            }
        }
        self.unique = unique
    }

    var hasQuarantine: Bool { work.contains { !$0.quarantine.isEmpty } }

    /// Per request and event: stored under `firstSeq` + its ordinal when the ordinal is in
    /// `stored`, else a duplicate.
    func outcomes(firstSeq first: Int64, stored: Set<Int64>) -> [[StoredOutcome]] {
        ordinals.map { request in
            request.map { ordinal in
                guard let ordinal, stored.contains(ordinal) else { return .duplicate }
                return .stored(seq: first + ordinal)
            }
        }
    }

    /// The unique events as `insert_events.sql` reads them.
    func eventsJSON() -> String {
        var out = JSONObjects(capacity: unique.count * 420)
        for (ordinal, e) in unique.enumerated() {
            out.open()
            out.member("ordinal", Int64(ordinal))
            out.member("event_id", e.id)
            out.member("type", CompactEvent.code(e.kind))
            out.member("platform", Int64(e.platform.code))
            out.member("bot", e.isBot)
            out.member("occurred_at_ms", e.occurredAtMs)
            out.member("received_at_ms", e.receivedAtMs)
            out.member("sent_at_ms", e.sentAtMs)
            out.member("ref", e.ref)
            out.member("campaign", e.campaign)
            out.member("source", e.source)
            out.member("medium", e.medium)
            out.member("deferred", e.deferred)
            out.member("visitor_id", e.visitorId)
            out.member("ip_hash", e.ipHash)
            out.member("device_id", e.deviceId)
            out.member("click_id", e.clickId)
            out.member("click_id_source", e.clickIdSource.map { Int64($0.code) })
            out.member("resolve", e.isResolve)
            out.member("url", e.url)
            out.member("referrer", e.referrer)
            out.member("user_agent", e.userAgent)
            out.member("os_version", e.osVersion)
            out.member("app_version", e.appVersion)
            out.member("bot_reason", e.botReason)
            out.member("properties", e.propertiesJSON)
            out.member("install_referrer", e.installReferrer)
            out.member("audience", e.audienceText)
            out.close()
        }
        return out.text
    }

    /// `text` with each U+0000 as U+FFFD: PostgreSQL's text cannot hold U+0000. Events never
    /// carry one (validation refuses it); a rejected body kept in quarantine may.
    static func storable(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
    }

    /// The quarantined events as `insert_quarantine.sql` reads them.
    func quarantineJSON() -> String {
        var out = JSONObjects(capacity: 512)
        for rejected in work.flatMap(\.quarantine) {
            out.open()
            out.member("received_at_ms", rejected.receivedAtMs)
            out.member("event_index", rejected.index.map(Int64.init))
            out.member("code", rejected.error.code)
            out.member("field", rejected.error.field)
            out.member("message", Self.storable(rejected.error.message))
            out.member("raw_text", Self.storable(rejected.rawText))
            out.member("raw_truncated", rejected.truncated)
            out.member("user_agent", rejected.userAgent)
            out.close()
        }
        return out.text
    }
}

/// A JSON array of flat objects, written member by member (a nil value is left out, which
/// `json_to_recordset` reads as NULL).
struct JSONObjects {
    private var bytes: [UInt8] = [UInt8(ascii: "[")]
    private var firstObject = true
    private var firstMember = true

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func open() {
        if !firstObject { bytes.append(UInt8(ascii: ",")) }
        firstObject = false
        firstMember = true
        bytes.append(UInt8(ascii: "{"))
    }

    mutating func close() { bytes.append(UInt8(ascii: "}")) }

    private mutating func name(_ name: String) {
        if !firstMember { bytes.append(UInt8(ascii: ",")) }
        firstMember = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: "\":".utf8)
    }

    mutating func member(_ key: String, _ value: String?) {
        guard let value else { return }
        name(key)
        JSONText.appendString(value, to: &bytes)
    }

    mutating func member(_ key: String, _ value: Int64?) {
        guard let value else { return }
        name(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ key: String, _ value: Bool?) {
        guard let value else { return }
        name(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    var text: String { String(decoding: bytes + [UInt8(ascii: "]")], as: UTF8.self) }
}
