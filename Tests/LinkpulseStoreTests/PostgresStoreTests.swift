import Foundation
import Synchronization
import LinkpulseDomain
import Logging
import TestSupport
import Testing

@testable import LinkpulseStore

/// The PostgreSQL store against a real server (a throwaway cluster of Debian's PostgreSQL):
/// migrations, exactly-once ingest and seq order across several daemons (several stores with
/// pools of their own on one database), partitions by month.
@Suite struct PostgresStoreTests {
    static let nowMs: Int64 = 1_795_255_620_000  // 2026-11-21

    /// A fresh database on the shared cluster.
    static func database(_ name: String) throws -> PostgresLocation {
        let cluster = try PostgresTestCluster.shared.get()
        return try PostgresLocation(url: cluster.makeDatabase(name))
    }

    /// Opens a store on `location`. The connect timeout is generous: in the full suite, other
    /// tests that wait synchronously can hold every thread of the cooperative pool for seconds.
    static func open(
        _ location: PostgresLocation, connectTimeout: Duration = .seconds(180), roundSize: Int = 10_000
    ) async throws -> PostgresStore {
        var logger = Logger(label: "test")
        logger.logLevel = .error
        return try await PostgresStore.open(location, logger: logger, nowMs: nowMs, connectTimeout: connectTimeout, roundSize: roundSize)
    }

    static func event(_ id: String, kind: EventKind = .open, at ms: Int64 = nowMs) -> IngestEvent {
        IngestEvent(id: id, kind: kind, occurredAtMs: ms, receivedAtMs: ms + 5, platform: .ios, visitorId: "v:\(id)")
    }

    @Test func migrationsApplyOnceWhenTwoDaemonsStartAtOnce() async throws {
        let location = try Self.database("migrate")
        async let first = Self.open(location)
        async let second = Self.open(location)
        let (a, b) = try await (first, second)
        #expect(try await a.migrate().isEmpty, "nothing left to apply")
        #expect(try await a.databaseId() == b.databaseId())
        let cluster = try PostgresTestCluster.shared.get()
        let applied = try cluster.psql("SELECT count(*), count(DISTINCT name) FROM lp_migrations", database: location.database)
        let names = try PostgresQueries.load().migrations.count
        #expect(applied.trimmingCharacters(in: .whitespacesAndNewlines) == "\(names)|\(names)")
        await a.close()
        await b.close()
    }

