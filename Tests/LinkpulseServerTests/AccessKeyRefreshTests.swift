import Foundation
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging
import TestSupport
import Testing

/// Two daemons' keys over one store (on SQLite two tables over the same events database, as a
/// daemon and `linkpulse keys` have; on PostgreSQL two stores on one database), on an
/// injected clock: a key made or revoked through one is taken by the other at its next
/// refresh (which the access-keys timer runs every second), and a key's use is written at most
/// once a minute.
@Suite struct AccessKeyRefreshTests {
    static let secret = Array(repeating: UInt8(0x5a), count: 32)

    /// Runs `body` with two ledgers of one fresh store of `backend`.
    static func withTwoLedgers(
        _ backend: StoreBackend, _ body: (any AccessKeyRecords, any AccessKeyRecords) async throws -> Void
    ) async throws {
        switch backend {
        case .sqlite:
            let installation = try TestInstallation()
            defer { installation.remove() }
            let other = try AppDatabase(directory: installation.directory, tuning: .command, idFilter: .atFirstUse, logger: installation.logger)
            defer { try? other.close() }
            try await body(installation.database.accessKeys, other.accessKeys)
        case .postgres:
            let url = try PostgresTestCluster.shared.get().makeDatabase("key_refresh")
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            var stores: [PostgresStore] = []
            do {
                for _ in 0..<2 {
                    stores.append(try await PostgresStore.open(
                        try PostgresLocation(url: url), logger: logger, nowMs: 0, connectTimeout: .seconds(180)))
                }
                try await body(stores[0].accessKeys, stores[1].accessKeys)
            } catch {
                for store in stores { await store.close() }
                throw error
            }
            for store in stores { await store.close() }
        }
    }

    @Test func theTimerRefreshesEverySecond() {
        #expect(ServerSettings().keyRefreshInterval == .seconds(1), "a change reaches every daemon within 2 s")
    }

    @Test(arguments: StoreBackend.allCases)
    func aChangeThroughOneDaemonIsTakenByTheOtherAtItsNextRefresh(on backend: StoreBackend) async throws {
        try await Self.withTwoLedgers(backend) { first, second in
            let clock = Locked<Int64>(1_800_000_000_000)
            let now: @Sendable () -> Int64 = { clock.withLock { $0 } }
            let a = AccessKeys(store: first, hashSecret: Self.secret, configured: [.admin: "lpa_flag"], now: now)
            let b = AccessKeys(store: second, hashSecret: Self.secret, now: now)
            try await a.refresh()
            try await b.refresh()
            #expect(a.authorize("lpa_flag")?.configured == true && b.authorize("lpa_flag") == nil, "a flag is one daemon's")

            let key = try await a.create(kind: .read, name: "BI export")
            #expect(a.authorize(key.secret)?.kind == .read, "at once where it was made")
            #expect(b.authorize(key.secret) == nil, "not before the other's refresh")
            try await b.refresh()
            #expect(b.authorize(key.secret) == AccessGrant(id: key.record.id, name: "BI export", kind: .read, configured: false))

            // Uses: written at the next refresh, at most once a minute.
            for _ in 0..<3 { _ = b.authorize(key.secret) }
            try await b.refresh()
            func lastUsed() async throws -> Int64? { try await a.list().first { $0.id == key.record.id }?.lastUsedAtMs }
            #expect(try await lastUsed() == now())
            clock.withLock { $0 += 20_000 }
            _ = b.authorize(key.secret)
            try await b.refresh()
            #expect(try await lastUsed() == now() - 20_000, "the same minute: not written again")
            clock.withLock { $0 += 60_000 }
            _ = a.authorize(key.secret)
            try await a.refresh()
            #expect(try await lastUsed() == now())

            // Revoked through one: refused there at once, by the other from its next refresh.
            let revoked = try #require(try await a.revoke(id: key.record.id))
            #expect(revoked.revokedAtMs == now())
            #expect(a.authorize(key.secret) == nil)
            #expect(b.authorize(key.secret) != nil, "until its refresh")
            try await b.refresh()
            #expect(b.authorize(key.secret) == nil)
            #expect(try await b.revoke(id: key.record.id)?.revokedAtMs == revoked.revokedAtMs, "revoking again keeps the first time")
            #expect(try await b.revoke(id: "key_unknown") == nil)

            // Keys kept in clear by an older version are stored once, whichever daemon adopts them.
            #expect(try await a.adopt([.ingest: "lpi_old", .read: "lpr_old"]).count == 2)
            #expect(try await b.adopt([.ingest: "lpi_old", .read: "lpr_old"]).isEmpty)
            try await b.refresh()
            #expect(b.authorize("lpi_old")?.kind == .ingest && b.authorize("lpr_old")?.name == "read key of before")
            #expect(try await a.list().count == 3)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aKeyMadeElsewhereIsLookedForBeforeItIsRefused(on backend: StoreBackend) async throws {
        try await Self.withTwoLedgers(backend) { first, second in
            let clock = Locked<Int64>(1_800_000_000_000)
            let now: @Sendable () -> Int64 = { clock.withLock { $0 } }
            let a = AccessKeys(store: first, hashSecret: Self.secret, now: now)
            let b = AccessKeys(store: second, hashSecret: Self.secret, now: now)
            try await a.refresh()
            try await b.refresh()

            let key = try await a.create(kind: .ingest, name: "first app")
            #expect(b.authorize(key.secret) == nil, "not in b's table before a refresh")
            #expect(await b.authorizeLookingFurther(key.secret)?.id == key.record.id, "found in the store at its first request")

            // An unknown key reads the store at most once per interval: a second key made within
            // it is refused until the interval has passed (or the next refresh).
            #expect(await b.authorizeLookingFurther("lpi_nobody") == nil)
            let second = try await a.create(kind: .read, name: "dashboard")
            #expect(await b.authorizeLookingFurther(second.secret) == nil, "within the interval: no second read")
            clock.withLock { $0 += AccessKeys.lookFurtherIntervalMs }
            #expect(await b.authorizeLookingFurther(second.secret)?.kind == .read)

            // A revoked key is refused by the other daemon from its next refresh, as before.
            _ = try await a.revoke(id: key.record.id)
            try await b.refresh()
            clock.withLock { $0 += AccessKeys.lookFurtherIntervalMs }
            #expect(await b.authorizeLookingFurther(key.secret) == nil)
        }
    }
}
