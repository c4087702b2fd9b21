/// One field of an incoming event as it arrived: absent (or `null`), a value of the expected
/// JSON type, or a value of another JSON type (described for the error message).
public enum Field<Value: Sendable>: Sendable {
    case absent
    case value(Value)
    /// The field held the wrong JSON type; the payload names what was sent ("a number").
    case wrongType(sent: String)

    /// The value, when the field held one of the expected type.
    public var value: Value? {
        if case .value(let v) = self { return v }
        return nil
    }
}

extension Field: Equatable where Value: Equatable {}

/// A `timestamp` or `sent_at` as sent: an RFC 3339 string or a JSON number of epoch milliseconds.
public enum TimeValue: Sendable, Decodable, Equatable {
    case text(String)
    case epochMillis(Double)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .epochMillis(try container.decode(Double.self))
        }
    }
}

/// A value of the flat `properties` object: a string, a number or a boolean.
public enum PropertyValue: Sendable, Codable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else {
            self = .number(try container.decode(Double.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            // Integral numbers are written without a fraction, as they were most likely sent.
            if number.rounded() == number, abs(number) < 9.0e15 {
                try container.encode(Int64(number))
            } else {
                try container.encode(number)
            }
        }
    }
}

/// The wire shape of one ingest event, decoded leniently: decoding never fails on a field of
/// the wrong type (that becomes `.wrongType`), so one bad field or event never spoils a batch.
/// Unknown top-level fields are ignored. `EventValidator` turns it into an `IngestEvent`.
public struct EventPayload: Sendable, Decodable, Equatable {
    public var isObject = true
    public var id: Field<String> = .absent
    public var type: Field<String> = .absent
    public var ref: Field<String> = .absent
    public var campaign: Field<String> = .absent
    public var source: Field<String> = .absent
    public var medium: Field<String> = .absent
    public var platform: Field<String> = .absent
    public var timestamp: Field<TimeValue> = .absent
    public var sentAt: Field<TimeValue> = .absent
    public var deviceId: Field<String> = .absent
    public var clickId: Field<String> = .absent
    /// Where the app read `click_id` from (pasteboard, universal_link, app_link, other).
    public var clickIdSource: Field<String> = .absent
    /// The raw string of Android's Play Install Referrer API.
    public var installReferrer: Field<String> = .absent
    public var deferred: Field<Bool> = .absent
    public var url: Field<String> = .absent
    public var referrer: Field<String> = .absent
    public var userAgent: Field<String> = .absent
    public var ip: Field<String> = .absent
    public var osVersion: Field<String> = .absent
    public var appVersion: Field<String> = .absent
    /// `.wrongType` also when the object holds a value that is not a string, number or bool.
    public var properties: Field<[String: PropertyValue]> = .absent

    enum Key: String, CodingKey, CaseIterable {
        case id, type, ref, campaign, source, medium, platform, timestamp
        case sentAt = "sent_at", deviceId = "device_id", clickId = "click_id", deferred
        case url, referrer, userAgent = "user_agent", ip, osVersion = "os_version"
        case appVersion = "app_version", properties
        case clickIdSource = "click_id_source", installReferrer = "install_referrer"
    }

    public init() {}

    public init(from decoder: any Decoder) {
        guard let c = try? decoder.container(keyedBy: Key.self) else {
            isObject = false
            return
        }
        // Only the keys present are visited: events carry a handful of the twenty-one fields.
        for key in c.allKeys {
            switch key {
            case .id: id = Self.field(c, key)
            case .type: type = Self.field(c, key)
            case .ref: ref = Self.field(c, key)
            case .campaign: campaign = Self.field(c, key)
            case .source: source = Self.field(c, key)
            case .medium: medium = Self.field(c, key)
            case .platform: platform = Self.field(c, key)
            case .timestamp: timestamp = Self.field(c, key)
            case .sentAt: sentAt = Self.field(c, key)
            case .deviceId: deviceId = Self.field(c, key)
            case .clickId: clickId = Self.field(c, key)
            case .deferred: deferred = Self.field(c, key)
            case .url: url = Self.field(c, key)
            case .referrer: referrer = Self.field(c, key)
            case .userAgent: userAgent = Self.field(c, key)
            case .ip: ip = Self.field(c, key)
            case .osVersion: osVersion = Self.field(c, key)
            case .appVersion: appVersion = Self.field(c, key)
            case .properties: properties = Self.field(c, key)
            case .clickIdSource: clickIdSource = Self.field(c, key)
            case .installReferrer: installReferrer = Self.field(c, key)
            }
        }
    }

    static func field<V: Decodable & Sendable>(_ c: KeyedDecodingContainer<Key>, _ key: Key) -> Field<V> {
        if let value = try? c.decode(V.self, forKey: key) { return .value(value) }
        if (try? c.decodeNil(forKey: key)) == true { return .absent }
        return .wrongType(sent: describe(c, key))
    }

    /// Names the JSON type a field held, for error messages.
    static func describe(_ c: KeyedDecodingContainer<Key>, _ key: Key) -> String {
        if (try? c.decode(String.self, forKey: key)) != nil { return "a string" }
        if (try? c.decode(Bool.self, forKey: key)) != nil { return "a boolean" }
        if (try? c.decode(Double.self, forKey: key)) != nil { return "a number" }
        if (try? c.nestedUnkeyedContainer(forKey: key)) != nil { return "an array" }
        // Only `properties` takes an object; there, the object's values were the problem.
        return key == .properties ? "an object with nested or null values" : "an object"
    }
}
