import Foundation

/// The link domains and apps that hosted links serve (`--links-config FILE`), read from JSON:
/// `{"domains":["go.example.com","open.example.com"],"apps":[{"name":"shop","ios":{…},"android":{…}}]}`.
/// The first domain is the primary one (short URLs use it); the second, when given, is its
/// twin: the app preview page's button leads to the same path there, because a tap on a link
/// of the domain a person is already on never opens an app.
public struct LinksConfig: Sendable, Equatable {
    /// Link hosts, lower case, without a port: the primary first, then its twin when there is one.
    public var domains: [String]
    /// The apps links open, in the file's order; a link names one (the first by default).
    public var apps: [LinkApp]

    public init(domains: [String], apps: [LinkApp]) {
        self.domains = domains
        self.apps = apps
    }

    /// The host short URLs are made on.
    public var primaryDomain: String { domains[0] }

    /// The app a link without `app` opens.
    public var defaultApp: LinkApp { apps[0] }

    /// The app called `name`, if configured.
    public func app(named name: String) -> LinkApp? { apps.first { $0.name == name } }

    /// What `host` (as a request's `Host` header gives it, any case, port ignored) is to the
    /// links: nil when it is not a link domain.
    public func role(ofHost host: String) -> LinkDomainRole? {
        let name = Self.hostWithoutPort(host)
        guard let index = domains.firstIndex(where: { $0.caseInsensitiveEquals(name) }) else { return nil }
        return index == 0 ? .primary : .twin
    }

    /// The domain that has `role`.
    public func domain(_ role: LinkDomainRole) -> String {
        role == .primary ? domains[0] : twin(of: .primary)
    }

    /// The other domain of the pair (the preview page's button leads there); the same domain
    /// when there is no twin.
    public func twin(of role: LinkDomainRole) -> String {
        guard domains.count > 1 else { return domains[0] }
        return role == .primary ? domains[1] : domains[0]
    }

    /// A `Host` header's name part: `go.example.com:8080` → `go.example.com`, `[::1]:80` → `[::1]`.
    static func hostWithoutPort(_ host: Substring) -> Substring {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { return host[...close] }
        if let colon = host.lastIndex(of: ":") { return host[..<colon] }
        return host
    }

    static func hostWithoutPort(_ host: String) -> Substring { hostWithoutPort(Substring(host)) }
}

/// Which of the two link domains a request came to.
public enum LinkDomainRole: Sendable, Equatable {
    /// The first domain: short URLs, and the app preview page on iOS.
    case primary
    /// The second domain: where the preview page's button leads, sending on to the store.
    case twin
}

/// An app that hosted links open, with what each platform needs to open it or install it.
public struct LinkApp: Sendable, Equatable {
    /// How links name it: `[A-Za-z0-9_-]{1,64}`.
    public var name: String
    public var ios: IOSApp?
    public var android: AndroidApp?

    public init(name: String, ios: IOSApp? = nil, android: AndroidApp? = nil) {
        self.name = name
        self.ios = ios
        self.android = android
    }

    /// The iOS side: the apps ids universal links open, where to install it, its URL scheme.
    public struct IOSApp: Sendable, Equatable {
        /// `TEAMID.bundle.id`, as `apple-app-site-association` lists them.
        public var appIds: [String]
        /// The App Store's numeric id.
        public var appStoreId: String?
        /// The custom URL scheme (`shop` for `shop://…`), for App Links meta tags.
        public var scheme: String?

        public init(appIds: [String], appStoreId: String? = nil, scheme: String? = nil) {
            self.appIds = appIds
            self.appStoreId = appStoreId
            self.scheme = scheme
        }

        /// The App Store page, when the id is known.
        public var storeURL: String? { appStoreId.map { "https://apps.apple.com/app/id\($0)" } }
    }

    /// The Android side: the package, the signing certificates App Links verify, its scheme.
    public struct AndroidApp: Sendable, Equatable {
        public var package: String
        /// SHA-256 fingerprints of the signing certificates, `AA:BB:…` (32 pairs, upper case).
        public var sha256CertFingerprints: [String]
        public var scheme: String?

