import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import Logging
import Testing

/// The audience of every event, derived at ingest from the data Debian's packages carry, on
/// both stores: what each kind of request stores, that no address is kept anywhere, and a
/// daemon without the data.
@Suite struct AudienceHTTPTests {
    /// The data where ops/install-deps.sh puts it, loaded once, on the data's own queue (in a
    /// debug build that takes seconds, which must not hold up the cooperative pool that the
    /// in-process daemons answer on).
    static let loaded = Task {
        let data = AudienceData(paths: AudienceData.Paths(), logger: Logger(label: "test"))
        try await data.loadOffThePool()
        return data
    }

    static let agents = (
        instagram: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 309.0.2.20.109 (iPhone15,3; iOS 17_1_2; en_US; en; scale=3.00; 1290x2796; 541635890)",
        android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36",
        safari: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1",
        crawler: "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)")
    static let addresses = (v4: "81.2.69.160", v6: "2a00:1450:4001:81b::200e")

    /// How many events of the store hold `audience` (SQL for either store).
    static func count(_ probe: StoreBackend.Probe, _ audience: AudienceDimensions) throws -> Int {
        let stored = audience.stored!.replacingOccurrences(of: "'", with: "''")
        let fields = stored.split(separator: "\u{1F}", omittingEmptySubsequences: false).map { "'\($0)'" }
        return try probe.count(
            sqlite: "SELECT count(*) FROM event_rows r JOIN event_texts t ON t.id = r.audience WHERE t.value = \(fields.joined(separator: " || char(31) || "))",
            postgres: "SELECT count(*) FROM lp_events WHERE audience = \(fields.joined(separator: " || chr(31) || "))")
    }

