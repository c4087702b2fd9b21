import Foundation
import GRDB
import LinkpulseDomain
@testable import LinkpulseStore
import Synchronization
import TestSupport
import Testing

/// Attribution by the follower against the real files: the stored answers are the ones a
/// replay of the events in store order through the same `Attributor` (over an in-memory
/// `ClickIndex`) gives, and a deleted attribution file is rebuilt with the same answers.
@Suite struct AttributionStoreTests {
    static let t0: Int64 = 1_795_000_000_000
    static let minute: Int64 = 60_000

    /// Mixed traffic: clicks (some bots) on a few refs from a few addresses, then installs,
    /// opens and fallbacks naming the click, only its ref, or nothing; some late (happened
    /// before clicks stored earlier), some naming unknown clicks, some retried.
    static func traffic(seed: UInt64, count: Int) -> [IngestEvent] {
        var rng = SplitMix64(seed: seed)
        var events: [IngestEvent] = []
        var clicks: [IngestEvent] = []
        let platforms: [Platform] = [.ios, .android, .desktop]
        for n in 0..<count {
            let at = t0 + Int64(n) * 20_000 - (rng.chance(0.1) ? Int64(rng.below(6 * 60)) * minute : 0)
            // Keyed hashes are 32 hex digits (stored as bytes); other text is stored as sent.
            let address = String(rng.below(12), radix: 16)
            let ip = rng.chance(0.5) ? address + "aa" + String(repeating: "0", count: 29) : String(repeating: "0", count: 15) + address + "aa"
            let platform = platforms[rng.below(platforms.count)]
            let os = rng.chance(0.3) ? nil : "1\(rng.below(3)).\(rng.below(2))"
            if clicks.isEmpty || rng.chance(0.45) {
                let refIndex = rng.below(6)
                let ref = "r\(refIndex)"
                // Ids as text, and as UUIDs in either letter case (stored as bytes).
                let click = IngestEvent(
                    id: Self.clickId(n, form: rng.below(3), &rng), kind: .click, occurredAtMs: at, receivedAtMs: at, ref: ref, campaign: "camp\(refIndex % 3)",
                    source: rng.chance(0.5) ? "email" : nil, platform: platform, ipHash: ip, visitorId: "v\(rng.below(50))",
                    osVersion: os, botReason: rng.chance(0.1) ? "preview" : nil)
                clicks.append(click)
                events.append(click)
                continue
            }
            let click = clicks[rng.below(clicks.count)]
            let kinds: [EventKind] = [.install, .open, .fallback]
            let how = rng.below(4)
            events.append(IngestEvent(
                id: "e\(n)", kind: kinds[rng.below(3)], occurredAtMs: at, receivedAtMs: at,
                ref: how == 1 ? click.ref : nil, source: rng.chance(0.2) ? "sms" : nil, platform: platform,
                clickId: how == 0 ? (rng.chance(0.1) ? "unknown" : rng.chance(0.1) ? click.id.uppercased() : click.id) : nil,
                clickIdSource: how == 0 ? [nil, .installReferrer, .pasteboard, .universalLink][rng.below(4)] : nil, ipHash: ip, visitorId: "v\(n)",
                osVersion: os, botReason: rng.chance(0.05) ? "crawler" : nil))
            if rng.chance(0.03) { events.append(events[events.count - 1]) }
        }
        return events
    }

    /// A click's id: text, or a UUID in lower or upper case.
    static func clickId(_ n: Int, form: Int, _ rng: inout SplitMix64) -> String {
        guard form > 0 else { return "c\(n)" }
        let hex = String(format: "%016llx%016llx", rng.next(), rng.next())
        let chars = Array(hex)
        let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
        return form == 1 ? uuid : uuid.uppercased()
    }

