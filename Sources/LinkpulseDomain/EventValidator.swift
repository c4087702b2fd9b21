import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the server knows about the request an event came in: used for defaults.
public struct RequestFacts: Sendable {
    /// When the request arrived, UTC milliseconds.
    public var receivedAtMs: Int64
    /// The client address (the socket peer, or `X-Forwarded-For` when the proxy is trusted).
    public var clientIP: String?
    /// The request's `User-Agent` header.
    public var userAgent: String?
    /// The request's `Accept-Language` header, when the visitor's own browser sent the request
    /// (a hosted link's tap); nil for events an app or a server sends.
    public var acceptLanguage: String?

    public init(receivedAtMs: Int64, clientIP: String?, userAgent: String?, acceptLanguage: String? = nil) {
        self.receivedAtMs = receivedAtMs
        self.clientIP = clientIP
        self.userAgent = userAgent
        self.acceptLanguage = acceptLanguage
    }
}

/// Turns an `EventPayload` into an `IngestEvent` or the first `EventError` found, checking
/// fields in a fixed order (type first) so the same bad event always gets the same error.
/// Hashes addresses with the installation's secret; never keeps a raw IP (its country is read
/// before it is hashed).
public struct EventValidator: Sendable {
    public let hasher: KeyedHasher
    public let userAgents: UserAgentClassifier
    public let countries: CountrySource
    /// The hosted links' domains (`--links-config`), lower case: an `open` or `install` whose
    /// `url` is a link on one of them is the app opened by that link.
    public let linkDomains: Set<String>

    public init(
        hasher: KeyedHasher, userAgents: UserAgentClassifier = UserAgentClassifier(), countries: CountrySource = CountrySource(),
        linkDomains: Set<String> = []
    ) {
        self.hasher = hasher
        self.userAgents = userAgents
        self.countries = countries
        self.linkDomains = linkDomains
    }

    public func validate(_ p: EventPayload, request: RequestFacts) -> Result<IngestEvent, EventError> {
        do {
            return .success(try build(p, request: request))
        } catch let error as EventError {
            return .failure(error)
        } catch {
            return .failure(EventError(code: "invalid_event", field: nil, message: "\(error)"))
        }
    }

