/// What happened to a link, as reported by a landing page or an app.
///
/// The raw values are the wire names and the values stored in the `events.type` column.
public enum EventKind: String, Sendable, CaseIterable, Codable {
    /// A person tapped the link (reported by the landing page or redirect service).
    case click
    /// An existing install was opened by the link, or the first open after a deferred install.
    case open
    /// A new install, reported by the app on its first launch.
    case install
    /// The app was not opened: the person was sent to the web version or the store.
    case fallback

    /// Whether an event of this kind must name the link's `ref`.
    public var requiresRef: Bool { self == .click || self == .fallback }
}

/// The device family an event came from.
///
/// `web` is only ever set by a sender that says so; user agents map to the other four.
public enum Platform: String, Sendable, CaseIterable, Codable {
    case ios, android, web, desktop, other

    /// The platform a user agent string belongs to: iPhone/iPad/iPod → `ios`, Android →
    /// `android`, Windows/macOS/Linux/ChromeOS browsers → `desktop`, anything else → `other`.
    public static func from(userAgent: String?) -> Platform {
        guard let ua = userAgent, !ua.isEmpty else { return .other }
        return ByteSearch.withBytes(ua) { bytes in
            // Order matters: Android UAs contain "Linux", iOS UAs contain "like Mac OS X".
            if markers.ios.contains(where: { ByteSearch.contains(bytes, $0) }) { return .ios }
            if markers.android.contains(where: { ByteSearch.contains(bytes, $0) }) { return .android }
            if markers.desktop.contains(where: { ByteSearch.contains(bytes, $0) }) { return .desktop }
            return .other
        }
    }

    private static let markers = (
        ios: ["iPhone", "iPad", "iPod"].map { Array($0.utf8) },
        android: ["Android"].map { Array($0.utf8) },
        desktop: ["Windows", "Macintosh", "Mac OS X", "CrOS", "X11", "Linux"].map { Array($0.utf8) }
    )
}

extension Platform {
    /// A small stable number for the platform, as both stores keep it (SQLite's cube keys and
    /// events, PostgreSQL's `platform` columns): never renumber one. Inlinable: the rollup
    /// passes read and write it for every event.
    @inlinable public var code: UInt8 {
        switch self {
        case .ios: 0
        case .android: 1
        case .web: 2
        case .desktop: 3
        case .other: 4
        }
    }

    /// The platform of a stored `code` (`other` for an unknown one).
    @inlinable public static func fromCode(_ code: UInt8) -> Platform {
        switch code {
        case 0: .ios
        case 1: .android
        case 2: .web
        case 3: .desktop
        default: .other
        }
    }
}
