/// The parameters of a statement of `queries/` that a hot loop binds a row at a time, in the
/// order SQLite numbers them (the order their names first appear in the statement): a case a
/// parameter, named as in the SQL in camel case (`:occurred_at_ms`: `occurredAtMs`). Binding
/// through a case costs what a bare position costs, with no name looked up per row;
/// `StatementParametersTests` prepares each statement listed in `StatementParametersCatalog`
/// and compares its parameters' names. Every other statement is bound by name where it runs
/// (`HotStatement.bind(":name", …)`, or GRDB's arguments by name), and no statement of
/// `queries/` takes a parameter by position.
protocol StatementParameter: RawRepresentable<Int32>, CaseIterable, Sendable {}

extension StatementParameter {
    /// The Swift names of the statement's parameters, in order (what the catalog compares).
    static var parameterNames: [String] { allCases.map { "\($0)" } }
}

/// `attribution/insert_attribution.sql`: one event's attribution, in an attribution round.
enum InsertAttributionParameter: Int32, StatementParameter {
    case seq = 1, matchType, matchedClickSeq, candidates
}

/// `attribution/insert_ref_click.sql`: a click indexed by its ref, in an attribution round.
enum InsertRefClickParameter: Int32, StatementParameter {
    case ref = 1, occurredAtMs, seq
}

/// `attribution/insert_fingerprint_click.sql`: a click indexed by its address, in a round.
enum InsertFingerprintClickParameter: Int32, StatementParameter {
    case hour = 1, ipKey, platform, occurredAtMs, seq, osVersion
}

/// `attribution/insert_resolve_device.sql`: a device's first resolve, in a round.
enum InsertResolveDeviceParameter: Int32, StatementParameter {
    case device = 1, firstSeq
}

/// `attribution/newest_ref_click.sql`: an install's click by ref, in a round.
enum NewestRefClickParameter: Int32, StatementParameter {
    case ref = 1, atMs
}

/// `attribution/fingerprint_clicks.sql`: an install's clicks by address, in a round.
enum FingerprintClicksParameter: Int32, StatementParameter {
    case hour = 1, ipKey, platform, fromMs, throughMs
}

/// `ingest/insert_event.sql`: one event, in the ingest writer's commit (every column of
/// `event_rows` but its seq).
enum InsertEventParameter: Int32, StatementParameter {
    case eventId = 1, type, platform, bot, occurredAtMs, receivedDelta, sentDelta, ref, campaign, source
    case medium, deferred, visitor, ipHash, deviceId, clickId, url, referrer, userAgent, osVersion
    case appVersion, botReason, properties, clickIdSource, resolve, installReferrer, audience
}

/// `ingest/insert_event_id.sql`: one id of a merge into the id index.
enum InsertEventIdParameter: Int32, StatementParameter {
    case idKey = 1, seq
}

/// The parameters of a statement that takes a row's counts as a run, from `events` on, in
/// `CountedEvent`'s lane order (the rollup upserts).
protocol CountLaneParameters: StatementParameter {
    static var events: Self { get }
}

extension CountLaneParameters {
    /// The count of `CountedEvent`'s lane `lane`.
    static func lane(_ lane: Int) -> Self { Self(rawValue: events.rawValue + Int32(lane))! }
}

/// `rollup/upsert_rollup.sql`: one row of `rollups` by platform, in a rollup pass.
enum UpsertRollupParameter: Int32, CountLaneParameters {
    case grain = 1, bucket, platform, bot, ref, campaign, source, medium
    case events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens
    case installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic
    case clickVisitors
}

/// `rollup/upsert_audience_rollup.sql`: one row by audience, in a rollup pass.
enum UpsertAudienceRollupParameter: Int32, CountLaneParameters {
    case dimension = 1, grain, bucket, value, bot
    case events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens
    case installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic
    case clickVisitors
}

/// Which statement each parameter enum belongs to, for `StatementParametersTests`.
enum StatementParametersCatalog {
    /// One statement a hot loop binds through a `StatementParameter` enum: its file under
    /// `queries/`, its SQL, where it runs, and its parameters' names as the Swift side binds them.
    struct Entry {
        var file: String
        var sql: String
        var connection: StatementColumnsCatalog.Connection
        var parameters: [String]
    }

    static func entries(_ queries: SQLQueries) -> [Entry] {
        [
            Entry(file: "ingest/insert_event.sql", sql: queries.insertEvent, connection: .eventsReader, parameters: InsertEventParameter.parameterNames),
            Entry(file: "ingest/insert_event_id.sql", sql: queries.insertEventId, connection: .idIndex, parameters: InsertEventIdParameter.parameterNames),
            Entry(
                file: "attribution/insert_attribution.sql", sql: queries.attribution.insertAttribution, connection: .attribution,
                parameters: InsertAttributionParameter.parameterNames),
            Entry(
                file: "attribution/insert_ref_click.sql", sql: queries.attribution.insertRefClick, connection: .attribution,
                parameters: InsertRefClickParameter.parameterNames),
            Entry(
                file: "attribution/insert_fingerprint_click.sql", sql: queries.attribution.insertFingerprintClick, connection: .attribution,
                parameters: InsertFingerprintClickParameter.parameterNames),
            Entry(
                file: "attribution/insert_resolve_device.sql", sql: queries.attribution.insertResolveDevice, connection: .attribution,
                parameters: InsertResolveDeviceParameter.parameterNames),
            Entry(
                file: "attribution/newest_ref_click.sql", sql: queries.attribution.newestRefClick, connection: .attribution,
                parameters: NewestRefClickParameter.parameterNames),
            Entry(
                file: "attribution/fingerprint_clicks.sql", sql: queries.attribution.fingerprintClicks, connection: .attribution,
                parameters: FingerprintClicksParameter.parameterNames),
            Entry(file: "rollup/upsert_rollup.sql", sql: queries.rollup.upsertRollup, connection: .rollups, parameters: UpsertRollupParameter.parameterNames),
            Entry(
                file: "rollup/upsert_audience_rollup.sql", sql: queries.rollup.upsertAudienceRollup, connection: .rollups,
                parameters: UpsertAudienceRollupParameter.parameterNames),
        ]
    }
}
