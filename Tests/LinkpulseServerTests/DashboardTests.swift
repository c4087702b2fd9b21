import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseStore
import NIOCore
import TestSupport
import Testing

@testable import LinkpulseServer

/// The repository's dashboard folder, as the daemon would find it.
let dashboardsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: "dashboards")

/// How the daemon serves the dashboard's files.
@Suite struct DashboardFilesTests {
    @Test func filesCarryTypesETagsGzipAndSecurityHeaders() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), dashboardsDirectory: dashboardsFolder)
        try await installation.application(settings: settings).test(.router) { client in
            let root = try await client.execute(uri: "/", method: .get)
            #expect(root.status == .found)
            #expect(root.headers[.location] == "/dashboard/")
            #expect(try await client.execute(uri: "/dashboard", method: .get).headers[.location] == "/dashboard/")

            let page = try await client.execute(uri: "/dashboard/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let csp = try #require(page.headers[HTTPField.Name("Content-Security-Policy")!])
            for directive in ["default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"] {
                #expect(csp.contains(directive))
            }
            #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"))
            #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            // No inline script or style in the page itself (the CSP would block it anyway).
            let html = String(buffer: page.body)
            #expect(!html.contains("<style") && !html.contains("style=") && !html.contains("<script>") && !html.contains("onclick"))

            for (path, type) in [("js/main.js", "text/javascript; charset=utf-8"), ("app.css", "text/css; charset=utf-8"), ("favicon.svg", "image/svg+xml")] {
                let file = try await client.execute(uri: "/dashboard/\(path)", method: .get)
                #expect(file.status == .ok, "\(path)")
                #expect(file.headers[.contentType] == type)
                let etag = try #require(file.headers[.eTag])
                let again = try await client.execute(uri: "/dashboard/\(path)", method: .get, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified)
                #expect(again.body.readableBytes == 0)
                let gzipped = try await client.execute(uri: "/dashboard/\(path)", method: .get, headers: [.acceptEncoding: "gzip, br"])
                if file.body.readableBytes > 1000 {
                    #expect(gzipped.headers[.contentEncoding] == "gzip")
                    #expect(try Zlib.inflate(Array(buffer: gzipped.body), limit: 1 << 20) == Array(buffer: file.body))
                }
            }
            for path in ["/dashboard/nope.js", "/dashboard/../data/secrets.json", "/dashboard/%2e%2e/Package.swift", "/dashboard/.hidden"] {
                #expect(try await client.execute(uri: path, method: .get).status == .notFound, "\(path)")
            }
        }
    }
}

/// The dashboard in a real headless Chromium against a live daemon with known data.
@Suite(.serialized) struct DashboardBrowserTests {
    static let xssRef = "<img src=x onerror=alert(1)>"
    static let hour: Int64 = 3_600_000

    /// A small, fully known data set around "now": two campaigns, one ref that tries XSS.
    static func events(now: Int64) -> [[String: Any]] {
        func event(_ id: String, _ type: String, hoursAgo: Double, ip: String, _ extra: [String: Any] = [:]) -> [String: Any] {
            var o: [String: Any] = ["id": id, "type": type, "timestamp": now - Int64(hoursAgo * Double(hour)), "ip": ip,
                                    "platform": "ios", "user_agent": SentEvent.personAgent]
            for (k, v) in extra { o[k] = v }
            return o
        }
        return [
            event("c1", "click", hoursAgo: 5, ip: "198.51.100.1", ["ref": "s1", "campaign": "spring", "source": "email"]),
            event("c2", "click", hoursAgo: 4.5, ip: "198.51.100.2", ["ref": "s1", "campaign": "spring", "source": "email"]),
            event("c3", "click", hoursAgo: 4, ip: "198.51.100.3", ["ref": "s1", "campaign": "spring", "source": "sms"]),
            event("i1", "install", hoursAgo: 3.9, ip: "198.51.100.9", ["click_id": "c1"]),
            event("f1", "fallback", hoursAgo: 3.8, ip: "198.51.100.2", ["ref": "s1", "platform": "web"]),
            event("c4", "click", hoursAgo: 3, ip: "198.51.100.4", ["ref": "s2", "campaign": "spring", "source": "social"]),
            event("c5", "click", hoursAgo: 3, ip: "198.51.100.5", ["ref": "s2", "campaign": "spring", "platform": "android"]),
            event("o1", "open", hoursAgo: 2.5, ip: "198.51.100.44", ["ref": "s2"]),
            event("c6", "click", hoursAgo: 2, ip: "198.51.100.6", ["ref": xssRef, "campaign": "spring"]),
            event("c7", "click", hoursAgo: 6, ip: "198.51.100.7", ["ref": "a1", "campaign": "autumn", "source": "email"]),
            event("c8", "click", hoursAgo: 6, ip: "198.51.100.8", ["ref": "a1", "campaign": "autumn"]),
            event("c9", "click", hoursAgo: 5, ip: "198.51.100.10", ["ref": "a1", "campaign": "autumn"]),
            event("i2", "install", hoursAgo: 4.9, ip: "198.51.100.10", ["click_id": "c9"]),
            event("i3", "install", hoursAgo: 1, ip: "203.0.113.77", [:]),
            event("b1", "click", hoursAgo: 1, ip: "198.51.100.99", ["ref": "s1", "campaign": "spring", "user_agent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"]),
        ]
    }

