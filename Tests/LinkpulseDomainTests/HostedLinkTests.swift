import Foundation
import LinkpulseDomain
import Testing

/// The rules of hosted links, without a store or a server: the configuration file, the fields
/// a link takes, and where each visitor is sent.
@Suite struct HostedLinkTests {
    static let configText = """
        {"domains":["Go.Example.com","open.example.com"],"apps":[
         {"name":"shop","ios":{"app_ids":["ABCDE12345.com.example.shop"],"app_store_id":"1234567890","scheme":"shop"},
          "android":{"package":"com.example.shop","sha256_cert_fingerprints":["146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5"],"scheme":"shop"}},
         {"name":"web-only"}]}
        """
    static let config = try! LinksConfig(json: Data(configText.utf8))

    static func body(_ json: String) -> [String: JSONValue] {
        guard case .object(let object)? = JSONValue.parse(Array(json.utf8)) else { fatalError("not an object: \(json)") }
        return object
    }

    static func link(_ json: String) throws(EventError) -> HostedLink {
        try LinkFields(config: config).create(body(json), nowMs: 1_000, newRef: { "Gen3rated" })
    }

    @Test func theConfigurationIsReadWithItsDomainsInOrder() {
        let config = Self.config
        #expect(config.domains == ["go.example.com", "open.example.com"])
        #expect(config.role(ofHost: "GO.example.com:8443") == .primary)
        #expect(config.role(ofHost: "open.example.com") == .twin)
        #expect(config.role(ofHost: "example.com") == nil)
        #expect(config.twin(of: .primary) == "open.example.com" && config.twin(of: .twin) == "go.example.com")
        #expect(config.defaultApp.name == "shop")
        #expect(config.app(named: "shop")?.android?.sha256CertFingerprints == [
            "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
        ])
        #expect(config.app(named: "shop")?.ios?.storeURL == "https://apps.apple.com/app/id1234567890")
    }

    @Test(arguments: [
        (#"{"domains":["go.example.com"],"apps":[{"name":"a"}],"colour":"red"}"#, "colour"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a","ios":{"app_ids":["ABCDE12345.x"],"appstore":"1"}}]}"#, "apps[0].ios.appstore"),
        (#"{"domains":["https://go.example.com"],"apps":[{"name":"a"}]}"#, "domains[0]"),
        (#"{"domains":["a.example.com","b.example.com","c.example.com"],"apps":[{"name":"a"}]}"#, "domains"),
        (#"{"domains":["go.example.com"],"apps":[]}"#, "apps"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a"},{"name":"a"}]}"#, "apps[1].name"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a","ios":{"app_ids":["com.example.shop"]}}]}"#, "apps[0].ios.app_ids[0]"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a","android":{"package":"shop"}}]}"#, "apps[0].android.package"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a","android":{"package":"a.b","sha256_cert_fingerprints":["AB:CD"]}}]}"#, "apps[0].android.sha256_cert_fingerprints[0]"),
        (#"{"domains":["go.example.com"],"apps":[{"name":"a","ios":{"app_ids":["ABCDE12345.x"],"scheme":"javascript"}}]}"#, "apps[0].ios.scheme"),
    ])
    func aConfigurationThatCannotServeNamesTheSetting(json: String, field: String) {
        #expect(throws: LinksConfigError.self) { try LinksConfig(json: Data(json.utf8)) }
        do { _ = try LinksConfig(json: Data(json.utf8)) } catch { #expect(error.field == field, "\(error)") }
    }

    @Test func aLinkTakesEveryFieldAndDefaultsTheRest() throws {
        let link = try Self.link("""
            {"url":"https://example.com/shoes","campaign":"spring","source":"mail","medium":"email",
             "deep_link":{"sub2":"b","value":"shoe-1"},"ios_url":"https://m.example.com/shoes","ios_preview":false,
             "social":{"title":"Shoes","description":"New shoes","image":"https://example.com/s.png"},"expires_at":"2027-01-01T00:00:00Z"}
            """)
        #expect(link.ref == "Gen3rated" && link.app == "shop" && link.url == "https://example.com/shoes")
        #expect(link.campaign == "spring" && link.source == "mail" && link.medium == "email")
        #expect(link.deepLink.fields.map(\.key) == ["value", "sub2"], "in the answer's order")
        #expect(link.deepLinkProperties.map(\.key) == ["deep_link_value", "deep_link_sub2"])
        #expect(DeepLinkContent(storedJSON: link.deepLink.storedJSON) == link.deepLink, "stored and read back")
        #expect(link.iosURL == "https://m.example.com/shoes" && !link.iosPreview)
        #expect(link.social == SocialPreview(title: "Shoes", description: "New shoes", image: "https://example.com/s.png"))
        #expect(link.expiresAtMs == Timestamp.parseRFC3339("2027-01-01T00:00:00Z"))
        #expect(link.isExpired(atMs: link.expiresAtMs!) && !link.isExpired(atMs: link.expiresAtMs! - 1))
        let plain = try Self.link(#"{"url":"http://example.com","ref":"spring-sale_1"}"#)
        #expect(plain.ref == "spring-sale_1" && plain.iosPreview && plain.deepLink.fields.isEmpty && plain.expiresAtMs == nil)
    }

    @Test(arguments: [
        (#"{"url":"javascript:alert(1)"}"#, "url", "invalid_url"),
        (#"{"url":"data:text/html,<script>x</script>"}"#, "url", "invalid_url"),
        (#"{"url":"/relative"}"#, "url", "invalid_url"),
        (#"{"url":"https://a.example.com/\"><script>"}"#, "url", "invalid_url"),
        (#"{"url":"https://user@evil.example.com/"}"#, "url", "invalid_url"),
        (#"{"campaign":"x"}"#, "url", "missing_field"),
        (#"{"url":"https://example.com","ref":"a/b"}"#, "ref", "invalid_value"),
        (#"{"url":"https://example.com","ref":""}"#, "ref", "invalid_value"),
        (#"{"url":"https://example.com","ios_url":""}"#, "ios_url", "invalid_url"),
        (#"{"url":"https://example.com","ref":"V1"}"#, "ref", "reserved_ref"),
        (#"{"url":"https://example.com","ref":"dashboard"}"#, "ref", "reserved_ref"),
        (#"{"url":"https://example.com","app":"nope"}"#, "app", "unknown_app"),
        (#"{"url":"https://example.com","colour":"red"}"#, "colour", "unknown_field"),
        (#"{"url":"https://example.com","deep_link":{"sub11":"x"}}"#, "deep_link.sub11", "unknown_field"),
        (#"{"url":"https://example.com","social":{"image":"javascript:x"}}"#, "social.image", "invalid_url"),
        (#"{"url":"https://example.com","ios_preview":"yes"}"#, "ios_preview", "invalid_value"),
        (#"{"url":"https://example.com","expires_at":"tomorrow"}"#, "expires_at", "invalid_timestamp"),
        (#"{"url":"https://example.com","android_url":"intent://x"}"#, "android_url", "invalid_url"),
    ])
    func aFieldThatCannotBeServedIsRefusedByName(json: String, field: String, code: String) {
        do {
            _ = try Self.link(json)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.field == field && error.code == code, "\(error)")
        }
    }

    @Test func aPatchChangesTheFieldsGivenAndClearsThoseSetToNull() throws {
        let fields = LinkFields(config: Self.config)
        let link = try Self.link(#"{"url":"https://example.com","campaign":"a","medium":"m"}"#)
        let changed = try fields.patch(link, with: Self.body(#"{"campaign":"b","medium":null,"app":"web-only"}"#), nowMs: 9)
        #expect(changed.campaign == "b" && changed.medium == nil && changed.app == "web-only" && changed.url == link.url)
        #expect(changed.updatedAtMs == 9 && changed.createdAtMs == link.createdAtMs)
        #expect(throws: EventError.self) { try fields.patch(link, with: Self.body(#"{"ref":"other"}"#), nowMs: 9) }
        #expect(throws: EventError.self) { try fields.patch(link, with: Self.body(#"{"url":null}"#), nowMs: 9) }
    }

    @Test func generatedRefsAreEightLettersOrDigitsAndDiffer() {
        let refs = (0..<1_000).map { _ in LinkRefs.random() }
        #expect(refs.allSatisfy { $0.count == 8 && HostedLink.isValidName($0) && $0.allSatisfy { $0.isLetter || $0.isNumber } })
        #expect(Set(refs).count == refs.count)
    }

    // Where each visitor goes.

    static let routing = LinkRouting(config: config)
    static let person = (ios: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1",
                         android: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36",
                         desktop: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15",
                         instagram: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Instagram 312.0",
                         facebookAndroid: "Mozilla/5.0 (Linux; Android 14; Pixel 8; wv) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/445.0;]")
    static let classifier = UserAgentClassifier()

    func answer(_ link: HostedLink, _ userAgent: String, on role: LinkDomainRole = .primary) -> LinkAnswer {
        Self.routing.answer(link, to: LinkVisitor(userAgent: userAgent, classifier: Self.classifier), on: role, clickId: "c1")
    }

    @Test func previewFetchersGetTheCardAndNeverARedirect() throws {
        let link = try Self.link(#"{"url":"https://example.com/shoes"}"#)
        for agent in ["facebookexternalhit/1.1", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "WhatsApp/2.23.20.0 A",
                      "TelegramBot (like TwitterBot)", "Mozilla/5.0 (compatible; Discordbot/2.0)", "LinkedInBot/1.0",
                      "Mozilla/5.0 (compatible; Googlebot/2.1)", "Twitterbot/1.0"] {
            #expect(answer(link, agent) == .socialPage, "\(agent)")
        }
        // A monitor or curl is a bot too (stored as one), but is sent on like anybody.
        #expect(answer(link, "curl/8.4.0") == .redirect("https://example.com/shoes"))
    }

    @Test func iOSGetsThePreviewPageWhoseButtonLeadsToTheTwinAndTheTwinSendsOnToTheStore() throws {
        let link = try Self.link(#"{"url":"https://example.com/shoes","ref":"shoes"}"#)
        #expect(answer(link, Self.person.ios) == .appPreview(
            button: "https://open.example.com/shoes?lp_click=c1", withoutApp: "https://apps.apple.com/app/id1234567890",
            pasteboard: "https://go.example.com/shoes?cp_url=true&lp_click=c1"))
        #expect(answer(link, Self.person.ios, on: .twin) == .redirect("https://apps.apple.com/app/id1234567890"))
        let straight = try Self.link(#"{"url":"https://example.com/shoes","ios_preview":false}"#)
        #expect(answer(straight, Self.person.ios) == .redirect("https://apps.apple.com/app/id1234567890"))
        // In an app's browser the button is what works, whatever the link says.
        guard case .appPreview = answer(straight, Self.person.instagram) else { Issue.record("no preview page in-app"); return }
        let mobileWeb = try Self.link(#"{"url":"https://example.com/shoes","ios_url":"https://m.example.com/shoes","ios_preview":false}"#)
        #expect(answer(mobileWeb, Self.person.ios) == .redirect("https://m.example.com/shoes"))
    }

    @Test func androidOpensTheAppOrThePlayStoreWithTheClickInTheReferrer() throws {
        let link = try Self.link(#"{"url":"https://example.com/shoes","ref":"shoes","campaign":"spring sale","source":"mail"}"#)
        let store = "https://play.google.com/store/apps/details?id=com.example.shop&referrer="
            + "lp_click%3Dc1%26utm_source%3Dmail%26utm_campaign%3Dspring%2520sale"
        #expect(answer(link, Self.person.android) == .redirect(
            "intent://go.example.com/shoes?lp_click=c1#Intent;scheme=shop;package=com.example.shop;S.browser_fallback_url=\(URLQuery.encode(store));end"))
        // The referrer, decoded once by the Play Store, is what the resolve reads.
        let referrer = InstallReferrer(parsing: "lp_click=c1&utm_source=mail&utm_campaign=spring%20sale")
        #expect(referrer.clickId == "c1" && referrer.campaign == "spring sale" && referrer.source == "mail")
        guard case .appPreview(let button, let withoutApp, nil) = answer(link, Self.person.facebookAndroid) else {
            Issue.record("no preview page in Facebook's browser")
            return
        }
        #expect(button == "https://open.example.com/shoes?lp_click=c1" && withoutApp == store)
        #expect(answer(link, Self.person.facebookAndroid, on: .twin) == .redirect(store))
    }

    @Test func desktopsAndPlatformsTheAppLacksGoToTheFallbackOrTheWebPage() throws {
        let link = try Self.link(#"{"url":"https://example.com/shoes","desktop_url":"https://example.com/desk"}"#)
        #expect(answer(link, Self.person.desktop) == .redirect("https://example.com/desk"))
        let webOnly = try Self.link(#"{"url":"https://example.com/w","app":"web-only","android_url":"https://example.com/a"}"#)
        #expect(answer(webOnly, Self.person.ios) == .redirect("https://example.com/w"))
        #expect(answer(webOnly, Self.person.android) == .redirect("https://example.com/a"))
    }

    @Test func theClickCarriesTheLinkAndTheTappedURLsCampaignWins() throws {
        let link = try Self.link(#"{"url":"https://example.com","ref":"shoes","campaign":"spring","medium":"email","deep_link":{"value":"shoe-1"}}"#)
        let payload = LinkClick.payload(
            id: "c1", link: link, tappedURL: "https://go.example.com/shoes?utm_campaign=summer&deep_link_value=evil", referrer: "https://mail.example.com/")
        #expect(payload.ref.value == "shoes" && payload.type.value == "click" && payload.id.value == "c1")
        #expect(payload.campaign.value == "summer" && payload.medium.value == "email" && payload.source.value == nil)
        #expect(payload.properties.value == ["deep_link_value": .string("shoe-1")], "the link's deep link, not the query's")
        #expect(payload.referrer.value == "https://mail.example.com/")
        #expect(LinkClick.carriedClickId(inQuery: "https://open.example.com/shoes?lp_click=0c8f1e2a-5b3c-4d6e-8f90-123456789abc")
            == "0c8f1e2a-5b3c-4d6e-8f90-123456789abc")
        #expect(LinkClick.carriedClickId(inQuery: "https://open.example.com/shoes?lp_click=%3Cscript%3E") == nil)
    }

    @Test func webURLsAreAbsoluteHTTPWithAHostAndNothingAPageCouldMisread() {
        for good in ["https://example.com", "http://example.com:8080/a?b=c#d", "https://例え.jp/パス"] { #expect(WebURL.isSafe(good), "\(good)") }
        for bad in ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "//example.com", "https:///path", "https://a b.com",
                    "https://a.com/<x>", "https://a.com/\"", "https://u:p@a.com", "ftp://a.com", "https://a.com/\u{0}"] {
            #expect(!WebURL.isSafe(bad), "\(bad)")
        }
    }

    @Test func anOpenWhoseURLIsAHostedLinkTakesItsRefAndTheClickItCarries() throws {
        let validator = EventValidator(hasher: KeyedHasher(secret: Array(repeating: 1, count: 32)), linkDomains: Set(Self.config.domains))
        let facts = RequestFacts(receivedAtMs: 1_795_000_000_000, clientIP: nil, userAgent: nil)
        func event(_ json: String) throws -> IngestEvent {
            let payload = try JSONDecoder().decode(EventPayload.self, from: Data(json.utf8))
            return try validator.validate(payload, request: facts).get()
        }
        let opened = try event(#"{"type":"open","url":"https://GO.example.com/shoes?utm_source=x"}"#)
        #expect(opened.ref == "shoes" && opened.clickId == nil)
        let tapped = try event(#"{"type":"install","url":"https://open.example.com/shoes?lp_click=0c8f1e2a-5b3c-4d6e-8f90-123456789abc"}"#)
        #expect(tapped.ref == "shoes" && tapped.clickId == "0c8f1e2a-5b3c-4d6e-8f90-123456789abc" && tapped.clickIdSource == .universalLink)
        #expect(try event(#"{"type":"open","ref":"own","url":"https://go.example.com/shoes"}"#).ref == "own", "the app's own ref wins")
        #expect(try event(#"{"type":"open","url":"https://example.com/shoes"}"#).ref == nil, "not a link domain")
        #expect(try event(#"{"type":"open","url":"https://go.example.com/a/b"}"#).ref == nil, "not one ref")
        #expect(try event(#"{"type":"click","ref":"r","url":"https://go.example.com/shoes"}"#).ref == "r")
        let link = try Self.link(#"{"url":"https://example.com","deep_link":{"value":"v","sub1":"s"}}"#)
        let answered = try event(#"{"type":"open","url":"https://go.example.com/x","properties":{"deep_link_value":"own","n":2}}"#).addingDeepLink(of: link)
        #expect(answered.propertiesJSON == #"{"deep_link_sub1":"s","deep_link_value":"own","n":2}"#)
    }
}