    @Test func eventsReadBackAsTheyWereStored() async throws {
        let store = try await Self.open(Self.database("roundtrip"))
        var full = Self.event("0b6f5c1e-1111-4a4a-9d9d-000000000001", kind: .install)
        full.sentAtMs = Self.nowMs - 200
        full.ref = "spring"; full.campaign = "launch \"2026\""; full.source = "mail"; full.medium = "email"
        full.platform = .android; full.deviceId = "device-1"; full.clickId = "click-1"; full.clickIdSource = .installReferrer
        full.deferred = true; full.url = "https://go.example.com/spring?x=1&y=é"; full.referrer = "https://news.example"
        full.userAgent = "Mozilla/5.0 (Linux; Android 14)\tTab"; full.ipHash = "00ff"; full.osVersion = "14"; full.appVersion = "2.1"
        full.propertiesJSON = #"{"a":"b\\c","n":1}"#; full.botReason = "preview"; full.isResolve = true
        let bare = Self.event("plain-id")
        let rejected = QuarantinedEvent(
            receivedAtMs: Self.nowMs, index: 3, error: EventError(code: "missing_field", field: "type", message: "`type` is required."),
            rawText: #"{"id":"x"}"#, truncated: false, userAgent: "curl/8")

        let outcomes = try await store.events.store([IngestWork(events: [full, bare], quarantine: [rejected])])
        #expect(outcomes == [[.stored(seq: 1), .stored(seq: 2)]])
        let read = try await store.events.events(afterSeq: 0, limit: 10)
        #expect(read.map(\.seq) == [1, 2])
        #expect(read.map(\.event) == [full, bare])
        #expect(try await store.events.storedSeq(ofEventId: "plain-id") == 2)
        #expect(try await store.events.storedSeq(ofEventId: "other") == nil)
        let kept = try await store.events.recentQuarantine(limit: 5)
        #expect(kept.count == 1)
        #expect(kept.first.map { [$0.code, $0.field, $0.message, $0.rawText, $0.userAgent] } == ["missing_field", "type", "`type` is required.", #"{"id":"x"}"#, "curl/8"])
        #expect(kept.first?.eventIndex == 3)
        await store.close()
    }

    /// A rejected body kept in quarantine may hold U+0000, which PostgreSQL's text cannot:
    /// it is kept with U+FFFD in its place, and the events beside it are stored.
    @Test func aQuarantinedBodyWithANulCharacterIsKept() async throws {
        let store = try await Self.open(Self.database("nul"))
        let body = "not json \u{0} at all"
        let rejected = QuarantinedEvent(
            receivedAtMs: Self.nowMs, index: nil, error: EventError(code: "invalid_json", field: nil, message: "The body is not JSON."),
            rawText: body, truncated: false, userAgent: nil)
        let outcomes = try await store.events.store([IngestWork(events: [Self.event("beside")], quarantine: [rejected])])
        #expect(outcomes == [[.stored(seq: 1)]])
        #expect(try await store.events.recentQuarantine(limit: 1).first?.rawText == "not json \u{FFFD} at all")
        await store.close()
    }

    /// `--quarantine-retention-days`: what was received before the cut goes, in batches; the
    /// rest stays.
    @Test func oldQuarantinedEventsAreDeletedInBatches() async throws {
        let store = try await Self.open(Self.database("quarantine_retention"))
        let day: Int64 = 86_400_000
        let rejected = (0..<25).map { n in
            QuarantinedEvent(
                receivedAtMs: Self.nowMs - Int64(n) * day, index: n, error: EventError(code: "invalid_value", field: "type", message: "No such type."),
                rawText: #"{"n":\#(n)}"#, truncated: false, userAgent: nil)
        }
        _ = try await store.events.store([IngestWork(events: [], quarantine: rejected)])
        // Received 10 or more days ago: 15 of them, in batches of 4.
        #expect(try await store.events.deleteQuarantine(receivedBefore: Self.nowMs - 10 * day + 1, batch: 4) == 15)
        let left = try await store.events.recentQuarantine(limit: 100)
        #expect(left.compactMap(\.eventIndex).sorted() == Array(0..<10))
        #expect(try await store.events.deleteQuarantine(receivedBefore: Self.nowMs - 10 * day + 1) == 0)
        await store.close()
    }

    /// `--retention-days`: the month partitions before the horizon are dropped and the default
    /// partition's rows before it deleted, once counted; stats over whole days stay the same, an
    /// edge before the horizon and an event export from before it are refused, an install kept
    /// still names the deleted click it came from, an id deleted stays a duplicate, and
    /// attribution matches no click before the horizon any more.
    @Test func retentionDropsWholeMonthsOnceCountedAndKeepsWhatKeptEventsName() async throws {
        let store = try await Self.open(Self.database("retention"))  // partitions from October
        func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }
        var september = Self.event("c-sep", kind: .click, at: ms("2026-09-10T10:00:00Z"))
        september.ref = "old"
        var click = Self.event("c-oct", kind: .click, at: ms("2026-10-10T10:00:00Z"))
        click.ref = "spring"
        click.campaign = "launch"
        click.url = "https://go.example/spring"
        var octoberInstall = Self.event("i-oct", kind: .install, at: ms("2026-10-10T11:00:00Z"))
        octoberInstall.clickId = "c-oct"
        var novemberInstall = Self.event("i-nov", kind: .install, at: ms("2026-11-05T10:00:00Z"))
        novemberInstall.clickId = "c-oct"
        var november = Self.event("c-nov", kind: .click, at: ms("2026-11-05T09:00:00Z"))
        november.ref = "fall"
        _ = try await store.events.store([IngestWork(events: [september, click, octoberInstall, november, novemberInstall], quarantine: [])])
        #expect(try await store.derived.tick() == .led(attributed: 5, counted: 5))
        func counts(_ from: String, _ to: String) async throws -> CountsByAudience? {
            let query = try StatsQuery.parse(["from": from, "to": to, "tz": "UTC"], defaultZone: "UTC", nowMs: Self.nowMs)
            return try await store.stats.statsCounts(query, grouping: .none, withVisitors: true)[.all]
        }
        let october = try #require(try await counts("2026-10-01", "2026-10-31"))
        #expect(october.people.clicks == 1 && october.people.installsClickId == 1)

        let outcome = try await store.derived.pruneRawEvents(before: ms("2026-11-01T00:00:00Z"))
        #expect(outcome.droppedMonths == ["lp_events_2026_10"] && outcome.deletedDefaultEvents == 1 && !outcome.waitsForRollups)
        #expect(try await store.events.events(afterSeq: 0, limit: 10).map(\.event.id) == ["c-nov", "i-nov"])
        // Whole days: the rollups, unchanged.
        #expect(try await counts("2026-10-01", "2026-10-31") == october)
        // An edge before the horizon, and events before it: refused, naming the parameter.
        await #expect(throws: ParameterError.self) { _ = try await counts("2026-10-10T10:07:00Z", "2026-10-20") }
        await #expect(throws: ParameterError.self) {
            _ = try await store.stats.rawEventCursor(for: RawEventQuery(fromMs: ms("2026-10-01T00:00:00Z"), toMs: ms("2026-11-10T00:00:00Z")))
        }
        // The kept install still names its click; the deleted one is expired.
        guard case .attributed(let kept) = try await store.attributedEvent(eventId: "i-nov", wait: .seconds(1)) else {
            Issue.record("i-nov is not answered")
            return
        }
        #expect(kept.click?.id == "c-oct" && kept.click?.url == "https://go.example/spring" && kept.click?.dimensions.ref == "spring")
        #expect(try await store.attributedEvent(eventId: "i-oct", wait: .seconds(1)) == .expired)
        // A deleted id resent stays a duplicate; a new install naming the deleted click is organic.
        var late = Self.event("i-late", kind: .install, at: ms("2026-11-06T10:00:00Z"))
        late.clickId = "c-oct"
        let again = try await store.events.store([IngestWork(events: [Self.event("c-oct", kind: .click), late], quarantine: [])])
        #expect(again.first?.first == .duplicate)
        _ = try await store.derived.tick()
        guard case .attributed(let organic) = try await store.attributedEvent(eventId: "i-late", wait: .seconds(2)) else {
            Issue.record("i-late is not answered")
            return
        }
        #expect(organic.match == .organic)
        await store.close()
    }