    func build(_ p: EventPayload, request: RequestFacts) throws -> IngestEvent {
        guard p.isObject else {
            throw EventError(
                code: "not_an_object", field: nil,
                message: "Each event must be a JSON object such as {\"type\":\"click\",\"ref\":\"ab12cd\"}.")
        }
        let kind = try eventKind(p.type)
        let id = try text(p.id, "id", max: IngestLimits.maxIdLength) ?? UUID().uuidString.lowercased()
        var ref = try text(p.ref, "ref", max: IngestLimits.maxDimensionLength)
        if kind.requiresRef, ref == nil {
            throw EventError(
                code: "missing_field", field: "ref",
                message: "A \(kind.rawValue) event needs `ref`: the ref of the link that was tapped (the `ref` query parameter).")
        }
        var campaign = try text(p.campaign, "campaign", max: IngestLimits.maxDimensionLength)
        var source = try text(p.source, "source", max: IngestLimits.maxDimensionLength)
        var medium = try text(p.medium, "medium", max: IngestLimits.maxDimensionLength)
        let platformText = try text(p.platform, "platform", max: 32)
        let (occurredAt, sentAt) = try times(p, receivedAt: request.receivedAtMs)
        let deviceId = try text(p.deviceId, "device_id", max: IngestLimits.maxDimensionLength)
        var clickId = try text(p.clickId, "click_id", max: IngestLimits.maxIdLength)
        var clickIdSource = try self.clickIdSource(p.clickIdSource, clickId: clickId)
        let deferred = try flag(p.deferred, "deferred")
        let url = try text(p.url, "url", max: IngestLimits.maxURLLength)
        if kind == .open || kind == .install, let url, let opened = HostedLinkURL(url, linkDomains: linkDomains) {
            // Opened by a hosted link: its ref, and the click its URL carries (the preview
            // page's button puts it there), unless the app sent its own.
            ref = ref ?? opened.ref
            if clickId == nil, let carried = opened.clickId { (clickId, clickIdSource) = (carried, .universalLink) }
        }
        var referrer = try text(p.referrer, "referrer", max: IngestLimits.maxURLLength)
        let installReferrer = try text(p.installReferrer, "install_referrer", max: IngestLimits.maxURLLength)
        if let raw = installReferrer {
            // The referrer's values fill what the event did not send, as if it had sent them;
            // its click id is the most certain one the app can have.
            let parsed = InstallReferrer(parsing: raw)
            // Its values are percent-decoded: `%00` is a NUL too.
            for value in [parsed.clickId, parsed.campaign, parsed.source, parsed.medium] where value?.utf8.contains(0) == true {
                throw Self.nul("install_referrer")
            }
            if let id = parsed.clickId {
                guard id.unicodeScalars.count <= IngestLimits.maxIdLength else {
                    throw EventError(
                        code: "too_long", field: "install_referrer",
                        message: "The `\(InstallReferrer.clickParameter)` value of `install_referrer` is longer than \(IngestLimits.maxIdLength) characters.")
                }
                (clickId, clickIdSource) = (id, .installReferrer)
            }
            campaign = campaign ?? parsed.campaign.map { String($0.prefix(IngestLimits.maxDimensionLength)) }
            source = source ?? parsed.source.map { String($0.prefix(IngestLimits.maxDimensionLength)) }
            medium = medium ?? parsed.medium.map { String($0.prefix(IngestLimits.maxDimensionLength)) }
            referrer = referrer ?? raw
        }
        let userAgent = try text(p.userAgent, "user_agent", max: IngestLimits.maxUserAgentLength) ?? request.userAgent
        let ip = try address(p.ip) ?? request.clientIP
        let osVersion = try text(p.osVersion, "os_version", max: IngestLimits.maxVersionLength)
        let appVersion = try text(p.appVersion, "app_version", max: IngestLimits.maxVersionLength)
        let properties = try propertiesJSON(p.properties)

        let ipHash = ip.map(hasher.ipHash)
        let verdict = userAgents.classify(userAgent)
        let platform: Platform
        if let platformText {
            guard let named = Platform(rawValue: platformText.lowercased()) else {
                throw EventError(
                    code: "invalid_value", field: "platform",
                    message: "`platform` must be one of ios, android, web, desktop, other (got \"\(platformText)\"); leave it out to derive it from the user agent.")
            }
            platform = named
        } else {
            platform = verdict.platform
        }

        let audience = AudienceDimensions.stored(
            country: countries.country(of: ip), agent: verdict.agentText, language: AudienceDimensions.primaryLanguage(of: request.acceptLanguage))

        var event = IngestEvent(
            id: id, kind: kind, occurredAtMs: occurredAt, receivedAtMs: request.receivedAtMs, sentAtMs: sentAt,
            ref: ref, campaign: campaign, source: source, medium: medium, platform: platform,
            deviceId: deviceId, clickId: clickId, clickIdSource: clickIdSource, deferred: deferred, url: url, referrer: referrer,
            userAgent: userAgent, ipHash: ipHash,
            visitorId: deviceId ?? hasher.visitorId(ipHash: ipHash, userAgent: userAgent),
            osVersion: osVersion, appVersion: appVersion, propertiesJSON: properties,
            botReason: verdict.botReason, installReferrer: installReferrer)
        event.audienceText = audience
        return event
    }

    func eventKind(_ field: Field<String>) throws -> EventKind {
        switch field {
        case .absent:
            throw EventError(
                code: "missing_field", field: "type",
                message: "Every event needs `type`: one of click, open, install, fallback.")
        case .wrongType(let sent):
            throw wrongType("type", sent: sent, expected: "a string: click, open, install or fallback")
        case .value(let name):
            guard let kind = EventKind(rawValue: name.lowercased()) else {
                throw EventError(
                    code: "invalid_value", field: "type",
                    message: "`type` must be one of click, open, install, fallback (got \"\(name.prefix(64))\").")
            }
            return kind
        }
    }

