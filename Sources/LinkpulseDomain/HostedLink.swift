/// A link Linkpulse serves on its link domains (`GET https://go.example.com/<ref>`): where it
/// sends each visitor, what its preview shows, and what its clicks are counted under.
public struct HostedLink: Sendable, Equatable {
    /// The path of the short URL, and the `ref` its clicks are counted under.
    public var ref: String
    /// The content's web page: where a desktop (or a platform the app lacks) goes.
    public var url: String
    /// The configured app it opens (`LinkApp.name`).
    public var app: String
    public var campaign: String?
    public var source: String?
    public var medium: String?
    /// What the app opens: `value`, `sub1`…`sub10`, only those set, in that order.
    public var deepLink: DeepLinkContent
    /// Where a person without the app goes on that platform, instead of the store (iOS,
    /// Android) or `url` (desktop).
    public var iosURL: String?
    public var androidURL: String?
    public var desktopURL: String?
    /// iOS: the app preview page (true, FDL's default) or straight to the App Store.
    public var iosPreview: Bool
    /// The card chat apps draw, and the preview page's content.
    public var social: SocialPreview
    /// After this the link answers 410, UTC ms.
    public var expiresAtMs: Int64?
    public var createdAtMs: Int64
    public var updatedAtMs: Int64

    public init(
        ref: String, url: String, app: String, campaign: String? = nil, source: String? = nil, medium: String? = nil,
        deepLink: DeepLinkContent = DeepLinkContent(fields: []), iosURL: String? = nil, androidURL: String? = nil,
        desktopURL: String? = nil, iosPreview: Bool = true, social: SocialPreview = SocialPreview(),
        expiresAtMs: Int64? = nil, createdAtMs: Int64, updatedAtMs: Int64
    ) {
        self.ref = ref; self.url = url; self.app = app
        self.campaign = campaign; self.source = source; self.medium = medium
        self.deepLink = deepLink; self.iosURL = iosURL; self.androidURL = androidURL; self.desktopURL = desktopURL
        self.iosPreview = iosPreview; self.social = social; self.expiresAtMs = expiresAtMs
        self.createdAtMs = createdAtMs; self.updatedAtMs = updatedAtMs
    }

    /// Whether it has expired at `nowMs`.
    public func isExpired(atMs nowMs: Int64) -> Bool { expiresAtMs.map { nowMs >= $0 } ?? false }

    /// A ref or app name: 1 to 64 of `A-Z a-z 0-9 _ -`.
    public static func isValidName(_ text: some StringProtocol) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy(Self.isNameByte)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
    }

    /// First path segments the daemon answers itself, which no ref may take (compared
    /// without case).
    public static let reservedRefs: Set<String> = [
        "v1", "dashboard", "healthz", "readyz", "metrics", "openapi", "apple-app-site-association", "well-known",
        "favicon", "robots", "assets", "static", "api", "admin", "links", "qr",
    ]

    /// The `deep_link_*` click properties of its deep link, as the resolve answer reads them back.
    public var deepLinkProperties: [(key: String, value: String)] {
        deepLink.fields.map { field in
            (DeepLinkContent.keys.first { $0.answer == field.key }?.parameter ?? field.key, field.value)
        }
    }
}

extension DeepLinkContent {
    /// Content given field by field (`value`, `sub1`…), kept in the answer's order.
    public init(fields given: [(key: String, value: String)]) {
        fields = Self.keys.compactMap { key in given.first { $0.key == key.answer }.map { (key.answer, $0.value) } }
    }
}

/// A link's social preview: the card's title, description and image.
public struct SocialPreview: Sendable, Equatable {
    public var title: String?
    public var description: String?
    /// An absolute `http(s)` URL.
    public var image: String?

    public init(title: String? = nil, description: String? = nil, image: String? = nil) {
        self.title = title
        self.description = description
        self.image = image
    }
}

/// Builds and changes links from the fields of `POST /v1/links` and `PATCH /v1/links/{ref}`,
/// refusing whatever could not be served safely: a URL that is not absolute `http(s)` (no
/// `javascript:` or `data:`), a ref with other characters or a reserved first segment, an
/// unknown app or field. Errors name the field, as ingest's do.
public struct LinkFields: Sendable {
    public let config: LinksConfig

