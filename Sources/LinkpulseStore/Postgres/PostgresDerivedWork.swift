import Foundation
import LinkpulseDomain
import Logging
import PostgresNIO
import Synchronization

/// The work derived from raw events on PostgreSQL (attribution, then the rollups), done by one
/// daemon at a time: the one whose connection holds the derived-work advisory lock.
///
/// Every daemon has one. At each `tick` (its timer's) it makes sure it has a connection of its
/// own (not from the pool: the lock belongs to the session), tries the lock if it does not hold
/// it, and when it does, attributes new events and counts the attributed ones into the rollups,
/// in rounds, each round one transaction on that connection with its watermark in
/// `lp_derived_state`. A daemon that dies ends its session, which frees the lock: another takes
/// over at its next tick and goes on from the watermarks, so no event is attributed or counted
/// twice or skipped, and one that lost its connection can write nothing more (its transactions
/// were on it).
///
/// The connection also listens on the derived-work channel (`attribution/notify.sql`): an
/// ingest commit that stored a `/v1/resolve` event wakes the leader at once (`whenWoken`),
/// and each round's watermark wakes the requests of every daemon waiting for an answer
/// (`progress`). Notices only make things sooner: a daemon that misses one still finds the
/// watermark in the database.
public final class PostgresDerivedWork: Sendable {
    let location: PostgresLocation
    let queries: PostgresQueries
    let attributor: Attributor
    let roundSize: Int
    let logger: Logger
    /// How far attribution has come as this daemon heard it, and the requests waiting for it.
    let progress = AttributionProgress()
    /// How far the rollups (what stats count) have come as this daemon heard it, and who waits.
    let counted = AttributionProgress()
    private let state = Mutex<Session?>(nil)
    private let woken = Mutex<(@Sendable () -> Void)?>(nil)
    private let retention = Mutex<RetentionSchedule?>(nil)

    /// Raw-event retention: how often, the horizon to delete before (nil: nothing now), and
    /// when it last ran.
    struct RetentionSchedule: Sendable {
        let every: Duration
        let horizon: @Sendable () async throws -> Int64?
        var last: ContinuousClock.Instant?
    }

    /// The channel of `attribution/notify.sql`.
    static let channel = "linkpulse_derived"
    /// The notice of an ingest commit that stored a resolve.
    static let resolveNotice = "resolve"
    /// The notice of a request that wants every stored event attributed now.
    static let wakeNotice = "wake"
    /// The prefix of a rollup round's notice (its watermark follows).
    static let countedNotice = "counted:"

    /// The connection, whether it holds the lock, and the task hearing its notices.
    struct Session: Sendable {
        let connection: PostgresConnection
        var leading: Bool
        let listening: Task<Void, Never>
    }

    /// What a tick did.
    public enum Outcome: Sendable, Equatable {
        /// Another daemon holds the lock.
        case standby
        /// This daemon leads; it attributed this many events and counted this many into the
        /// rollups (0 and 0: nothing new).
        case led(attributed: Int, counted: Int)
    }

    init(location: PostgresLocation, queries: PostgresQueries, attributionWindowMs: Int64, roundSize: Int, logger: Logger) {
        self.location = location
        self.queries = queries
        attributor = Attributor(windowMs: attributionWindowMs)
        self.roundSize = roundSize
        self.logger = logger
    }

    /// Whether this daemon does the derived work now (its connection holds the lock, as far as
    /// it knows): the daemon that runs the scheduled exports.
    public var isLeading: Bool {
        state.withLock { $0.map { $0.leading && !$0.connection.isClosed } ?? false }
    }

    /// Calls `handler` whenever this daemon leads and hears that an ingest commit (any daemon's)
    /// stored a `/v1/resolve` event, or that a request wants every stored event attributed:
    /// the daemon's job then runs a tick now rather than at its next timer, so the app gets its
    /// answer within milliseconds.
    public func whenWoken(_ handler: @escaping @Sendable () -> Void) {
        woken.withLock { $0 = handler }
    }