    /// `retainRawEvents`: the leader runs retention from its own tick, at most once an interval,
    /// to the horizon it is given; a daemon standing by runs none.
    @Test func theLeadersTickRunsRetentionOnceAnInterval() async throws {
        let location = try Self.database("retention_tick")
        let (store, standby) = (try await Self.open(location), try await Self.open(location))
        let november = Timestamp.parseRFC3339("2026-11-01T00:00:00Z")!
        let asked = Mutex(0)
        for daemon in [store, standby] {
            daemon.derived.retainRawEvents(every: .seconds(3600)) {
                asked.withLock { $0 += 1 }
                return november
            }
        }
        let old = Self.event("october", kind: .click, at: Timestamp.parseRFC3339("2026-10-10T10:00:00Z")!)
        _ = try await store.events.store([IngestWork(events: [old, Self.event("kept")], quarantine: [])])
        #expect(try await store.derived.tick() == .led(attributed: 2, counted: 2))
        #expect(try await standby.derived.tick() == .standby)
        #expect(try await store.events.events(afterSeq: 0, limit: 10).map(\.event.id) == ["kept"])
        _ = try await store.derived.tick()
        #expect(asked.withLock { $0 } == 1, "once an interval, by the leader only")
        await store.close()
        await standby.close()
    }

