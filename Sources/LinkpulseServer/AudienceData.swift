import Foundation
import LinkpulseDomain
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// The files the audience dimensions are derived from, loaded at start and again on `SIGHUP`:
/// the countries (Tor's `geoip` and `geoip6` from Debian's `tor-geoipdb`, or an MMDB file) and
/// uap-core's user agent expressions. Ingest reads them through the validator's
/// `UserAgentClassifier` and `CountrySource`, which a load replaces whole.
///
/// Without a file the daemon says so once in its log and in `/readyz` (a detail, never "not
/// ready"), and counts `""` for what the file would have told; it never refuses an event for it.
public final class AudienceData: Sendable {
    /// Where the files are; nil: where Debian's packages put them, when there.
    public struct Paths: Sendable, Equatable {
        /// An MMDB file, or Tor's `geoip` file (its `geoip6` beside it); `off`: none.
        public var geoip: String?
        /// uap-core's `regexes.yaml`; `off`: none.
        public var userAgents: String?

        public init(geoip: String? = nil, userAgents: String? = nil) {
            self.geoip = geoip
            self.userAgents = userAgents
        }
    }

    public let classifier: UserAgentClassifier
    public let countries: CountrySource
    let paths: Paths?
    let logger: Logger
    /// Where the files are read (the start's load and every reload, one at a time): reading
    /// and parsing them blocks for a fraction of a second, never on the cooperative pool.
    let queue = DispatchQueue(label: "linkpulse.audience-data")
    /// What the last load found, for `/readyz`.
    private let found = Mutex<(countries: String, userAgents: String)>(("not loaded", "not loaded"))

    /// Data that is never loaded (tests that do not ask about audiences).
    public static func none(logger: Logger = Logger(label: "linkpulse")) -> AudienceData {
        AudienceData(paths: nil, logger: logger)
    }

    /// Data to load from `paths` (nil: none at all).
    public init(paths: Paths?, logger: Logger) {
        self.paths = paths
        self.logger = logger
        classifier = UserAgentClassifier()
        countries = CountrySource()
        if paths == nil { found.withLock { $0 = ("no data (not asked for)", "no data (not asked for)") } }
    }

    /// A file that was named but cannot be used.
    public struct Unusable: Error, CustomStringConvertible {
        public var description: String
    }