    static func utcDate(_ ms: Int64) -> String { String(ZoneClock(identifier: "UTC")!.format(ms).prefix(10)) }

    /// The API's answer for the dashboard's default range (the last 7 local days, UTC here).
    static func api(_ client: some TestClientProtocol, _ path: String, _ parameters: String, now: Int64) async throws -> [String: Any] {
        let range = "from=\(utcDate(now - 6 * 86_400_000))&to=\(utcDate(now))&tz=UTC"
        return try await StatsOracleTests.get(client, "/v1/\(path)?\(range)&\(parameters)")
    }

    static func tiles(_ browser: WebDriver) async throws -> [String: String] {
        let pairs = try await browser.script("return [...document.querySelectorAll('#tiles .tile')].map(t => [t.dataset.metric, t.dataset.value]);") as? [[String]] ?? []
        return Dictionary(uniqueKeysWithValues: pairs.map { ($0[0], $0[1]) })
    }

    /// Every tile equals the API's summary metric (rates as the same JSON numbers); installs
    /// and opens are shown from links and organic apart, as `opens_by_match` splits them.
    static func expectTiles(_ browser: WebDriver, equal metrics: [String: Any]) async throws {
        let shown = try await tiles(browser)
        #expect(shown.count == 10)
        var metrics = metrics
        for kind in ["installs", "opens"] {
            let total = (metrics[kind] as? Int) ?? 0
            let organic = ((metrics["\(kind)_by_match"] as? [String: Any])?["organic"] as? Int) ?? 0
            metrics["\(kind)_from_links"] = total - organic
            metrics["\(kind)_organic"] = organic
        }
        #expect(Set(shown.keys) == ["clicks", "unique_clicks", "installs_from_links", "installs_organic", "install_rate",
                                    "opens_from_links", "opens_organic", "open_rate", "fallbacks", "fallback_rate"])
        for (key, value) in shown {
            switch metrics[key] {
            case let number as NSNumber: #expect(abs((Double(value) ?? .nan) - number.doubleValue) < 1e-12, "tile \(key)")
            default: #expect(value == "", "tile \(key)")
            }
        }
    }

    /// Every row and cell of the main table equals the API breakdown's.
    static func expectTable(_ browser: WebDriver, equal rows: [[String: Any]]) async throws {
        let shown = try await browser.script("""
            return [...document.querySelectorAll('#table tbody tr')].map(r =>
              [r.querySelector('th').textContent, ...[...r.querySelectorAll('td')].map(td => td.dataset.column + '=' + td.dataset.value)]);
            """) as? [[String]] ?? []
        #expect(shown.count == rows.count)
        for (row, expected) in zip(shown, rows) {
            #expect(row[0] == (expected["key"] as? String ?? "(none)"))
            let metrics = expected["metrics"] as? [String: Any] ?? [:]
            for cell in row.dropFirst() {
                let parts = cell.split(separator: "=", maxSplits: 1).map(String.init)
                let column = parts[0], value = parts.count > 1 ? parts[1] : ""
                let installs = metrics["installs_by_match"] as? [String: Any] ?? [:], opens = metrics["opens_by_match"] as? [String: Any] ?? [:]
                let api = column.hasPrefix("installs_") ? installs[String(column.dropFirst(9))]
                    : column.hasPrefix("opens_") ? opens[String(column.dropFirst(6))] : metrics[column]
                if let number = api as? NSNumber {
                    #expect(abs((Double(value) ?? .nan) - number.doubleValue) < 1e-12, "\(row[0]) \(column)")
                } else {
                    #expect(value == "", "\(row[0]) \(column)")
                }
            }
        }
    }

    static func waitForRender(_ browser: WebDriver, after generation: Int) async throws -> Int {
        try await browser.wait(for: "document.body.dataset.state === 'ready' && Number(document.body.dataset.generation) > \(generation)")
        return try await browser.script("return Number(document.body.dataset.generation);") as? Int ?? 0
    }

    static func measures(_ browser: WebDriver, _ name: String) async throws -> [Double] {
        try await browser.script("return performance.getEntriesByName('\(name)').map(e => e.duration);") as? [Double] ?? []
    }

    /// On SQLite, and on two daemons sharing PostgreSQL (the browser on one, the test's own
    /// API calls alternating): the same dashboard, the same numbers.
    @Test(arguments: StoreBackend.allCases)
    func dashboardShowsTheAPIsNumbersDrillsDownAndKeepsItsStateInTheURL(on backend: StoreBackend) async throws {
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), dashboardsDirectory: dashboardsFolder)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await backend.test("dashboard", settings: settings, live: true) { client, _ in
            try await AttributionScenarioTests.send(Self.events(now: now), client)
            let counted = try await AttributionScenarioTests.rollUp(client)
            if backend == .postgres {
                // The daemon doing the derived work may have counted some already (its first
                // round after the start): what is left is counted now, and nothing after.
                #expect(counted <= Self.events(now: now).count)
                #expect(try await AttributionScenarioTests.rollUp(client) == 0)
            } else {
                #expect(counted == Self.events(now: now).count)
            }
            let base = "http://127.0.0.1:\(try #require(client.port))"
            try await WebDriver.with { browser in

            // Signed out: the sign-in form; a wrong key gets a message, not a blank page.
            try await browser.navigate("\(base)/dashboard/?range=7d&tz=UTC")
            try await browser.wait(for: "document.body.dataset.state === 'sign-in'")
            try await browser.type("#key", "lpr_no_such_key")
            try await browser.click("#sign-in-form button[type=submit]")
            try await browser.wait(for: "!document.getElementById('sign-in-error').hidden")
            let message = try await browser.script("return document.getElementById('sign-in-error').textContent;") as? String ?? ""
            #expect(message.contains("not accepted"), "\(message)")
            // An ingest key is known, but may not read stats: the form says so.
            try await browser.type("#key", TestInstallation.ingestKey)
            try await browser.click("#sign-in-form button[type=submit]")
            try await browser.wait(for: "document.getElementById('sign-in-error').textContent.includes('ingest key')")
            #expect(try await browser.script("return document.body.dataset.state;") as? String == "sign-in")
            try await browser.type("#key", TestInstallation.readKey)
            try await browser.click("#sign-in-form button[type=submit]")
            var generation = try await Self.waitForRender(browser, after: 0)
            // The header says which kind of key is signed in, and what it may do.
            let badge = try await browser.script("const b = document.getElementById('key-kind'); return [b.hidden, b.textContent, b.title];") as? [Any] ?? []
            #expect(badge.first as? Bool == false && (badge[1] as? String)?.hasPrefix("Read key") == true, "\(badge)")
            #expect((badge.last as? String)?.contains("read stats") == true, "\(badge)")

            // Tiles and table equal the API.
            let summary = try await Self.api(client, "stats/summary", "", now: now)
            try await Self.expectTiles(browser, equal: summary["metrics"] as? [String: Any] ?? [:])
            // Seven days up to now, compared with the seven before over as much time as has
            // elapsed of these: from the same midnight a week earlier, as long.
            let previous = try await browser.script("const t = document.getElementById('tiles').dataset; return [t.previousFrom, t.previousTo];") as? [String] ?? []
            let day: Int64 = 86_400_000
            let sevenDaysAgo = (now / day - 6) * day
            let previousFrom = try #require(previous.first.flatMap { try? Date($0, strategy: .iso8601) })
            let previousTo = try #require(previous.last.flatMap { try? Date($0, strategy: .iso8601) })
            #expect(Int64(previousFrom.timeIntervalSince1970 * 1000) == sevenDaysAgo - 7 * day, "\(previous)")
            let elapsedThen = Int64((previousTo.timeIntervalSince(previousFrom)) * 1000)
            let elapsedNow = Int64(Date().timeIntervalSince1970 * 1000) - sevenDaysAgo
            #expect(elapsedThen <= elapsedNow && elapsedNow - elapsedThen < 120_000, "\(previous)")
            let campaigns = try await Self.api(client, "stats/breakdown", "by=campaign&limit=50", now: now)
            try await Self.expectTable(browser, equal: campaigns["rows"] as? [[String: Any]] ?? [])
            #expect((campaigns["rows"] as? [[String: Any]])?.count == 3)  // spring, autumn, organic
            // The installs by match type sit under one heading; no heading wraps past two lines.
            let headings = try await browser.script("""
                const lines = (th) => { const r = document.createRange(); r.selectNodeContents((th.querySelector('button') ?? th).firstChild);
                  return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size; };
                const group = document.querySelector('#table thead th.group');
                const tall = [...document.querySelectorAll('#table thead th')].filter((th) => lines(th) > 2).map((th) => th.textContent);
                return [group?.textContent, group?.colSpan, tall.join(', ')];
                """) as? [Any] ?? []
            #expect(headings.first as? String == "Installs by match" && headings.dropFirst().first as? Int == 5, "\(headings)")
            #expect(headings.last as? String == "", "headings on more than two lines: \(headings)")
            // A line per series (clicks, installs from links, organic installs, opens from links,
            // fallbacks), each with today's bucket (not over yet) as a dashed segment of its own;
            // the last day's label ends inside the chart.
            let lines = try await browser.script("return document.querySelectorAll('#chart path.line:not(.partial)').length;") as? Int
            let partial = try await browser.script("return document.querySelectorAll('#chart path.line.partial').length;") as? Int
            #expect(lines == 5 && partial == 5, "\(String(describing: lines)) \(String(describing: partial))")
            let overflow = try await browser.script("""
                const chart = document.querySelector('#chart svg').getBoundingClientRect();
                return [...document.querySelectorAll('#chart text.axis')].map(t => t.getBoundingClientRect())
                  .filter(r => r.right > chart.right + 0.5 || r.left < chart.left - 0.5).length;
                """) as? Int
            #expect(overflow == 0)

            // Drill into a campaign: its refs; the XSS ref is text, nothing runs.
            try await browser.click("#table button.row-link[data-key='spring']")
            generation = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return location.search;") as? String == "?range=7d&tz=UTC&campaign=spring")
            #expect(try await browser.script("return document.getElementById('table-title').textContent;") as? String == "Refs of spring")
            let refs = try await Self.api(client, "stats/breakdown", "by=ref&campaign=spring&limit=50", now: now)
            try await Self.expectTable(browser, equal: refs["rows"] as? [[String: Any]] ?? [])
            let xssShown = try await browser.script(
                "return [...document.querySelectorAll('#table tbody th')].some(th => th.textContent === arguments[0]);", [Self.xssRef]) as? Bool
            #expect(xssShown == true)
            #expect(try await browser.script("return document.querySelectorAll('#stats-view img').length;") as? Int == 0)
            try await Self.expectTiles(browser, equal: (try await Self.api(client, "stats/summary", "campaign=spring", now: now))["metrics"] as? [String: Any] ?? [:])

            // …then into a ref; breadcrumbs lead back.
            try await browser.click("#table button.row-link[data-key='s1']")
            generation = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return location.search;") as? String == "?range=7d&tz=UTC&campaign=spring&ref=s1")
            try await Self.expectTiles(browser, equal: (try await Self.api(client, "stats/summary", "campaign=spring&ref=s1", now: now))["metrics"] as? [String: Any] ?? [:])
            let chips = try await browser.script("return [...document.querySelectorAll('#chips .chip')].map(c => c.dataset.filter);") as? [String]
            #expect(chips == ["campaign", "ref"])
            try await browser.click("#crumbs button.crumb")
            generation = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return location.search;") as? String == "?range=7d&tz=UTC")

            // Sorting is the API's; the bots toggle counts the preview bot's click.
            try await browser.click("#table th[data-column='installs'] button")
            generation = try await Self.waitForRender(browser, after: generation)
            let sorted = try await Self.api(client, "stats/breakdown", "by=campaign&sort=installs&order=desc&limit=50", now: now)
            try await Self.expectTable(browser, equal: sorted["rows"] as? [[String: Any]] ?? [])
            try await browser.click("#bots")
            generation = try await Self.waitForRender(browser, after: generation)
            try await Self.expectTiles(browser, equal: (try await Self.api(client, "stats/summary", "include_bots=true", now: now))["metrics"] as? [String: Any] ?? [:])

            // The URL round-trips the whole state: a shared link shows the same view.
            let today = Self.utcDate(now), weekAgo = Self.utcDate(now - 6 * 86_400_000)
            let updates = try await Self.measures(browser, "lp:update")
            let shared = "?range=custom&from=\(weekAgo)&to=\(today)&tz=Asia%2FKolkata&bots=1&campaign=spring&sort=installs&order=asc"
            try await browser.navigate("\(base)/dashboard/\(shared)")
            generation = try await Self.waitForRender(browser, after: 0)
            let first = try await Self.measures(browser, "lp:first-render")
            print("dashboard timings (small data set): first full render \(first.map { Int($0) }) ms, filter changes \(updates.map { Int($0) }) ms")
            #expect(first.count == 1 && updates.count >= 4)
            #expect(try await browser.script("return location.search;") as? String == shared)
            let controls = try await browser.script("""
                return [document.getElementById('range').value, document.getElementById('from').value, document.getElementById('to').value,
                        document.getElementById('tz').value, String(document.getElementById('bots').checked),
                        document.querySelector('#table th[aria-sort]')?.dataset.column, document.querySelector('#table th[aria-sort]')?.getAttribute('aria-sort')];
                """) as? [String]
            #expect(controls == ["custom", weekAgo, today, "Asia/Kolkata", "true", "installs", "ascending"])
            let kolkata = try await StatsOracleTests.get(client, "/v1/stats/breakdown?from=\(weekAgo)&to=\(today)&tz=Asia/Kolkata&include_bots=true&campaign=spring&by=ref&sort=installs&order=asc&limit=50")
            try await Self.expectTable(browser, equal: kolkata["rows"] as? [[String: Any]] ?? [])
            try await browser.script("history.back();")
            _ = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return new URLSearchParams(location.search).get('bots');") as? String == "1")

            // "Download CSV" fetches the table shown from the export endpoint.
            try await browser.click("#download")
            try await browser.wait(for: "performance.getEntriesByType('resource').some(e => e.name.includes('/v1/export.csv?') && e.responseStatus === 200) && !document.getElementById('download').disabled")
            #expect(try await browser.script("return document.getElementById('status').dataset.kind;") as? String == "ready")

            // A phone's width: no sideways scrolling of the page (wide tables scroll in place).
            try await browser.setWindowSize(width: 390, height: 844)
            let wide = try await browser.script("""
                return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap'))
                  .map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 12);
                """) as? [String] ?? []
            #expect(wide.isEmpty, "wider than a phone: \(wide)")
            try await browser.wait(for: "document.documentElement.scrollWidth <= window.innerWidth")

            // Nothing in the console (no errors, no CSP violations, no warnings) but the network
            // log of the refused key's 401.
            let problems = try await browser.consoleEntries().filter { $0.level == "SEVERE" || $0.level == "WARNING" }
            let refusedKey = "/v1/key? - Failed to load resource: the server responded with a status of 401"
            #expect(!problems.filter { $0.message.contains(refusedKey) }.isEmpty)  // Chromium logs it once or twice
            #expect(problems.filter { !$0.message.contains(refusedKey) }.isEmpty, "\(problems)")

            }
        }
    }

    /// Clicks from two countries in three browsers, and an install its Instagram click brought.
    static func audienceEvents(now: Int64) -> [[String: Any]] {
        let (gb, v6) = (AudienceHTTPTests.addresses.v4, AudienceHTTPTests.addresses.v6)
        let agents = AudienceHTTPTests.agents
        func event(_ id: String, _ type: String, hoursAgo: Double, ip: String, agent: String, _ extra: [String: Any] = [:]) -> [String: Any] {
            var o: [String: Any] = ["id": id, "type": type, "timestamp": now - Int64(hoursAgo * Double(Self.hour)), "ip": ip, "platform": "ios", "user_agent": agent]
            for (k, v) in extra { o[k] = v }
            return o
        }
        return [
            event("c1", "click", hoursAgo: 5, ip: gb, agent: agents.instagram, ["ref": "s1", "referrer": "https://l.instagram.com/?u=x"]),
            event("c2", "click", hoursAgo: 4, ip: gb, agent: agents.safari, ["ref": "s1", "platform": "web"]),
            event("c3", "click", hoursAgo: 3, ip: v6, agent: agents.android, ["ref": "s2", "platform": "android"]),
            event("i1", "install", hoursAgo: 2, ip: "198.51.100.9", agent: "Spring/3.1 CFNetwork/1490.0.4 Darwin/23.2.0", ["click_id": "c1"]),
        ]
    }

    /// The audience panels, on both stores, with the data Debian's packages carry: countries
    /// (a table and SVG bars), devices, systems, browsers and referrers equal the API's
    /// breakdowns; a country's bar filters the whole page by it.
    @Test(arguments: StoreBackend.allCases)
    func theAudiencePanelsShowTheAPIsBreakdownsAndFilter(on backend: StoreBackend) async throws {
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), dashboardsDirectory: dashboardsFolder)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let data = try await AudienceHTTPTests.loaded.value
        let v6 = AudienceHTTPTests.addresses.v6
        try await backend.test("dashboard_audience", settings: settings, live: true, audience: data) { client, _ in
            try await AttributionScenarioTests.send(Self.audienceEvents(now: now), client)
            _ = try await AttributionScenarioTests.rollUp(client)
            _ = try await AttributionScenarioTests.rollUp(client)
            let base = "http://127.0.0.1:\(try #require(client.port))"
            try await WebDriver.with { browser in
                try await browser.navigate("\(base)/dashboard/?range=7d&tz=UTC")
                try await browser.wait(for: "document.body.dataset.state === 'sign-in'")
                try await browser.type("#key", TestInstallation.readKey)
                try await browser.click("#sign-in-form button[type=submit]")
                _ = try await Self.waitForRender(browser, after: 0)
                try await browser.wait(for: "document.body.dataset.audience === 'ready'")

                /// The keys of a panel's rows, as shown.
                func keys(_ panel: String) async throws -> [String] {
                    try await browser.script("return [...document.querySelectorAll('#\(panel) tbody tr')].map(r => r.dataset.key);") as? [String] ?? []
                }
                func apiKeys(_ by: String, _ filters: String = "") async throws -> [String] {
                    let answer = try await Self.api(client, "stats/breakdown", "by=\(by)&limit=20\(filters)", now: now)
                    return (answer["rows"] as? [[String: Any]] ?? []).map { $0["key"] as? String ?? "" }
                }
                let countries = try await apiKeys("country")
                #expect(Set(countries) == ["GB", data.countries.country(of: v6)], "\(countries)")
                #expect(try await keys("by-country") == countries)
                for by in ["device", "os", "browser", "referrer_host"] {
                    #expect(try await keys("by-\(by)") == (try await apiKeys(by)), "\(by)")
                }
                #expect(try await keys("by-browser").contains("Instagram"))
                // The share of installs: GB has the one install (its click's country).
                let share = try await browser.script(
                    "return document.querySelector('#by-country tr[data-key=GB] td[data-column=install_share]').textContent;") as? String
                #expect(share?.hasPrefix("100") == true, "\(share ?? "")")
                let names = try await browser.script("return [...document.querySelectorAll('#by-country tbody th')].map(th => th.textContent);") as? [String] ?? []
                #expect(names.contains("United Kingdom (GB)"), "\(names)")
                let bars = try await browser.script("return [...document.querySelectorAll('#country-bars svg g.bar')].map(g => g.dataset.key);") as? [String] ?? []
                #expect(bars == countries.filter { !$0.isEmpty }, "\(bars)")

                // A bar filters the page by its country; the panels answer for that country.
                let generation = try await browser.script("return Number(document.body.dataset.generation);") as? Int ?? 0
                try await browser.script("document.querySelector('#country-bars g.bar[data-key=GB]').dispatchEvent(new MouseEvent('click', {bubbles: true}));")
                _ = try await Self.waitForRender(browser, after: generation)
                try await browser.wait(for: "document.body.dataset.audience === 'ready'")
                #expect(try await browser.script("return location.search;") as? String == "?range=7d&tz=UTC&country=GB")
                let chips = try await browser.script("return [...document.querySelectorAll('#chips .chip')].map(c => c.dataset.filter);") as? [String]
                #expect(chips == ["country"])
                try await Self.expectTiles(browser, equal: (try await Self.api(client, "stats/summary", "country=GB", now: now))["metrics"] as? [String: Any] ?? [:])
                #expect(try await keys("by-browser") == (try await apiKeys("browser", "&country=GB")))
                #expect(try await keys("by-country") == ["GB"])

                let problems = try await browser.consoleEntries().filter { $0.level == "SEVERE" || $0.level == "WARNING" }
                #expect(problems.isEmpty, "\(problems)")
            }
        }
    }

    /// The Links view, on both stores: each link's figures equal the links API's, a read key sees
    /// no form, an admin key makes a link (a refused field is marked), a link's QR code drawn
    /// in the browser reads back as its short URL, and a link's name opens its stats.
    @Test(arguments: StoreBackend.allCases)
    func theLinksViewShowsEachLinksFiguresMakesLinksAndDrawsTheirQRCodes(on backend: StoreBackend) async throws {
        var settings = HostedLinkHTTPTests.settings
        settings.dashboardsDirectory = dashboardsFolder
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await backend.test("dashboard_links", settings: settings, live: true) { client, _ in
            let created = try await HostedLinkHTTPTests.api(client, .post, "/v1/links", """
                {"ref":"spring","url":"https://example.com/spring","campaign":"\(Self.xssRef)"}
                """)
            #expect(created.status == .created, "\(created.json)")
            for agent in [HostedLinkHTTPTests.agents.desktop, HostedLinkHTTPTests.agents.desktop, HostedLinkHTTPTests.agents.slack] {
                #expect(try await HostedLinkHTTPTests.visit(client, "/spring", userAgent: agent).status != .notFound)
            }
            _ = try await AttributionScenarioTests.rollUp(client)
            let listed = try await Self.api(client, "links", "stats=true", now: now)
            let expected = try #require((listed["links"] as? [[String: Any]])?.first?["stats"] as? [String: Any])
            #expect(expected["clicks"] as? Int == 2 && expected["bot_events"] as? Int == 1)
            let base = "http://127.0.0.1:\(try #require(client.port))"
            try await WebDriver.with { browser in
            try await browser.navigate("\(base)/dashboard/?view=links&range=7d&tz=UTC#key=\(TestInstallation.readKey)")
            var generation = try await Self.waitForRender(browser, after: 0)
            // The row shows the API's figures, the campaign as text; a read key gets no form.
            let row = try await browser.script("""
                const r = document.querySelector('#links-table tbody tr[data-key="spring"]');
                return [r.querySelector('th').textContent, r.children[1].textContent,
                        ...[...r.querySelectorAll('td[data-column]')].map(td => td.dataset.column + '=' + td.dataset.value)];
                """) as? [String] ?? []
            #expect(row.prefix(2) == ["https://go.example.com/spring", Self.xssRef], "\(row)")
            #expect(try await browser.script("return document.querySelectorAll('#links-table img').length;") as? Int == 0)
            for cell in row.dropFirst(2) {
                let parts = cell.split(separator: "=", maxSplits: 1).map(String.init)
                let value = parts.count > 1 ? parts[1] : ""
                if let number = expected[parts[0]] as? NSNumber {
                    #expect(abs((Double(value) ?? .nan) - number.doubleValue) < 1e-12, "\(cell)")
                } else {
                    #expect(value == "", "\(cell)")
                }
            }
            #expect(try await browser.script("return document.getElementById('link-form').hidden && !document.getElementById('link-new-readonly').hidden;") as? Bool == true)
            // The QR code, drawn by the browser from the daemon's SVG, reads back as the short URL.
            try await browser.click("#links-table tr[data-key=spring] .qr-button")
            try await browser.wait(for: "document.getElementById('qr').dataset.loaded === 'true'")
            try await Self.expectQRCode(browser, reads: "https://go.example.com/spring")

            // An admin key makes links: a refused field is marked, a good link is listed with its QR code.
            try await browser.click("#sign-out")
            try await browser.type("#key", TestInstallation.adminKey)
            try await browser.click("#sign-in-form button[type=submit]")
            generation = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return document.getElementById('link-form').hidden;") as? Bool == false)
            try await browser.type("#link-form input[name=url]", "javascript:alert(1)")
            try await browser.click("#link-form button[type=submit]")
            try await browser.wait(for: "!document.getElementById('link-form-error').hidden")
            #expect(try await browser.script("return document.querySelector('#link-form input[name=url]').getAttribute('aria-invalid');") as? String == "true")
            try await browser.type("#link-form input[name=url]", "https://example.com/fall")
            try await browser.type("#link-form input[name=ref]", "fall")
            try await browser.type("#link-form input[name=campaign]", "fall")
            try await browser.click("#link-form button[type=submit]")
            generation = try await Self.waitForRender(browser, after: generation)
            try await browser.wait(for: "document.getElementById('qr').dataset.ref === 'fall' && document.getElementById('qr').dataset.loaded === 'true'")
            #expect(try await browser.script("return document.getElementById('link-created').textContent;") as? String == "Made https://go.example.com/fall")
            #expect(try await browser.script("return [...document.querySelectorAll('#links-table tbody tr')].map(r => r.dataset.key);") as? [String] == ["fall", "spring"])
            try await Self.expectQRCode(browser, reads: "https://go.example.com/fall")
            let stored = try await HostedLinkHTTPTests.api(client, .get, "/v1/links/fall", key: TestInstallation.readKey)
            #expect(stored.status == .ok && stored.json["campaign"] as? String == "fall")

            // A link's name opens the stats view filtered to its ref.
            try await browser.click("#links-table tr[data-key=spring] th button")
            _ = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return new URLSearchParams(location.search).get('ref') + ' ' + document.getElementById('links-view').hidden;") as? String == "spring true")
            try await Self.expectTiles(browser, equal: try await Self.api(client, "stats/summary", "ref=spring", now: now)["metrics"] as? [String: Any] ?? [:])
            // Nothing but the refused link's 400, which the browser logs for any failed request.
            let complaints = try await browser.consoleEntries().filter {
                ($0.level == "SEVERE" || $0.level == "WARNING") && !$0.message.contains("/v1/links - Failed to load resource: the server responded with a status of 400")
            }
            #expect(complaints.isEmpty, "\(complaints)")
            }
        }
    }

    /// The viewport, read by zbar, holds exactly one QR code: `text`.
    static func expectQRCode(_ browser: WebDriver, reads text: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkpulse-qr-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try await browser.screenshot().write(to: file)
        let read = try ChildProcess.run("/usr/bin/zbarimg", ["--quiet", "--raw", file.path])
        #expect(read.trimmingCharacters(in: .newlines) == text)
    }

    /// A daemon counting again (here: after an upgrade) shows a banner saying how many events
    /// its figures lack, and every answer says how long ago it was counted; once the recount is
    /// done, the banner goes.
    @Test func aRecountIsShownUntilItIsDone() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await CountingRulesUpgradeTests.storeAndCountTraffic(in: installation)
        try CountingRulesUpgradeTests.changeRollupFile(of: installation, "UPDATE rollup_state SET counting_rules = 1")
        let reopened = try AppDatabase(directory: installation.directory, logger: installation.logger)
        defer { try? reopened.close() }
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), dashboardsDirectory: dashboardsFolder, ingestPacing: .off)
        try await CountingRulesUpgradeTests.daemon(on: reopened, of: installation, settings: settings).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            try await WebDriver.with { browser in
                try await browser.navigate("\(base)/dashboard/?range=custom&from=2026-11-01&to=2026-11-03#key=\(TestInstallation.readKey)")
                _ = try await Self.waitForRender(browser, after: 0)
                let banner = try await browser.script(
                    "const b = document.getElementById('recount'); return [b.hidden, b.dataset.remaining, b.textContent];") as? [Any] ?? []
                #expect(banner.first as? Bool == false && banner.dropFirst().first as? String == "4", "\(banner)")
                #expect((banner.last as? String)?.contains("Counting again") == true)
                let status = try await browser.script("return document.getElementById('status').textContent;") as? String ?? ""
                #expect(status.contains("· updated "), "\(status)")
                _ = try await AttributionScenarioTests.rollUp(client)
                try await browser.navigate("\(base)/dashboard/?range=custom&from=2026-11-01&to=2026-11-03")
                _ = try await Self.waitForRender(browser, after: 0)
                #expect(try await browser.script("return document.getElementById('recount').hidden;") as? Bool == true)
            }
        }
    }

    @Test func aNewInstallationShowsHowToSendAFirstEvent() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let settings = ServerSettings(port: 0, rollupInterval: .seconds(3600), dashboardsDirectory: dashboardsFolder)
        try await installation.application(settings: settings).test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            try await WebDriver.with { browser in
            try await browser.navigate("\(base)/dashboard/#key=\(TestInstallation.readKey)")
            _ = try await Self.waitForRender(browser, after: 0)
            // The key moved from the address bar into storage.
            #expect(try await browser.script("return location.hash;") as? String == "")
            #expect(try await browser.script("return document.getElementById('empty').hidden;") as? Bool == false)
            #expect(try await browser.script("return document.getElementById('content').hidden;") as? Bool == true)
            let curl = try await browser.script("return document.getElementById('curl-line').textContent;") as? String ?? ""
            #expect(curl.hasPrefix("curl \(base)/v1/events"))
            // Without --links-config the Links view says how to turn hosted links on.
            let generation = try await browser.script("return Number(document.body.dataset.generation);") as? Int ?? 0
            try await browser.click("#views button[data-view=links]")
            _ = try await Self.waitForRender(browser, after: generation)
            #expect(try await browser.script("return document.getElementById('links-on').hidden && !document.getElementById('links-off').hidden;") as? Bool == true)
            #expect((try await browser.script("return document.getElementById('links-off-text').textContent;") as? String)?.contains("--links-config") == true)
            // Sign out forgets the key.
            try await browser.click("#sign-out")
            try await browser.wait(for: "document.body.dataset.state === 'sign-in' && localStorage.getItem('linkpulse.readKey') === null")
            // An ingest key in the address is told apart from a refused one, and not kept.
            try await browser.navigate("\(base)/dashboard/#key=\(TestInstallation.ingestKey)")
            try await browser.wait(for: "document.body.dataset.state === 'sign-in' && !document.getElementById('sign-in-error').hidden")
            let said = try await browser.script("return document.getElementById('sign-in-error').textContent;") as? String ?? ""
            #expect(said.contains("That is an ingest key") && !said.contains("no longer accepted"), "\(said)")
            #expect(try await browser.script("return localStorage.getItem('linkpulse.readKey') === null;") as? Bool == true)
            // Nothing but the links API's 404, which the browser logs for any failed request.
            let complaints = try await browser.consoleEntries().filter {
                ($0.level == "SEVERE" || $0.level == "WARNING") && !($0.message.contains("/v1/links?") && $0.message.contains("status of 404"))
            }
            #expect(complaints.isEmpty, "\(complaints)")
            }
        }
    }
}