    /// (seq, match_type, matched_click_seq) of every event, in seq order.
    static func storedAnswers(_ store: TemporaryStore) throws -> [[DatabaseValue]] {
        try store.database.events.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT e.seq, a.match_type, a.matched_click_seq FROM events e LEFT JOIN attr.attribution a ON a.seq = e.seq ORDER BY e.seq
                """).map {
                [$0[0], $0[1], $0[2]]
            }
        }
    }

    /// Seeds, with how many click index entries attribution holds in memory: all of them, or
    /// so few that most lookups go to the clicks moved to disk (and a restart halfway loses
    /// the memory half, listed again from the events); and how much of the file one slice of
    /// clicks moved to disk may rewrite: the daemon's 32 MiB (one slice here), or so little
    /// that every move is written in dozens of transactions. The last two keep the on-disk
    /// fingerprint index for half an hour or none at all before the memory horizon, so the
    /// lookups of events that arrive late read the raw events instead.
    @Test(arguments: [
        (UInt64(1), 1_000_000, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (2, 1_000_000, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (3, 1_000_000, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (4, 8, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (5, 64, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (6, 300, SQLiteTuning.daemon.sliceBytes, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (7, 64, 8_192, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (8, 300, 8_192, SQLiteTuning.daemon.fingerprintClicksKeptMs),
        (9, 64, SQLiteTuning.daemon.sliceBytes, 30 * minute), (10, 8, 8_192, 0),
    ])
    func storedAnswersEqualAReplayInStoreOrder(seed: UInt64, recentClickEntries: Int, spillSliceBytes: Int, fingerprintKeptMs: Int64) async throws {
        // Small slices are written one a round: moves span many rounds, which attribute between
        // their slices.
        let store = try TemporaryStore {
            $0.recentClickEntries = recentClickEntries
            $0.fingerprintClicksKeptMs = fingerprintKeptMs
            $0.sliceBytes = spillSliceBytes
            if spillSliceBytes < SQLiteTuning.daemon.sliceBytes { $0.moveSliceBudget = .zero }
        }
        let events = Self.traffic(seed: seed, count: 3_000)
        // Several commits, and requests in one commit: clicks of earlier requests are visible.
        for chunk in stride(from: 0, to: events.count, by: 250) {
            let slice = Array(events[chunk..<min(chunk + 250, events.count)])
            _ = try await store.database.ingest([
                IngestWork(events: Array(slice.prefix(100)), quarantine: []),
                IngestWork(events: Array(slice.dropFirst(100)), quarantine: []),
            ])
            if chunk == 1_500 && recentClickEntries < 1_000 {
                try store.database.attribution.attributeAll(batch: 97)
                try store.reopen()
            }
        }
        try store.database.attribution.attributeAll()
        // The small memories moved clicks to disk (by ref all of them, by fingerprint those of
        // the index's span); the large one kept them all.
        let onDisk = try store.count("SELECT (SELECT count(*) FROM attr.ref_clicks) + (SELECT count(*) FROM attr.fingerprint_clicks)")
        #expect(recentClickEntries < 1_000 ? onDisk > (fingerprintKeptMs < 3_600_000 ? 500 : 1_000) : onDisk == 0)
        // ...and moved the horizon along with them (memory is not listed again every round).
        let horizon = try store.count("SELECT coalesce(recent_from_ms, 0) FROM attr.attribution_state")
        #expect(recentClickEntries < 1_000 ? horizon > 0 : true)
        // The fingerprint index's span followed the horizon, and its rows before went.
        let spanStart = try store.count("SELECT max(fingerprint_from_ms, 0) FROM attr.attribution_state")
        let beforeSpan = try store.count("SELECT count(*) FROM attr.fingerprint_clicks WHERE occurred_at_ms < \(spanStart)")
        #expect(fingerprintKeptMs < 3_600_000 ? spanStart > Int(Self.t0) : spanStart < Int(Self.t0))
        #expect(beforeSpan == 0)
        let stored = try store.database.events.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.ref, e.campaign, e.source, e.medium, e.platform, e.click_id,
                       e.ip_hash, e.os_version, e.bot, a.match_type, a.matched_click_seq, e.click_id_source, a.candidates
                FROM events e LEFT JOIN attr.attribution a ON a.seq = e.seq ORDER BY e.seq
                """)
        }
        var index = ClickIndex()
        let attributor = Attributor(windowMs: 2 * 3_600_000)
        var matched = Set<String>()
        var severalCandidates = false
        for row in stored {
            let kind = EventKind(rawValue: row[2])!
            let platform = Platform(rawValue: row[8])!
            let dimensions = LinkDimensions(ref: row[4], campaign: row[5], source: row[6], medium: row[7])
            let fingerprint = Fingerprint(ipHash: row[10], platform: platform)
            let isBot = (row[12] as Int64) != 0
            if kind == .click {
                index.add(
                    KnownClick(seq: row[0], occurredAtMs: row[3], dimensions: dimensions, osVersion: osMajorMinor(row[11])),
                    id: row[1], fingerprint: fingerprint, isBot: isBot)
                #expect((row[13] as Int?) == nil)
                continue
            }
            let subject = AttributionSubject(
                seq: row[0], kind: kind, occurredAtMs: row[3], dimensions: dimensions, clickId: row[9],
                clickIdSource: (row[15] as String?).flatMap(ClickIdSource.init(rawValue:)), fingerprint: fingerprint, osVersion: row[11], isBot: isBot)
            let replayed = try attributor.attribute(subject, in: &index)
            if isBot {
                #expect((row[13] as Int?) == nil)
            } else {
                #expect((row[13] as Int?) == replayed.match.code, "event \(row[1] as String)")
                #expect((row[14] as Int64?) == replayed.clickSeq, "event \(row[1] as String)")
                #expect((row[16] as Int?) == (replayed.match == .fingerprint ? replayed.candidates : nil), "event \(row[1] as String)")
                if replayed.match == .fingerprint, replayed.candidates > 1 { severalCandidates = true }
                matched.insert(replayed.match.rawValue)
            }
        }
        // The traffic exercised every rule, and fingerprint matches with several clicks to choose from.
        #expect(matched == Set(MatchType.allCases.map(\.rawValue)))
        #expect(severalCandidates)
    }

    /// An attribution file whose answers name their match type in text (before its migration
    /// 0005) has them as codes after the next open: the same answers, in every reader.
    @Test func matchTypesStoredAsTextBecomeCodes() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 11, count: 1_500), quarantine: [])])
        try store.database.attribution.attributeAll()
        let coded = try Self.storedAnswers(store)
        try await store.database.events.pool.write { db in
            try db.execute(sql: """
                CREATE TABLE attr.attribution_text (seq INTEGER PRIMARY KEY, match_type TEXT NOT NULL, matched_click_seq INTEGER, candidates INTEGER);
                INSERT INTO attr.attribution_text SELECT seq, CASE match_type WHEN 0 THEN 'ref' WHEN 1 THEN 'click_id' WHEN 2 THEN 'organic'
                    WHEN 3 THEN 'fingerprint' WHEN 4 THEN 'install_referrer' END, matched_click_seq, candidates FROM attr.attribution;
                DROP TABLE attr.attribution;
                ALTER TABLE attr.attribution_text RENAME TO attribution;
                DELETE FROM attr.grdb_migrations WHERE identifier LIKE '0005%';
                """)
        }
        #expect(try store.count("SELECT count(*) FROM attr.attribution WHERE typeof(match_type) = 'text'") > 500)
        try store.reopen()
        #expect(try store.count("SELECT count(*) FROM attr.attribution WHERE typeof(match_type) != 'integer'") == 0)
        #expect(try Self.storedAnswers(store) == coded)
        let names = try await store.database.events.pool.read { db in try Int.fetchAll(db, sql: "SELECT DISTINCT match_type FROM attr.attribution ORDER BY 1") }
        #expect(names == MatchType.allCases.map(\.code).sorted())
    }

    /// Apps waiting for their answers get them from the round that attributed them (no read of
    /// their own), and each is the answer a read after the round gives.
    /// A move of clicks to disk spans rounds: a round between two of its slices still finds the
    /// clicks that are leaving (in memory), and a click that arrives late during the move,
    /// before its horizon, is put on disk when it finishes, where a later install finds it.
    @Test func roundsBetweenTheSlicesOfAMoveFindTheClicksLeavingAndALateOne() async throws {
        // Eight entries in memory, a slice per entry, one slice a round.
        let store = try TemporaryStore {
            $0.recentClickEntries = 8
            $0.sliceBytes = 1
            $0.moveSliceBudget = .zero
        }
        let attribution = store.database.attribution
        let start: Int64 = 1_795_000_000_000
        func event(_ id: String, _ kind: EventKind, minute: Double) -> IngestEvent {
            IngestEvent(
                id: id, kind: kind, occurredAtMs: start + Int64(minute * 60_000), receivedAtMs: start, ref: "a", platform: .ios,
                visitorId: "v-\(id)")
        }
        func storeOnly(_ events: [IngestEvent]) async throws {
            // Stored without waking the follower: the test runs the rounds.
            _ = try await store.database.events.store([IngestWork(events: events, quarantine: [])])
        }
        func answer(_ id: String) throws -> (match: String?, clickSeq: Int64?) { try store.answer(id) }
        func seq(_ id: String) throws -> Int64 { try store.seq(of: id) }
        try await storeOnly((1...10).map { event("c\($0)", .click, minute: Double($0)) })
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(attribution.moveInProgress, "ten clicks past a memory of eight: a move began, one slice written")
        // A late click before the move's horizon, and an install right after it.
        try await storeOnly([event("late", .click, minute: 5.5), event("i1", .install, minute: 5.7)])
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(attribution.moveInProgress, "still moving: rounds went on between its slices")
        #expect(try answer("i1").clickSeq == (try seq("late")))
        // An install that needs a click that is leaving and not yet on disk (slices go in key
        // order, two written so far): still found, in memory.
        try await storeOnly([event("i2", .install, minute: 4.5)])
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(try answer("i2").clickSeq == (try seq("c4")))
        var rounds = 0
        while attribution.moveInProgress && rounds < 100 {
            _ = try attribution.attributeRound(maxEvents: 100)
            rounds += 1
        }
        #expect(!attribution.moveInProgress)
        // After the move: the late click is on disk, before the horizon, and found there.
        let horizon = try store.recentClicksHorizon()
        #expect(Int64(horizon) > start + Int64(5.5 * 60_000))
        #expect(try store.count("SELECT count(*) FROM attr.ref_clicks WHERE seq = \(try seq("late"))") == 1)
        try await storeOnly([event("i3", .install, minute: 5.8), event("i4", .install, minute: 2.5)])
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(try answer("i3").clickSeq == (try seq("late")))
        #expect(try answer("i4").clickSeq == (try seq("c2")))
        #expect(try answer("i3").match == "ref")
    }

    /// An install that arrives long after its window, before the on-disk fingerprint index's
    /// span, is matched against the raw events: the clicks of its window stored before it, and
    /// none stored after it (as the index would have had them).
    @Test func lateEventsBeforeTheFingerprintSpanMatchTheClicksStoredBeforeThem() async throws {
        let store = try TemporaryStore {
            $0.recentClickEntries = 8
            $0.fingerprintClicksKeptMs = 0
        }
        let attribution = store.database.attribution
        let start: Int64 = 1_795_000_000_000
        func event(_ id: String, _ kind: EventKind, minute: Int64, address: Int) -> IngestEvent {
            IngestEvent(
                id: id, kind: kind, occurredAtMs: start + minute * 60_000, receivedAtMs: start, platform: .ios,
                ipHash: String(format: "%016llx", address) + String(repeating: "0", count: 16), visitorId: "v-\(id)")
        }
        func answer(_ id: String) throws -> (match: String?, clickSeq: Int64?) { try store.answer(id) }
        func seq(_ id: String) throws -> Int64 { try store.seq(of: id) }
        // Four hours of clicks, a minute apart, each from its own address: memory keeps eight
        // entries, and the index none before the horizon.
        _ = try await store.database.events.store([IngestWork(events: (1...240).map { event("c\($0)", .click, minute: Int64($0), address: $0) }, quarantine: [])])
        try attribution.attributeAll()
        let spanStart = Int64(try store.count("SELECT fingerprint_from_ms FROM attr.attribution_state"))
        #expect(spanStart > start + 3_600_000)
        #expect(try store.count("SELECT count(*) FROM attr.fingerprint_clicks WHERE seq = \(try seq("c10"))") == 0)
        // Late, in one commit: an install from address 7000, a click from there stored after it
        // (but before it in time), another install after that click; and one from c10's address.
        _ = try await store.database.events.store([IngestWork(events: [
            event("i1", .install, minute: 30, address: 7000), event("k", .click, minute: 20, address: 7000),
            event("i2", .open, minute: 30, address: 7000), event("i3", .install, minute: 40, address: 10),
        ], quarantine: [])])
        try attribution.attributeAll()
        #expect(try answer("i1").match == "organic")
        #expect(try answer("i2").match == "fingerprint")
        #expect(try answer("i2").clickSeq == (try seq("k")))
        #expect(try answer("i3").clickSeq == (try seq("c10")))
        // A command's replay gives the pages of what it pruned back (the file's first reset made
        // it able to).
        _ = try await store.database.events.store([IngestWork(events: (241...4_240).map { event("c\($0)", .click, minute: Int64($0), address: $0) }, quarantine: [])])
        try attribution.attributeAllInBulk()
        #expect(try store.count("PRAGMA attr.auto_vacuum") == 2)
        #expect(try store.count("PRAGMA attr.freelist_count") == 0)
    }

    /// The hours of raw clicks read for lookups before the fingerprint span stay within their
    /// bound (the hours read first go first, and are read again when asked for), and a bounded
    /// reader answers as one that keeps everything.
    @Test func rawClickHoursKeepToTheirBoundAndAnswerAsAnUnboundedOne() async throws {
        let store = try TemporaryStore()
        let start: Int64 = 1_795_000_000_000 / TimeGrain.hourMs * TimeGrain.hourMs
        let addresses = 3
        func ipHash(_ address: Int) -> String { String(format: "%016llx", address) + String(repeating: "0", count: 16) }
        // Six hours, four clicks an hour from each of three addresses, and a bot's click.
        var events: [IngestEvent] = []
        for minute in stride(from: 0, to: 360, by: 5) {
            let address = minute / 5 % addresses
            events.append(IngestEvent(
                id: "c\(minute)", kind: .click, occurredAtMs: start + Int64(minute) * 60_000, receivedAtMs: start,
                platform: .ios, ipHash: ipHash(address), visitorId: "v\(minute)"))
        }
        var bot = events[0]
        bot.id = "bot"
        bot.botReason = "test"
        events.append(bot)
        _ = try await store.database.events.store([IngestWork(events: events, quarantine: [])])
        let eventStore = store.database.events
        do {
            let bounded = RawClickHours(readHour: eventStore.rawClicks(ofHour:), maxClicks: 20)
            let everything = RawClickHours(readHour: eventStore.rawClicks(ofHour:), maxClicks: .max)
            var random = SystemRandomNumberGenerator()
            var lookups = 0
            for _ in 0..<200 {
                let fingerprint = Fingerprint(ipHash: ipHash(Int.random(in: 0..<addresses, using: &random)), platform: .ios)!
                let from = start + Int64.random(in: -60...360, using: &random) * 60_000
                let through = from + Int64.random(in: 0...150, using: &random) * 60_000
                let storedBefore = Int64.random(in: 1...80, using: &random)
                let found = try bounded.clicks(with: fingerprint, from: from, through: through, storedBefore: storedBefore)
                #expect(found == (try everything.clicks(with: fingerprint, from: from, through: through, storedBefore: storedBefore)))
                #expect(found.allSatisfy { $0.seq < storedBefore && $0.ms >= from && $0.ms <= through })
                #expect(bounded.held <= 20, "an hour holds 12 clicks: the bound holds one of them")
                lookups += found.isEmpty ? 0 : 1
            }
            #expect(lookups > 20, "most lookups find clicks")
            #expect(everything.held == 72, "every hour read, the bot's click left out")
        }
    }

    /// While apps are being answered (an urgent round waits for the connection, or one has just
    /// ended), the follower neither begins a move of clicks to disk nor writes its next slice,
    /// and stops rather than spin; once memory is half as full again as its capacity, the move
    /// goes on whoever waits.
    @Test(.timeLimit(.minutes(1))) func movesOfClicksWaitForAppsRoundsWithinABoundOnMemory() async throws {
        // Eight entries in memory (a click of a ref is one), a slice per entry, one slice a round.
        let store = try TemporaryStore {
            $0.recentClickEntries = 8
            $0.sliceBytes = 1
            $0.moveSliceBudget = .zero
        }
        let attribution = store.database.attribution
        func clicks(_ numbers: ClosedRange<Int>) async throws { try await store.storeClicksOfTheirOwnRefs(numbers) }
        func slicesDone() -> Int? { attribution.recentClicksKept.withLock { $0?.outgoing?.slicesDone } }
        let horizon = { try store.recentClicksHorizon() }
        let horizonBefore = try horizon()

        // Ten clicks past a memory of eight, an app's round waiting: no move begins.
        try await clicks(1...10)
        attribution.urgentRoundsWaiting.store(1, ordering: .relaxed)
        #expect(try attribution.attributeAll(background: true) == 10)
        #expect(!attribution.moveInProgress)
        #expect(try horizon() == horizonBefore, "nothing moved to disk")
        #expect(try attribution.attributedThroughSeq() == 10)

        // No one waits: the move begins, one slice a round.
        attribution.urgentRoundsWaiting.store(0, ordering: .relaxed)
        try await clicks(11...11)
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(slicesDone() == 1)

        // An app's round waits again: the follower writes no slice, and returns.
        attribution.urgentRoundsWaiting.store(1, ordering: .relaxed)
        try attribution.attributeAll(background: true)
        #expect(slicesDone() == 1)
        #expect(attribution.moveInProgress)
        // None waits, but one just ended: still none.
        attribution.urgentRoundsWaiting.store(0, ordering: .relaxed)
        attribution.urgentRoundEnded.withLock { $0 = .now }
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(slicesDone() == 1)
        // Apps quiet for longer than `SQLiteTuning.appsQuietFor`: the move goes on.
        attribution.urgentRoundEnded.withLock { $0 = .now - store.tuning.appsQuietFor * 2 }
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(slicesDone() == 2)
        // The follower woken right after the last round of a flood takes the move up by
        // itself once apps have been quiet, with nothing else to wake it.
        attribution.urgentRoundEnded.withLock { $0 = .now }
        let asleep = ContinuousClock.now
        try attribution.attributeAll(background: true)
        #expect(!attribution.moveInProgress)
        #expect(ContinuousClock.now - asleep >= store.tuning.appsQuietFor)

        // Another move begins (memory past its capacity again), an app's round waiting.
        try await clicks(14...17)
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(slicesDone() == 1)
        attribution.urgentRoundsWaiting.store(1, ordering: .relaxed)
        try attribution.attributeAll(background: true)
        #expect(slicesDone() == 1, "while a round waits, the follower returns: that round wakes it")

        // Memory past half as many entries again as its capacity: the move goes on, an app's
        // round waiting.
        try await clicks(18...22)
        try attribution.attributeAll(background: true)
        #expect(!attribution.moveInProgress)
        #expect(try horizon() > horizonBefore)
        attribution.urgentRoundsWaiting.store(0, ordering: .relaxed)
    }

    /// A move's next slice is not written onto a WAL that a reader's snapshot keeps from
    /// starting over (a rollup pass counting): it waits, the gate closed to new derived readers,
    /// while rounds attribute; it goes on once the reader is done; and a reader that holds on
    /// past `sliceWaitsAtMost` delays it no longer than that.
    @Test(.timeLimit(.minutes(1))) func slicesOfAMoveWaitForTheWALToStartOverWhileAReaderKeepsIt() async throws {
        // Eight entries in memory, a slice per entry: a slice has room only in a WAL started over.
        let store = try TemporaryStore {
            $0.recentClickEntries = 8
            $0.sliceBytes = 1
            $0.moveSliceBudget = .zero
        }
        let attribution = store.database.attribution
        func slicesDone() -> Int? { attribution.recentClicksKept.withLock { $0?.outgoing?.slicesDone } }
        let horizon = { try store.recentClicksHorizon() }
        let horizonBefore = try horizon()
        // A round commits and nothing checkpoints it: a reader that begins now reads its frames
        // from the WAL, so no checkpoint can start the WAL over while it lasts.
        try await store.storeClicksOfTheirOwnRefs(1...5)
        _ = try attribution.attributeRound(maxEvents: 100)
        var readerConfig = Configuration()
        readerConfig.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: store.directory.appending(path: AppDatabase.attributionFileName).path, configuration: readerConfig)
        try reader.inDatabase { db in try db.execute(sql: "BEGIN DEFERRED; SELECT count(*) FROM attribution_state") }

        // Past the memory's capacity: the move begins, its first slice waits, rounds go on.
        try await store.storeClicksOfTheirOwnRefs(6...12)
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(attribution.moveInProgress)
        #expect(slicesDone() == 0)
        #expect(attribution.sliceWaitsForWAL)
        let restartWanted = attribution.walRestartWanted.load(ordering: .relaxed)
        #expect(restartWanted, "a restart of the WAL is wanted")
        try await store.storeClicksOfTheirOwnRefs(13...13)
        _ = try attribution.attributeRound(maxEvents: 100)
        #expect(slicesDone() == 0)
        #expect(try attribution.attributedThroughSeq() == 13, "rounds attribute while the slice waits")

        // The reader is done: the WAL starts over and the move is written to its end.
        try reader.inDatabase { db in try db.execute(sql: "COMMIT") }
        try attribution.attributeAll()
        #expect(!attribution.moveInProgress)
        #expect(!attribution.sliceWaitsForWAL)
        let restartStillWanted = attribution.walRestartWanted.load(ordering: .relaxed)
        #expect(!restartStillWanted)
        #expect(try horizon() > horizonBefore)

        // A reader that holds on: the next move waits for it at most `SQLiteTuning.sliceWaitsAtMost`.
        try reader.inDatabase { db in try db.execute(sql: "BEGIN DEFERRED; SELECT count(*) FROM attribution_state") }
        try await store.storeClicksOfTheirOwnRefs(14...30)
        let asked = ContinuousClock.now
        try attribution.attributeAll(background: true)
        let took = ContinuousClock.now - asked
        #expect(!attribution.moveInProgress)
        #expect(took >= store.tuning.sliceWaitsAtMost && took < store.tuning.sliceWaitsAtMost * 3, "\(took)")
        try reader.inDatabase { db in try db.execute(sql: "COMMIT") }
        for n in [7, 12, 30] {
            #expect(try store.answer("c\(n)").match == nil, "a click has no answer of its own")
        }
    }

    /// A move due (memory past its capacity) but not begun because apps were just answered is
    /// begun by the follower itself once they have been quiet, with no commit to wake it.
    @Test(.timeLimit(.minutes(1))) func aMoveDueWhenAFloodEndsIsMadeWithoutAnotherCommit() async throws {
        let store = try TemporaryStore {
            $0.recentClickEntries = 8
            $0.sliceBytes = 1
            $0.moveSliceBudget = .zero
        }
        let attribution = store.database.attribution
        try await store.storeClicksOfTheirOwnRefs(1...10)
        let horizon = { try store.recentClicksHorizon() }
        let before = try horizon()
        attribution.urgentRoundEnded.withLock { $0 = .now }
        let asked = ContinuousClock.now
        try attribution.attributeAll(background: true)
        #expect(ContinuousClock.now - asked >= store.tuning.appsQuietFor, "it waited for apps to go quiet")
        #expect(!attribution.moveInProgress)
        #expect(try horizon() > before, "the clicks past the capacity moved to disk")
    }

    @Test func waitingAppsAreHandedTheAnswersTheRoundRead() async throws {
        let store = try TemporaryStore()
        var events = Self.traffic(seed: 11, count: 600)
        for index in events.indices where events[index].kind == .install || events[index].kind == .open {
            events[index].isResolve = true
        }
        // Stored without waking the follower: the waiting calls ask for the rounds.
        _ = try await store.database.events.store([IngestWork(events: events, quarantine: [])])
        let answers = StoredAttributions(events: store.database.events, attribution: store.database.attribution)
        let resolving = Array(Set(events.filter(\.isResolve).map(\.id))).sorted()
        // The attribution file's write lock held until every call waits: the round they ask
        // for cannot end before they do (under a loaded machine it once did, and every call
        // read its answer itself).
        var held = Configuration()
        held.allowsUnsafeTransactions = true
        let blocker = try DatabaseQueue(path: store.directory.appending(path: AppDatabase.attributionFileName).path, configuration: held)
        try blocker.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        let handed = try await withThrowingTaskGroup(of: (String, AttributedEventRead).self) { group in
            for id in resolving {
                group.addTask { (id, try await answers.attributedEvent(eventId: id, wait: .seconds(120))) }
            }
            try await eventually(within: .seconds(60), every: .milliseconds(5)) {
                store.database.attribution.progress.awaitedSeqs(through: .max).count >= resolving.count
            }
            try blocker.inDatabase { db in try db.execute(sql: "ROLLBACK") }
            return try await group.reduce(into: [String: AttributedEventRead]()) { $0[$1.0] = $1.1 }
        }
        try blocker.close()
        #expect(store.database.attribution.answersHandedOver.load(ordering: .relaxed) > 0, "no answer came from a round")
        var matched = 0
        for id in resolving {
            let seq = try #require(try await store.database.events.storedSeq(ofEventId: id))
            let (read, _) = try #require(try await store.database.attribution.readAttributedEvent(seq: seq))
            #expect(handed[id] == .attributed(read), "event \(id)")
            if read.match != nil && read.match != .organic { matched += 1 }
        }
        #expect(matched > 20, "the traffic matches clicks")
    }

    /// A commit of resolves tells the round which answers apps will wait for: the round reads
    /// them even when it ends before any app begins to wait, and each app takes its own.
    @Test func answersOfACommitsResolvesAreReadByItsRoundBeforeAnyoneWaits() async throws {
        let store = try TemporaryStore()
        var events = Self.traffic(seed: 12, count: 400)
        for index in events.indices where events[index].kind == .install || events[index].kind == .open {
            events[index].isResolve = true
        }
        let outcomes = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        let stored = AppDatabase.storedResolves([IngestWork(events: events, quarantine: [])], outcomes)
        #expect(stored.count > 20, "the traffic has resolves")
        let last = try #require(stored.max())
        // The progress, not the file: it moves with the parking, after the round's commit.
        try await eventually(within: .seconds(60), every: .milliseconds(5)) { store.database.attribution.progress.through >= last }
        #expect(store.database.attribution.progress.parkedCount == stored.count, "every resolve's answer parked by the round")
        for seq in stored {
            guard case .attributed(let handed) = try await store.database.attribution.attributedEvent(seq: seq, wait: .seconds(5)) else {
                Issue.record("seq \(seq) got no answer")
                continue
            }
            let (read, _) = try #require(try await store.database.attribution.readAttributedEvent(seq: seq))
            #expect(handed == read, "seq \(seq)")
        }
        #expect(store.database.attribution.progress.parkedCount == 0, "each parked answer taken")
    }

    /// The memory half listed at a start (before any round) is the one the first round would
    /// have listed: a round reuses it, and the answers are those of a store that did not list
    /// ahead. A small memory makes the listing move clicks to disk as well.
    @Test func recentClicksListedAtAStartGiveTheSameAnswers() async throws {
        let events = Self.traffic(seed: 21, count: 1_200)
        var answers: [[[DatabaseValue]]] = []
        for listAhead in [true, false] {
            let store = try TemporaryStore { $0.recentClickEntries = 64 }
            _ = try await store.database.ingest([IngestWork(events: Array(events.prefix(700)), quarantine: [])])
            try store.database.attribution.attributeAll()
            try store.reopen()
            let attribution = store.database.attribution
            #expect(attribution.recentClicksKept.withLock { $0 == nil }, "memory is not kept across a restart")
            if listAhead {
                try attribution.listRecentClicks()
                let through = try attribution.attributedThroughSeq()
                #expect(attribution.recentClicksKept.withLock { $0?.throughSeq } == through, "listed for the watermark")
            }
            _ = try await store.database.ingest([IngestWork(events: Array(events.dropFirst(700)), quarantine: [])])
            try attribution.attributeAll()
            answers.append(try Self.storedAnswers(store))
        }
        #expect(answers[0] == answers[1])
        #expect(answers[0].count > 1_000)
    }

    @Test func theFollowerAttributesCommittedEventsWithoutBeingAsked() async throws {
        let store = try TemporaryStore()
        let events = Self.traffic(seed: 5, count: 500)
        _ = try await store.database.ingest([IngestWork(events: events, quarantine: [])])
        let stored = try store.count("SELECT max(seq) FROM events")
        // Nothing else runs here: only the follower woken by the commit can attribute.
        var attributed: Int64 = 0
        try await eventually(within: .seconds(2), every: .milliseconds(10)) {
            attributed = try store.database.attribution.attributedThroughSeq()
            return attributed >= stored
        }
        #expect(attributed == Int64(stored))
        #expect(try store.database.rollups.rolledThroughSeq() == 0)
    }

    @Test func reattributingReplaysTheSameAnswers() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 11, count: 1_500), quarantine: [])])
        try store.database.rollups.rollUpAll()
        let before = try Self.storedAnswers(store)
        let counts = try RollupRestoreTests.countsByRef(store.database)
        try store.database.resetAttribution()
        #expect(try store.database.attribution.attributedThroughSeq() == 0)
        #expect(try store.database.rollups.rolledThroughSeq() == 0)
        try store.database.rollups.rollUpAll()
        #expect(try Self.storedAnswers(store) == before)
        #expect(try RollupRestoreTests.countsByRef(store.database) == counts)
    }

    @Test func aRebuildOnBothCoresCountsWhatPassesOneAtATimeCount() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 5, count: 3_000), quarantine: [])])
        #expect(try store.database.rollups.rollUpAll(batch: 700) > 0)
        let counts = try RollupRestoreTests.countsByRef(store.database)
        let query = StatsQuery(fromMs: 0, toMs: 4_000_000_000_000, zone: "Asia/Kathmandu")
        let byCampaign = try await store.database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true)
        try store.database.rollups.resetRollups()
        // Passes written while the next is counted, each starting from the tuples the last one added.
        #expect(try store.database.rollups.rollUpAllInParallel(batch: 700) == Int(try store.database.events.maxSeq()))
        #expect(try RollupRestoreTests.countsByRef(store.database) == counts)
        #expect(try await store.database.stats.statsCounts(query, grouping: .dimension(.campaign), withVisitors: true) == byCampaign)
        // A pass counted against a watermark that has moved since is not written.
        try store.database.rollups.resetRollups()
        let stale = try #require(try store.database.rollups.countAhead(after: 0, tuples: nil, limit: 500))
        #expect(try store.database.rollups.rollUp(maxEvents: 100) == 100)
        let written = try store.database.rollups.queue.inDatabase { db in try store.database.rollups.write(stale, in: db, visitorsInParts: false) }
        #expect(!written)
    }

    /// A pass stops at its bound of 15-minute cells (the daemon's memory bound), after a whole
    /// event; passes so cut count what unbounded passes count.
    @Test func passesCutAtTheirCellBoundCountWhatWholePassesCount() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 9, count: 2_000), quarantine: [])])
        try store.database.rollups.rollUpAll(batch: 2_000)
        let counts = try RollupRestoreTests.countsByRef(store.database)
        try store.database.rollups.resetRollups()
        let first = try store.database.rollups.rollUp(maxEvents: 2_000, maxCells: 40)
        #expect(first > 0 && first < 2_000, "a pass of 40 cells takes part of 2,000 events")
        var passes = 1
        while try store.database.rollups.rollUp(maxEvents: 2_000, maxCells: 40) > 0 { passes += 1 }
        #expect(passes > 2)
        #expect(try store.database.rollups.rolledThroughSeq() == (try store.database.events.maxSeq()))
        #expect(try RollupRestoreTests.countsByRef(store.database) == counts)
    }

    @Test func aClosedStoreLeavesNoWALBehind() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 2, count: 3_000), quarantine: [])])
        try store.database.rollups.rollUpAll()
        try store.database.close()
        for name in [AppDatabase.eventsFileName, AppDatabase.attributionFileName, AppDatabase.rollupFileName, AppDatabase.idIndexFileName] {
            let wal = store.directory.appending(path: name + "-wal").path
            let size = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
            #expect(size == 0, "\(name)-wal")
        }
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
    }

    /// A parameter the statement does not have is refused, by name or by a hot loop's enum.
    @Test func aRefusedBindThrows() async throws {
        let store = try TemporaryStore()
        try await store.database.events.pool.read { db in
            // Cached, as every HotStatement's statement is (it does not keep the statement alive).
            let s = HotStatement(try db.cachedStatement(sql: "SELECT :seq"), in: db)
            try s.bind(":seq", Int64(1))
            #expect(throws: DatabaseError.self) { try s.bind(":ref", Int64(1)) }
            #expect(throws: DatabaseError.self) { try s.bind(InsertRefClickParameter.seq, Int64(1)) }
        }
    }

    @Test func aDeletedAttributionFileIsRebuiltWithTheSameAnswersAndCounts() async throws {
        let store = try TemporaryStore()
        _ = try await store.database.ingest([IngestWork(events: Self.traffic(seed: 7, count: 2_000), quarantine: [])])
        try store.database.rollups.rollUpAll()
        let before = try Self.storedAnswers(store)
        let counts = try RollupRestoreTests.countsByRef(store.database)
        try store.database.close()
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: store.directory.appending(path: AppDatabase.attributionFileName + suffix))
        }
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
        #expect(try store.database.rollups.rolledThroughSeq() == 0)
        try store.database.rollups.rollUpAll()
        #expect(try Self.storedAnswers(store) == before)
        #expect(try RollupRestoreTests.countsByRef(store.database) == counts)
    }
}

