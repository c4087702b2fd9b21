import LinkpulseDomain

/// How far attribution and the rollups are behind the stored events, as `/v1/admin/rollup`
/// answers and `/readyz` and `/metrics` read it, on either backend (`DaemonBackend.derivedStatus`).
public struct DerivedStatus: Encodable, Sendable {
    public var storedThroughSeq: Int64
    public var countedThroughSeq: Int64
    public var backlogEvents: Int64
    /// How long the oldest uncounted event has waited (`freshness`).
    public var lagSeconds: Double { freshness.lagSeconds }
    /// Every stored event received before this instant (RFC 3339, UTC) is counted.
    public var countedThrough: String { Timestamp.formatUTC(freshness.countedThroughMs) }
    /// While a recount runs (`RecountWatch`), the events it has left; nil otherwise.
    public var recountRemainingEvents: Int64? { freshness.recountRemainingEvents }
    public var attributedThroughSeq: Int64
    public var attributionBacklogEvents: Int64
    /// Whether ingest is paced now, past which lag, and for how long it has waited in all;
    /// nil with `--ingest-pacing off`.
    public var ingestPacing: Pacing?
    /// What every stats and export answer says of its freshness.
    public var freshness: Freshness

    enum CodingKeys: String, CodingKey {
        case storedThroughSeq = "stored_through_seq", countedThroughSeq = "counted_through_seq"
        case backlogEvents = "backlog_events", lagSeconds = "lag_seconds", countedThrough = "counted_through"
        case recountRemainingEvents = "recount_remaining_events"
        case attributedThroughSeq = "attributed_through_seq", attributionBacklogEvents = "attribution_backlog_events"
        case ingestPacing = "ingest_pacing"
    }

    /// The status at `nowMs` of rollups counted through `countedThroughSeq` of the events
    /// stored through `storedThroughSeq`, `recounts` taking the reading.
    init(
        nowMs: Int64, storedThroughSeq: Int64, countedThroughSeq: Int64, backlogEvents: Int64, oldestUncountedReceivedAtMs: Int64?,
        attributedThroughSeq: Int64, attributionBacklogEvents: Int64, ingestPacing: Pacing?, recounts: RecountTracker
    ) {
        freshness = Freshness(
            nowMs: nowMs, oldestUncountedReceivedAtMs: oldestUncountedReceivedAtMs,
            recountRemainingEvents: recounts.observe(storedThroughSeq: storedThroughSeq, countedThroughSeq: countedThroughSeq))
        self.storedThroughSeq = storedThroughSeq
        self.countedThroughSeq = countedThroughSeq
        self.backlogEvents = backlogEvents
        self.attributedThroughSeq = attributedThroughSeq
        self.attributionBacklogEvents = attributionBacklogEvents
        self.ingestPacing = ingestPacing
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(storedThroughSeq, forKey: .storedThroughSeq)
        try c.encode(countedThroughSeq, forKey: .countedThroughSeq)
        try c.encode(backlogEvents, forKey: .backlogEvents)
        try c.encode(lagSeconds, forKey: .lagSeconds)
        try c.encode(countedThrough, forKey: .countedThrough)
        try c.encode(recountRemainingEvents, forKey: .recountRemainingEvents)
        try c.encode(attributedThroughSeq, forKey: .attributedThroughSeq)
        try c.encode(attributionBacklogEvents, forKey: .attributionBacklogEvents)
        try c.encodeIfPresent(ingestPacing, forKey: .ingestPacing)
    }

    /// The ingest pacer as it stands (SQLite).
    public struct Pacing: Codable, Sendable {
        public var holding: Bool
        public var commitWaiting: Bool
        public var lagLimitSeconds: Double
        public var heldSeconds: Double

        enum CodingKeys: String, CodingKey {
            case holding, commitWaiting = "commit_waiting", lagLimitSeconds = "lag_limit_seconds", heldSeconds = "held_seconds"
        }
    }
}
