import Foundation
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import NIOCore
import TestSupport
import Testing

/// The landing-page kit (`ops/landing/`) in a real browser against the real daemon: the page
/// records its click, and what it hands the stores (the Play Store referrer, the iOS
/// pasteboard text) brings the app's first launch back to that click through `/v1/resolve`.
@Suite struct LandingKitTests {
    static let page = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "ops/landing/example.html")
    static let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36"

    @Test func theLandingPagesClickComesBackThroughTheReferrerAndThePasteboard() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let (clickId, playStore, pasteboard) = try await WebDriver.with(userAgent: Self.android) { browser in
                try await browser.navigate("\(Self.page.absoluteString)?endpoint=\(base)&key=\(TestInstallation.ingestKey)&ref=kit&campaign=spring")
                try await browser.wait(for: "window.landing !== undefined", timeout: .seconds(20))
                let id = try await browser.script("return window.landing.clickId;") as? String ?? ""
                #expect(try await browser.script("return window.landing.platform;") as? String == "android")
                let store = try await browser.script("return window.landing.playStoreURL();") as? String ?? ""
                let paste = try await browser.script("return window.landing.pasteboardText();") as? String ?? ""
                return (id, store, paste)
            }
            // The beacon reached the daemon: the click is stored under the page's id.
            try await eventually(within: .seconds(10)) {
                try installation.count("SELECT count(*) FROM events WHERE event_id = '\(clickId)' AND type = 'click' AND bot = 0") > 0
            }
            #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = '\(clickId)' AND ref = 'kit' AND campaign = 'spring'") == 1)

            // Android: the app reads the Play Store's `referrer` back and sends it as is.
            let referrer = try #require(URLComponents(string: playStore)?.queryItems?.first { $0.name == "referrer" }?.value)
            #expect(playStore.hasPrefix("https://play.google.com/store/apps/details?id=com.example.shop&referrer="))
            let viaReferrer = try await ResolveHTTPTests.resolve(
                ["id": "kit-install-1", "type": "install", "platform": "android", "install_referrer": referrer, "user_agent": Self.android], client)
            #expect(viaReferrer.json["match_type"] as? String == "install_referrer", "\(viaReferrer.text)")
            #expect(viaReferrer.json["ref"] as? String == "kit" && viaReferrer.json["campaign"] as? String == "spring")
            #expect((viaReferrer.json["click"] as? [String: Any])?["id"] as? String == clickId)
            #expect(viaReferrer.json["deep_link"] as? [String: String] == ["value": "shoe-123"])

            // iOS: the app finds the marker on the pasteboard and sends the click id it carries.
            let items = URLComponents(string: pasteboard)?.queryItems ?? []
            #expect(items.contains { $0.name == "cp_url" && $0.value == "true" })
            let pasted = try #require(items.first { $0.name == "lp_click" }?.value)
            let viaPasteboard = try await ResolveHTTPTests.resolve(
                ["id": "kit-install-2", "type": "install", "platform": "ios", "click_id": pasted, "click_id_source": "pasteboard", "user_agent": SentEvent.personAgent], client)
            #expect(viaPasteboard.json["match_type"] as? String == "click_id" && viaPasteboard.json["ref"] as? String == "kit")
        }
    }
}
