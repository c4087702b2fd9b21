import Crypto
import Foundation
import LinkpulseDomain

/// The HTML a hosted link answers with: the social page for preview fetchers, the app preview
/// page (iOS, in-app browsers), and the 404 and 410 pages. Every value from a link is escaped;
/// the one script and the one style are fixed texts, allowed by their hashes in a strict
/// `Content-Security-Policy` (nothing else runs, loads or submits; images from http(s) only).
struct LinkPages: Sendable {
    let config: LinksConfig

    /// The page's style: a card centred on the screen, one button.
    static let style = """
        body{margin:0;font:17px/1.45 -apple-system,system-ui,sans-serif;background:#f4f5f7;color:#1d2330}\
        main{max-width:28rem;margin:0 auto;padding:2rem 1.25rem;text-align:center}\
        img{max-width:100%;border-radius:.75rem}h1{font-size:1.35rem;margin:1rem 0 .5rem}p{margin:0 0 1.25rem;color:#4a5263}\
        a.open{display:block;padding:.9rem;border-radius:.6rem;background:#2454d6;color:#fff;text-decoration:none;font-weight:600}\
        a.other{display:inline-block;margin-top:1rem;color:#2454d6}
        """

    /// The preview page's script: a tap on the button first puts the link with its click id on
    /// the pasteboard (`data-pasteboard`), which the app reads on its first launch, and then
    /// follows the button as any tap would (a navigation the system may hand to the app).
    static let script = """
        document.querySelectorAll("a[data-pasteboard]").forEach(function (a) {\
        a.addEventListener("click", function () {\
        var text = a.getAttribute("data-pasteboard"), area = document.createElement("textarea");\
        area.value = text; area.setAttribute("readonly", ""); area.style.position = "fixed"; area.style.opacity = "0";\
        document.body.appendChild(area); area.select(); area.setSelectionRange(0, text.length);\
        try { document.execCommand("copy"); } catch (e) {}\
        document.body.removeChild(area);\
        if (navigator.clipboard && navigator.clipboard.writeText) { navigator.clipboard.writeText(text).catch(function () {}); }\
        });\
        });
        """

