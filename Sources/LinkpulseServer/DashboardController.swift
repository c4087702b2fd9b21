import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The marketer dashboard's static files (HTML, CSS, JavaScript modules from `dashboards/`),
/// read once when the daemon starts and served from memory: each with its content type, a
/// strong ETag (answering `If-None-Match` with 304), a gzip copy for clients that accept it,
/// and the security headers (a strict Content-Security-Policy: no inline script or style).
public struct DashboardAssets: Sendable {
    struct Asset: Sendable {
        var plain: ByteBuffer
        var gzipped: ByteBuffer?
        var etag: String
        var contentType: String
    }

    let files: [String: Asset]

    /// Content types by file extension; other files are not served.
    static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon", "json": "application/json; charset=utf-8",
        "txt": "text/plain; charset=utf-8",
    ]

    /// Reads every servable file under `directory` (hidden files and unknown types skipped).
    public static func load(from directory: URL) throws -> DashboardAssets {
        var files: [String: Asset] = [:]
        let root = directory.standardizedFileURL.resolvingSymlinksInPath().path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return DashboardAssets(files: [:]) }
        for case let relative as String in walker {
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
                  let type = contentTypes[(relative as NSString).pathExtension.lowercased()] else { continue }
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: root).appending(path: relative)))
            let digest = SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined()
            let compressed = Zlib.gzip(bytes)
            files[relative] = Asset(
                plain: ByteBuffer(bytes: bytes),
                gzipped: compressed.count < bytes.count - 64 ? ByteBuffer(bytes: compressed) : nil,
                etag: "\"\(digest)\"", contentType: type)
        }
        return DashboardAssets(files: files)
    }

    /// The dashboards folder: `explicit` when given; else `./dashboards`, else one beside or
    /// above the binary (a build under `.build/` in the repository finds the repository's).
    public static func locate(explicit: String?) -> URL? {
        if let explicit { return URL(fileURLWithPath: explicit, isDirectory: true) }
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appending(path: "dashboards")]
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(folder.appending(path: "dashboards"))
            candidates.append(folder.appending(path: "share/linkpulse/dashboards"))
            folder = folder.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appending(path: "index.html").path) }
    }
}

/// `GET /` → `/dashboard/`; `GET /dashboard/…` the dashboard's files.
struct DashboardController: Sendable {
    let assets: DashboardAssets?

    /// Sent with every dashboard file: only this server's own scripts, styles, images (and the
    /// QR codes it fetched, as `blob:` URLs) and API;
    /// no framing; no referrer leaking the dashboard's URL (and so its state) to other sites.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
            + "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        HTTPField.Name("Cross-Origin-Opener-Policy")!: "same-origin",
    ]

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("/") { _, _ in Response(status: .found, headers: [.location: "/dashboard/"]) }
        // The router treats /dashboard and /dashboard/ alike; the page's relative links need the slash.
        router.get("dashboard") { request, _ in
            request.uri.path.hasSuffix("/")
                ? serve("index.html", request) : Response(status: .movedPermanently, headers: [.location: "/dashboard/"])
        }
        router.get("dashboard/**") { request, context in
            serve(context.parameters.getCatchAll().joined(separator: "/"), request)
        }
    }

    func serve(_ path: String, _ request: Request) -> Response {
        guard let assets else {
            return .error(
                .notFound, code: "dashboard_not_found",
                message: "The dashboard's files were not found; start linkpulse from the repository root or pass --dashboards-dir.")
        }
        guard let asset = assets.files[path.isEmpty ? "index.html" : path] else {
            return .error(.notFound, code: "not_found", message: "No dashboard file is named \"\(path)\".")
        }
        var headers = Self.securityHeaders
        headers[.contentType] = asset.contentType
        headers[.eTag] = asset.etag
        headers[.cacheControl] = "no-cache"  // revalidate with the ETag; a 304 costs nothing
        headers[.vary] = "Accept-Encoding"
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        var body = asset.plain
        if let gzipped = asset.gzipped, request.headers[.acceptEncoding]?.lowercased().contains("gzip") == true {
            body = gzipped
            headers[.contentEncoding] = "gzip"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