    public init(config: LinksConfig) {
        self.config = config
    }

    /// The fields a link body may carry.
    public static let known: Set<String> = [
        "ref", "url", "app", "campaign", "source", "medium", "deep_link", "ios_url", "android_url", "desktop_url",
        "ios_preview", "social", "expires_at",
    ]
    /// Longest text of a social preview's title, and of its description.
    public static let maxTitleLength = 300
    public static let maxDescriptionLength = 1000

    /// A new link from a `POST /v1/links` body; `ref` from `newRef` when the body has none.
    public func create(_ body: [String: JSONValue], nowMs: Int64, newRef: () -> String) throws(EventError) -> HostedLink {
        try refuseUnknown(body)
        let ref: String
        if let given = try text(body, "ref", max: 64) ?? (body["ref"] == .string("") ? "" : nil) {
            guard HostedLink.isValidName(given) else {
                throw EventError(code: "invalid_value", field: "ref", message: "a ref is 1 to 64 letters, digits, '_' or '-' (it is the short URL's path)")
            }
            guard !HostedLink.reservedRefs.contains(given.lowercased()) else {
                throw EventError(code: "reserved_ref", field: "ref", message: "\"\(given)\" is a path the daemon answers itself; choose another ref")
            }
            ref = given
        } else {
            ref = newRef()
        }
        guard body["url"] != nil, body["url"] != .null else {
            throw EventError(code: "missing_field", field: "url", message: "url is required: the content's web page (https://…), where desktops go")
        }
        var link = HostedLink(ref: ref, url: "", app: config.defaultApp.name, createdAtMs: nowMs, updatedAtMs: nowMs)
        try apply(body, to: &link)
        return link
    }

    /// `link` with the fields of a `PATCH` body changed (`null` clears an optional field);
    /// the ref never changes.
    public func patch(_ link: HostedLink, with body: [String: JSONValue], nowMs: Int64) throws(EventError) -> HostedLink {
        try refuseUnknown(body)
        if let ref = body["ref"], ref != .string(link.ref) {
            throw EventError(code: "invalid_value", field: "ref", message: "a link's ref cannot change: create a new link")
        }
        var changed = link
        try apply(body, to: &changed)
        changed.updatedAtMs = nowMs
        return changed
    }

    private func refuseUnknown(_ body: [String: JSONValue]) throws(EventError) {
        if let unknown = body.keys.sorted().first(where: { !Self.known.contains($0) }) {
            throw EventError(code: "unknown_field", field: unknown, message: "links have no field \"\(unknown)\" (known: \(Self.known.sorted().joined(separator: ", ")))")
        }
    }

    /// Sets every field `body` names (all but `ref`).
    private func apply(_ body: [String: JSONValue], to link: inout HostedLink) throws(EventError) {
        if body["url"] != nil {
            guard let url = try webURL(body, "url") else { throw EventError(code: "missing_field", field: "url", message: "url cannot be removed") }
            link.url = url
        }
        if body["app"] != nil {
            let name = try text(body, "app", max: 64) ?? config.defaultApp.name
            guard config.app(named: name) != nil else {
                throw EventError(code: "unknown_app", field: "app", message: "no app \"\(name)\" is configured (configured: \(config.apps.map(\.name).joined(separator: ", ")))")
            }
            link.app = name
        }
        if body["campaign"] != nil { link.campaign = try text(body, "campaign", max: IngestLimits.maxDimensionLength) }
        if body["source"] != nil { link.source = try text(body, "source", max: IngestLimits.maxDimensionLength) }
        if body["medium"] != nil { link.medium = try text(body, "medium", max: IngestLimits.maxDimensionLength) }
        if body["ios_url"] != nil { link.iosURL = try webURL(body, "ios_url") }
        if body["android_url"] != nil { link.androidURL = try webURL(body, "android_url") }
        if body["desktop_url"] != nil { link.desktopURL = try webURL(body, "desktop_url") }
        switch body["ios_preview"] {
        case nil: break
        case .null?: link.iosPreview = true
        case .bool(let flag)?: link.iosPreview = flag
        default: throw EventError(code: "invalid_value", field: "ios_preview", message: "ios_preview is true (the app preview page) or false (straight to the App Store)")
        }
        switch body["expires_at"] {
        case nil: break
        case .null?: link.expiresAtMs = nil
        case .string(let text)?:
            guard let ms = Timestamp.parseRFC3339(text) else {
                throw EventError(code: "invalid_timestamp", field: "expires_at", message: "expires_at is RFC 3339, like 2026-12-31T23:59:59Z")
            }
            link.expiresAtMs = ms
        default: throw EventError(code: "invalid_timestamp", field: "expires_at", message: "expires_at is RFC 3339 text, like 2026-12-31T23:59:59Z")
        }
        if let deepLink = body["deep_link"] { link.deepLink = try Self.deepLink(deepLink) }
        if let social = body["social"] { link.social = try Self.social(social) }
    }

