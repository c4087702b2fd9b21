import CSV
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseStore
import NIOCore
import Testing

@testable import LinkpulseServer

/// Values a spreadsheet would misread or that stress quoting, used as refs and campaigns.
let trickyValues = [
    "=HYPERLINK(\"http://x\")", "+1", "-1", "@SUM(A1)", "a,b\"c", "two\nlines", "cr\r\nlf", "🚀 launch",
    "שלום עולם", "'quoted", "\tTabbed", "<img src=x onerror=alert(1)>", "plain",
]

/// Reads CSV text with an independent RFC 4180 parser: (header, rows).
func parseCSV(_ text: String) throws -> (header: [String], rows: [[String]]) {
    let reader = try CSVReader(string: text, hasHeaderRow: true)
    var rows: [[String]] = []
    while let row = reader.next() { rows.append(row) }
    return (reader.headerRow ?? [], rows)
}

/// What a CSV metrics cell should hold for a JSON value: counts as integers, rates with 4 places.
func expectedCell(_ value: Any?, column: String) -> String {
    guard let number = value as? NSNumber else { return "" }
    return column.hasSuffix("_rate") ? String(format: "%.4f", number.doubleValue) : "\(number.intValue)"
}

/// CSV exports: equal to the JSON API, readable back by a real CSV parser, spreadsheet-safe.
@Suite struct ExportHTTPTests {
    static let read: HTTPFields = [.authorization: "Bearer \(TestInstallation.readKey)"]

