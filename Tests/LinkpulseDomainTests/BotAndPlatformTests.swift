import Testing
@testable import LinkpulseDomain

@Suite struct BotDetectorTests {
    let bots = BotDetector.standard

    @Test(arguments: [
        ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "preview:facebook"),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0", "preview:imessage"),
        ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "preview:slack"),
        ("WhatsApp/2.23.20.0", "preview:whatsapp"),
        ("TelegramBot (like TwitterBot)", "preview:telegram"),
        ("Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "preview:discord"),
        ("LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "preview:linkedin"),
        ("Twitterbot/1.0", "preview:x"),
        ("curl/8.4.0", "tool:curl"),
        ("python-requests/2.31.0", "tool:python-requests"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", "automation:headless-chrome"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "crawler:google"),
        ("SomeNewCrawler/0.1", "generic:crawler"),
        ("Acme Monitor (+https://acme.example/monitor)", "generic:bot-url"),
    ])
    func recognisesBots(userAgent: String, reason: String) {
        #expect(bots.reason(userAgent: userAgent) == reason)
    }

    @Test(arguments: [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
        "Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0 Mobile Safari/537.36",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/440.0]",
        "Shoes/4.2.0 (iPhone; iOS 17.1; Scale/3.00) CFNetwork/1474 Darwin/23.0.0",
        "okhttp/4.12.0",
        "",
    ])
    func leavesPeopleAlone(userAgent: String) {
        #expect(bots.reason(userAgent: userAgent) == nil)
    }

    @Test func missingUserAgentIsNotJudged() {
        #expect(bots.reason(userAgent: nil) == nil)
    }

    @Test func rulesFileFormat() {
        let detector = BotDetector(rulesText: "# comment\n\nalpha+beta\tboth\nalpha\tone\n+http\tliteral\nbroken line\n")
        #expect(detector.reason(userAgent: "x ALPHA y Beta") == "both")
        #expect(detector.reason(userAgent: "alpha") == "one")
        #expect(detector.reason(userAgent: "see +http://x") == "literal")
        #expect(detector.reason(userAgent: "broken line") == nil)
    }
}

@Suite struct PlatformTests {
    @Test(arguments: [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X)", Platform.ios),
        ("Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X)", .ios),
        ("Mozilla/5.0 (iPod touch; CPU iPhone OS 12_0 like Mac OS X)", .ios),
        ("Mozilla/5.0 (Linux; Android 14; Pixel 8)", .android),
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64)", .desktop),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)", .desktop),
        ("Mozilla/5.0 (X11; Linux x86_64)", .desktop),
        ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0)", .desktop),
        ("curl/8.4.0", .other),
        ("", .other),
    ])
    func fromUserAgent(userAgent: String, platform: Platform) {
        #expect(Platform.from(userAgent: userAgent) == platform)
    }
}

@Suite struct KeyTests {
    @Test func constantTimeComparison() {
        #expect(constantTimeEquals("lpi_abc", "lpi_abc"))
        #expect(!constantTimeEquals("lpi_abd", "lpi_abc"))
        #expect(!constantTimeEquals("lpi_ab", "lpi_abc"))
        #expect(!constantTimeEquals("lpi_abcd", "lpi_abc"))
        #expect(!constantTimeEquals("", "lpi_abc"))
        #expect(!constantTimeEquals("LPI_ABC", "lpi_abc"))
    }

    @Test func keyedHashesAreStableAndKeyed() {
        let a = KeyedHasher(secret: Array(repeating: 1, count: 32))
        let b = KeyedHasher(secret: Array(repeating: 2, count: 32))
        #expect(a.ipHash("203.0.113.7") == a.ipHash("203.0.113.7"))
        #expect(a.ipHash("203.0.113.7") != b.ipHash("203.0.113.7"))
        #expect(a.ipHash("203.0.113.7").count == 32)
        #expect(!a.ipHash("203.0.113.7").contains("203"))
        let ip = a.ipHash("203.0.113.7")
        #expect(a.visitorId(ipHash: ip, userAgent: "UA") != a.visitorId(ipHash: ip, userAgent: "UB"))
        #expect(a.visitorId(ipHash: ip, userAgent: "UA").hasPrefix("v:"))
        #expect(a.visitorId(ipHash: ip, userAgent: "UA").count == 34)
        // Keyed: another installation gives the same visitor another id, with or without an address.
        #expect(a.visitorId(ipHash: ip, userAgent: "UA") != b.visitorId(ipHash: b.ipHash("203.0.113.7"), userAgent: "UA"))
        #expect(a.visitorId(ipHash: nil, userAgent: "UA") != b.visitorId(ipHash: nil, userAgent: "UA"))
    }

    @Test func eventIdKeysAreStable() {
        // Stored on disk: the key of an id must never change between versions.
        #expect(EventIdKey.of("e1") == EventIdKey.of("e1"))
        #expect(EventIdKey.of("e1") != EventIdKey.of("e2"))
        #expect(EventIdKey.of("abc") == Int64(bitPattern: 0xffff_ba78_16bf_8f01))  // SHA-256 ba7816bf8f01…, 6 bytes signed
    }
}