    private static func deepLink(_ value: JSONValue) throws(EventError) -> DeepLinkContent {
        guard case .object(let object) = value else {
            if value == .null { return DeepLinkContent(fields: []) }
            throw EventError(code: "invalid_value", field: "deep_link", message: "deep_link is an object: {\"value\":…,\"sub1\":…,…,\"sub10\":…}")
        }
        var fields: [(key: String, value: String)] = []
        for (key, item) in object {
            let field = "deep_link.\(key)"
            guard DeepLinkContent.keys.contains(where: { $0.answer == key }) else {
                throw EventError(code: "unknown_field", field: field, message: "a deep link has value and sub1…sub10")
            }
            switch item {
            case .null: continue
            case .string(let text):
                guard text.utf8.count <= IngestLimits.maxDimensionLength * 4 else {
                    throw EventError(code: "too_long", field: field, message: "at most \(IngestLimits.maxDimensionLength * 4) bytes")
                }
                if !text.isEmpty { fields.append((key, text)) }
            default: throw EventError(code: "invalid_value", field: field, message: "a deep link's values are texts")
            }
        }
        return DeepLinkContent(fields: fields)
    }

    private static func social(_ value: JSONValue) throws(EventError) -> SocialPreview {
        guard case .object(let object) = value else {
            if value == .null { return SocialPreview() }
            throw EventError(code: "invalid_value", field: "social", message: "social is an object: {\"title\",\"description\",\"image\"}")
        }
        if let unknown = object.keys.sorted().first(where: { !["title", "description", "image"].contains($0) }) {
            throw EventError(code: "unknown_field", field: "social.\(unknown)", message: "a social preview has title, description and image")
        }
        let fields = LinkFieldReader(prefix: "social.")
        return SocialPreview(
            title: try fields.text(object, "title", max: maxTitleLength),
            description: try fields.text(object, "description", max: maxDescriptionLength),
            image: try fields.webURL(object, "image"))
    }

    private func text(_ body: [String: JSONValue], _ key: String, max: Int) throws(EventError) -> String? {
        try LinkFieldReader(prefix: "").text(body, key, max: max)
    }

    private func webURL(_ body: [String: JSONValue], _ key: String) throws(EventError) -> String? {
        try LinkFieldReader(prefix: "").webURL(body, key)
    }
}

/// Reads one text field of a link body: absent or `null` is nil, an empty text too.
private struct LinkFieldReader {
    let prefix: String

    func text(_ body: [String: JSONValue], _ key: String, max: Int) throws(EventError) -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard text.utf8.count <= max else { throw EventError(code: "too_long", field: prefix + key, message: "at most \(max) bytes") }
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw EventError(code: "invalid_value", field: prefix + key, message: "control characters are not allowed")
            }
            return text.isEmpty ? nil : text
        default: throw EventError(code: "invalid_value", field: prefix + key, message: "\(key) is a text")
        }
    }

    /// An absolute `http`/`https` URL with a host (nothing a browser would run or inline).
    func webURL(_ body: [String: JSONValue], _ key: String) throws(EventError) -> String? {
        let text = try text(body, key, max: IngestLimits.maxURLLength)
        if text == nil, body[key] != .string("") { return nil }
        guard let text, WebURL.isSafe(text) else {
            throw EventError(code: "invalid_url", field: prefix + key, message: "\(key) is an absolute http:// or https:// URL with a host (no javascript:, data: or relative URLs, no spaces)")
        }
        return text
    }
}