    /// Clicks under every tricky ref (a different number each), installs matched to some.
    static func sendTrickyTraffic(_ client: some TestClientProtocol) async throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        for (index, value) in trickyValues.enumerated() {
            for n in 0...index {
                events.append(AttributionScenarioTests.event(
                    "c-\(index)-\(n)", "click", at: Int64(index * 60 + n) * AttributionScenarioTests.minute,
                    ip: "198.51.100.\(n + 1)", ["ref": value, "campaign": trickyValues[(index + 3) % trickyValues.count], "url": value]))
            }
            events.append(AttributionScenarioTests.event(
                "i-\(index)", "install", at: Int64(index * 60 + 30) * AttributionScenarioTests.minute, ip: "203.0.113.9",
                index % 3 == 2
                    // The Play Install Referrer as the app got it: its click id makes the match.
                    ? ["install_referrer": "lp_click=c-\(index)-0&utm_source=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")", "user_agent": value]
                    : ["click_id": "c-\(index)-0", "user_agent": value, "click_id_source": index % 2 == 0 ? "pasteboard" : "universal_link"]))
        }
        try await AttributionScenarioTests.send(events, client)
        return events
    }

    static func get(_ client: some TestClientProtocol, _ path: String, headers: HTTPFields = read) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: headers, body: nil)
    }

    /// Checks a CSV export against the JSON answer it mirrors, cell by cell.
    static func compare(csv: String, json: [[String: Any]], keyColumn: String, keyOf: ([String: Any]) -> String) throws {
        let (header, rows) = try parseCSV(csv)
        #expect(header == [keyColumn] + CSVRows.metricColumns)
        #expect(rows.count == json.count)
        for (row, object) in zip(rows, json) {
            #expect(CSVRows.restoreText(row[0]) == keyOf(object))
            let metrics = object["metrics"] as? [String: Any] ?? [:]
            let installs = metrics["installs_by_match"] as? [String: Any] ?? [:], opens = metrics["opens_by_match"] as? [String: Any] ?? [:]
            for (column, cell) in zip(CSVRows.metricColumns, row.dropFirst()) {
                let value = column.hasPrefix("installs_") ? installs[String(column.dropFirst("installs_".count))]
                    : column.hasPrefix("opens_") ? opens[String(column.dropFirst("opens_".count))] : metrics[column]
                #expect(cell == expectedCell(value is NSNull ? nil : value, column: column), "\(column) of \(keyOf(object))")
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func breakdownAndSeriesCSVEqualTheAPIAndReadBackExactly(on backend: StoreBackend) async throws {
        try await backend.test("export_stats") { client, _ in
            _ = try await Self.sendTrickyTraffic(client)
            _ = try await AttributionScenarioTests.rollUp(client)
            for (dimension, zone) in [("ref", "UTC"), ("campaign", "Asia/Kolkata")] {
                let parameters = "by=\(dimension)&\(AttributionScenarioTests.range)&tz=\(zone)&sort=installs&order=desc"
                let json = try await StatsOracleTests.get(client, "/v1/stats/breakdown?\(parameters)&limit=1000")
                let response = try await Self.get(client, "/v1/export.csv?\(parameters)")
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/csv; charset=utf-8") == true)
                #expect(response.headers[.contentDisposition] == "attachment; filename=\"linkpulse_by-\(dimension)_2026-11-01_2026-11-03.csv\"")
                let text = String(buffer: response.body)
                #expect(text.hasSuffix("\r\n"))
                let rows = json["rows"] as? [[String: Any]] ?? []
                #expect(rows.count == trickyValues.count)
                try Self.compare(csv: text, json: rows, keyColumn: dimension) { $0["key"] as? String ?? "" }
                // Every tricky value comes back exactly; none starts a cell with a formula trigger.
                let keys = try parseCSV(text).rows.map { $0[0] }
                #expect(Set(keys.map(CSVRows.restoreText)) == Set(trickyValues))
                for key in keys { #expect(!["=", "+", "-", "@", "\t", "\r", "\n"].contains(key.first.map(String.init) ?? "")) }
            }
            let series = try await StatsOracleTests.get(client, "/v1/stats/timeseries?\(AttributionScenarioTests.range)&interval=hour&tz=Asia/Kathmandu")
            let response = try await Self.get(client, "/v1/export.csv?\(AttributionScenarioTests.range)&interval=hour&tz=Asia/Kathmandu")
            let points = series["points"] as? [[String: Any]] ?? []
            #expect(points.count == 72)
            try Self.compare(csv: String(buffer: response.body), json: points, keyColumn: "t") { $0["t"] as? String ?? "" }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func exportParametersAreCheckedLikeTheAPI(on backend: StoreBackend) async throws {
        try await backend.test("export_parameters") { client, _ in
            for path in ["/v1/export.csv?by=ref", "/v1/events.csv", "/v1/exports", "/v1/exports/x.csv"] {
                let response = try await Self.get(client, path, headers: [.authorization: "Bearer \(TestInstallation.ingestKey)"])
                #expect(response.status == .forbidden, "\(path): an ingest key is of the wrong kind")
            }
            let cases = [
                ("/v1/export.csv", "by"), ("/v1/export.csv?by=color", "by"), ("/v1/export.csv?by=ref&interval=day", "interval"),
                ("/v1/export.csv?by=ref&tz=Mars/Base", "tz"), ("/v1/export.csv?by=ref&sort=name", "sort"),
                ("/v1/events.csv?from=yesterday", "from"), ("/v1/events.csv?include_bots=maybe", "include_bots"),
            ]
            for (path, parameter) in cases {
                let response = try await Self.get(client, path)
                #expect(response.status == .badRequest, "\(path)")
                let error = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: [String: String]]
                #expect(error?["error"]?["parameter"] == parameter, "\(path)")
            }
        }
    }

    @Test func aDatabaseThatFailsIsA503BeforeAnyRow() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            try installation.database.close()
            for path in ["/v1/export.csv?by=ref", "/v1/export.csv?interval=day", "/v1/events.csv"] {
                let response = try await Self.get(client, path)
                #expect(response.status == .serviceUnavailable, "\(path)")
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.headers[.contentDisposition] == nil)
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func eventsCSVStreamsEveryEventWithoutTheAddress(on backend: StoreBackend) async throws {
        // No rollup timer tick during the test: the rows not yet rolled up stay at the end (in
        // arrival order), so two downloads list the rows in the same order.
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600))
        try await backend.test("export_events", settings: settings, live: true) { client, probe in
            let tricky = try await Self.sendTrickyTraffic(client)
            // Enough events for several pages, some rolled up and some not yet.
            var bulk: [[String: Any]] = []
            for n in 0..<9_000 {
                bulk.append(AttributionScenarioTests.event(
                    "b-\(n)", n % 10 == 0 ? "open" : "click", at: Int64(n) * 7_000, ip: "192.0.2.\(n % 200)", ["ref": "bulk-\(n % 37)"]))
            }
            for chunk in stride(from: 0, to: 6_000, by: 1000) {
                try await AttributionScenarioTests.send(Array(bulk[chunk..<chunk + 1000]), client)
            }
            _ = try await AttributionScenarioTests.rollUp(client)
            for chunk in stride(from: 6_000, to: 9_000, by: 1000) {
                try await AttributionScenarioTests.send(Array(bulk[chunk..<chunk + 1000]), client)
            }
            // The attribution follower decides the newest events' match types moments after their
            // commit: settled first, so the two downloads below show the same answers.
            try await probe.settle()
            let path = "/v1/events.csv?\(AttributionScenarioTests.range)&tz=Asia/Kolkata"
            let plain = try await Self.get(client, path)
            #expect(plain.status == .ok)
            #expect(plain.headers[.contentDisposition] == "attachment; filename=\"linkpulse_events_2026-11-01_2026-11-03.csv\"")
            let text = String(buffer: plain.body)
            let (header, rows) = try parseCSV(text)
            #expect(header == CSVExporter.eventColumns)
            #expect(!header.contains { $0.contains("ip") })
            #expect(!text.contains("198.51.100.") && !text.contains("192.0.2.") && !text.contains("203.0.113."))
            #expect(rows.count == tricky.count + bulk.count)
            let ids = rows.map { $0[0] }
            #expect(Set(ids) == Set((tricky + bulk).map { $0["id"] as! String }))
            #expect(Set(ids).count == ids.count)
            // Every value read back exactly, times in the zone asked for.
            let byId = Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0) })
            for event in tricky {
                let row = try #require(byId[event["id"] as! String])
                let column = { (name: String) in CSVRows.restoreText(row[CSVExporter.eventColumns.firstIndex(of: name)!]) }
                #expect(column("ref") == (event["ref"] as? String ?? ""))
                #expect(column("url") == (event["url"] as? String ?? ""))
                #expect(column("user_agent") == (event["user_agent"] as? String ?? ""))
                #expect(column("timestamp") == ZoneClock(identifier: "Asia/Kolkata")!.format(event["timestamp"] as! Int64))
                // Where the app read the click id, and the install referrer, as sent.
                let referrer = event["install_referrer"] as? String
                #expect(column("click_id_source") == (referrer != nil ? "install_referrer" : event["click_id_source"] as? String ?? ""))
                #expect(column("install_referrer") == (referrer ?? ""))
                if (event["type"] as? String) == "install", referrer == nil {
                    #expect(column("match_type") == "click_id")
                    #expect(column("matched_click_id") == (event["click_id"] as? String ?? ""))
                }
                if referrer != nil { #expect(column("match_type") == "install_referrer") }
            }
            // The same bytes, gzip-compressed when asked.
            let gzipped = try await Self.get(client, path, headers: Self.read + [.acceptEncoding: "gzip"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            let inflated = try Zlib.inflate(Array(buffer: gzipped.body), limit: 1 << 30)
            let sameBytes = inflated == Array(buffer: plain.body)
            #expect(sameBytes)
            // Filters apply to the stored values.
            let filtered = try parseCSV(String(buffer: try await Self.get(client, path + "&ref=bulk-3&platform=ios").body))
            #expect(filtered.rows.count == bulk.filter { ($0["ref"] as? String) == "bulk-3" }.count)
        }
    }
}

extension HTTPFields {
    static func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
        var fields = lhs
        fields.append(contentsOf: rhs)
        return fields
    }
}

/// One attribution record behind every answer: for each match type, `/v1/resolve`, `GET
/// /v1/attributions/{id}` and the row of `events.csv` name the same match type and the same
/// click (none for `ref` and `organic`, whose answers name no click), on both backends.
@Suite struct OneAnswerEverywhereTests {
    typealias Scenario = AttributionScenarioTests

    @Test(arguments: StoreBackend.allCases)
    func resolveAttributionsAndEventsCSVNameTheSameClick(on backend: StoreBackend) async throws {
        try await backend.test("one_answer", live: true) { client, probe in
            try await Scenario.send([
                Scenario.event("c-id", "click", at: 0, ip: "198.51.100.10", ["ref": "r-id"]),
                Scenario.event("c-ref", "click", at: 0, ip: "198.51.100.11", ["ref": "r-ref"]),
                Scenario.event("c-fp", "click", at: 0, ip: "198.51.100.12", platform: "android", ["ref": "r-fp"]),
                Scenario.event("c-ir", "click", at: 0, ip: "198.51.100.13", platform: "android", ["ref": "r-ir"]),
            ], client)
            let later = 10 * Scenario.minute
            let installs: [(body: [String: Any], match: String, click: String?)] = [
                (ResolveHTTPTests.install("i-id", at: later, ip: "203.0.113.1", platform: "ios",
                                          ["click_id": "c-id", "click_id_source": "pasteboard"]), "click_id", "c-id"),
                (ResolveHTTPTests.install("i-ir", at: later, ip: "203.0.113.2", ["install_referrer": "lp_click=c-ir&utm_source=news"]),
                 "install_referrer", "c-ir"),
                (ResolveHTTPTests.install("i-ref", at: later, ip: "203.0.113.3", ["ref": "r-ref"]), "ref", nil),
                (ResolveHTTPTests.install("i-fp", at: later, ip: "198.51.100.12"), "fingerprint", "c-fp"),
                (ResolveHTTPTests.install("i-org", at: later, ip: "203.0.113.4", platform: "ios", ["campaign": "own"]), "organic", nil),
            ]
            var resolved: [String: [String: Any]] = [:]
            for install in installs {
                let reply = try await ResolveHTTPTests.resolve(install.body, client)
                #expect(reply.status == .ok, "\(reply.text)")
                resolved[install.body["id"] as! String] = reply.json
            }
            try await probe.settle()
            let csv = try parseCSV(String(buffer: try await ExportHTTPTests.get(client, "/v1/events.csv?\(Scenario.range)").body))
            let column = { (name: String) in CSVExporter.eventColumns.firstIndex(of: name)! }
            let rows = Dictionary(uniqueKeysWithValues: csv.rows.map { ($0[column("id")], $0) })

            for install in installs {
                let id = install.body["id"] as! String
                let answer = try #require(resolved[id])
                let stored = try await ExportHTTPTests.get(client, "/v1/attributions/\(id)")
                #expect(stored.status == .ok)
                let attribution = (try JSONSerialization.jsonObject(with: Data(buffer: stored.body)) as? [String: Any])?["attribution"] as? [String: Any]
                let row = try #require(rows[id])

                #expect(answer["match_type"] as? String == install.match, "\(id): resolve")
                #expect(attribution?["match_type"] as? String == install.match, "\(id): attributions")
                #expect(row[column("match_type")] == install.match, "\(id): events.csv")
                #expect((answer["click"] as? [String: Any])?["id"] as? String == install.click, "\(id): resolve's click")
                #expect((attribution?["click"] as? [String: Any])?["id"] as? String == install.click, "\(id): attributions' click")
                #expect(row[column("matched_click_id")] == (install.click ?? ""), "\(id): events.csv's click")
            }
        }
    }
}