    /// `load()` on the data's own queue, awaited.
    public func loadOffThePool() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.load()
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            }
        }
    }

    /// Loads (or loads again) every file; a file named explicitly that cannot be read throws
    /// (at start, the daemon refuses to run with a wrong path), a default one that is missing
    /// is logged once. Blocking: the daemon calls it on `queue` (`loadOffThePool`).
    public func load() throws {
        guard let paths else { return }
        var problems: [String] = []
        do {
            try loadCountries(paths.geoip)
        } catch {
            problems.append("\(error)")
        }
        do {
            try loadUserAgents(paths.userAgents)
        } catch {
            problems.append("\(error)")
        }
        if !problems.isEmpty { throw Unusable(description: problems.joined(separator: "; ")) }
    }

    /// What `/readyz` says of the data (always passing: the daemon works without it).
    public var readiness: ReadinessCheck {
        let (countries, userAgents) = found.withLock { $0 }
        return ReadinessCheck(ok: true, detail: "countries: \(countries); user agents: \(userAgents)")
    }

    private func loadCountries(_ named: String?) throws {
        if named == "off" {
            replaceCountries(nil, found: "off (--geoip off): every country is \"\"")
            return
        }
        let path = named ?? AudienceDataDefaults.torGeoIPDirectories.map { "\($0)/geoip" }.first(where: FileManager.default.fileExists(atPath:))
        guard let path else {
            replaceCountries(nil, found: "no data: every country is \"\" (install tor-geoipdb's files, ops/install-deps.sh, or pass --geoip)")
            return
        }
        let started = ContinuousClock.now
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw Unusable(description: "--geoip \(path): the file cannot be read")
        }
        let lookup: any CountryLookup
        let described: String
        if MaxMindCountries.isMMDB(bytes) {
            let mmdb = try MaxMindCountries(path: path, bytes: bytes)
            (lookup, described) = (mmdb, "\(path) (MMDB \(mmdb.databaseType), built \(mmdb.built))")
        } else {
            let v6 = FileManager.default.contents(atPath: path + "6")
            do {
                let table = try CountryTable(ipv4: Array(bytes), ipv6: v6.map(Array.init))
                let files = v6 == nil ? path : "\(path) and \(path)6"
                (lookup, described) = (table, "\(files) (IPFire location data of \(table.generated ?? "an unstated date"), CC BY-SA 4.0; \(table.rangeCount) ranges)")
            } catch {
                throw Unusable(description: "--geoip \(path): \(error)")
            }
        }
        replaceCountries(lookup, found: described, took: ContinuousClock.now - started)
    }

    private func loadUserAgents(_ named: String?) throws {
        if named == "off" {
            replaceRules(nil, found: "off (--user-agents off): device, os and browser are \"\"")
            return
        }
        let path = named ?? (FileManager.default.fileExists(atPath: AudienceDataDefaults.userAgentRegexes) ? AudienceDataDefaults.userAgentRegexes : nil)
        guard let path else {
            replaceRules(nil, found: "no data: device, os and browser are \"\" (install uap-core, ops/install-deps.sh, or pass --user-agents)")
            return
        }
        let started = ContinuousClock.now
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Unusable(description: "--user-agents \(path): the file cannot be read")
        }
        do {
            let rules = try UserAgentRules(yaml: String(decoding: data, as: UTF8.self))
            let skipped = rules.skipped == 0 ? "" : ", \(rules.skipped) not compiled"
            replaceRules(rules, found: "\(path) (uap-core, Apache-2.0; \(rules.count) expressions\(skipped))", took: ContinuousClock.now - started)
        } catch {
            throw Unusable(description: "--user-agents \(path): \(error)")
        }
    }

    private func replaceCountries(_ lookup: (any CountryLookup)?, found text: String, took: Duration? = nil) {
        countries.replace(with: lookup)
        report(text, \.countries, what: "countries", took: took)
    }

    private func replaceRules(_ rules: UserAgentRules?, found text: String, took: Duration? = nil) {
        classifier.replaceRules(rules)
        report(text, \.userAgents, what: "user agents", took: took)
    }

    /// Logs what a load found when it differs from what the last one found (so a daemon without
    /// the data says so once, not at each reload).
    private func report(
        _ text: String, _ field: WritableKeyPath<(countries: String, userAgents: String), String>, what: String, took: Duration?
    ) {
        let changed = found.withLock { found in
            defer { found[keyPath: field] = text }
            return found[keyPath: field] != text
        }
        let loaded = took.map { " (loaded in \($0.formatted(.units(allowed: [.milliseconds]))))" } ?? ""
        if changed { logger.notice("audience data: \(what): \(text)\(loaded)") }
    }
}

/// The user agent cache's figures in `/metrics`, read at each scrape: lookups answered from
/// memory and by the rules (a counter each, raised by what changed since the last scrape), the
/// user agents remembered and how many it remembers at most.
final class AudienceGauges: Sendable {
    let classifier: UserAgentClassifier
    let remembered = Counter(label: "linkpulse_user_agent_lookups_total", dimensions: [("answer", "remembered")])
    let classified = Counter(label: "linkpulse_user_agent_lookups_total", dimensions: [("answer", "classified")])
    let entries = Gauge(label: "linkpulse_user_agent_cache_entries")
    let capacity = Gauge(label: "linkpulse_user_agent_cache_capacity")
    private let counted = Mutex<(hits: Int, misses: Int)>((0, 0))

    init(classifier: UserAgentClassifier) {
        self.classifier = classifier
    }

    func record() {
        let now = classifier.lookups
        let (hits, misses) = counted.withLock { counted in
            defer { counted = now }
            return (now.hits - counted.hits, now.misses - counted.misses)
        }
        if hits > 0 { remembered.increment(by: hits) }
        if misses > 0 { classified.increment(by: misses) }
        entries.record(Double(classifier.remembered))
        capacity.record(Double(classifier.capacity))
    }
}

/// Loads the audience data again on `SIGHUP` (new packages installed, a new MMDB file), without
/// a restart. The signal is taken off its default action (ending the process) while the daemon
/// runs; the load runs on the data's own Dispatch queue, off the cooperative pool.
struct AudienceReloadService: Service {
    let data: AudienceData

    func run() async throws {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: data.queue)
        source.setEventHandler { [data] in
            do {
                try data.load()
            } catch {
                data.logger.error("audience data: the reload kept what was loaded before: \(error)")
            }
        }
        source.resume()
        try? await gracefulShutdown()
        source.cancel()
    }
}
