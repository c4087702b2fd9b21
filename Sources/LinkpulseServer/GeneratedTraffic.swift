import LinkpulseDomain
import LinkpulseStore

/// Writes synthetic traffic (`TrafficGenerator`) through the same validation and store code as
/// ingest: for `linkpulse generate`, benchmarks, tests and the demo.
public enum GeneratedTraffic {
    /// What a generation run stored.
    public struct Outcome: Sendable, Equatable {
        public var stored = 0
        public var duplicates = 0
        public var rejected = 0
    }

    /// Validates and stores every event of `profile`, in group commits of `batch` events; with
    /// `audience`, each gets its audience as ingest gives it.
    public static func write(
        _ profile: TrafficProfile, into database: any IngestStore, secrets: InstallationSecrets, receivedAtMs: Int64,
        batch: Int = 5_000, audience: AudienceData? = nil
    ) async throws -> Outcome {
        var generator = TrafficGenerator(profile)
        let validator = EventValidator(
            hasher: KeyedHasher(secret: secrets.hashSecretBytes), userAgents: audience?.classifier ?? UserAgentClassifier(),
            countries: audience?.countries ?? CountrySource())
        let facts = RequestFacts(receivedAtMs: receivedAtMs, clientIP: nil, userAgent: nil)
        var outcome = Outcome()
        while true {
            let payloads = generator.next(batch)
            if payloads.isEmpty { return outcome }
            var events: [IngestEvent] = []
            events.reserveCapacity(payloads.count)
            for payload in payloads {
                switch validator.validate(payload, request: facts) {
                case .success(let event): events.append(event)
                case .failure: outcome.rejected += 1
                }
            }
            let results = try await database.ingest([IngestWork(events: events, quarantine: [])])
            for result in results[0] {
                if case .stored = result { outcome.stored += 1 } else { outcome.duplicates += 1 }
            }
        }
    }
}