/// Derived state against events databases that are not what the rollups last saw.
@Suite struct RollupRestoreTests {
    static func clicks(_ prefix: String, _ count: Int) -> [IngestEvent] {
        (0..<count).map {
            IngestEvent(
                id: "\(prefix)\($0)", kind: .click, occurredAtMs: AttributionStoreTests.t0 + Int64($0) * 1_000,
                receivedAtMs: AttributionStoreTests.t0, ref: prefix, platform: .ios, visitorId: "v\($0)")
        }
    }

    /// Every count of the day cubes, by ref and audience ("ref|bot" → the nine counts).
    static func countsByRef(_ database: AppDatabase) throws -> [String: [Int64]] {
        try database.events.pool.read { db in
            let tuples = try database.rollups.linkTuples.current(db, sql: database.queries.stats.tuplesAfter)
            var sums: [String: CountsVector] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT entries FROM agg.cube_parts WHERE grain = 2") {
                let entries: Data = row[0]
                entries.withUnsafeBytes { bytes in
                    CubePart.forEach(in: bytes) { key, counts, _ in
                        sums["\(tuples[key.tuple].ref ?? "")|\(key.isBot)", default: CountsVector()] &+= counts
                    }
                }
            }
            return sums.mapValues { v in (0..<9).map { v[$0] } }
        }
    }

    static func clicksByRef(_ database: AppDatabase) throws -> [String: Int] {
        var clicks: [String: Int] = [:]
        for (key, counts) in try countsByRef(database) where key.hasSuffix("|false") && counts[1] > 0 {
            clicks[String(key.dropLast("|false".count)), default: 0] += Int(counts[1])
        }
        return clicks
    }

    static func copyEvents(from: URL, to: URL) throws {
        let files = FileManager.default
        try files.createDirectory(at: to, withIntermediateDirectories: true)
        for name in [AppDatabase.eventsFileName, AppDatabase.idIndexFileName] {
            for suffix in ["", "-wal", "-shm"] {
                let target = to.appending(path: name + suffix)
                try? files.removeItem(at: target)
                if files.fileExists(atPath: from.appending(path: name + suffix).path) {
                    try files.copyItem(at: from.appending(path: name + suffix), to: target)
                }
            }
        }
    }

    @Test func anEventsDatabaseFromAnotherCopyIsRecountedNeverCountedTwice() async throws {
        let store = try TemporaryStore()
        let backup = store.directory.appending(path: "backup")
        defer { try? FileManager.default.removeItem(at: backup) }
        _ = try await store.database.ingest([IngestWork(events: Self.clicks("a", 100), quarantine: [])])
        try store.database.rollups.rollUpAll()
        try store.database.close()
        try Self.copyEvents(from: store.directory, to: backup)

        // The installation goes on: 50 more events, counted.
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
        _ = try await store.database.ingest([IngestWork(events: Self.clicks("b", 50), quarantine: [])])
        try store.database.rollups.rollUpAll()
        #expect(try Self.clicksByRef(store.database) == ["a": 100, "b": 50])
        try store.database.close()

        // The backup, restored elsewhere, takes 60 other events under the same seqs and more.
        var other = try AppDatabase(directory: backup, durability: .normal, logger: store.logger)
        _ = try await other.ingest([IngestWork(events: Self.clicks("c", 60), quarantine: [])])
        try other.close()
        other = try AppDatabase(directory: backup, durability: .normal, logger: store.logger)
        try other.close()

        // Its events database is put back beside the rollups of the first copy: the event at
        // their watermark is another one, so they are recomputed.
        try Self.copyEvents(from: backup, to: store.directory)
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
        #expect(try store.database.rollups.rolledThroughSeq() == 0)
        try store.database.rollups.rollUpAll()
        #expect(try Self.clicksByRef(store.database) == ["a": 100, "c": 60])
    }

    @Test func anOlderCopyOfTheEventsDatabaseIsRecounted() async throws {
        let store = try TemporaryStore()
        let backup = store.directory.appending(path: "backup")
        defer { try? FileManager.default.removeItem(at: backup) }
        _ = try await store.database.ingest([IngestWork(events: Self.clicks("a", 100), quarantine: [])])
        try store.database.close()
        try Self.copyEvents(from: store.directory, to: backup)
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
        _ = try await store.database.ingest([IngestWork(events: Self.clicks("b", 50), quarantine: [])])
        try store.database.rollups.rollUpAll()
        try store.database.close()

        try Self.copyEvents(from: backup, to: store.directory)
        store.database = try AppDatabase(directory: store.directory, durability: .normal, logger: store.logger)
        _ = try await store.database.ingest([IngestWork(events: Self.clicks("c", 70), quarantine: [])])
        try store.database.rollups.rollUpAll()
        #expect(try Self.clicksByRef(store.database) == ["a": 100, "c": 70])
    }
}