    /// Has the daemon, while it leads, delete the raw events before `horizon()` (when it gives
    /// one) every `interval`, between its rounds (`pruneRawEvents`): `--retention-days`.
    public func retainRawEvents(every interval: Duration, horizon: @escaping @Sendable () async throws -> Int64?) {
        retention.withLock { $0 = RetentionSchedule(every: interval, horizon: horizon, last: nil) }
    }

    /// The answers of one replay of `events` (every stored event, in seq order) through the
    /// rules with this window: what the rounds must have stored, for checks and tests.
    public static func replay(_ events: [(seq: Int64, event: IngestEvent)], windowMs: Int64) throws -> [PostgresAttributionRecord] {
        try ReplayRound(events: events).decide(ReplayRound.EarlierClicks(), attributor: Attributor(windowMs: windowMs)).attributions.map {
            PostgresAttributionRecord(
                seq: $0.seq, match: $0.attribution.match, clickSeq: $0.attribution.clickSeq,
                candidates: $0.attribution.match == .fingerprint ? $0.attribution.candidates : nil)
        }
    }

    /// Connects if needed, leads if it can, and attributes and counts into the rollups until
    /// caught up or `budget` has passed (the rest waits for the next tick). A failure closes the
    /// connection, so the lock is free for others, and is thrown. Not to be called while a tick is under way (its
    /// rounds share the one connection): the daemon's timer job runs one at a time.
    @discardableResult
    public func tick(budget: Duration = .seconds(5)) async throws -> Outcome {
        do {
            var session = try await currentSession()
            if !session.leading {
                session.leading = try await tryLead(session.connection)
                state.withLock { $0?.leading = session.leading }
                if session.leading { logger.notice("this daemon now does the derived work (attribution)") }
            }
            guard session.leading else { return .standby }
            let deadline = ContinuousClock.now + budget
            var (attributed, rolledUp) = (0, 0)
            // A round of each in turn, so that the stats keep pace with attribution under a
            // backlog; attribution first, since an app may be waiting for an answer.
            repeat {
                let (count, through) = try await attributeRound(on: session.connection)
                progress.advance(to: through)
                attributed += count
                let (rolled, counted) = try await rollupRound(on: session.connection)
                self.counted.advance(to: counted)
                rolledUp += rolled
                if count < roundSize && rolled < roundSize { break }
            } while ContinuousClock.now < deadline
            try await retainIfDue()
            return .led(attributed: attributed, counted: rolledUp)
        } catch {
            await stop()
            throw error
        }
    }

    /// Runs retention when its interval has passed since the last run.
    func retainIfDue() async throws {
        let now = ContinuousClock.now
        let due = retention.withLock { r -> (@Sendable () async throws -> Int64?)? in
            guard let current = r, current.last.map({ now - $0 >= current.every }) ?? true else { return nil }
            r?.last = now
            return current.horizon
        }
        guard let due, let horizon = try await due() else { return }
        let outcome = try await pruneRawEvents(before: horizon)
        if !outcome.droppedMonths.isEmpty || outcome.deletedDefaultEvents > 0 {
            logger.info("deleted raw events before the retention horizon", metadata: [
                "horizon": "\(Timestamp.formatUTC(horizon))", "months": "\(outcome.droppedMonths)", "default_rows": "\(outcome.deletedDefaultEvents)",
            ])
        }
    }

    /// Closes the connection (freeing the lock when held).
    public func stop() async {
        let session = state.withLock { session in
            defer { session = nil }
            return session
        }
        session?.listening.cancel()
        try? await session?.connection.close()
    }

    func currentSession() async throws -> Session {
        if let session = state.withLock({ $0 }), !session.connection.isClosed { return session }
        let connection = try await PostgresConnection.connect(
            configuration: location.connectionConfiguration, id: Int.random(in: 1...Int.max), logger: logger)
        let listening: Task<Void, Never>
        do {
            listening = try await listen(on: connection)
        } catch {
            try? await connection.close()
            throw error
        }
        let session = Session(connection: connection, leading: false, listening: listening)
        state.withLock { $0 = session }
        return session
    }

