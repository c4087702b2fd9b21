import Foundation
import LinkpulseServer
import LinkpulseStore
import TestSupport
import Testing

/// The daemon seals events older than `--seal-after-days` on its own, once they are attributed
/// and counted, and every one stays readable.
@Suite struct SealJobTests {
    @Test func theDaemonSealsOldEventsOnceCounted() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        // Generated traffic ends days before the real clock: all of it is old enough.
        let outcome = try await installation.storeGeneratedTraffic(events: 4_000, days: 2, refs: 30, campaigns: 3, seed: 31)
        #expect(try installation.count("SELECT count(*) FROM event_blocks") == 0)
        let settings = ServerSettings(
            port: 0, rollupInterval: .milliseconds(200), ingestPacing: .off, sealInterval: .milliseconds(200))
        try await installation.application(settings: settings).test(.router) { _ in
            try await eventually(within: .seconds(60), every: .milliseconds(100)) { try installation.count("SELECT count(*) FROM event_blocks") > 0 }
        }
        #expect(try installation.count("SELECT coalesce(sum(row_count), 0) FROM event_blocks") >= 1_024)
        #expect(try installation.count("SELECT count(*) FROM events") == outcome.stored)
    }
}