    @Test func duplicatesInOneCommitAndAcrossCommitsAreStoredOnce() async throws {
        let store = try await Self.open(Self.database("dupes"))
        let first = try await store.events.store([
            IngestWork(events: [Self.event("a"), Self.event("b"), Self.event("a")], quarantine: []),
            IngestWork(events: [Self.event("b"), Self.event("c")], quarantine: []),
        ])
        #expect(first == [[.stored(seq: 1), .stored(seq: 2), .duplicate], [.duplicate, .stored(seq: 3)]])
        let second = try await store.events.store([IngestWork(events: [Self.event("c"), Self.event("d")], quarantine: [])])
        #expect(second == [[.duplicate, .stored(seq: 5)]], "the seq a duplicate would have had stays unused")
        #expect(try await store.events.events(afterSeq: 0, limit: 10).map(\.event.id) == ["a", "b", "c", "d"])
        await store.close()
    }

    /// Two daemons (two stores with their own pools) receive overlapping ids at the same time,
    /// as a load balancer would spread a client's retries; a third reads new events by seq as
    /// the derived work does, moving its watermark to the highest seq it has seen.
    @Test func anIdIsStoredOnceWhicheverDaemonReceivesItAndSeqsFollowCommits() async throws {
        let location = try Self.database("twodaemons")
        let a = try await Self.open(location)
        let b = try await Self.open(location)
        let reader = try await Self.open(location)
        let ids = (0..<3000).map { "id-\($0)" }

        /// Stores `ids` in commits of 25 to 75 events, each id also sent a second time later.
        @Sendable func send(_ store: PostgresStore, _ order: [String]) async throws -> [String: Int64] {
            var stored: [String: Int64] = [:]
            var rest = order[...]
            while !rest.isEmpty {
                let take = rest.prefix(Int.random(in: 25...75))
                rest = rest.dropFirst(take.count)
                let events = take.map { Self.event($0) }
                let outcomes = try await store.events.store([IngestWork(events: events, quarantine: [])])
                for (event, outcome) in zip(events, outcomes[0]) {
                    if case .stored(let seq) = outcome { stored[event.id] = seq }
                }
            }
            return stored
        }
        let done = Mutex(false)
        async let readByWatermark: [String: Int64] = {
            var seen: [String: Int64] = [:]
            var watermark: Int64 = 0
            while true {
                let finished = done.withLock { $0 }
                let page = try await reader.events.events(afterSeq: watermark, limit: 10_000)
                for (seq, event) in page { seen[event.id] = seq }
                watermark = page.last?.seq ?? watermark
                if finished && page.isEmpty { return seen }
            }
        }()
        async let fromA = send(a, ids + ids.shuffled())
        async let fromB = send(b, ids.shuffled() + ids)
        let (storedByA, storedByB) = try await (fromA, fromB)
        done.withLock { $0 = true }
        let seen = try await readByWatermark

        #expect(Set(storedByA.keys).isDisjoint(with: storedByB.keys), "no id stored by both daemons")
        let all = storedByA.merging(storedByB) { first, _ in first }
        #expect(all.count == ids.count, "every id stored once")
        #expect(Set(all.values).count == ids.count, "every stored event has a seq of its own")
        let missed = all.filter { seen[$0.key] != $0.value }.count
        #expect(missed == 0 && seen.count == all.count, "a reader that only moves its watermark forward sees every event, each under its seq")
        let cluster = try PostgresTestCluster.shared.get()
        let counts = try cluster.psql("SELECT (SELECT count(*) FROM lp_events) || '|' || (SELECT count(*) FROM lp_event_ids)", database: location.database)
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "\(ids.count)|\(ids.count)")
        for store in [a, b, reader] { await store.close() }
    }

    @Test func monthsGetPartitionsAheadAndOlderEventsTheDefaultOne() async throws {
        let location = try Self.database("months")
        let store = try await Self.open(location)
        let cluster = try PostgresTestCluster.shared.get()
        func partitions() throws -> [String] {
            try cluster.psql(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'lp_events'::regclass ORDER BY 1",
                database: location.database
            ).split(separator: "\n").map(String.init)
        }
        #expect(try partitions() == ["lp_events_2026_10", "lp_events_2026_11", "lp_events_2026_12", "lp_events_2027_01", "lp_events_default"])
        #expect(try await store.ensureEventMonths(aroundMs: Self.nowMs) == 0, "each month once")

        let old = Self.event("from-2020", at: 1_580_000_000_000)  // 2020-01-26
        let december = Self.event("december", at: 1_798_000_000_000)  // 2026-12-23
        _ = try await store.events.store([IngestWork(events: [old, december], quarantine: [])])
        let placed = try cluster.psql("SELECT event_id || '@' || tableoid::regclass FROM lp_events ORDER BY seq", database: location.database)
        #expect(placed.split(separator: "\n") == ["from-2020@lp_events_default", "december@lp_events_2026_12"])

        // January 2020 holds a row in the default partition: it gets no partition of its own
        // (creating one would fail); February 2020 does.
        #expect(try await store.ensureEventMonths(aroundMs: 1_582_000_000_000) == 3)
        #expect(try partitions().filter { $0.hasPrefix("lp_events_2020") } == ["lp_events_2020_02", "lp_events_2020_03", "lp_events_2020_04"])
        #expect(try await store.events.events(afterSeq: 0, limit: 10).map(\.event) == [old, december])
        await store.close()
    }

    /// Attribution on PostgreSQL in rounds much smaller than the traffic (so rounds look up
    /// clicks earlier rounds left in the store) gives exactly the answers of one replay of every
    /// event through `Attributor` over an in-memory `ClickIndex`.
    @Test func attributionInRoundsGivesTheAnswersOfOneReplay() async throws {
        let store = try await Self.open(Self.database("attribution"), roundSize: 97)
        let traffic = AttributionStoreTests.traffic(seed: 11, count: 1500)
        for start in stride(from: 0, to: traffic.count, by: 200) {
            _ = try await store.events.store([IngestWork(events: Array(traffic[start..<min(start + 200, traffic.count)]), quarantine: [])])
        }
        var rounds = 0
        while case .led(let attributed, let counted) = try await store.derived.tick(budget: .milliseconds(1)), attributed + counted > 0 { rounds += 1 }
        #expect(rounds > 5, "several ticks of a few rounds each")

        var index = ClickIndex()
        let attributor = Attributor(windowMs: 7_200_000)
        var expected: [PostgresAttributionRecord] = []
        for (seq, event) in try await store.events.events(afterSeq: 0, limit: 10_000) {
            let subject = ReplayRound.subject(seq: seq, event)
            if event.kind == .click {
                let click = KnownClick(seq: seq, occurredAtMs: event.occurredAtMs, dimensions: subject.dimensions, osVersion: osMajorMinor(event.osVersion))
                index.add(click, id: event.id, fingerprint: subject.fingerprint, isBot: event.isBot)
            } else if !event.isBot {
                let answer = try attributor.attribute(subject, in: &index)
                expected.append(PostgresAttributionRecord(
                    seq: seq, match: answer.match, clickSeq: answer.clickSeq, candidates: answer.match == .fingerprint ? answer.candidates : nil))
            }
        }
        let stored = try await store.attributions(afterSeq: 0, limit: 10_000)
        #expect(stored.count == expected.count)
        let differing = zip(stored, expected).filter { $0 != $1 }
        #expect(differing.isEmpty, "first differences: \(differing.prefix(3))")
        #expect(Set(stored.map(\.match)) == Set(MatchType.allCases), "the traffic reaches every rule")
        #expect(stored.contains { ($0.candidates ?? 0) > 1 }, "and fingerprint matches with several clicks to choose from")
        await store.close()
    }

    /// Two daemons: one leads the derived work; when its session ends (the daemon died), the
    /// other takes over at its next tick and goes on from the watermark.
    @Test func oneDaemonLeadsAndAnotherTakesOverWhenItsSessionEnds() async throws {
        let location = try Self.database("leader")
        let a = try await Self.open(location)
        let b = try await Self.open(location)
        let first = (0..<50).map { Self.event("first-\($0)", kind: .install) }
        _ = try await a.events.store([IngestWork(events: first, quarantine: [])])
        #expect(try await a.derived.tick() == .led(attributed: 50, counted: 50))
        #expect(try await b.derived.tick() == .standby)
        #expect(try await a.derived.tick() == .led(attributed: 0, counted: 0), "nothing new")

        let second = (0..<30).map { Self.event("second-\($0)", kind: .open) }
        _ = try await b.events.store([IngestWork(events: second, quarantine: [])])
        await a.derived.stop()  // as when its daemon dies: the session ends, the lock is free
        // The server frees the lock once it has ended the session, moments after the close.
        var outcome = try await b.derived.tick()
        try await eventually(within: .seconds(30), every: .milliseconds(50)) {  // a loaded machine
            if outcome == .standby { outcome = try await b.derived.tick() }
            return outcome != .standby
        }
        #expect(outcome == .led(attributed: 30, counted: 30))
        #expect(try await a.derived.tick() == .standby, "back, but the other leads now")
        let answers = try await b.attributions(afterSeq: 0, limit: 1000)
        #expect(answers.map(\.seq) == Array(1...80), "every event attributed once")
        await a.close()
        await b.close()
    }

    @Test func aServerThatDoesNotAnswerIsAnErrorNotAHang() async throws {
        let port = try PostgresTestCluster.freePort()
        let location = try PostgresLocation(url: "postgres://linkpulse@127.0.0.1:\(port)/none")
        let start = ContinuousClock.now
        await #expect(throws: PostgresStoreError.self) { try await Self.open(location, connectTimeout: .seconds(2)) }
        // Far below forever (the pool alone retries without end), above what a loaded machine
        // adds to the 2 s limit.
        #expect(ContinuousClock.now - start < .seconds(60))
    }
}