    /// Starts hearing the derived-work channel on `connection` and returns once the server
    /// listens (the task ends when the connection closes or the task is cancelled).
    func listen(on connection: PostgresConnection) async throws -> Task<Void, Never> {
        let (started, ready) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        let task = Task { [weak self, logger] in
            do {
                try await connection.listen(on: Self.channel) { notices in
                    ready.yield(.success(()))
                    for try await notice in notices { self?.heard(notice.payload) }
                }
            } catch {
                ready.yield(.failure(error))
                if !Task.isCancelled { logger.debug("stopped hearing derived-work notices", metadata: ["error": "\(error)"]) }
            }
            ready.finish()
        }
        for await outcome in started {
            try outcome.get()
            break
        }
        return task
    }

    /// One notice of the channel: a resolve stored or a wake (the leader ticks now), or a
    /// watermark.
    func heard(_ payload: String) {
        if payload == Self.resolveNotice || payload == Self.wakeNotice {
            guard state.withLock({ $0?.leading ?? false }) else { return }
            woken.withLock { $0 }?()
        } else if let through = Int64(payload) {
            progress.advance(to: through)
        } else if payload.hasPrefix(Self.countedNotice), let through = Int64(payload.dropFirst(Self.countedNotice.count)) {
            counted.advance(to: through)
        }
    }

    func tryLead(_ connection: PostgresConnection) async throws -> Bool {
        for try await held in try await connection.query(queries.attribution.tryLead.query(), logger: logger).decode(Bool.self) {
            return held
        }
        return false
    }