/// What a link may send a person to.
public enum WebURL {
    /// Whether `text` is an absolute `http`/`https` URL with a host and no user part, and
    /// nothing a page could misread: no blanks, quotes, angle brackets, backslashes or control
    /// characters (pages escape it as well).
    public static func isSafe(_ text: String) -> Bool {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { rest = lower.dropFirst(8) } else if lower.hasPrefix("http://") { rest = lower.dropFirst(7) } else { return false }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@"), !LinksConfig.hostWithoutPort(authority).isEmpty else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value != 0x7F && !"\"<>\\`".unicodeScalars.contains(scalar)
                && scalar.properties.generalCategory != .control && scalar.properties.generalCategory != .spaceSeparator
        }
    }
}

/// Refs for links created without one: 8 characters of `A-Z a-z 0-9` (47 bits), so that
/// nobody finds a campaign's links by trying refs.
public enum LinkRefs {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// A fresh random ref.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        String(decoding: (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }, as: UTF8.self)
    }

    /// A fresh ref from the system's generator.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }
}

extension DeepLinkContent {
    /// As a link stores it: `{"value":…,"sub1":…}` in the answer's order; nil when empty.
    public var storedJSON: String? {
        guard !fields.isEmpty else { return nil }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendString(field.key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.appendString(field.value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads `storedJSON` back (an unreadable or absent text is no content).
    public init(storedJSON: String?) {
        guard let storedJSON, case .object(let object)? = JSONValue.parse(Array(storedJSON.utf8)) else {
            self.init(fields: [])
            return
        }
        self.init(fields: object.compactMap { key, value in
            if case .string(let text) = value { return (key, text) }
            return nil
        })
    }
}

extension JSONValue {
    /// Exactly one JSON document (RFC 8259, at most 64 levels deep); nil when `bytes` are not.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer(FastEventParser.parseValue)
    }
}

/// Rows of a links CSV file (`linkpulse links import`): a header row naming the columns, one
/// link a row. The columns are the fields of `POST /v1/links`, with the nested ones flattened:
/// `deep_link_value`, `deep_link_sub1`…`deep_link_sub10`, `social_title`, `social_description`,
/// `social_image`; `ios_preview` is `true` or `false`. An empty cell is a field not given.
public enum LinkCSV {
    /// Every column a file may have.
    public static let columns: [String] =
        ["ref", "url", "app", "campaign", "source", "medium"] + DeepLinkContent.keys.map(\.parameter)
        + ["ios_url", "android_url", "desktop_url", "ios_preview", "social_title", "social_description", "social_image", "expires_at"]

    /// Checks the header row: every column known, none twice, `url` present.
    public static func checkHeader(_ header: [String]) throws(EventError) {
        if let unknown = header.first(where: { !columns.contains($0) }) {
            throw EventError(code: "unknown_field", field: unknown, message: "no column \"\(unknown)\" (columns: \(columns.joined(separator: ", ")))")
        }
        if let twice = header.first(where: { name in header.filter { $0 == name }.count > 1 }) {
            throw EventError(code: "invalid_value", field: twice, message: "the column \"\(twice)\" is given twice")
        }
        guard header.contains("url") else { throw EventError(code: "missing_field", field: "url", message: "a links file needs a url column") }
    }

    /// One row as the body of `POST /v1/links`.
    public static func body(header: [String], row: [String]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        var deepLink: [String: JSONValue] = [:]
        var social: [String: JSONValue] = [:]
        for (name, cell) in zip(header, row) where !cell.isEmpty {
            if let key = DeepLinkContent.keys.first(where: { $0.parameter == name })?.answer {
                deepLink[key] = .string(cell)
            } else if name.hasPrefix("social_") {
                social[String(name.dropFirst("social_".count))] = .string(cell)
            } else if name == "ios_preview", let flag = ["true": true, "false": false][cell.lowercased()] {
                body[name] = .bool(flag)
            } else {
                body[name] = .string(cell)
            }
        }
        if !deepLink.isEmpty { body["deep_link"] = .object(deepLink) }
        if !social.isEmpty { body["social"] = .object(social) }
        return body
    }
}
