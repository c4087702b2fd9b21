import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
@testable import LinkpulseServer
import LinkpulseStore
import Logging
import NIOCore
import Synchronization
import TestSupport
import Testing

/// The rollup job on its Dispatch timer, inside the real application with a real socket.
@Suite struct RollupServiceTests {
    @Test func theTimerRollsNewEventsUp() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let app = installation.application(settings: ServerSettings(port: 0, rollupInterval: .milliseconds(200)))
        try await app.test(.live) { client in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let events = (0..<20).map { i in
                #"{"id":"t\#(i)","type":"click","ref":"r\#(i % 3)","timestamp":\#(now - 60_000),"user_agent":"\#(SentEvent.personAgent)"}"#
            }
            let posted = try await client.postEvents("[\(events.joined(separator: ","))]")
            #expect(posted.status == .accepted)
            var clicks = -1
            // Within 30 s, not 5: the suite runs tests side by side on two cores, and a timer of
            // 200 ms is then late by seconds; without the timer nothing is counted at all.
            try await eventually(within: .seconds(30), every: .milliseconds(100)) {
                let summary = try await client.execute(
                    uri: "/v1/stats/summary", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
                let metrics = (try JSONSerialization.jsonObject(with: Data(buffer: summary.body)) as? [String: Any])?["metrics"] as? [String: Any]
                clicks = metrics?["clicks"] as? Int ?? -1
                return clicks == 20
            }
            #expect(clicks == 20)
        }
        #expect(try installation.database.rollups.rolledThroughSeq() == 20)
    }

    /// Events no commit woke the derived-work loop for (stored by another process, or here:
    /// attribution started over) are attributed and counted at the timer's ticks alone: the
    /// count a tick makes due attributes what it counts.
    @Test func theTimerAloneAttributesAndCountsEventsNoCommitWokeTheLoopFor() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let outcome = try await installation.storeGeneratedTraffic(events: 1_000, days: 1, refs: 10, campaigns: 2, seed: 9)
        await installation.database.attribution.settled()
        try installation.database.resetAttribution()
        #expect(try installation.database.attribution.attributedThroughSeq() == 0)
        let app = installation.application(settings: ServerSettings(port: 0, rollupInterval: .milliseconds(500)))
        try await app.test(.router) { _ in
            try await eventually(within: .seconds(30), every: .milliseconds(250)) {
                try installation.database.rollups.rolledThroughSeq() >= Int64(outcome.stored)
            }
        }
        #expect(try installation.database.attribution.attributedThroughSeq() == Int64(outcome.stored))
        #expect(try installation.database.rollups.rolledThroughSeq() == Int64(outcome.stored))
    }

    /// One request (one timer tick) attributes and counts a backlog pass after pass, the
    /// loop's attribution rounds between them, without another tick.
    @Test(.timeLimit(.minutes(2))) func oneTickWorksABacklogOffPassAfterPass() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let outcome = try await installation.storeGeneratedTraffic(events: 3_000, days: 2, refs: 30, campaigns: 3, seed: 5)
        await installation.database.attribution.settled()
        try installation.database.resetAttribution()
        let passes = Locked<[Int]>([])
        let (counted, everyPass) = AsyncStream.makeStream(of: Void.self)
        // 100-event passes: the backlog takes dozens of them.
        #expect(installation.database.rollups.requestRollUp(batch: 100) { result in
            guard case .success(let pass) = result else { return everyPass.finish() }
            let sum = passes.withLock { $0.append(pass.count); return $0.reduce(0, +) }
            if sum >= outcome.stored { everyPass.finish() }
        })
        for await _ in counted {}
        await installation.database.rollups.settled()
        #expect(try installation.database.attribution.attributedThroughSeq() == Int64(outcome.stored))
        #expect(try installation.database.rollups.rolledThroughSeq() == Int64(outcome.stored))
        let sizes = passes.withLock { $0 }
        #expect(sizes.count >= 30, "passes: \(sizes.count)")
        #expect(sizes.reduce(0, +) == outcome.stored)
    }

    @Test func generatedTrafficIsStoredAndAttributedThroughTheRealCode() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let end = TestInstallation.generatedTrafficEnd
        let outcome = try await installation.storeGeneratedTraffic(events: 5_000, days: 3, refs: 40, campaigns: 4, seed: 3)
        #expect(outcome.stored >= 5_000 && outcome.duplicates > 0 && outcome.rejected == 0)
        let database = installation.database
        let counted = try await onThreadOfItsOwn { try database.rollups.rollUpAll() }
        #expect(counted == outcome.stored)
        let query = StatsQuery(fromMs: end - 3 * 86_400_000, toMs: end)
        let counts = try await installation.database.stats.statsCounts(query, grouping: .none, withVisitors: true)
        let metrics = counts[.all]!.metrics(includeBots: false)
        #expect(metrics.installsByMatch.clickId > 0 && metrics.installsByMatch.ref > 0)
        #expect(metrics.installsByMatch.fingerprint > 0 && metrics.installsByMatch.organic > 0)
        #expect(metrics.botEvents > 0 && metrics.clicks > metrics.installs)
    }
}