    /// `Content-Security-Policy` of every link page.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src '\(hash(script))'; style-src '\(hash(style))'; img-src https: http:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func hash(_ text: String) -> String {
        "sha256-" + Data(SHA256.hash(data: Data(text.utf8))).base64EncodedString()
    }

    /// The page a preview fetcher gets: the link's card (Open Graph, Twitter) and the Facebook
    /// App Links tags that open the app from an ad.
    func social(_ link: HostedLink) -> String {
        document(link, body: """
            <main>\(picture(link))<h1>\(Self.escape(title(link)))</h1>\(description(link))\
            <a class="open" href="\(Self.escape(link.url))">Open</a></main>
            """)
    }

    /// The app preview page: the link's preview and a button to `button` (the twin domain,
    /// which opens the app when it is installed), with a way on for a person without the app.
    func appPreview(_ link: HostedLink, button: String, withoutApp: String, pasteboard: String?) -> String {
        let copy = pasteboard.map { " data-pasteboard=\"\(Self.escape($0))\"" } ?? ""
        let other = button == withoutApp ? "" : "<br><a class=\"other\" href=\"\(Self.escape(withoutApp))\">Continue without the app</a>"
        return document(link, body: """
            <main>\(picture(link))<h1>\(Self.escape(title(link)))</h1>\(description(link))\
            <a class="open" id="open" href="\(Self.escape(button))"\(copy)>Open in the app</a>\(other)</main>\
            <script>\(Self.script)</script>
            """)
    }

    /// The page of a ref no link has (404), or of a link deleted or expired (410).
    static func missing(gone: Bool) -> String {
        let (title, text) = gone
            ? ("This link has ended", "The link you followed was removed or has expired.")
            : ("No such link", "Check the address: no link has it.")
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">\
            <meta name="robots" content="noindex"><title>\(title)</title><style>\(style)</style></head>\
            <body><main><h1>\(title)</h1><p>\(text)</p></main></body></html>
            """
    }

    private func title(_ link: HostedLink) -> String { link.social.title ?? link.ref }

    private func description(_ link: HostedLink) -> String {
        link.social.description.map { "<p>\(Self.escape($0))</p>" } ?? ""
    }

    private func picture(_ link: HostedLink) -> String {
        link.social.image.map { "<img src=\"\(Self.escape($0))\" alt=\"\">" } ?? ""
    }

    private func document(_ link: HostedLink, body: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">\
        <title>\(Self.escape(title(link)))</title>\(metaTags(link))<style>\(Self.style)</style></head><body>\(body)</body></html>
        """
    }

    /// Open Graph, Twitter card and Facebook App Links tags.
    func metaTags(_ link: HostedLink) -> String {
        var tags: [(attribute: String, name: String, content: String)] = [
            ("property", "og:type", "website"),
            ("property", "og:url", LinkRouting.linkURL(host: config.primaryDomain, ref: link.ref)),
            ("property", "og:title", title(link)),
            ("name", "twitter:card", link.social.image == nil ? "summary" : "summary_large_image"),
            ("name", "twitter:title", title(link)),
        ]
        if let description = link.social.description {
            tags += [("property", "og:description", description), ("name", "twitter:description", description), ("name", "description", description)]
        }
        if let image = link.social.image { tags += [("property", "og:image", image), ("name", "twitter:image", image)] }
        let app = config.app(named: link.app) ?? config.defaultApp
        let appURL = { (scheme: String) in "\(scheme)://\(self.config.primaryDomain)/\(link.ref)" }
        if let ios = app.ios {
            if let scheme = ios.scheme { tags.append(("property", "al:ios:url", appURL(scheme))) }
            if let id = ios.appStoreId { tags.append(("property", "al:ios:app_store_id", id)) }
        }
        if let android = app.android {
            if let scheme = android.scheme { tags.append(("property", "al:android:url", appURL(scheme))) }
            tags.append(("property", "al:android:package", android.package))
        }
        tags.append(("property", "al:web:url", link.url))
        return tags.map { "<meta \($0.attribute)=\"\($0.name)\" content=\"\(Self.escape($0.content))\">" }.joined()
    }

    /// `text` safe inside an element or a double-quoted attribute.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// The association files of the link domains, built from the configuration:
/// `apple-app-site-association` (universal links) and `assetlinks.json` (App Links).
enum AssociationFiles {
    /// Paths of a link domain that are not links (the daemon's own), which no app should open.
    static let excludedPaths = ["/v1/*", "/dashboard*", "/.well-known/*", "/healthz", "/readyz", "/metrics", "/openapi.json"]

    /// Every iOS app id, in today's form (`appIDs`, `components`) and the one before iOS 13
    /// read (`appID`, `paths`).
    static func appleAppSiteAssociation(_ config: LinksConfig) -> [UInt8] {
        let components: [[String: Any]] = excludedPaths.map { ["/": $0, "exclude": true, "comment": "the daemon's own"] } + [["/": "/*"]]
        let paths = excludedPaths.map { "NOT \($0)" } + ["*"]
        let details: [[String: Any]] = config.apps.flatMap { app in
            (app.ios?.appIds ?? []).map { id in ["appIDs": [id], "components": components, "appID": id, "paths": paths] }
        }
        return json(["applinks": ["apps": [String](), "details": details]])
    }

    /// Every Android app with its signing certificates.
    static func assetLinks(_ config: LinksConfig) -> [UInt8] {
        json(config.apps.compactMap { app -> [String: Any]? in
            guard let android = app.android else { return nil }
            return [
                "relation": ["delegate_permission/common.handle_all_urls"],
                "target": ["namespace": "android_app", "package_name": android.package, "sha256_cert_fingerprints": android.sha256CertFingerprints],
            ]
        })
    }

    private static func json(_ object: Any) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8))
    }
}
