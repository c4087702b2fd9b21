/// Who is asking for a link, as far as the request tells: a preview fetcher drawing a card, or
/// a person on a platform, perhaps inside an app's own browser.
public struct LinkVisitor: Sendable, Equatable {
    public var platform: Platform
    /// The bot rule's reason (`preview:slack`, `crawler:google`, `monitor:…`), nil for a person.
    public var botReason: String?
    /// Inside an app's web view (Instagram, Facebook, LinkedIn, Gmail on Android…), where
    /// universal links and App Links rarely fire and `intent:` URLs may go nowhere.
    public var inAppBrowser: Bool

    public init(platform: Platform, botReason: String?, inAppBrowser: Bool) {
        self.platform = platform
        self.botReason = botReason
        self.inAppBrowser = inAppBrowser
    }

    /// Reads a request's user agent with the daemon's bot rules.
    public init(userAgent: String?, classifier: UserAgentClassifier) {
        let verdict = classifier.classify(userAgent)
        self.init(platform: verdict.platform, botReason: verdict.botReason, inAppBrowser: Self.isInAppBrowser(userAgent))
    }

    /// Link-preview fetchers and search engines: they get the social page (Open Graph,
    /// Twitter and App Links tags), never a redirect.
    public var drawsPreview: Bool {
        guard let botReason else { return false }
        return botReason.hasPrefix("preview:") || botReason.hasPrefix("crawler:")
    }

    /// Markers apps put into their web views' user agents.
    static let inAppMarkers = [
        "FBAN/", "FBAV/", "FB_IAB", "FBIOS", "Instagram", "LinkedInApp", "GSA/", "Line/", "MicroMessenger", "Snapchat",
        "Pinterest/", "musical_ly", "BytedanceWebview", "Twitter for", "TwitterAndroid", "GmailApp", "; wv)",
    ].map { Array($0.utf8) }

    static func isInAppBrowser(_ userAgent: String?) -> Bool {
        guard let userAgent, !userAgent.isEmpty else { return false }
        return ByteSearch.withBytes(userAgent) { bytes in inAppMarkers.contains { ByteSearch.contains(bytes, $0) } }
    }
}

/// How a link is answered to one visitor (see `LinkRouting.answer`).
public enum LinkAnswer: Sendable, Equatable {
    /// `200` HTML with the link's Open Graph, Twitter and App Links tags, for a preview fetcher.
    case socialPage
    /// `200` HTML: the link's preview with a button to `button` (the same link on the twin
    /// domain, which opens the app when installed), and where a person goes without the app.
    /// On iOS the button first puts the link with the click id on the pasteboard.
    case appPreview(button: String, withoutApp: String, pasteboard: String?)
    /// `302` to `location`.
    case redirect(String)
}

/// Decides, per visitor, where a hosted link sends them (the seeds' recipe): preview fetchers
/// get the card; Android opens the app or the Play Store with the click in the install
/// referrer; iOS gets the app preview page whose button leads to the twin domain, and the twin
/// sends on to the App Store; in-app browsers get the preview page on either platform; a
/// platform the app lacks, and desktops, go to the link's fallback or its web page. Every
/// location comes from the link or the configured stores, never from the request.
public struct LinkRouting: Sendable {
    public let config: LinksConfig

    public init(config: LinksConfig) {
        self.config = config
    }

    /// The short URL of `ref` on `host`, with `query` (already encoded) when given.
    public static func linkURL(host: String, ref: String, query: String? = nil) -> String {
        "https://\(host)/\(ref)" + (query.map { "?\($0)" } ?? "")
    }

    /// The answer to `visitor` asking for `link` on the domain `role`; `clickId` is the id
    /// the visit's click is stored under.
    public func answer(_ link: HostedLink, to visitor: LinkVisitor, on role: LinkDomainRole, clickId: String) -> LinkAnswer {
        if visitor.drawsPreview { return .socialPage }
        let app = config.app(named: link.app) ?? config.defaultApp
        switch visitor.platform {
        case .ios:
            guard app.ios != nil else { return .redirect(link.iosURL ?? link.url) }
            let withoutApp = link.iosURL ?? app.ios?.storeURL ?? link.url
            // The twin is where the preview page's button leads: the app did not open, so on
            // to the store (the pasteboard was filled on the way).
            if role == .twin { return .redirect(withoutApp) }
            guard link.iosPreview || visitor.inAppBrowser else { return .redirect(withoutApp) }
            return .appPreview(
                button: button(link, role: role, clickId: clickId, withoutApp: withoutApp), withoutApp: withoutApp,
                pasteboard: Self.linkURL(host: config.primaryDomain, ref: link.ref, query: "cp_url=true&\(InstallReferrer.clickParameter)=\(clickId)"))
        case .android:
            guard let android = app.android else { return .redirect(link.androidURL ?? link.url) }
            let withoutApp = link.androidURL ?? playStoreURL(android, link: link, clickId: clickId)
            if visitor.inAppBrowser {
                if role == .twin { return .redirect(withoutApp) }
                return .appPreview(button: button(link, role: role, clickId: clickId, withoutApp: withoutApp), withoutApp: withoutApp, pasteboard: nil)
            }
            return .redirect(intentURL(android, link: link, role: role, clickId: clickId, fallback: withoutApp))
        case .desktop, .web, .other:
            return .redirect(link.desktopURL ?? link.url)
        }
    }

    /// The preview page's button: the same link on the twin domain, carrying the click id (so
    /// the twin stores no second click, and an app it opens knows the click); straight to
    /// `withoutApp` when there is no twin.
    func button(_ link: HostedLink, role: LinkDomainRole, clickId: String, withoutApp: String) -> String {
        guard config.domains.count > 1 else { return withoutApp }
        return Self.linkURL(host: config.twin(of: role), ref: link.ref, query: "\(InstallReferrer.clickParameter)=\(clickId)")
    }

