import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import TestSupport
import Testing

/// Hosted links through the real router on both stores (two daemons sharing one PostgreSQL
/// database, requests alternating between them): the API, what each visitor gets on the link
/// domains, the stored clicks, the association files, and the app's deep link after install.
/// The link domain reaches the daemon as a trusted proxy's `X-Forwarded-Host` (the test
/// clients always send `Host: localhost`).
@Suite struct HostedLinkHTTPTests {
    static let config = try! LinksConfig(json: Data("""
        {"domains":["go.example.com","open.example.com"],"apps":[
         {"name":"shop","ios":{"app_ids":["ABCDE12345.com.example.shop"],"app_store_id":"1234567890","scheme":"shop"},
          "android":{"package":"com.example.shop","sha256_cert_fingerprints":["146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5"]}}]}
        """.utf8))
    static let settings = ServerSettings(port: 0, trustProxy: true, rollupInterval: .seconds(3600), ingestPacing: .off, links: config)
    static let agents = (
        ios: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1",
        android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36",
        desktop: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15",
        slack: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")

    /// A links API call with `key` (the admin key by default); the answer and its JSON.
    static func api(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil,
        key: String? = TestInstallation.adminKey
    ) async throws -> (status: HTTPResponse.Status, json: [String: Any], response: TestResponse) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:], response)
    }

    /// A visit to `path` on `host` (a link domain unless nil) by `userAgent`.
    static func visit(
        _ client: some TestClientProtocol, _ path: String, host: String? = "go.example.com", userAgent: String, method: HTTPRequest.Method = .get
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.userAgent: userAgent, HTTPField.Name("X-Forwarded-For")!: "198.51.100.20"]
        if let host { headers[HTTPField.Name("X-Forwarded-Host")!] = host }
        return try await client.execute(uri: path, method: method, headers: headers)
    }

    static func error(_ json: [String: Any]) -> (code: String?, field: String?) {
        let detail = json["error"] as? [String: Any]
        return (detail?["code"] as? String, detail?["field"] as? String)
    }

    @Test(arguments: StoreBackend.allCases)
    func linksAreCreatedReadChangedAndDeletedWithTheRightKeys(on backend: StoreBackend) async throws {
        try await backend.test("links_api", settings: Self.settings) { client, _ in
            let body = #"{"ref":"spring","url":"https://example.com/spring","campaign":"spring","deep_link":{"value":"sale-1"},"social":{"title":"Spring"}}"#
            let created = try await Self.api(client, .post, "/v1/links", body)
            #expect(created.status == .created, "\(created.json)")
            #expect(created.json["short_url"] as? String == "https://go.example.com/spring")
            #expect(created.response.headers[.location] == "/v1/links/spring")
            #expect((created.json["deep_link"] as? [String: String]) == ["value": "sale-1"])
            #expect(created.json["ios_preview"] as? Bool == true && created.json["app"] as? String == "shop")
            #expect(created.json["expires_at"] is NSNull && created.json["campaign"] as? String == "spring")
            #expect(try await Self.api(client, .post, "/v1/links", body).status == .conflict)
            let generated = try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com/other"}"#)
            let ref = try #require(generated.json["ref"] as? String)
            #expect(generated.status == .created && ref.count == 8)
            // What may not be served, and who may not change links.
            let bad = try await Self.api(client, .post, "/v1/links", #"{"url":"javascript:alert(1)"}"#)
            #expect(bad.status == .badRequest && Self.error(bad.json) == ("invalid_url", "url"))
            let reserved = try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com","ref":"v1"}"#)
            #expect(reserved.status == .badRequest && Self.error(reserved.json).field == "ref")
            #expect(try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com"}"#, key: TestInstallation.readKey).status == .forbidden)
            #expect(try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com"}"#, key: TestInstallation.ingestKey).status == .forbidden)
            #expect(try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com"}"#, key: nil).status == .unauthorized)
            #expect(try await Self.api(client, .post, "/v1/links", "[1]").status == .badRequest)
            // Read with a read key, newest first; on PostgreSQL each call goes to the other daemon.
            let listed = try await Self.api(client, .get, "/v1/links?limit=10", key: TestInstallation.readKey)
            #expect(listed.status == .ok && listed.json["total"] as? Int == 2)
            #expect((listed.json["links"] as? [[String: Any]])?.compactMap { $0["ref"] as? String } == [ref, "spring"])
            #expect(try await Self.api(client, .get, "/v1/links?limit=0", key: TestInstallation.readKey).status == .badRequest)
            let changed = try await Self.api(client, .patch, "/v1/links/spring", #"{"campaign":"summer","social":null}"#)
            #expect(changed.status == .ok && changed.json["campaign"] as? String == "summer")
            let read = try await Self.api(client, .get, "/v1/links/spring", key: TestInstallation.readKey)
            #expect(read.json["campaign"] as? String == "summer" && (read.json["social"] as? [String: Any])?["title"] is NSNull)
            #expect(try await Self.api(client, .patch, "/v1/links/spring", #"{"url":"data:x"}"#).status == .badRequest)
            #expect(try await Self.api(client, .patch, "/v1/links/nope", #"{"campaign":"x"}"#).status == .notFound)
            // Deleted: gone from the API, 410 on the link domain, and the ref is never given again.
            #expect(try await Self.api(client, .delete, "/v1/links/spring").status == .noContent)
            #expect(try await Self.api(client, .delete, "/v1/links/spring").status == .notFound)
            #expect(try await Self.api(client, .get, "/v1/links/spring", key: TestInstallation.readKey).status == .notFound)
            #expect(try await Self.visit(client, "/spring", userAgent: Self.agents.desktop).status == .gone)
            #expect(try await Self.api(client, .post, "/v1/links", body).status == .conflict)
            // Past its expiry a link answers 410, and is still listed.
            #expect(try await Self.api(client, .post, "/v1/links", #"{"ref":"over","url":"https://example.com/o","expires_at":"2001-01-01T00:00:00Z"}"#).status == .created)
            #expect(try await Self.visit(client, "/over", userAgent: Self.agents.desktop).status == .gone)
            #expect(try await Self.api(client, .get, "/v1/links/over", key: TestInstallation.readKey).status == .ok)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func eachVisitorIsSentWhereTheRecipeSaysAndItsClickIsStoredOnce(on backend: StoreBackend) async throws {
        try await backend.test("links_visits", settings: Self.settings) { client, probe in
            let created = try await Self.api(client, .post, "/v1/links", """
                {"ref":"shoes","url":"https://example.com/shoes","campaign":"spring","source":"mail","deep_link":{"value":"shoe-1"},
                 "social":{"title":"Shoes <script>alert(1)</script>","description":"\\"quoted\\" & more","image":"https://example.com/s.png"}}
                """)
            #expect(created.status == .created, "\(created.json)")

            let desktop = try await Self.visit(client, "/shoes?utm_campaign=summer", userAgent: Self.agents.desktop)
            #expect(desktop.status == .found && desktop.headers[.location] == "https://example.com/shoes")
            #expect(desktop.headers[.cacheControl] == "no-store")

            let android = try await Self.visit(client, "/shoes", userAgent: Self.agents.android)
            let intent = try #require(android.headers[.location])
            #expect(android.status == .found && intent.hasPrefix("intent://go.example.com/shoes?lp_click="))
            #expect(intent.contains(";scheme=https;package=com.example.shop;S.browser_fallback_url=https%3A%2F%2Fplay.google.com%2F"))

            let ios = try await Self.visit(client, "/shoes", userAgent: Self.agents.ios)
            let page = String(buffer: ios.body)
            #expect(ios.status == .ok && ios.headers[.contentType] == "text/html; charset=utf-8" && ios.headers[.cacheControl] == "no-store")
            let policy = try #require(ios.headers[HTTPField.Name("Content-Security-Policy")!])
            #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-") && !policy.contains("unsafe"))
            #expect(page.contains(#"href="https://open.example.com/shoes?lp_click="#))
            #expect(page.contains(#"data-pasteboard="https://go.example.com/shoes?cp_url=true&amp;lp_click="#))
            #expect(page.contains("Shoes &lt;script&gt;alert(1)&lt;/script&gt;") && !page.contains("<script>alert"))
            #expect(page.contains("&quot;quoted&quot; &amp; more"))
            // The button's tap reaches the twin when the app is not installed: on to the App
            // Store, without a second click.
            let clickId = try #require(page.firstMatch(of: /open\.example\.com\/shoes\?lp_click=([0-9a-f-]{36})/)?.output.1)
            let twin = try await Self.visit(client, "/shoes?lp_click=\(clickId)", host: "open.example.com", userAgent: Self.agents.ios)
            #expect(twin.status == .found && twin.headers[.location] == "https://apps.apple.com/app/id1234567890")

            let slack = try await Self.visit(client, "/shoes", userAgent: Self.agents.slack)
            let card = String(buffer: slack.body)
            #expect(slack.status == .ok && card.contains(#"<meta property="og:title" content="Shoes &lt;script&gt;"#))
            #expect(card.contains(#"<meta property="al:ios:app_store_id" content="1234567890">"#))
            #expect(card.contains(#"<meta property="al:android:package" content="com.example.shop">"#))
            #expect(card.contains(#"<meta property="og:image" content="https://example.com/s.png">"#))

            // HEAD, another host, a ref nobody has: nothing stored.
            #expect(try await Self.visit(client, "/shoes", userAgent: Self.agents.desktop, method: .head).status == .found)
            let elsewhere = try await Self.visit(client, "/shoes", host: nil, userAgent: Self.agents.desktop)
            #expect(elsewhere.status == .notFound && elsewhere.headers[.contentType]?.hasPrefix("application/json") == true)
            let unknown = try await Self.visit(client, "/nobody", userAgent: Self.agents.desktop)
            #expect(unknown.status == .notFound && String(buffer: unknown.body).contains("No such link"))

            // Four clicks: desktop, Android, iOS, and the preview fetcher's, stored as a bot's.
            let clicks = try probe.count(
                sqlite: "SELECT count(*) FROM events WHERE ref = 'shoes' AND type = 'click'",
                postgres: "SELECT count(*) FROM lp_events WHERE ref = 'shoes' AND type = 0")
            #expect(clicks == 4)
            #expect(try probe.count(
                sqlite: "SELECT count(*) FROM events WHERE ref = 'shoes' AND bot = 1 AND bot_reason = 'preview:slack'",
                postgres: "SELECT count(*) FROM lp_events WHERE ref = 'shoes' AND bot AND bot_reason = 'preview:slack'") == 1)
            // The tapped URL's campaign wins; the link's source and deep link are the click's.
            #expect(try probe.count(
                sqlite: "SELECT count(*) FROM events WHERE ref = 'shoes' AND campaign = 'summer' AND source = 'mail' AND properties = '{\"deep_link_value\":\"shoe-1\"}'",
                postgres: "SELECT count(*) FROM lp_events WHERE ref = 'shoes' AND campaign = 'summer' AND source = 'mail' AND properties = '{\"deep_link_value\":\"shoe-1\"}'") == 1)
            #expect(try probe.count(
                sqlite: "SELECT count(*) FROM events WHERE event_id = '\(clickId)' AND platform = 'ios' AND ip_hash IS NOT NULL",
                postgres: "SELECT count(*) FROM lp_events WHERE event_id = '\(clickId)' AND platform = 0 AND ip_hash IS NOT NULL") == 1)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func anInstallFromTheLinksPlayStoreReferrerGetsTheLinksDeepLink(on backend: StoreBackend) async throws {
        try await backend.test("links_referrer", settings: Self.settings) { client, _ in
            #expect(try await Self.api(client, .post, "/v1/links", #"{"ref":"promo","url":"https://example.com/p","campaign":"launch","deep_link":{"value":"promo-7","sub1":"blue"}}"#).status == .created)
            let android = try await Self.visit(client, "/promo", userAgent: Self.agents.android)
            let intent = try #require(android.headers[.location])
            // The Play Store URL in the intent's fallback, and the referrer it carries through the install.
            let fallback = try #require(intent.firstMatch(of: /S\.browser_fallback_url=([^;]+);/)?.output.1)
            let decoded = try #require(String(fallback).removingPercentEncoding)
            let store = try #require(URLComponents(string: decoded))
            #expect(store.host == "play.google.com" && store.queryItems?.first { $0.name == "id" }?.value == "com.example.shop")
            let referrer = try #require(store.queryItems?.first { $0.name == "referrer" }?.value)
            let answer = try await ResolveHTTPTests.resolve(
                ["id": "install-promo", "type": "install", "platform": "android", "install_referrer": referrer, "user_agent": Self.agents.android],
                client)
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.json["match_type"] as? String == "install_referrer" && answer.json["ref"] as? String == "promo")
            #expect(answer.json["campaign"] as? String == "launch")
            #expect((answer.json["deep_link"] as? [String: String]) == ["value": "promo-7", "sub1": "blue"])
        }
    }

    /// An app opened by the link itself (a universal link or App Link on either domain) sends
    /// the link as its `url`: a `ref` match answered with the link's deep link, or, from the
    /// preview page's button on the twin, the click id that URL carries.
    @Test(arguments: StoreBackend.allCases)
    func anAppOpenedByTheLinkItselfGetsTheLinksDeepLink(on backend: StoreBackend) async throws {
        try await backend.test("links_opened", settings: Self.settings) { client, _ in
            #expect(try await Self.api(client, .post, "/v1/links", #"{"ref":"gift","url":"https://example.com/g","deep_link":{"value":"gift-9"}}"#).status == .created)
            let opened = try await ResolveHTTPTests.resolve(
                ["id": "open-gift", "type": "open", "platform": "ios", "url": "https://go.example.com/gift", "user_agent": Self.agents.ios], client)
            #expect(opened.status == .ok, "\(opened.text)")
            #expect(opened.json["match_type"] as? String == "ref" && opened.json["ref"] as? String == "gift")
            #expect((opened.json["deep_link"] as? [String: String]) == ["value": "gift-9"])
            // The tap on the preview page's button, with the app installed: the twin's URL.
            let page = String(buffer: try await Self.visit(client, "/gift", userAgent: Self.agents.ios).body)
            let clickId = try #require(page.firstMatch(of: /open\.example\.com\/gift\?lp_click=([0-9a-f-]{36})/)?.output.1)
            let tapped = try await ResolveHTTPTests.resolve(
                ["id": "open-gift-2", "type": "open", "platform": "ios", "url": "https://open.example.com/gift?lp_click=\(clickId)",
                 "user_agent": Self.agents.ios], client)
            #expect(tapped.json["match_type"] as? String == "click_id", "\(tapped.text)")
            #expect((tapped.json["click"] as? [String: Any])?["id"] as? String == String(clickId))
            #expect((tapped.json["deep_link"] as? [String: String]) == ["value": "gift-9"])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func theAssociationFilesListTheAppsOnTheLinkDomainsOnly(on backend: StoreBackend) async throws {
        try await backend.test("links_association", settings: Self.settings) { client, _ in
            for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association"] {
                let file = try await Self.visit(client, path, host: "open.example.com", userAgent: "AASA-Bot/1.0")
                #expect(file.status == .ok && file.headers[.contentType] == "application/json")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: file.body)) as? [String: Any])
                let details = try #require((json["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
                #expect(details.count == 1 && details[0]["appIDs"] as? [String] == ["ABCDE12345.com.example.shop"])
                #expect(details[0]["appID"] as? String == "ABCDE12345.com.example.shop" && (details[0]["paths"] as? [String])?.last == "*")
                #expect((details[0]["components"] as? [[String: Any]])?.contains { $0["/"] as? String == "/v1/*" && $0["exclude"] as? Bool == true } == true)
                #expect(try await Self.visit(client, path, host: nil, userAgent: "AASA-Bot/1.0").status == .notFound)
            }
            let links = try await Self.visit(client, "/.well-known/assetlinks.json", userAgent: "Google-Digital-Asset-Links")
            #expect(links.status == .ok && links.headers[.contentType] == "application/json")
            let statements = try #require(try JSONSerialization.jsonObject(with: Data(buffer: links.body)) as? [[String: Any]])
            let target = try #require(statements.first?["target"] as? [String: Any])
            #expect(target["package_name"] as? String == "com.example.shop")
            #expect((target["sha256_cert_fingerprints"] as? [String])?.first?.hasPrefix("14:6D:E9") == true)
        }
    }

    /// `GET /v1/links?stats=true` gives each listed link the metrics a breakdown by ref gives it
    /// over the same range: its people's clicks, not its preview fetchers, and its installs.
    @Test(arguments: StoreBackend.allCases)
    func theListedLinksCarryTheirMetricsOverTheRange(on backend: StoreBackend) async throws {
        try await backend.test("links_stats", settings: Self.settings) { client, _ in
            for ref in ["busy", "quiet"] {
                #expect(try await Self.api(client, .post, "/v1/links", #"{"ref":"\#(ref)","url":"https://example.com/\#(ref)","campaign":"fall"}"#).status == .created)
            }
            for agent in [Self.agents.desktop, Self.agents.desktop, Self.agents.android, Self.agents.slack] {
                #expect(try await Self.visit(client, "/busy", userAgent: agent).status != .notFound)
            }
            let install = #"{"id":"i-1","type":"install","platform":"android","device_id":"d-1","ref":"busy","campaign":"fall"}"#
            #expect(try await Self.api(client, .post, "/v1/events", install, key: TestInstallation.ingestKey).status == .accepted)
            #expect(try await Self.api(client, .post, "/v1/admin/rollup", key: TestInstallation.readKey).status == .ok)
            let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
            let day = { (ms: Int64) in String(Timestamp.formatUTC(ms).prefix(10)) }
            let range = "from=\(day(nowMs - 86_400_000))&to=\(day(nowMs))&tz=UTC"
            let listed = try await Self.api(client, .get, "/v1/links?stats=true&\(range)", key: TestInstallation.readKey)
            #expect(listed.status == .ok && listed.json["tz"] as? String == "UTC", "\(listed.json)")
            let links = try #require(listed.json["links"] as? [[String: Any]])
            let stats = Dictionary(uniqueKeysWithValues: links.map { ($0["ref"] as! String, $0["stats"] as? [String: Any] ?? [:]) })
            #expect(stats["busy"]?["clicks"] as? Int == 3 && stats["busy"]?["unique_clicks"] as? Int == 2)
            #expect(stats["busy"]?["installs"] as? Int == 1 && stats["busy"]?["bot_events"] as? Int == 1)
            #expect(stats["quiet"]?["clicks"] as? Int == 0 && stats["quiet"]?["install_rate"] is NSNull)
            let breakdown = try await Self.api(client, .get, "/v1/stats/breakdown?by=ref&\(range)", key: TestInstallation.readKey)
            let row = try #require((breakdown.json["rows"] as? [[String: Any]])?.first { $0["key"] as? String == "busy" })
            #expect(NSDictionary(dictionary: row["metrics"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: stats["busy"] ?? [:]))
            // Without stats=true a link has none; a bad range is named.
            let plain = try await Self.api(client, .get, "/v1/links", key: TestInstallation.readKey)
            #expect((plain.json["links"] as? [[String: Any]])?.allSatisfy { $0["stats"] == nil } == true && plain.json["from"] == nil)
            let bad = try await Self.api(client, .get, "/v1/links?stats=true&tz=Mars/Olympus", key: TestInstallation.readKey)
            #expect(bad.status == .badRequest && (bad.json["error"] as? [String: Any])?["parameter"] as? String == "tz")
            #expect(try await Self.api(client, .get, "/v1/links?stats=yes", key: TestInstallation.readKey).status == .badRequest)
        }
    }

    /// The PNG QR code reads back (with zbar, a reader independent of the encoder) as the link's
    /// short URL at every scale; the SVG one is read back from the dashboard in a real browser.
    @Test(arguments: StoreBackend.allCases)
    func aLinksQRCodeReadsBackAsItsShortURL(on backend: StoreBackend) async throws {
        try await backend.test("links_qr", settings: Self.settings) { client, _ in
            let created = try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com/qr"}"#)
            let ref = try #require(created.json["ref"] as? String)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkpulse-qr-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            for scale in [nil, 2, 13] {
                let png = try await Self.api(client, .get, "/v1/links/\(ref)/qr.png" + (scale.map { "?scale=\($0)" } ?? ""), key: TestInstallation.readKey)
                #expect(png.status == .ok && png.response.headers[.contentType] == "image/png")
                let file = directory.appendingPathComponent("\(scale ?? 0).png")
                try Data(buffer: png.response.body).write(to: file)
                let read = try ChildProcess.run("/usr/bin/zbarimg", ["--quiet", "--raw", file.path])
                #expect(read.trimmingCharacters(in: .newlines) == "https://go.example.com/\(ref)")
            }
            let svg = try await Self.api(client, .get, "/v1/links/\(ref)/qr.svg", key: TestInstallation.readKey)
            #expect(svg.status == .ok && svg.response.headers[.contentType] == "image/svg+xml")
            #expect(String(buffer: svg.response.body).hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            #expect(try await Self.api(client, .get, "/v1/links/\(ref)/qr.png?scale=0", key: TestInstallation.readKey).status == .badRequest)
            #expect(try await Self.api(client, .get, "/v1/links/\(ref)/qr.svg", key: nil).status == .unauthorized)
            #expect(try await Self.api(client, .get, "/v1/links/none/qr.svg", key: TestInstallation.readKey).status == .notFound)
            #expect(try await Self.api(client, .delete, "/v1/links/\(ref)").status == .noContent)
            #expect(try await Self.api(client, .get, "/v1/links/\(ref)/qr.png", key: TestInstallation.readKey).status == .notFound)
        }
    }

    /// Without `--links-config` the links API says how to turn links on, and no path is a link.
    @Test func withoutAConfigurationLinksAreOff() async throws {
        try await StoreBackend.sqlite.test("links_off") { client, _ in
            let answer = try await Self.api(client, .post, "/v1/links", #"{"url":"https://example.com"}"#)
            #expect(answer.status == .notFound && Self.error(answer.json).code == "links_off")
            #expect(try await Self.visit(client, "/anything", userAgent: Self.agents.desktop).status == .notFound)
        }
    }
}

