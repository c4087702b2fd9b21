import Foundation
import Hummingbird
import LinkpulseServer
import Prometheus
import Testing
import Yams

/// Every route the daemon serves (hosted links and the dashboard on) is an operation of
/// docs/openapi.yaml, and every operation there is a route: the document a client reads at
/// `/openapi.json` leaves nothing out.
@Suite struct OpenAPIRoutesTests {
    /// `METHOD /path/{name}` of each documented operation.
    static func documented() throws -> Set<String> {
        let text = try String(contentsOf: OpenAPIContractTests.repository.appending(path: "docs/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "head", "post", "put", "patch", "delete", "options"]
        return Set(paths.flatMap { path, operations in
            operations.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
        })
    }

    /// A route as the document spells it: captures `{name}`, no trailing slash.
    static func spelled(_ route: Router<LinkpulseRequestContext>.RouteDescription) -> String {
        var path = "\(route.path)"
        path = path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix(":") ? "{\(part.dropFirst())}" : part == "**" ? "{path}" : String(part)
        }.joined(separator: "/")
        if !path.hasPrefix("/") { path = "/" + path }
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return "\(route.method) \(path)"
    }

    @Test func everyServedRouteIsDocumentedAndEveryDocumentedOneServed() throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        var settings = HostedLinkHTTPTests.settings
        settings.dashboardsDirectory = dashboardsFolder
        var deps = installation.dependencies()
        deps.parts.prometheus = PrometheusCollectorRegistry()
        let router = buildRouter(backend: SQLiteBackend(deps, settings: settings), settings: settings)
        let served = Set(router.routes.map(Self.spelled))
        let documented = try Self.documented()
        #expect(served.subtracting(documented).sorted() == [], "served, not in docs/openapi.yaml")
        #expect(documented.subtracting(served).sorted() == [], "in docs/openapi.yaml, not served")
    }
}
