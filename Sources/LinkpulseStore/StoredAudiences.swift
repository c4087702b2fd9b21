import GRDB
import LinkpulseDomain

/// The audiences of the stored audience texts (the `event_texts` ids of the events' `audience`
/// column), each read and parsed once: a rollup pass or a raw-event read meets a few hundred
/// distinct texts in millions of events, and parsing one per event was most of the time of a
/// question by audience read from the raw events.
struct StoredAudiences {
    /// Id 0 (and a NULL column, which reads as 0): nothing known.
    private var known: [Int64: CountedAudience] = [0: .unknown]
    private let textById: HotStatement

    /// `sql`: `rollup/audience_text.sql`.
    init(_ db: Database, sql: String) throws {
        textById = HotStatement(try db.cachedStatement(sql: sql), in: db)
    }

    /// The audience stored under `id`, its referrer host `""` (the referrer is the event's own
    /// column, not part of the text).
    mutating func audience(_ id: Int64) throws -> CountedAudience {
        if let audience = known[id] { return audience }
        try textById.bind(":id", id)
        let text = try textById.step() ? textById.text(HotStatement.onlyColumn) : nil
        textById.finish()
        let audience = CountedAudience(stored: text, referrer: nil)
        known[id] = audience
        return audience
    }

    /// The audience of an event: stored under `id`, with the host of the referrer in `row`'s
    /// column `referrer` (read from its bytes, no `String` made of the whole URL).
    mutating func audience(_ id: Int64, referrer row: HotStatement, _ referrer: some ColumnIndex) throws -> CountedAudience {
        var audience = try audience(id)
        audience.referrerHost = row.withText(referrer) { AudienceDimensions.referrerHost(utf8: $0) } ?? ""
        return audience
    }

    /// `id`'s audience when it has been read (nil when not yet).
    func read(_ id: Int64) -> CountedAudience? { known[id] }
}
