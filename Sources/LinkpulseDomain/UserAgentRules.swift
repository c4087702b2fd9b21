import Foundation
import Yams

/// What a user agent says of the browser, system and device behind it, by the regular
/// expressions of uap-core (ua-parser's `regexes.yaml`, Apache-2.0; Debian's `uap-core` package
/// installs it at `/usr/share/uap-core/regexes.yaml`), with this project's rules on top: the
/// in-app browsers and the browsers uap-core does not name (`BrowserMarks`), the device classes
/// (`DeviceClassRules`) and the families' names as the stats show them (`systemName`,
/// `browserName`).
///
/// Built once from the file's text (some 1,160 expressions compiled); each lookup scans the
/// three lists in order as uap-core specifies (the first match wins), up to every expression for
/// a user agent no rule knows, so `UserAgentClassifier` remembers its answers.
public struct UserAgentRules: Sendable {
    /// One parser of `regexes.yaml`: the expression and what replaces its first groups.
    struct Parser: @unchecked Sendable {
        // NSRegularExpression is immutable and safe to use from any thread.
        let regex: NSRegularExpression
        let family: String?
        let major: String?
    }

    let browsers: [Parser]
    let systems: [Parser]
    /// The device parsers, in order; `family` holds the device's family (`Spider` for crawlers).
    let devices: [Parser]
    /// The device parsers whose family is `Spider`: a user agent none of them matches cannot
    /// have `Spider` as its first device match, so only one that some of them match is run
    /// through the whole device list (625 expressions) to learn its first.
    let spiders: [Parser]
    /// Expressions of the file that this platform's engine (ICU) does not compile: skipped.
    public let skipped: Int
    /// Tells one load of the rules from another (a reload makes new rules).
    final class Identity: Sendable {}
    let identity = Identity()

    /// What one user agent comes to.
    public struct Details: Sendable, Equatable {
        public var device: AudienceDimensions.DeviceClass
        public var os: String
        public var osMajor: String
        public var browser: String
        /// The crawler's name when uap-core's device list calls it a `Spider`.
        public var spider: String?
    }

    /// The file's shape (the fields this project reads).
    private struct File: Decodable {
        struct Entry: Decodable {
            var regex: String
            var regex_flag: String?
            var family_replacement: String?
            var v1_replacement: String?
            var os_replacement: String?
            var os_v1_replacement: String?
            var device_replacement: String?
        }
        var user_agent_parsers: [Entry]
        var os_parsers: [Entry]
        var device_parsers: [Entry]
    }

    /// Compiles the expressions of a `regexes.yaml` text.
    public init(yaml: String) throws {
        let file = try YAMLDecoder().decode(File.self, from: yaml)
        var skipped = 0
        func compile(_ entries: [File.Entry], _ pick: (File.Entry) -> (String?, String?)) -> [Parser] {
            entries.compactMap { entry in
                let options: NSRegularExpression.Options = entry.regex_flag == "i" ? [.caseInsensitive] : []
                guard let regex = try? NSRegularExpression(pattern: entry.regex, options: options) else {
                    skipped += 1
                    return nil
                }
                let (family, major) = pick(entry)
                return Parser(regex: regex, family: family, major: major)
            }
        }
        browsers = compile(file.user_agent_parsers) { ($0.family_replacement, $0.v1_replacement) }
        systems = compile(file.os_parsers) { ($0.os_replacement, $0.os_v1_replacement) }
        devices = compile(file.device_parsers) { ($0.device_replacement, nil) }
        spiders = devices.filter { $0.family == "Spider" }
        self.skipped = skipped
    }

    /// Expressions compiled.
    public var count: Int { browsers.count + systems.count + devices.count }

    /// The browser, system and device class of `userAgent`.
    public func details(_ userAgent: String) -> Details {
        let text = userAgent as NSString
        let browser = Self.firstMatch(browsers, in: text, userAgent)
        let system = Self.firstMatch(systems, in: text, userAgent)
        let mayBeSpider = Self.firstMatch(spiders, in: text, userAgent) != nil
        let device = mayBeSpider ? Self.firstMatch(devices, in: text, userAgent) : nil
        let spider = device?.family == "Spider" ? (browser?.family ?? "Spider") : nil
        var os = Self.systemName(system?.family ?? "")
        // An iPad's system is iPadOS (its user agent says iOS, as iPadOS's first versions were).
        if os == "iOS", userAgent.contains("iPad") { os = "iPadOS" }
        let marked = BrowserMarks.name(of: userAgent)
        return Details(
            device: spider != nil ? .bot : DeviceClassRules.deviceClass(of: userAgent, os: os),
            os: os, osMajor: AudienceDimensions.clean(system?.major ?? ""),
            browser: marked ?? Self.browserName(browser?.family ?? ""),
            spider: spider)
    }

    /// The first parser matching, with its replacements filled in (`$1`… from the groups, or the
    /// groups themselves when the entry gives none).
    static func firstMatch(_ parsers: [Parser], in text: NSString, _ original: String) -> (family: String, major: String)? {
        let whole = NSRange(location: 0, length: text.length)
        for parser in parsers {
            guard let match = parser.regex.firstMatch(in: original, options: [], range: whole) else { continue }
            func group(_ i: Int) -> String {
                guard i < match.numberOfRanges else { return "" }
                let r = match.range(at: i)
                return r.location == NSNotFound ? "" : text.substring(with: r)
            }
            func fill(_ template: String?, _ index: Int) -> String {
                guard var out = template else { return group(index) }
                for i in 1...9 where out.contains("$\(i)") {
                    out = out.replacingOccurrences(of: "$\(i)", with: group(i))
                }
                return out.trimmingCharacters(in: .whitespaces)
            }
            return (AudienceDimensions.clean(fill(parser.family, 1)), fill(parser.major, 2))
        }
        return nil
    }

