/// Who an event came from, in the stats' audience dimensions: derived at ingest from the
/// request's address (before it is hashed), its user agent and its `Accept-Language`, and stored
/// with the event as one short text (`stored`). `""` is "unknown" in every field.
///
/// The referrer's host is the sixth audience dimension; it is not stored here but read from the
/// event's `referrer` (`AudienceDimensions.referrerHost(of:)`), which every event keeps already.
public struct AudienceDimensions: Sendable, Hashable {
    /// ISO 3166-1 alpha-2, upper case (`DE`), or `""`.
    public var country: String
    public var device: DeviceClass
    /// The operating system's family (`iOS`, `iPadOS`, `Android`, `Windows`, `macOS`, `Linux`,
    /// `ChromeOS`…).
    public var os: String
    /// The operating system's major version (`17`), or `""`.
    public var osMajor: String
    /// The browser's family (`Safari`, `Chrome`, `Instagram`…).
    public var browser: String
    /// The primary subtag of the first language the visitor asks for (`en`), lower case.
    public var language: String

    public init(country: String = "", device: DeviceClass = .other, os: String = "", osMajor: String = "", browser: String = "", language: String = "") {
        (self.country, self.device, self.os, self.osMajor, self.browser, self.language) = (country, device, os, osMajor, browser, language)
    }

    /// Nothing known: what an event stored without audience data reads as.
    public static let unknown = AudienceDimensions()

    /// The kind of device, from its user agent.
    public enum DeviceClass: String, Sendable, CaseIterable {
        case phone, tablet, desktop, tv, console, bot, other
    }

    /// Separates the fields of `stored`: a control character, which no field holds (the
    /// fields' values are cleaned of control characters when derived).
    static let separator: Character = "\u{1F}"

    /// The one text the event keeps: the fields in order, separated by U+001F; nil when
    /// nothing is known (most stored events of an installation without the data).
    public var stored: String? {
        Self.stored(country: country, agent: Self.agentText(device: device, os: os, osMajor: osMajor, browser: browser), language: language)
    }

    /// The middle of `stored`, what the user agent says (device, system, major version,
    /// browser): the same for every event of one user agent, so `UserAgentClassifier` makes it
    /// once per user agent and ingest only puts the country and language around it.
    public static func agentText(device: DeviceClass, os: String, osMajor: String, browser: String) -> String {
        let s = separatorText
        return device.rawValue + s + os + s + osMajor + s + browser
    }

    /// `stored` from its parts (`agent` as `agentText` makes it; nil: nothing known of the user
    /// agent).
    public static func stored(country: String, agent: String?, language: String) -> String? {
        let agent = agent ?? unknownAgent
        if country.isEmpty, language.isEmpty, agent == unknownAgent { return nil }
        return country + separatorText + agent + separatorText + language
    }

    static let separatorText = String(separator)

    static let unknownAgent = agentText(device: .other, os: "", osMajor: "", browser: "")

    /// Reads `stored` back; nil or a text of another shape reads as `unknown`.
    public init(stored: String?) {
        guard let stored else { self = .unknown; return }
        let fields = stored.split(separator: Self.separator, omittingEmptySubsequences: false)
        guard fields.count == 6 else { self = .unknown; return }
        self.init(
            country: String(fields[0]), device: DeviceClass(rawValue: String(fields[1])) ?? .other, os: String(fields[2]),
            osMajor: String(fields[3]), browser: String(fields[4]), language: String(fields[5]))
    }

    /// The host of a referrer URL in lower case, as sent (`www.instagram.com`; `""` for none, or
    /// for a referrer that is not a URL, such as an install referrer's query text).
    public static func referrerHost(of referrer: String?) -> String {
        guard var referrer else { return "" }
        return referrer.withUTF8 { referrerHost(utf8: $0) }
    }