    /// A field holding the character U+0000 (NUL), which neither store keeps (PostgreSQL's text
    /// cannot hold it, and SQLite's tools cut text at it): the event is refused, so both stores
    /// store and count the same events.
    static func nul(_ name: String) -> EventError {
        EventError(
            code: "invalid_character", field: name,
            message: "`\(name)` contains the character U+0000 (NUL), which Linkpulse does not store; remove it.")
    }

    /// A string field: nil when absent, null or empty.
    func text(_ field: Field<String>, _ name: String, max: Int) throws -> String? {
        switch field {
        case .absent: return nil
        case .wrongType(let sent): throw wrongType(name, sent: sent, expected: "a string")
        case .value(let value):
            if value.isEmpty { return nil }
            if value.utf8.contains(0) { throw Self.nul(name) }
            // Bytes bound code points from above: count code points only when it matters.
            if value.utf8.count <= max { return value }
            let length = value.unicodeScalars.count
            guard length <= max else {
                throw EventError(
                    code: "too_long", field: name,
                    message: "`\(name)` is \(length) characters long; the limit is \(max).")
            }
            return value
        }
    }

    /// `click_id_source`: one of the sources an app reads a click id from, and only beside a
    /// `click_id` (it says where that id came from).
    func clickIdSource(_ field: Field<String>, clickId: String?) throws -> ClickIdSource? {
        guard let name = try text(field, "click_id_source", max: 32) else { return nil }
        let allowed = ClickIdSource.allCases.filter { $0 != .installReferrer }
        guard let source = ClickIdSource(rawValue: name.lowercased()), source != .installReferrer else {
            throw EventError(
                code: "invalid_value", field: "click_id_source",
                message: "`click_id_source` must be one of \(allowed.map(\.rawValue).joined(separator: ", ")) (got \"\(name.prefix(64))\"); send a Play Install Referrer as `install_referrer`.")
        }
        guard clickId != nil else {
            throw EventError(
                code: "missing_field", field: "click_id",
                message: "`click_id_source` says where `click_id` came from: send the click id the app read as `click_id` too.")
        }
        return source
    }

    func flag(_ field: Field<Bool>, _ name: String) throws -> Bool? {
        switch field {
        case .absent: return nil
        case .wrongType(let sent): throw wrongType(name, sent: sent, expected: "true or false")
        case .value(let value): return value
        }
    }

    func address(_ field: Field<String>) throws -> String? {
        guard let text = try text(field, "ip", max: 64) else { return nil }
        guard let canonical = canonicalIP(text) else {
            throw EventError(
                code: "invalid_value", field: "ip",
                message: "`ip` must be an IPv4 or IPv6 address such as 203.0.113.7; leave it out to use the request's own address.")
        }
        return canonical
    }

    /// Event time and device send time, with device clock skew corrected:
    /// `occurred = timestamp + (received − sent_at)` when `sent_at` is given.
    func times(_ p: EventPayload, receivedAt: Int64) throws -> (occurred: Int64, sent: Int64?) {
        let timestamp = try instant(p.timestamp, "timestamp")
        let sentAt = try instant(p.sentAt, "sent_at")
        var occurred = timestamp ?? receivedAt
        if let timestamp, let sentAt {
            occurred = timestamp + (receivedAt - sentAt)
        }
        guard occurred >= IngestLimits.earliestTimestampMs else {
            throw EventError(
                code: "timestamp_out_of_range", field: "timestamp",
                message: "`timestamp` is before 2000-01-01 after clock correction; send the event time as RFC 3339 or epoch milliseconds.")
        }
        guard occurred <= receivedAt + IngestLimits.maxFutureSkewMs else {
            throw EventError(
                code: "timestamp_out_of_range", field: "timestamp",
                message: "`timestamp` is more than 24 hours in the future; the device clock is probably wrong: send `sent_at` too, so the server can correct it.")
        }
        return (occurred, sentAt)
    }

