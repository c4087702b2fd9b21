import ArgumentParser
import Foundation
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore

/// `linkpulse generate`: realistic synthetic traffic, stored through the ingest code, then
/// rolled up. Safe beside a running `serve`.
struct Generate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Store realistic synthetic traffic (for trying Linkpulse out, tests and benchmarks).")

    @OptionGroup var storage: StorageOptions

    @Option(help: "About how many events to make.")
    var events: Int = 100_000

    @Option(help: "How many days back from now the traffic spreads over.")
    var days: Int = 30

    @Option(help: "How many distinct refs (links).")
    var refs: Int = 1_000

    @Option(help: "How many campaigns the refs belong to.")
    var campaigns: Int = 20

    @Option(help: "Seed of the random generator: the same seed makes the same traffic.")
    var seed: UInt64 = 1

    @Flag(inversion: .prefixedNo, help: "Roll the new events up (and seal the old ones, see --seal-after-days) before exiting.")
    var rollup = true

    @OptionGroup var seal: SealOptions

    mutating func validate() throws {
        guard events > 0, days > 0, days <= 400, refs > 0, campaigns > 0 else {
            throw ValidationError("--events, --refs and --campaigns must be positive, --days from 1 to 400.")
        }
    }

    func run() async throws {
        let logger = storage.bootstrapLogging()
        let secrets = try InstallationSecrets.loadOrCreate(directory: storage.dataURL, logger: logger)
        let database = try AppDatabase(directory: storage.dataURL, tuning: .command, logger: logger)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let start = ContinuousClock.now
        let profile = TrafficProfile(events: events, days: days, refs: refs, campaigns: campaigns, seed: seed, endMs: now)
        // The audience data where Debian's packages put it, when there (as `serve` by default).
        let audience = AudienceData(paths: AudienceData.Paths(), logger: logger)
        try? await audience.loadOffThePool()
        let outcome = try await GeneratedTraffic.write(profile, into: database, secrets: secrets, receivedAtMs: now, audience: audience)
        let stored = ContinuousClock.now
        let rolled = rollup ? try database.rollups.rollUpAll() : 0
        if rollup { try database.sealOldEvents(nowMs: now, age: seal.age) }
        try database.close()
        logger.notice("generated", metadata: [
            "stored": "\(outcome.stored)", "duplicates": "\(outcome.duplicates)", "rejected": "\(outcome.rejected)",
            "store_took": "\(stored - start)", "rolled_up": "\(rolled)", "rollup_took": "\(ContinuousClock.now - stored)",
        ])
    }
}