    /// Attributes up to `roundSize` events after the watermark in one transaction, and tells
    /// every daemon the new watermark when it commits; how many events it read, and the seq
    /// through which every event is attributed.
    func attributeRound(on connection: PostgresConnection) async throws -> (count: Int, through: Int64) {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query(queries.attribution.roundCommitMode.query(), logger: logger)
            var through: Int64 = 0
            for try await seq in try await connection.query(queries.attribution.state.query(), logger: logger).decode(Int64.self) {
                through = seq
            }
            let events = try await PostgresEventStore.events(
                after: through, limit: roundSize, sql: queries.ingest.eventsAfter, on: connection, logger: logger)
            guard let last = events.last?.seq else { return (0, through) }
            let round = ReplayRound(events: events)
            let earlier = try await earlierClicks(round.queries(windowMs: attributor.windowMs), on: connection)
            let decisions = try round.decide(earlier, attributor: attributor)
            try await write(decisions, on: connection)
            try await connection.query(queries.attribution.advance.query(["seq": last]), logger: logger)
            try await connection.query(queries.attribution.notify.query(["payload": String(last)]), logger: logger)
            return (events.count, last)
        }
    }

    /// Counts up to `roundSize` attributed events after the rollups' watermark into the rollup
    /// rows, in one transaction that moves the watermark, and tells every daemon when it
    /// commits; how many events it counted, and the seq through which every event is counted.
    func rollupRound(on connection: PostgresConnection) async throws -> (count: Int, through: Int64) {
        let q = queries.rollups
        return try await connection.withTransaction(logger: logger) { connection in
            try await connection.query(queries.attribution.roundCommitMode.query(), logger: logger)
            var (through, attributed): (Int64, Int64) = (0, 0)
            for try await c in try await connection.query(q.state.query(), logger: logger).byName() {
                (through, attributed) = (try c.decode(PostgresRollupStateColumn.countedThroughSeq), try c.decode(PostgresRollupStateColumn.attributedThroughSeq))
            }
            guard attributed > through else { return (0, through) }
            var cells = RollupCells()
            var count = 0
            var last = through
            for try await row in try await connection.query(q.events.query(["after_seq": through, "through_seq": attributed, "limit": Int64(roundSize)]), logger: logger) {
                let c = row.makeRandomAccess()
                let (event, occurredAtMs) = try PostgresStatsReader.countedEvent(c)
                cells.add(event, occurredAtMs: occurredAtMs)
                last = try c[PostgresCountedEventColumn.seq].decode(Int64.self)
                count += 1
            }
            guard count > 0 else { return (0, through) }
            let keys = Array(cells.counts.keys)
            let selection = try q.cells.query([
                "dimensions": keys.map(\.dimension), "grains": keys.map(\.grain), "buckets": keys.map(\.bucketMs),
                "values": keys.map(\.value), "platforms": keys.map(\.platform), "bots": keys.map(\.bot),
            ])
            for try await row in try await connection.query(selection, logger: logger) {
                let c = row.makeRandomAccess()
                typealias R = PostgresRollupCellColumn
                let key = RollupCells.Key(
                    dimension: try c[R.dimension].decode(Int16.self), grain: try c[R.grain].decode(Int16.self),
                    bucketMs: try c[R.bucketMs].decode(Int64.self), value: try c[R.value].decode(String.self),
                    platform: try c[R.platform].decode(Int16.self), bot: try c[R.bot].decode(Bool.self))
                var stored = ConversionCounts(row: try R.counts.map { try c[$0].decode(Int64.self) })
                let sketch = try c[R.visitors].decode(ByteBuffer.self)
                if sketch.readableBytes > 0 { sketch.withUnsafeReadableBytes { stored.clickVisitors.merge(serialized: $0) } }
                cells.merge(stored: stored, into: key)
            }
            try await connection.query(q.upsert.query(binding: Self.rows(cells)), logger: logger)
            try await connection.query(q.advance.query(["seq": last]), logger: logger)
            try await connection.query(queries.attribution.notify.query(["payload": Self.countedNotice + String(last)]), logger: logger)
            return (count, last)
        }
    }

    /// The cells as the twenty-two arrays of `rollups/upsert.sql`, by name.
    static func rows(_ cells: RollupCells) -> [(name: String, value: PostgresStatement.Value)] {
        let entries = Array(cells.counts)
        var values: [(name: String, value: PostgresStatement.Value)] = [
            ("dimensions", entries.map(\.key.dimension)), ("grains", entries.map(\.key.grain)), ("buckets", entries.map(\.key.bucketMs)),
            ("values", entries.map(\.key.value)), ("platforms", entries.map(\.key.platform)), ("bots", entries.map(\.key.bot)),
        ]
        let counts = entries.map(\.value)
        let rows = counts.map(\.row)
        for (column, name) in ConversionCounts.rowColumns.enumerated() { values.append((name, rows.map { $0[column] })) }
        values.append(("visitors", counts.map { $0.clicks == 0 ? ByteBuffer() : ByteBuffer(bytes: $0.clickVisitors.serialized) }))
        return values
    }

    /// The clicks of earlier rounds a round asks for, in three queries.
    func earlierClicks(_ wanted: ReplayRound.ClickQueries, on connection: PostgresConnection) async throws -> ReplayRound.EarlierClicks {
        var earlier = ReplayRound.EarlierClicks()
        let q = queries.attribution
        if !wanted.ids.isEmpty {
            let rows = try await connection.query(q.clicksById.query(["ids": Array(wanted.ids)]), logger: logger)
            typealias C = PostgresClickByIdColumn
            for try await c in rows.byName() {
                earlier.byId[try c.decode(C.eventId)] = KnownClick(
                    seq: try c.decode(C.seq), occurredAtMs: try c.decode(C.occurredAtMs),
                    dimensions: LinkDimensions(
                        ref: try c.decode(C.ref), campaign: try c.decode(C.campaign), source: try c.decode(C.source), medium: try c.decode(C.medium)),
                    osVersion: osMajorMinor(try c.decode(C.osVersion)))
            }
        }
        if !wanted.newestByRef.isEmpty {
            let pairs = Array(wanted.newestByRef)
            let rows = try await connection.query(q.newestRefClicks.query(["refs": pairs.map(\.ref), "at_ms": pairs.map(\.atMs)]), logger: logger)
            typealias C = PostgresRefClickColumn
            for try await c in rows.byName() {
                earlier.byRef.append(KnownClick(
                    seq: try c.decode(C.seq), occurredAtMs: try c.decode(C.occurredAtMs),
                    dimensions: LinkDimensions(
                        ref: try c.decode(C.ref, as: String.self), campaign: try c.decode(C.campaign), source: try c.decode(C.source),
                        medium: try c.decode(C.medium))))
            }
        }
        if !wanted.windows.isEmpty {
            let windows = Array(wanted.windows)
            let rows = try await connection.query(
                q.fingerprintClicks.query([
                    "ip_keys": windows.map(\.fingerprint.ipKey), "platforms": windows.map { Int16($0.fingerprint.platform.code) },
                    "from_ms": windows.map(\.fromMs), "through_ms": windows.map(\.throughMs),
                ]),
                logger: logger)
            for try await row in rows {
                let c = row.makeRandomAccess()
                typealias F = PostgresFingerprintClickColumn
                let fingerprint = Fingerprint(
                    ipKey: try c[F.ipKey].decode(Int64.self), platform: Platform.fromCode(UInt8(truncatingIfNeeded: try c[F.platform].decode(Int16.self))))
                let click = KnownClick(
                    seq: try c[F.seq].decode(Int64.self), occurredAtMs: try c[F.occurredAtMs].decode(Int64.self),
                    dimensions: LinkDimensions(
                        ref: try c[F.ref].decode(String?.self), campaign: try c[F.campaign].decode(String?.self),
                        source: try c[F.source].decode(String?.self), medium: try c[F.medium].decode(String?.self)),
                    osVersion: try c[F.osVersion].decode(String?.self))
                earlier.byFingerprint.append((fingerprint, click))
            }
        }
        return earlier
    }

    /// Writes a round's answers and its clicks' index rows.
    func write(_ decisions: ReplayRound.Decisions, on connection: PostgresConnection) async throws {
        let q = queries.attribution
        if !decisions.attributions.isEmpty {
            var out = JSONObjects(capacity: decisions.attributions.count * 64)
            for (seq, a) in decisions.attributions {
                out.open()
                out.member("seq", seq)
                out.member("match_type", a.match.rawValue)
                out.member("matched_click_seq", a.clickSeq)
                out.member("candidates", a.match == .fingerprint ? Int64(a.candidates) : nil)
                out.member("ref", a.dimensions.ref)
                out.member("campaign", a.dimensions.campaign)
                out.member("source", a.dimensions.source)
                out.member("medium", a.dimensions.medium)
                out.close()
            }
            try await connection.query(q.insertAttributions.query(["rows": out.text]), logger: logger)
        }
        if !decisions.firstResolves.isEmpty {
            var out = JSONObjects(capacity: decisions.firstResolves.count * 64)
            for (device, seq) in decisions.firstResolves {
                out.open()
                out.member("device", device)
                out.member("first_seq", seq)
                out.close()
            }
            try await connection.query(q.insertResolveDevices.query(["rows": out.text]), logger: logger)
        }
        if !decisions.refClicks.isEmpty {
            var out = JSONObjects(capacity: decisions.refClicks.count * 96)
            for click in decisions.refClicks {
                out.open()
                out.member("ref", click.dimensions.ref)
                out.member("occurred_at_ms", click.occurredAtMs)
                out.member("seq", click.seq)
                out.member("campaign", click.dimensions.campaign)
                out.member("source", click.dimensions.source)
                out.member("medium", click.dimensions.medium)
                out.close()
            }
            try await connection.query(q.insertRefClicks.query(["rows": out.text]), logger: logger)
        }
        if !decisions.fingerprintClicks.isEmpty {
            var out = JSONObjects(capacity: decisions.fingerprintClicks.count * 128)
            for (fingerprint, click) in decisions.fingerprintClicks {
                out.open()
                out.member("ip_key", fingerprint.ipKey)
                out.member("platform", Int64(fingerprint.platform.code))
                out.member("occurred_at_ms", click.occurredAtMs)
                out.member("seq", click.seq)
                out.member("os_version", click.osVersion)
                out.member("ref", click.dimensions.ref)
                out.member("campaign", click.dimensions.campaign)
                out.member("source", click.dimensions.source)
                out.member("medium", click.dimensions.medium)
                out.close()
            }
            try await connection.query(q.insertFingerprintClicks.query(["rows": out.text]), logger: logger)
        }
    }
}

/// One stored answer: how an event was attributed (`lp_attributions`).
public struct PostgresAttributionRecord: Sendable, Equatable {
    public var seq: Int64
    public var match: MatchType
    public var clickSeq: Int64?
    /// How many clicks fitted, for a fingerprint match; nil otherwise.
    public var candidates: Int?
}