    func instant(_ field: Field<TimeValue>, _ name: String) throws -> Int64? {
        switch field {
        case .absent: return nil
        case .wrongType(let sent):
            throw wrongType(name, sent: sent, expected: "an RFC 3339 string or epoch milliseconds")
        case .value(.text(let text)):
            guard let millis = Timestamp.parseRFC3339(text) else {
                throw EventError(
                    code: "invalid_timestamp", field: name,
                    message: "`\(name)` must be an RFC 3339 date-time like 2026-11-21T10:07:00Z or 2026-11-21T15:37:00+05:30 (got \"\(text.prefix(64))\").")
            }
            return millis
        case .value(.epochMillis(let number)):
            guard number.isFinite, number >= 0, number < 1e15 else {
                throw EventError(
                    code: "invalid_timestamp", field: name,
                    message: "`\(name)` must be epoch milliseconds (13 digits today) or an RFC 3339 string.")
            }
            if number < 1e11 {
                throw EventError(
                    code: "invalid_timestamp", field: name,
                    message: "`\(name)` looks like epoch seconds; send epoch milliseconds (multiply by 1000) or an RFC 3339 string.")
            }
            return Int64(number.rounded(.down))
        }
    }

    func propertiesJSON(_ field: Field<[String: PropertyValue]>) throws -> String? {
        switch field {
        case .absent: return nil
        case .wrongType(let sent):
            throw wrongType(
                "properties", sent: sent,
                expected: "a flat object of string, number or boolean values, like {\"deep_link_value\":\"shoe-123\"}")
        case .value(let properties):
            if properties.isEmpty { return nil }
            guard properties.count <= IngestLimits.maxProperties else {
                throw EventError(
                    code: "too_many_properties", field: "properties",
                    message: "`properties` has \(properties.count) entries; the limit is \(IngestLimits.maxProperties).")
            }
            for (key, value) in properties {
                guard !key.isEmpty, key.unicodeScalars.count <= IngestLimits.maxPropertyKeyLength else {
                    throw EventError(
                        code: "invalid_property", field: "properties",
                        message: "Property names must be 1 to \(IngestLimits.maxPropertyKeyLength) characters long.")
                }
                if case .string(let text) = value, text.unicodeScalars.count > IngestLimits.maxPropertyValueLength {
                    throw EventError(
                        code: "too_long", field: "properties.\(key.prefix(64))",
                        message: "Property `\(key.prefix(64))` is longer than \(IngestLimits.maxPropertyValueLength) characters.")
                }
                if case .number(let number) = value, !number.isFinite {
                    throw EventError(code: "invalid_property", field: "properties.\(key.prefix(64))", message: "Property numbers must be finite.")
                }
            }
            return JSONText.properties(properties)
        }
    }

    func wrongType(_ name: String, sent: String, expected: String) -> EventError {
        EventError(code: "invalid_type", field: name, message: "`\(name)` must be \(expected), not \(sent).")
    }
}

/// The canonical text form of an IPv4 or IPv6 address, or nil when `text` is neither.
/// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) become plain IPv4.
public func canonicalIP(_ text: String) -> String? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
        return format(family: AF_INET, &v4, length: Int(INET_ADDRSTRLEN))
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
        return bytes[12...].map(String.init).joined(separator: ".")
    }
    return format(family: AF_INET6, &v6, length: Int(INET6_ADDRSTRLEN))
}

private func format<T>(family: Int32, _ address: inout T, length: Int) -> String? {
    var buffer = [CChar](repeating: 0, count: length)
    let written = withUnsafeBytes(of: &address) { bytes in inet_ntop(family, bytes.baseAddress, &buffer, socklen_t(length)) }
    guard written != nil else { return nil }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