/// How far the stats are behind, as the admin API (and /metrics) report it.
@Suite struct RollupFreshnessTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        let ms = Mutex<Int64>(1_795_000_000_000)
        func advance(by delta: Int64) { ms.withLock { $0 += delta } }
        var now: Int64 { ms.withLock { $0 } }
    }

    static func status(_ client: some TestClientProtocol) async throws -> [String: Any] {
        let response = try await client.execute(
            uri: "/v1/admin/rollup", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
        #expect(response.status == .ok)
        return try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any] ?? [:]
    }

    @Test func lagIsHowLongTheOldestUncountedEventHasWaited() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let clock = ManualClock()
        let deps = installation.dependencies(now: { clock.now })
        // No timer tick during the test: passes run only when asked.
        let app = installation.application(deps, settings: ServerSettings(port: 0, rollupInterval: .seconds(3600)))
        try await app.test(.router) { client in
            #expect(try await Self.status(client)["lag_seconds"] as? Double == 0)
            let events = (0..<30).map { #"{"id":"f\#($0)","type":"click","ref":"r","user_agent":"\#(SentEvent.personAgent)"}"# }
            #expect(try await client.postEvents("[\(events.prefix(10).joined(separator: ","))]").status == .accepted)
            clock.advance(by: 4_000)
            #expect(try await client.postEvents("[\(events.dropFirst(10).joined(separator: ","))]").status == .accepted)
            clock.advance(by: 3_500)
            var status = try await Self.status(client)
            #expect(status["stored_through_seq"] as? Int == 30)
            #expect(status["counted_through_seq"] as? Int == 0)
            #expect(status["backlog_events"] as? Int == 30)
            #expect(status["lag_seconds"] as? Double == 7.5)
            #expect(status["attributed_through_seq"] as? Int ?? -1 <= 30)
            let rolled = try await AttributionScenarioTests.rollUp(client)
            #expect(rolled == 30)
            status = try await Self.status(client)
            #expect(status["backlog_events"] as? Int == 0)
            #expect(status["attributed_through_seq"] as? Int == 30 && status["attribution_backlog_events"] as? Int == 0)
            #expect(status["lag_seconds"] as? Double == 0)
            let unauthorized = try await client.execute(uri: "/v1/admin/rollup", method: .get, headers: [:], body: nil)
            #expect(unauthorized.status == .unauthorized)
        }
    }
}

/// Ingest paced to the derived work (`--ingest-pacing`), inside the real application: its
/// pacing job reads the lag through the daemon's clock, its writer waits.
@Suite struct IngestPacingServiceTests {
    typealias ManualClock = RollupFreshnessTests.ManualClock