    /// uap-core's operating system families as the stats name them: one `Linux` for its
    /// distributions, `macOS`, `ChromeOS`, `webOS`, `tvOS`; the rest as uap-core names them.
    static func systemName(_ family: String) -> String {
        switch family {
        case "Mac OS X", "Mac OS": "macOS"
        case "Chrome OS": "ChromeOS"
        case "Web0S": "webOS"
        case "ATV OS X": "tvOS"
        case "Ubuntu", "Debian", "Fedora", "Red Hat", "Gentoo", "Linux Mint", "Arch Linux", "Mandriva", "Slackware", "SUSE", "CentOS", "Kubuntu":
            "Linux"
        case "Other": ""
        default: family
        }
    }

    /// uap-core's browser families as the stats name them: one name a browser whatever its
    /// platform (`Chrome` for Chrome Mobile and Chrome on iOS), the system's web views apart.
    static func browserName(_ family: String) -> String {
        switch family {
        case "Mobile Safari", "Safari": "Safari"
        case "Mobile Safari UI/WKWebView": "iOS WebView"
        case "Chrome Mobile WebView": "Android WebView"
        case "Chrome Mobile", "Chrome Mobile iOS": "Chrome"
        case "Firefox Mobile", "Firefox iOS": "Firefox"
        case "Edge Mobile": "Edge"
        case "Opera Mobile": "Opera"
        case "Google": "Google App"
        case "Other": ""
        default: family
        }
    }
}

/// Browsers by the marks they put in the user agent, checked before uap-core's families: the
/// in-app browsers (uap-core names some of them, not all, and not always by the app), and
/// browsers the packaged uap-core does not know (it reads them as the Chrome or WebKit they
/// are built on).
enum BrowserMarks {
    /// Marks and the app they name, first match wins.
    static let marks: [(mark: String, app: String)] = [
        ("FBAN/", "Facebook"), ("FBAV/", "Facebook"), ("FB_IAB/", "Facebook"), ("FBIOS", "Facebook"),
        ("Instagram", "Instagram"),
        ("LinkedInApp", "LinkedIn"),
        ("musical_ly", "TikTok"), ("TikTok", "TikTok"), ("BytedanceWebview", "TikTok"), ("trill_", "TikTok"),
        ("Snapchat", "Snapchat"),
        ("Pinterest/", "Pinterest"),
        ("Twitter for", "Twitter"), ("TwitterAndroid", "Twitter"),
        ("GmailApp", "Gmail"), ("Gmail/", "Gmail"),
        ("MicroMessenger/", "WeChat"),
        (" Line/", "LINE"),
        ("Threads ", "Threads"),
        ("GSA/", "Google App"),
        ("HuaweiBrowser/", "Huawei Browser"),
        ("YaBrowser/", "Yandex Browser"),
        ("OPT/", "Opera Touch"),
        ("PlayStation", "PlayStation Browser"),
        ("NintendoBrowser/", "Nintendo Browser"),
    ]

    static func name(of userAgent: String) -> String? {
        marks.first { userAgent.contains($0.mark) }?.app
    }
}

/// The device class of a user agent that is not a crawler: TVs and consoles by their marks,
/// then tablets (an iPad, an Android without `Mobile`, a Kindle), phones, and desktops by their
/// systems. An iPad asking for the desktop site says `Macintosh` and counts as a desktop.
enum DeviceClassRules {
    static let tv = [
        "SmartTV", "SMART-TV", "Smart-TV", "SmartTv", "AppleTV", "Apple TV", "tvOS", "CrKey", "GoogleTV", "Android TV", "AndroidTV",
        "BRAVIA", "Roku", "AFTB", "AFTM", "AFTS", "AFTT", "AFTK", "AFTMM", "AFTR", "AFTKA", "AFTN", "HbbTV", "Web0S", "WebOS TV", "NetCast",
        "Viera", "SHIELD Android TV", "Tizen TV", "DTV", "TV Safari",
    ]
    static let console = ["PlayStation", "Xbox", "Nintendo"]

    static func deviceClass(of userAgent: String, os: String) -> AudienceDimensions.DeviceClass {
        let ua = userAgent
        if console.contains(where: ua.contains) { return .console }
        if tv.contains(where: ua.contains) { return .tv }
        if ua.contains("iPad") || ua.contains("Tablet") || ua.contains("Kindle") || ua.contains("Silk/") || ua.contains("PlayBook") {
            return .tablet
        }
        if ua.contains("Opera Mini") { return .phone }
        if os == "Android" || ua.contains("Android") {
            return ua.contains("Mobile") ? .phone : .tablet
        }
        if ua.contains("iPhone") || ua.contains("iPod") || ua.contains("Windows Phone") || ua.contains("BlackBerry") || ua.contains("BB10")
            || ua.contains("KAIOS") || ua.contains("KaiOS") || ua.contains("Mobile")
        {
            return .phone
        }
        switch os {
        case "Windows", "macOS", "Linux", "ChromeOS", "FreeBSD", "OpenBSD", "NetBSD", "Solaris": return .desktop
        default: break
        }
        if ua.contains("Windows NT") || ua.contains("Macintosh") || ua.contains("X11") || ua.contains("CrOS") { return .desktop }
        return .other
    }
}