/// The app preview page in a real browser (headless Chromium with an iPhone's user agent, the
/// link domains resolved to the test daemon): it renders under its own strict
/// Content-Security-Policy with nothing refused, shows the link's preview, and a tap on its
/// button puts the link with the click id on the pasteboard before following the button.
@Suite struct HostedLinkBrowserTests {
    @Test func thePreviewPageRendersUnderItsPolicyAndItsButtonFillsThePasteboard() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        var settings = HostedLinkHTTPTests.settings
        settings.trustProxy = false
        try await installation.application(settings: settings).test(.live) { client in
            let port = try #require(client.port)
            let created = try await HostedLinkHTTPTests.api(client, .post, "/v1/links", """
                {"ref":"shoes","url":"https://example.com/shoes","social":{"title":"New shoes </title><script>window.injected=1</script>","description":"Soft & light"}}
                """)
            #expect(created.status == .created)
            // The link domains lead to the test daemon, over plain HTTP taken as the secure
            // origin the HTTPS domains are (where the page has the Clipboard API).
            let arguments = [
                "--host-resolver-rules=MAP go.example.com 127.0.0.1:\(port), MAP open.example.com 127.0.0.1:\(port)",
                "--unsafely-treat-insecure-origin-as-secure=http://go.example.com",
            ]
            try await WebDriver.with(userAgent: HostedLinkHTTPTests.agents.ios, arguments: arguments) { browser in
                try await browser.navigate("http://go.example.com/shoes")
                try await browser.wait(for: "document.querySelector('a.open') !== null", timeout: .seconds(20))
                #expect(try await browser.script("return document.querySelector('h1').textContent;") as? String
                    == "New shoes </title><script>window.injected=1</script>")
                #expect(try await browser.script("return window.injected === undefined;") as? Bool == true, "no markup from a link's fields")
                // The page's own style applies (allowed by its hash): the button is a block.
                #expect(try await browser.script("return getComputedStyle(document.querySelector('a.open')).display;") as? String == "block")
                // A tap: the page's script writes the pasteboard (watched here), then the
                // browser follows the button to the twin.
                _ = try await browser.script("""
                    window.pasted = [];
                    navigator.clipboard.writeText = function (text) { window.pasted.push(text); return Promise.resolve(); };
                    document.querySelector('a.open').addEventListener('click', function (e) { e.preventDefault(); });
                    """)
                try await browser.click("a.open")
                try await browser.wait(for: "window.pasted.length === 1", timeout: .seconds(10))
                let pasted = try #require(try await browser.script("return window.pasted[0];") as? String)
                let button = try #require(try await browser.script("return document.querySelector('a.open').href;") as? String)
                #expect(pasted.hasPrefix("https://go.example.com/shoes?cp_url=true&lp_click="))
                #expect(button == "https://open.example.com/shoes?lp_click=" + pasted.split(separator: "=").last!)
                // (The browser's own request for /favicon.ico is no link: a 404 the page did not ask for.)
                let refused = try await browser.consoleEntries().filter {
                    ($0.message.contains("Content Security Policy") || $0.level == "SEVERE") && !$0.message.contains("/favicon.ico")
                }
                #expect(refused.isEmpty, "\(refused)")
            }
            // The visit's click is the one the pasteboard names.
            #expect(try installation.count("SELECT count(*) FROM events WHERE ref = 'shoes' AND type = 'click' AND platform = 'ios'") == 1)
        }
    }
}