    /// The Play Store page of the app, with the click and the link's campaign in `referrer=`
    /// (read back on first launch through the Play Install Referrer API).
    public func playStoreURL(_ android: LinkApp.AndroidApp, link: HostedLink, clickId: String) -> String {
        var pairs = [(InstallReferrer.clickParameter, clickId)]
        if let source = link.source { pairs.append(("utm_source", source)) }
        if let medium = link.medium { pairs.append(("utm_medium", medium)) }
        if let campaign = link.campaign { pairs.append(("utm_campaign", campaign)) }
        let referrer = pairs.map { "\($0.0)=\(URLQuery.encode($0.1))" }.joined(separator: "&")
        return "https://play.google.com/store/apps/details?id=\(URLQuery.encode(android.package))&referrer=\(URLQuery.encode(referrer))"
    }

    /// An `intent:` URL that opens the app on the link (its own scheme when it has one, else
    /// the link's https URL, which its App Links filter takes), with `fallback` for a phone
    /// without it.
    func intentURL(_ android: LinkApp.AndroidApp, link: HostedLink, role: LinkDomainRole, clickId: String, fallback: String) -> String {
        return "intent://\(config.domain(role))/\(link.ref)?\(InstallReferrer.clickParameter)=\(clickId)#Intent;scheme=\(android.scheme ?? "https");"
            + "package=\(android.package);S.browser_fallback_url=\(URLQuery.encode(fallback));end"
    }
}

/// Percent-encoding for query values: everything but RFC 3986's unreserved characters.
public enum URLQuery {
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if HostedLink.isNameByte(byte) || byte == 0x2E || byte == 0x7E {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

/// The click a visit to a hosted link stores, as `/v1/events` would take it from a landing
/// page: under the link's ref and campaign (the tapped URL's `utm_campaign`, `utm_source` and
/// `utm_medium` win), with the link's deep link as `deep_link_*` properties; the validator then
/// adds the visitor (user agent, hashed address, bot verdict) from the request.
public enum LinkClick {
    /// - Parameters:
    ///   - tappedURL: the URL as requested (`https://host/ref?query`).
    ///   - referrer: the request's `Referer` header.
    public static func payload(id: String, link: HostedLink, tappedURL: String, referrer: String?) -> EventPayload {
        let tapped = LinkURL(tappedURL)
        var payload = EventPayload()
        payload.id = .value(id)
        payload.type = .value(EventKind.click.rawValue)
        payload.ref = .value(link.ref)
        if let campaign = tapped.parameter("utm_campaign") ?? link.campaign { payload.campaign = .value(campaign) }
        if let source = tapped.parameter("utm_source") ?? link.source { payload.source = .value(source) }
        if let medium = tapped.parameter("utm_medium") ?? link.medium { payload.medium = .value(medium) }
        payload.url = .value(String(tappedURL.prefix(IngestLimits.maxURLLength)))
        if let referrer, !referrer.isEmpty { payload.referrer = .value(String(referrer.prefix(IngestLimits.maxURLLength))) }
        let properties = link.deepLinkProperties
        if !properties.isEmpty {
            payload.properties = .value(Dictionary(properties.map { ($0.key, PropertyValue.string($0.value)) }, uniquingKeysWith: { first, _ in first }))
        }
        return payload
    }

    /// The click id a visit carries in its query (`lp_click`, put there by the preview page's
    /// button), when it is one the daemon could have made: the twin then stores no second click.
    public static func carriedClickId(inQuery tappedURL: String) -> String? {
        guard let id = LinkURL(tappedURL).parameter(InstallReferrer.clickParameter),
              id.utf8.count == 36, id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == 0x2D })
        else { return nil }
        return id
    }
}

/// A URL that is a hosted link: `https://<link domain>/<ref>`, perhaps with the `lp_click` the
/// preview page's button adds. What an app opened by the link reports as its `url`.
public struct HostedLinkURL: Sendable, Equatable {
    public var ref: String
    public var clickId: String?

    /// Nil when `url` is not on one of `linkDomains` (lower case) or its path is not one ref.
    public init?(_ url: String, linkDomains: Set<String>) {
        guard !linkDomains.isEmpty else { return nil }
        let link = LinkURL(url)
        guard let host = link.host, linkDomains.contains(String(LinksConfig.hostWithoutPort(host))) else { return nil }
        let segments = link.pathSegments
        guard segments.count == 1, HostedLink.isValidName(segments[0]) else { return nil }
        ref = segments[0]
        clickId = LinkClick.carriedClickId(inQuery: url)
    }
}

extension IngestEvent {
    /// The event with `link`'s deep link added to its properties as `deep_link_*` (those it
    /// sent itself stay): what an app opened by the link is answered, as if it had sent them.
    public func addingDeepLink(of link: HostedLink) -> IngestEvent {
        let added = link.deepLinkProperties
        guard !added.isEmpty else { return self }
        var properties: [String: PropertyValue] = [:]
        if let propertiesJSON, case .object(let object)? = JSONValue.parse(Array(propertiesJSON.utf8)) {
            for (key, value) in object {
                switch value {
                case .string(let text): properties[key] = .string(text)
                case .number(let number): properties[key] = .number(number)
                case .bool(let flag): properties[key] = .bool(flag)
                case .null, .array, .object: continue
                }
            }
        }
        for (key, value) in added where properties[key] == nil { properties[key] = .string(value) }
        var event = self
        event.propertiesJSON = JSONText.properties(properties)
        return event
    }
}
