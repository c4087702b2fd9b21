import Foundation
import Hummingbird
import Yams

/// `GET /openapi.json`: the API's OpenAPI 3.1 description. Its one source is
/// `docs/openapi.yaml`, embedded at build time and turned into JSON once, at first use.
struct OpenAPIController: Sendable {
    /// The document as JSON bytes; nil when the embedded YAML could not be read (a build
    /// mistake the test suite catches).
    static let document: [UInt8]? = {
        guard let yaml = EmbeddedText.files["openapi.yaml"], let tree = try? Yams.load(yaml: yaml) else { return nil }
        return try? Array(JSONSerialization.data(withJSONObject: jsonTree(tree), options: [.sortedKeys, .withoutEscapingSlashes]))
    }()

    /// A YAML tree as Foundation's JSON writer takes it: mappings keyed by strings.
    static func jsonTree(_ node: Any) -> Any {
        switch node {
        case let mapping as [AnyHashable: Any]:
            return Dictionary(uniqueKeysWithValues: mapping.map { ("\($0.key.base)", jsonTree($0.value)) })
        case let mapping as [String: Any]:
            return mapping.mapValues(jsonTree)
        case let sequence as [Any]:
            return sequence.map(jsonTree)
        default:
            return node
        }
    }

    func addRoutes(to router: Router<LinkpulseRequestContext>) {
        router.get("openapi.json") { _, _ -> Response in
            guard let document = Self.document else {
                return .error(.internalServerError, code: "openapi_unavailable", message: "This build carries no readable OpenAPI document.")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }
}

/// Answers `405 Method Not Allowed`, with `Allow`, for a request whose path is one of the
/// document's but whose method is not (the router alone would say 404). The paths and their
/// methods come from the OpenAPI document, so the two cannot drift apart. Added after every
/// route, it only wraps the router's not-found answer.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// A documented path: its segments (`nil` for a `{parameter}`) and its methods.
    struct Route: Sendable {
        var segments: [String?]
        var methods: [String]

        func matches(_ path: [Substring]) -> Bool {
            path.count == segments.count && zip(segments, path).allSatisfy { $0.0 == nil || $0.0! == $0.1 }
        }
    }

    let routes: [Route]

    init(document: [UInt8]? = OpenAPIController.document) {
        let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        guard let document, let tree = try? JSONSerialization.jsonObject(with: Data(document)) as? [String: Any],
            let paths = tree["paths"] as? [String: [String: Any]]
        else {
            routes = []
            return
        }
        routes = paths.map { path, operations in
            Route(
                segments: path.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) },
                methods: methods.filter { operations[$0] != nil }.map { $0.uppercased() })
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path.split(separator: "/")
            guard let route = routes.first(where: { $0.matches(path) }), !route.methods.contains(request.method.rawValue) else {
                throw error
            }
            let allowed = route.methods.joined(separator: ", ")
            return .error(
                .methodNotAllowed, code: "method_not_allowed",
                message: "\(request.uri.path) answers \(allowed), not \(request.method.rawValue).",
                headers: [.allow: allowed])
        }
    }
}