    /// `referrerHost(of:)` of a referrer's UTF-8 bytes (what an export reads), without making a
    /// string of the whole referrer. Letters are lowered in ASCII (hosts travel as ASCII: an
    /// international name as its punycode).
    public static func referrerHost(utf8 bytes: UnsafeBufferPointer<UInt8>) -> String {
        // The scheme: ASCII letters, digits, "+", "-", "." before "://".
        var i = 0
        while i < bytes.count, isSchemeByte(bytes[i]) { i += 1 }
        guard i > 0, i + 2 < bytes.count, bytes[i] == UInt8(ascii: ":"), bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/")
        else { return "" }
        var start = i + 3
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        // Credentials before the host ("user:pw@host") are not part of it.
        if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        if start < end, bytes[start] == UInt8(ascii: "[") {
            // An IPv6 literal, brackets kept.
            guard let close = bytes[start..<end].firstIndex(of: UInt8(ascii: "]")) else { return "" }
            end = close + 1
        } else if let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        if end > start, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
        let host = bytes[start..<end]
        guard host.count <= 253, !host.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return "" }
        return String(decoding: host.lazy.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func isSchemeByte(_ b: UInt8) -> Bool {
        (b >= 97 && b <= 122) || (b >= 65 && b <= 90) || (b >= 48 && b <= 57) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
            || b == UInt8(ascii: ".")
    }

    /// The primary subtag of the first language an `Accept-Language` header names (`en` for
    /// `en-GB,en;q=0.9`), lower case; `""` for none or `*`. The list's order is the visitor's
    /// order of preference: browsers send the first choice first, so weights are not sorted.
    public static func primaryLanguage(of acceptLanguage: String?) -> String {
        guard let acceptLanguage else { return "" }
        let first = acceptLanguage.split(separator: ",").first?.split(separator: ";").first ?? ""
        let tag = first.trimmingCharacters(in: .whitespaces).split(separator: "-").first.map(String.init) ?? ""
        guard (2...3).contains(tag.count), tag.allSatisfy({ $0.isASCII && $0.isLetter }) else { return "" }
        return tag.lowercased()
    }

    /// A field's value cleaned for `stored`: control characters dropped, at most 64 characters.
    static func clean(_ value: String) -> String {
        var out = value.filter { !isControl($0) }
        if out.count > 64 { out = String(out.prefix(64)) }
        return out.trimmingCharacters(in: .whitespaces)
    }

    static func isControl(_ c: Character) -> Bool {
        c.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}

/// The audience values an event is counted under in the stats: its own for a click, a bot, or an
/// install or open no click brought; the values of the click that brought it otherwise (an
/// install's own user agent is the app's and it has no referrer: "installs by browser" means
/// the browser its click was made in), as its link dimensions are the click's.
public struct CountedAudience: Hashable, Sendable {
    /// The values in `StatsDimension.audience` order: country, device, os, browser,
    /// referrer host, language; `""` when unknown.
    public var country: String
    public var device: String
    public var os: String
    public var browser: String
    public var referrerHost: String
    public var language: String

    public init(country: String = "", device: String = "", os: String = "", browser: String = "", referrerHost: String = "", language: String = "") {
        (self.country, self.device, self.os, self.browser, self.referrerHost, self.language) = (country, device, os, browser, referrerHost, language)
    }

    /// Nothing known.
    public static let unknown = CountedAudience()

    /// An event's own values: its stored audience text (`AudienceDimensions.stored`; nil or
    /// empty when nothing was known, then the device too is `""`) and its referrer.
    public init(stored: String?, referrer: String?) {
        self.init(referrerHost: AudienceDimensions.referrerHost(of: referrer))
        guard let stored, !stored.isEmpty else { return }
        let d = AudienceDimensions(stored: stored)
        (country, device, os, browser, language) = (d.country, d.device.rawValue, d.os, d.browser, d.language)
    }

    /// The values an event is counted under: `click`'s (the audience of the click stored as its
    /// attribution's click) when a click brought it, else `own`. The same rule as
    /// `MatchType.countedDimensions`: organic events, bots, clicks and events whose click is
    /// not found keep their own.
    public static func counted(kind: EventKind, isBot: Bool, match: MatchType?, own: CountedAudience, click: CountedAudience?) -> CountedAudience {
        guard let click, countsUnderClick(kind: kind, isBot: isBot, match: match) else { return own }
        return click
    }

    /// Whether an event of this kind and match counts under the audience of the click its
    /// attribution names (when that click is found): installs, opens and fallbacks of people
    /// that a click brought (every match type but `organic`).
    public static func countsUnderClick(kind: EventKind, isBot: Bool, match: MatchType?) -> Bool {
        guard kind != .click, !isBot, let match else { return false }
        return match != .organic
    }

    /// The value of an audience dimension (nil for the others).
    public func value(_ dimension: StatsDimension) -> String? {
        switch dimension {
        case .country: country
        case .device: device
        case .os: os
        case .browser: browser
        case .referrerHost: referrerHost
        case .language: language
        case .campaign, .ref, .source, .medium, .platform: nil
        }
    }
}

/// Where the audience data is found when the operator names no other place: what Debian's
/// packages install (`uap-core`; `tor-geoipdb`'s files, which `ops/install-deps.sh` unpacks
/// without the Tor daemon into the second directory).
public enum AudienceDataDefaults {
    /// uap-core's expressions.
    public static let userAgentRegexes = "/usr/share/uap-core/regexes.yaml"
    /// Directories holding Tor's `geoip` and `geoip6`, searched in order.
    public static let torGeoIPDirectories = ["/usr/share/tor", "/usr/local/share/linkpulse/geoip"]
}