    static func clicks(_ prefix: String, _ count: Int) -> String {
        "[" + (0..<count).map { #"{"id":"\#(prefix)\#($0)","type":"click","ref":"r","user_agent":"\#(SentEvent.personAgent)"}"# }
            .joined(separator: ",") + "]"
    }

    /// Posts a batch and returns its status and how long the answer took.
    static func timedPost(_ client: some TestClientProtocol, _ body: String) async throws -> (HTTPResponse.Status, Duration) {
        let start = ContinuousClock.now
        let response = try await client.postEvents(body)
        return (response.status, ContinuousClock.now - start)
    }

    /// The pacer as `/v1/admin/rollup` reports it: (holding, a commit waiting now, seconds held
    /// in all); nil when off.
    static func pacing(_ client: some TestClientProtocol) async throws -> (holding: Bool, waiting: Bool, held: Double)? {
        guard let pacing = try await RollupFreshnessTests.status(client)["ingest_pacing"] as? [String: Any] else { return nil }
        return (pacing["holding"] as? Bool ?? false, pacing["commit_waiting"] as? Bool ?? false, pacing["held_seconds"] as? Double ?? -1)
    }

    /// Stats 10 s behind (the daemon's clock moved on, no pass ran) with a backlog that did not
    /// shrink, after a pass has counted since the start: commits wait (the longest hold, 1 s),
    /// a resolve does not, and once a pass has counted everything the hold ends. With pacing
    /// off, nothing waits. The test ticks the pacing job itself: each reading happens where the
    /// test says. (Waits are read from the pacer's own total where a lower bound on a
    /// wall-clock time would not do: the suite runs tests side by side on two cores.)
    @Test(arguments: [true, false])
    func commitsWaitWhileTheStatsAreBehindAndNotCatchingUp(pacing: Bool) async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let clock = ManualClock()
        let ticks = ManualTicks()
        let deps = installation.dependencies(now: { clock.now }, ticks: ticks)
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), ingestPacing: pacing ? .lag(.seconds(5)) : .off)
        @Sendable func reading() async { if pacing { await ticks.tick("ingest-pacing") } }
        try await installation.application(deps, settings: settings).test(.router) { client in
            // A pass after the pacer's first reading: before the derived work has counted
            // since the start, no hold begins (a restart's leftovers say nothing of the load).
            await reading()
            #expect(try await Self.timedPost(client, Self.clicks("z", 1)).0 == .accepted)
            #expect(try await AttributionScenarioTests.rollUp(client) == 1)
            #expect(try await Self.timedPost(client, Self.clicks("a", 20)).0 == .accepted)
            await reading()  // a reading at the first time
            clock.advance(by: 10_000)
            // A reading 10 s later: 10 s behind, the same backlog.
            await reading()
            #expect(try await Self.pacing(client)?.holding == (pacing ? true : nil))
            let (status, took) = try await Self.timedPost(client, Self.clicks("b", 5))
            #expect(status == .accepted)
            let heldForB = try await Self.pacing(client)?.held ?? 0
            if pacing {
                #expect(took >= .milliseconds(950) && heldForB >= 0.95, "a held commit answered after \(took), held \(heldForB) s")
            } else {
                #expect(heldForB == 0)
            }
            // A resolve is never held: an app waits for the answer.
            let resolved = try await ResolveHTTPTests.resolve(
                ["id": "install-1", "type": "install", "platform": "android", "ip": "198.51.100.7", "user_agent": SentEvent.personAgent], client)
            #expect(resolved.status == .ok, "\(resolved.text)")
            #expect(try await Self.pacing(client)?.held ?? 0 == heldForB)
            var heldSoFar = heldForB
            if pacing {
                // Held or not, a later commit is acknowledged (see `aResolveEndsAHeldCommitsWait`
                // for a resolve cutting the wait short).
                #expect(try await Self.timedPost(client, Self.clicks("d", 5)).0 == .accepted)
                heldSoFar = try await Self.pacing(client)?.held ?? 0
                #expect(heldSoFar > heldForB)
            }

            // A pass counts everything: the lag is 0, the hold ends at the next reading.
            #expect(try await AttributionScenarioTests.rollUp(client) == (pacing ? 31 : 26))
            await reading()
            #expect(try await Self.pacing(client)?.holding == (pacing ? false : nil))
            #expect(try await Self.timedPost(client, Self.clicks("c", 5)).0 == .accepted)
            #expect(try await Self.pacing(client)?.held ?? 0 == heldSoFar)
        }
        // Every acknowledged event is stored once, held or not.
        #expect(try installation.count("SELECT count(*) FROM event_rows") == (pacing ? 37 : 32))
    }

    /// A commit waiting at the pacer goes as soon as a resolve joins the queue, however long
    /// the hold could last (ten minutes here, so no timing on a busy machine decides it): an
    /// app waits for the resolve's answer, and the held commit goes with it.
    @Test(.timeLimit(.minutes(2))) func aResolveEndsAHeldCommitsWait() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let queue = IngestQueue(capacity: 1_000, inFlightByteLimit: 1 << 20)
        let pacer = IngestPacer(pacing: IngestPacing(lagLimitMs: 1_000, windowMs: 1_000), maxHold: .seconds(600))
        // Stats standing 20 s behind with the same backlog, after a pass has counted: a hold.
        for i in 0..<8 {
            pacer.observe(.init(
                atMs: Int64(i) * 250, lagMs: 20_000, backlog: 500, countedThroughSeq: i == 0 ? 0 : 1,
                attributedThroughSeq: 501, countingMs: Int64(i) * 250, attributingMs: 0))
        }
        #expect(pacer.holding)
        let writer = IngestWriterService(
            queue: queue, database: installation.database, metrics: IngestMetrics(), pacer: pacer, logger: Logger(label: "test"))
        let running = Task { try await writer.run() }
        func event(_ id: String, kind: EventKind, resolve: Bool) -> IngestWork {
            var event = IngestEvent(id: id, kind: kind, occurredAtMs: 1_000, receivedAtMs: 1_000, ref: "r", platform: .ios, visitorId: "v")
            event.isResolve = resolve
            return IngestWork(events: [event], quarantine: [])
        }
        async let held = queue.submit(event("held-click", kind: .click, resolve: false))
        try #require(await eventually(every: .milliseconds(1)) { pacer.commitWaiting })
        let resolved = try await queue.submit(event("resolve-1", kind: .install, resolve: true))
        #expect(resolved.count == 1)
        #expect(try await held.count == 1)
        #expect(pacer.heldTotal < .seconds(300), "the wait ended with the resolve: \(pacer.heldTotal)")
        #expect(!pacer.commitWaiting)
        queue.close()
        try await running.value
        #expect(try installation.count("SELECT count(*) FROM event_rows") == 2)
    }
}
