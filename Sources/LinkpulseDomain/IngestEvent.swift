/// A validated event, ready to store. Built only by `EventValidator`; everything in it has been
/// checked, normalised and stripped of raw IP addresses.
public struct IngestEvent: Sendable, Equatable {
    /// The client's idempotency key (or a generated UUID when the client sent none).
    public var id: String
    public var kind: EventKind
    /// When it happened, UTC milliseconds, after clock-skew correction.
    public var occurredAtMs: Int64
    /// When the server received it, UTC milliseconds.
    public var receivedAtMs: Int64
    /// The device's send time as reported, UTC milliseconds (kept for diagnosis).
    public var sentAtMs: Int64?
    public var ref: String?
    public var campaign: String?
    public var source: String?
    public var medium: String?
    public var platform: Platform
    public var deviceId: String?
    public var clickId: String?
    /// Where the app read `clickId` from (`click_id_source`, or the install referrer).
    public var clickIdSource: ClickIdSource?
    /// The Play Install Referrer as the app sent it (`install_referrer`), before its click id
    /// and `utm_*` values were read out of it.
    public var installReferrer: String?
    public var deferred: Bool?
    public var url: String?
    public var referrer: String?
    public var userAgent: String?
    /// Keyed hash of the visitor's IP address (never the address itself).
    public var ipHash: String?
    /// `device_id` when given, else the keyed hash of IP and user agent.
    public var visitorId: String
    public var osVersion: String?
    public var appVersion: String?
    /// The `properties` object as canonical JSON (sorted keys), or nil.
    public var propertiesJSON: String?
    /// Why the event is considered a bot or link-preview fetch, or nil for a person.
    public var botReason: String?
    /// Whether the app sent it to `/v1/resolve` (asking for its link), not `/v1/events`: a
    /// device's first resolve is its first session.
    public var isResolve = false
    /// Its country, device, system, browser and language as stored (`AudienceDimensions.stored`),
    /// derived from the request before its address was hashed; nil when nothing is known
    /// (without the data, or for an event stored before).
    public var audienceText: String?

    public var isBot: Bool { botReason != nil }

    public init(
        id: String, kind: EventKind, occurredAtMs: Int64, receivedAtMs: Int64, sentAtMs: Int64? = nil,
        ref: String? = nil, campaign: String? = nil, source: String? = nil, medium: String? = nil,
        platform: Platform, deviceId: String? = nil, clickId: String? = nil, clickIdSource: ClickIdSource? = nil, deferred: Bool? = nil,
        url: String? = nil, referrer: String? = nil, userAgent: String? = nil, ipHash: String? = nil,
        visitorId: String, osVersion: String? = nil, appVersion: String? = nil,
        propertiesJSON: String? = nil, botReason: String? = nil, installReferrer: String? = nil
    ) {
        self.id = id; self.kind = kind; self.occurredAtMs = occurredAtMs; self.receivedAtMs = receivedAtMs
        self.sentAtMs = sentAtMs; self.ref = ref; self.campaign = campaign; self.source = source
        self.medium = medium; self.platform = platform; self.deviceId = deviceId; self.clickId = clickId
        self.clickIdSource = clickIdSource; self.deferred = deferred; self.url = url; self.referrer = referrer; self.userAgent = userAgent
        self.ipHash = ipHash; self.visitorId = visitorId; self.osVersion = osVersion
        self.appVersion = appVersion; self.propertiesJSON = propertiesJSON; self.botReason = botReason
        self.installReferrer = installReferrer
    }
}

/// Why one event was rejected: a stable machine `code`, the `field` at fault (nil for the
/// event as a whole) and a `message` a person can act on.
public struct EventError: Error, Sendable, Equatable, Codable {
    public var code: String
    public var field: String?
    public var message: String

    public init(code: String, field: String?, message: String) {
        self.code = code; self.field = field; self.message = message
    }
}

/// The limits of the ingest contract, in one place for validation, framing and docs/ingest.md.
public enum IngestLimits {
    /// Largest request body, after decompression.
    public static let maxBodyBytes = 1 << 20
    /// Most events in one request.
    public static let maxEventsPerRequest = 1000
    /// Largest single event, as JSON text.
    public static let maxEventBytes = 32 << 10
    /// Deepest nesting of objects and arrays within one event (the event object is depth 1).
    public static let maxDepth = 16
    public static let maxIdLength = 128
    public static let maxDimensionLength = 256
    public static let maxURLLength = 4096
    public static let maxUserAgentLength = 1024
    public static let maxVersionLength = 64
    public static let maxProperties = 32
    public static let maxPropertyKeyLength = 128
    public static let maxPropertyValueLength = 1024
    /// Earliest accepted event time: 2000-01-01T00:00:00Z.
    public static let earliestTimestampMs: Int64 = 946_684_800_000
    /// How far past the receive time an event may claim to have happened.
    public static let maxFutureSkewMs: Int64 = 24 * 3600 * 1000
}