        public init(package: String, sha256CertFingerprints: [String], scheme: String? = nil) {
            self.package = package
            self.sha256CertFingerprints = sha256CertFingerprints
            self.scheme = scheme
        }
    }
}

/// Why a links configuration was refused: which setting, and what is wrong with it.
public struct LinksConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting at fault, as a path into the file (`apps[0].ios.app_store_id`), or nil for the file.
    public var field: String?
    public var message: String

    public init(field: String?, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { field.map { "\($0): \(message)" } ?? message }
}

extension LinksConfig {
    /// Reads and checks a configuration file's JSON. Unknown keys are refused by name (a typo
    /// must not silently drop a setting), as is every value a link could not be served with.
    public init(json: Data) throws(LinksConfigError) {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: json) } catch {
            throw LinksConfigError(field: nil, message: "not JSON: \(error.localizedDescription)")
        }
        let reader = ConfigObject(object, path: nil)
        try reader.refuseUnknown(["domains", "apps"])
        let domainTexts = try reader.strings("domains", required: true) ?? []
        guard (1...2).contains(domainTexts.count) else {
            throw LinksConfigError(field: "domains", message: "give one link domain, or two: the primary and its twin")
        }
        var domains: [String] = []
        for (index, text) in domainTexts.enumerated() {
            let host = text.lowercased()
            guard Self.isHostName(host) else {
                throw LinksConfigError(field: "domains[\(index)]", message: "\"\(text)\" is not a host name (like go.example.com, without a scheme, path or port)")
            }
            guard !domains.contains(host) else { throw LinksConfigError(field: "domains[\(index)]", message: "\"\(text)\" is given twice") }
            domains.append(host)
        }
        let appObjects = try reader.objects("apps")
        guard !appObjects.isEmpty else { throw LinksConfigError(field: "apps", message: "configure at least one app") }
        var apps: [LinkApp] = []
        for app in appObjects {
            let parsed = try LinkApp(app)
            guard !apps.contains(where: { $0.name == parsed.name }) else {
                throw LinksConfigError(field: app.path("name"), message: "\"\(parsed.name)\" names two apps")
            }
            apps.append(parsed)
        }
        self.init(domains: domains, apps: apps)
    }

    /// A DNS host name: labels of letters, digits and hyphens, at least two of them.
    static func isHostName(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return host.utf8.count <= 253 && labels.count >= 2 && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        }
    }
}