extension TemporaryStore {
    /// Stores clicks `c<n>` of ref `r<n>`, a minute apart, without waking the follower (the
    /// tests run the rounds): each is one entry of the click indexes' memory half.
    fileprivate func storeClicksOfTheirOwnRefs(_ numbers: ClosedRange<Int>) async throws {
        let start: Int64 = 1_795_000_000_000
        let events = numbers.map {
            IngestEvent(
                id: "c\($0)", kind: .click, occurredAtMs: start + Int64($0) * 60_000, receivedAtMs: start, ref: "r\($0)",
                platform: .ios, visitorId: "v\($0)")
        }
        _ = try await database.events.store([IngestWork(events: events, quarantine: [])])
    }

    /// The stored answer of the event with this id: its match type's name and matched click.
    fileprivate func answer(_ id: String) throws -> (match: String?, clickSeq: Int64?) {
        try database.events.pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT a.match_type, a.matched_click_seq FROM events e JOIN attr.attribution a ON a.seq = e.seq WHERE e.event_id = ?",
                arguments: [id])
            return ((row?[0] as Int?).flatMap { MatchType(code: $0)?.rawValue }, row?[1])
        }
    }

    /// The seq of the event with this id.
    fileprivate func seq(of id: String) throws -> Int64 {
        Int64(try count("SELECT seq FROM events WHERE event_id = '\(id)'"))
    }

    /// Where the memory half of the click indexes begins, as the attribution file records it.
    fileprivate func recentClicksHorizon() throws -> Int {
        try count("SELECT recent_from_ms FROM attr.attribution_state")
    }
}