    @Test(arguments: StoreBackend.allCases)
    func everyEventKeepsItsAudienceAndNoAddress(on backend: StoreBackend) async throws {
        let data = try await Self.loaded.value
        let countries = data.countries
        let (gb, v6Country) = (countries.country(of: Self.addresses.v4), countries.country(of: Self.addresses.v6))
        #expect(gb == "GB")
        #expect(v6Country.count == 2)
        try await backend.test("audience_stored", settings: HostedLinkHTTPTests.settings, audience: data) { client, probe in
            let events = """
                [{"type":"click","ref":"spring","ip":"\(Self.addresses.v4)","user_agent":"\(Self.agents.instagram)","referrer":"https://l.instagram.com/?u=x"},
                 {"type":"open","ref":"spring","platform":"android","ip":"\(Self.addresses.v6)","user_agent":"\(Self.agents.android)"},
                 {"type":"click","ref":"spring","ip":"::ffff:\(Self.addresses.v4)","user_agent":"\(Self.agents.android)"},
                 {"type":"click","ref":"spring","ip":"\(Self.addresses.v4)","user_agent":"\(Self.agents.crawler)"},
                 {"type":"click","ref":"spring","user_agent":"\(Self.agents.android)"}]
                """
            // The last event has no `ip`: its country is the forwarded address's (a trusted proxy).
            let posted = try await client.postEvents(events, headers: [HTTPField.Name("X-Forwarded-For")!: Self.addresses.v6])
            #expect(posted.status == .accepted)
            // A hosted link's tap: its language and referrer too.
            let created = try await HostedLinkHTTPTests.api(client, .post, "/v1/links", #"{"url":"https://example.com/shoes","ref":"shoes"}"#)
            #expect(created.status == .created)
            let tap = try await client.execute(uri: "/shoes", method: .get, headers: [
                .userAgent: Self.agents.safari, .acceptLanguage: "de-DE,de;q=0.9,en;q=0.8", .referer: "https://www.instagram.com/",
                HTTPField.Name("X-Forwarded-For")!: Self.addresses.v4, HTTPField.Name("X-Forwarded-Host")!: "go.example.com",
            ])
            #expect(tap.status == .ok)

            let android = AudienceDimensions(country: v6Country, device: .phone, os: "Android", osMajor: "14", browser: "Chrome")
            #expect(try Self.count(probe, AudienceDimensions(country: "GB", device: .phone, os: "iOS", osMajor: "17", browser: "Instagram")) == 1)
            #expect(try Self.count(probe, android) == 2)
            #expect(try Self.count(probe, AudienceDimensions(country: "GB", device: .phone, os: "Android", osMajor: "14", browser: "Chrome")) == 1)
            #expect(try Self.count(probe, AudienceDimensions(country: "GB", device: .bot, browser: "AhrefsBot")) == 1)
            #expect(try Self.count(probe, AudienceDimensions(country: "GB", device: .phone, os: "iOS", osMajor: "17", browser: "Safari", language: "de")) == 1)
            #expect(try probe.count(
                sqlite: "SELECT count(*) FROM event_rows WHERE referrer = 'https://www.instagram.com/'",
                postgres: "SELECT count(*) FROM lp_events WHERE referrer = 'https://www.instagram.com/'") == 1)

            // events.csv: the audience's fields, each in its column.
            try await probe.settle()
            let csv = try await ExportHTTPTests.get(client, "/v1/events.csv?include_bots=true")
            #expect(csv.status == .ok)
            let (header, rows) = try parseCSV(String(buffer: csv.body))
            let fields = ["country", "device", "os", "os_major", "browser", "language", "referrer_host"]
            let columns = fields.map { header.firstIndex(of: $0)! }
            let audiences = Set(rows.map { row in columns.map { row[$0] }.joined(separator: "|") })
            #expect(audiences == [
                "GB|phone|iOS|17|Instagram||l.instagram.com", "\(v6Country)|phone|Android|14|Chrome||", "GB|phone|Android|14|Chrome||",
                "GB|bot|||AhrefsBot||", "GB|phone|iOS|17|Safari|de|www.instagram.com",
            ])
            #expect(rows.count == 6)

            // No address anywhere: not in a file of the installation, not in a row.
            let addresses = [Self.addresses.v4, Self.addresses.v6, "81.2.69"]
            if let directory = probe.directory {
                for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                    guard let bytes = FileManager.default.contents(atPath: directory.appending(path: name).path) else { continue }
                    for address in addresses { #expect(bytes.range(of: Data(address.utf8)) == nil, "\(address) in \(name)") }
                }
            } else {
                for address in addresses {
                    #expect(try probe.count(sqlite: "", postgres: "SELECT count(*) FROM lp_events e WHERE e::text LIKE '%\(address)%'") == 0)
                }
            }
        }
    }

    /// The stats by every audience dimension, as filters and breakdowns, in JSON and CSV: an
    /// install a click brought counts under that click's country, browser and referrer; an
    /// organic one under its own.
    @Test(arguments: StoreBackend.allCases)
    func statsAnswerByEveryAudienceDimension(on backend: StoreBackend) async throws {
        let data = try await Self.loaded.value
        let v6Country = data.countries.country(of: Self.addresses.v6)
        let app = "Spring/3.1 CFNetwork/1490.0.4 Darwin/23.2.0"
        typealias S = AttributionScenarioTests
        try await backend.test("audience_stats", audience: data) { client, probe in
            var crawler = S.event("b1", "click", at: 0, ip: Self.addresses.v4, ["ref": "a", "user_agent": Self.agents.crawler])
            crawler["platform"] = "web"
            try await S.send([
                S.event("c1", "click", at: 0, ip: Self.addresses.v4, ["ref": "a", "user_agent": Self.agents.instagram, "referrer": "https://l.instagram.com/?u=x"]),
                S.event("c2", "click", at: S.minute, ip: Self.addresses.v6, platform: "android", ["ref": "b", "user_agent": Self.agents.android]),
                // Brought by c1, from an address of no country, in the app's own user agent.
                S.event("i1", "install", at: 10 * S.minute, ip: "198.51.100.50", ["click_id": "c1", "user_agent": app]),
                // No click brought it (no click of its platform from its address): its own country.
                S.event("i2", "install", at: 20 * S.minute, ip: Self.addresses.v4, platform: "android", ["user_agent": app]),
                crawler,
            ], client)
            try await probe.settle()
            _ = try await S.rollUp(client)

            func breakdown(_ query: String) async throws -> [String: [String: Double?]] {
                let json = try await StatsOracleTests.get(client, "/v1/stats/breakdown?\(S.range)&\(query)")
                var rows: [String: [String: Double?]] = [:]
                for row in json["rows"] as? [[String: Any]] ?? [] {
                    rows[row["key"] as? String ?? "(none)"] = Oracle.flatten(row["metrics"] as? [String: Any] ?? [:])
                }
                return rows
            }
            let byCountry = try await breakdown("by=country")
            #expect(byCountry["GB"]?["clicks"] == 1 && byCountry["GB"]?["installs"] == 2, "\(byCountry)")
            #expect(byCountry[v6Country]?["clicks"] == 1 && byCountry[v6Country]?["installs"] == 0, "\(byCountry)")
            #expect(byCountry["(none)"] == nil, "the install from no country counts under its click's")
            let byBrowser = try await breakdown("by=browser")
            #expect(byBrowser["Instagram"]?["clicks"] == 1 && byBrowser["Instagram"]?["installs"] == 1 && byBrowser["Instagram"]?["install_rate"] == 1)
            #expect(byBrowser["Chrome"]?["clicks"] == 1 && byBrowser["Chrome"]?["installs"] == 0)
            #expect(byBrowser["AhrefsBot"]?["clicks"] == 0 && byBrowser["AhrefsBot"]?["bot_events"] == 1, "bots count apart")
            let byReferrer = try await breakdown("by=referrer_host")
            #expect(byReferrer["l.instagram.com"]?["installs"] == 1 && byReferrer["(none)"]?["clicks"] == 1, "\(byReferrer)")
            let byDevice = try await breakdown("by=device&include_bots=true")
            #expect(byDevice["phone"]?["clicks"] == 2 && byDevice["bot"]?["bot_events"] == 1, "\(byDevice)")
            let byOS = try await breakdown("by=os")
            #expect(byOS["iOS"]?["clicks"] == 1 && byOS["Android"]?["clicks"] == 1, "\(byOS)")
            let byLanguage = try await breakdown("by=language")
            #expect(byLanguage.keys.sorted() == ["(none)"], "no tap sent Accept-Language")

            // Filters, alone and with a breakdown by another dimension.
            let gb = try await S.metrics(client, "country=gb")
            #expect(gb["clicks"] == 1 && gb["installs"] == 2 && gb["organic"] == 1, "\(gb)")
            let instagramByRef = try await breakdown("by=ref&browser=Instagram")
            #expect(instagramByRef.keys.sorted() == ["a"] && instagramByRef["a"]?["installs"] == 1, "\(instagramByRef)")
            let androidPhones = try await S.metrics(client, "device=phone&os=Android")
            #expect(androidPhones["clicks"] == 1 && androidPhones["installs"] == 0)
            let series = try await StatsOracleTests.get(client, "/v1/stats/timeseries?\(S.range)&interval=day&country=GB")
            let days = (series["points"] as? [[String: Any]] ?? []).compactMap { ($0["metrics"] as? [String: Any])?["installs"] as? Int }
            #expect(days.reduce(0, +) == 2, "\(series)")

            // The CSV export of a breakdown by country; the raw events refuse audience filters.
            let csv = try await ExportHTTPTests.get(client, "/v1/export.csv?\(S.range)&by=country")
            #expect(csv.status == .ok)
            let (header, rows) = try parseCSV(String(buffer: csv.body))
            let (key, installs) = (header.firstIndex(of: "country"), header.firstIndex(of: "installs"))
            #expect(key != nil && installs != nil, "\(header)")
            if let key, let installs { #expect(rows.first { $0[key] == "GB" }?[installs] == "2", "\(rows)") }
            let refused = try await ExportHTTPTests.get(client, "/v1/events.csv?\(S.range)&country=GB")
            #expect(refused.status == .badRequest && String(buffer: refused.body).contains("country"))
            let wrong = try await ExportHTTPTests.get(client, "/v1/stats/summary?\(S.range)&device=watch")
            #expect(wrong.status == .badRequest && String(buffer: wrong.body).contains("phone, tablet"))
        }
    }

    @Test func aDaemonWithoutTheDataStoresEventsWithAnUnknownAudience() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let none = AudienceData(paths: AudienceData.Paths(geoip: "off", userAgents: "off"), logger: Logger(label: "test"))
        try await none.loadOffThePool()
        #expect(!none.countries.isLoaded && !none.classifier.hasRules)
        try await installation.application(installation.dependencies(audience: none)).test(.router) { client in
            let posted = try await client.postEvents(
                #"[{"type":"click","ref":"spring","ip":"\#(Self.addresses.v4)","user_agent":"\#(Self.agents.instagram)"}]"#)
            #expect(posted.status == .accepted)
            #expect(try installation.count("SELECT count(*) FROM event_rows WHERE audience IS NULL") == 1)
            // Ready all the same, saying what it lacks.
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            let checks = (try JSONSerialization.jsonObject(with: Data(buffer: ready.body)) as? [String: Any])?["checks"] as? [String: Any]
            let detail = (checks?["audience_data"] as? [String: Any])?["detail"] as? String ?? ""
            #expect(detail.contains("countries: off") && detail.contains("user agents: off"), "\(detail)")
        }
    }
}