extension LinkApp {
    fileprivate init(_ reader: ConfigObject) throws(LinksConfigError) {
        try reader.refuseUnknown(["name", "ios", "android"])
        guard let name = try reader.string("name"), HostedLink.isValidName(name) else {
            throw LinksConfigError(field: reader.path("name"), message: "each app needs a name of 1 to 64 letters, digits, '_' or '-'")
        }
        var ios: IOSApp?
        if let section = try reader.object("ios") {
            try section.refuseUnknown(["app_ids", "app_store_id", "scheme"])
            let ids = try section.strings("app_ids", required: true) ?? []
            guard !ids.isEmpty else { throw LinksConfigError(field: section.path("app_ids"), message: "list the app's ids (TEAMID.bundle.id)") }
            for (index, id) in ids.enumerated() where !Self.isAppleAppId(id) {
                throw LinksConfigError(field: section.path("app_ids[\(index)]"), message: "\"\(id)\" is not TEAMID.bundle.id (a 10-character team id, a dot, the bundle id)")
            }
            let storeId = try section.string("app_store_id")
            if let storeId, storeId.isEmpty || !storeId.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                throw LinksConfigError(field: section.path("app_store_id"), message: "the App Store id is the number in the app's App Store URL (…/id1234567890)")
            }
            ios = IOSApp(appIds: ids, appStoreId: storeId, scheme: try Self.scheme(section))
        }
        var android: AndroidApp?
        if let section = try reader.object("android") {
            try section.refuseUnknown(["package", "sha256_cert_fingerprints", "scheme"])
            guard let package = try section.string("package"), Self.isPackageName(package) else {
                throw LinksConfigError(field: section.path("package"), message: "give the app's package name (like com.example.shop)")
            }
            let prints = try section.strings("sha256_cert_fingerprints", required: false) ?? []
            var fingerprints: [String] = []
            for (index, print) in prints.enumerated() {
                guard let normal = Self.certificateFingerprint(print) else {
                    throw LinksConfigError(field: section.path("sha256_cert_fingerprints[\(index)]"), message: "a SHA-256 fingerprint is 32 hex pairs separated by ':' (keytool -list -v prints it)")
                }
                fingerprints.append(normal)
            }
            android = AndroidApp(package: package, sha256CertFingerprints: fingerprints, scheme: try Self.scheme(section))
        }
        self.init(name: name, ios: ios, android: android)
    }

    fileprivate static func scheme(_ section: ConfigObject) throws(LinksConfigError) -> String? {
        guard let scheme = try section.string("scheme") else { return nil }
        let lower = scheme.lowercased()
        guard let first = lower.utf8.first, first >= 0x61, first <= 0x7A,
              lower.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }),
              !["http", "https", "javascript", "data", "file", "intent"].contains(lower)
        else {
            throw LinksConfigError(field: section.path("scheme"), message: "\"\(scheme)\" is not an app's own URL scheme (letters, digits, '+', '-', '.', starting with a letter)")
        }
        return lower
    }

    /// `TEAMID.bundle.id`: ten letters or digits, a dot, a bundle id.
    static func isAppleAppId(_ id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].utf8.count == 10,
              parts[0].utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) })
        else { return false }
        return !parts[1].isEmpty && parts[1].utf8.allSatisfy { Self.isIdentifierByte($0) || $0 == 0x2E || $0 == 0x2D }
    }

    /// `com.example.shop`: at least two dot-separated names, each starting with a letter.
    static func isPackageName(_ package: String) -> Bool {
        let parts = package.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            guard let first = part.utf8.first, (first | 0x20) >= 0x61, (first | 0x20) <= 0x7A else { return false }
            return part.utf8.allSatisfy(Self.isIdentifierByte)
        }
    }

    /// A fingerprint in `AA:BB:…` form (upper case), from any case, with or without colons.
    static func certificateFingerprint(_ text: String) -> String? {
        let hex = text.uppercased().filter { $0 != ":" }
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) }) else { return nil }
        return stride(from: 0, to: 64, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return String(hex[start..<hex.index(start, offsetBy: 2)])
        }.joined(separator: ":")
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F
    }
}

/// One JSON object of the configuration, with its path for messages.
private struct ConfigObject {
    let values: [String: Any]
    let prefix: String?

    init(_ value: Any, path: String?) {
        values = value as? [String: Any] ?? [:]
        prefix = path
    }

    func path(_ key: String) -> String { prefix.map { "\($0).\(key)" } ?? key }

    func refuseUnknown(_ known: Set<String>) throws(LinksConfigError) {
        let unknown = values.keys.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw LinksConfigError(
                field: path(unknown[0]),
                message: "unknown setting\(unknown.count > 1 ? "s" : "") \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")) (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    func string(_ key: String) throws(LinksConfigError) -> String? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw LinksConfigError(field: path(key), message: "a text is expected") }
        return text
    }

    func strings(_ key: String, required: Bool) throws(LinksConfigError) -> [String]? {
        guard let value = values[key], !(value is NSNull) else {
            if required { throw LinksConfigError(field: path(key), message: "required") }
            return nil
        }
        guard let texts = value as? [String] else { throw LinksConfigError(field: path(key), message: "a list of texts is expected") }
        return texts
    }

    func object(_ key: String) throws(LinksConfigError) -> ConfigObject? {
        guard let value = values[key], !(value is NSNull) else { return nil }
        guard value is [String: Any] else { throw LinksConfigError(field: path(key), message: "an object is expected") }
        return ConfigObject(value, path: path(key))
    }

    func objects(_ key: String) throws(LinksConfigError) -> [ConfigObject] {
        guard let value = values[key] else { throw LinksConfigError(field: path(key), message: "required") }
        guard let list = value as? [Any], list.allSatisfy({ $0 is [String: Any] }) else {
            throw LinksConfigError(field: path(key), message: "a list of objects is expected")
        }
        return list.enumerated().map { ConfigObject($0.element, path: "\(path(key))[\($0.offset)]") }
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality (host names).
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        utf8.count == other.utf8.count && zip(utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
        }
    }
}