/// Database URLs read as libpq reads them; statements split from SQL files (no server needed).
@Suite struct PostgresLocationTests {
    @Test func urlsNameTheServerUserAndDatabase() throws {
        let tcp = try PostgresLocation(url: "postgres://app:s%40cret@db.internal:6543/link%20pulse?sslmode=require")
        #expect(tcp == PostgresLocation(endpoint: .tcp(host: "db.internal", port: 6543), user: "app", password: "s@cret", database: "link pulse", tls: .require))
        #expect(tcp.description == "postgres://app:***@db.internal:6543/link pulse?sslmode=require", "the password is never printed")

        #expect(try PostgresLocation(url: "postgresql://app@localhost/lp").tls == .disable, "no TLS by default on loopback")
        #expect(try PostgresLocation(url: "postgres://app@db.internal/lp").tls == .prefer, "TLS when the server offers it, elsewhere")
        #expect(try PostgresLocation(url: "postgres://app@db.internal/lp").endpoint == .tcp(host: "db.internal", port: 5432))
        #expect(try PostgresLocation(url: "postgres://app@/lp?host=/var/run/postgresql").endpoint == .socket(directory: "/var/run/postgresql", port: 5432))

        for (url, says) in [
            ("mysql://app@db/lp", "must start with postgres://"),
            ("postgres://db.internal/lp", "names no user"),
            ("postgres://app@db.internal", "names no database"),
            ("postgres://app@db.internal/lp?ssl=true", "unknown parameter `ssl`"),
            ("postgres://app@db.internal/lp?sslmode=verify", "sslmode must be"),
        ] {
            #expect(throws: PostgresLocation.Invalid.self) { try PostgresLocation(url: url) }
            do { _ = try PostgresLocation(url: url) } catch { #expect("\(error)".contains(says), "\(url): \(error)") }
        }
        #expect(PostgresLocation.redacted("postgres://app:pw@@x") == "postgres://app:***@x")
    }

    @Test func scriptsSplitAtSemicolonsOutsideQuotesBodiesAndComments() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE t (a text DEFAULT ';');
            /* block; comment */
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
            BEGIN PERFORM 1; RETURN 2; END
            $$;
            SELECT "odd;name", $1::int FROM t;
            CREATE FUNCTION g() RETURNS text LANGUAGE sql AS $body$ SELECT 'x;y' $body$;
            -- only a comment at the end
            """
        let statements = SQLScript.statements(of: script)
        #expect(statements.count == 4)
        #expect(statements[0] == "-- a comment; with a semicolon\nCREATE TABLE t (a text DEFAULT ';')")
        #expect(statements[1].hasSuffix("RETURN 2; END\n$$"))
        #expect(statements[2] == "SELECT \"odd;name\", $1::int FROM t")
        #expect(statements[3].hasSuffix("$body$ SELECT 'x;y' $body$"))
    }
}
