import Foundation
import HTTPTypes
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import NIOCore

/// Serves hosted links on the link domains (`--links-config`): `GET /{ref}` answered per
/// visitor (`LinkRouting`), and the association files that let the apps open them. On any
/// other host these paths are no link (`404`).
///
/// A visit's click is stored before the answer, exactly as `POST /v1/events` stores one
/// (validated, bots flagged, no raw address, once by id), and never held by ingest pacing: a
/// person is waiting. When it cannot be stored (a full disk, a failing database) the person is
/// still sent on, and the loss is counted and logged. `HEAD` stores nothing.
struct HostedLinkController: Sendable {
    let links: any LinkRecords
    let config: LinksConfig
    let ingest: IngestController
    let logger: Logger
    let routing: LinkRouting
    let pages: LinkPages
    let appleAssociation: [UInt8]
    let androidAssociation: [UInt8]
    let stored = Counter(label: "linkpulse_link_visits_total", dimensions: [("outcome", "stored")])
    let unstored = Counter(label: "linkpulse_link_visits_total", dimensions: [("outcome", "unstored")])
    let continued = Counter(label: "linkpulse_link_visits_total", dimensions: [("outcome", "continued")])

    init(links: any LinkRecords, config: LinksConfig, ingest: IngestController, logger: Logger) {
        self.links = links
        self.config = config
        self.ingest = ingest
        self.logger = logger
        routing = LinkRouting(config: config)
        pages = LinkPages(config: config)
        appleAssociation = AssociationFiles.appleAppSiteAssociation(config)
        androidAssociation = AssociationFiles.assetLinks(config)
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        for path in [".well-known/apple-app-site-association", "apple-app-site-association"] {
            router.get(RouterPath(path)) { request, _ in association(request, appleAssociation) }
        }
        router.get(".well-known/assetlinks.json") { request, _ in association(request, androidAssociation) }
        router.get("{ref}") { request, context in await visit(request, context: context, storing: true) }
        router.head("{ref}") { request, context in await visit(request, context: context, storing: false) }
    }

    /// The role of the request's host, nil when it is not a link domain: the `Host` header, or
    /// with `--trust-proxy` the proxy's `X-Forwarded-Host` when it sets one.
    func role(_ request: Request) -> LinkDomainRole? {
        let forwarded = ingest.trustProxy ? request.headers[Self.forwardedHost]?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } : nil
        guard let host = forwarded ?? request.head.authority else { return nil }
        return config.role(ofHost: host)
    }

    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!

    static let notALink = Response.error(.notFound, code: "not_found", message: "No such endpoint; /openapi.json lists them.")

    /// An association file: `application/json`, on a link domain only, never a redirect.
    func association(_ request: Request, _ body: [UInt8]) -> Response {
        guard role(request) != nil else { return Self.notALink }
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=300"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    func visit(_ request: Request, context: LinkpulseRequestContext, storing: Bool) async -> Response {
        guard let role = role(request) else { return Self.notALink }
        let ref = context.parameters.get("ref") ?? ""
        guard HostedLink.isValidName(ref) else { return Self.page(LinkPages.missing(gone: false), status: .notFound) }
        let stored: StoredLink?
        do {
            stored = try await links.link(ref: ref)
        } catch {
            logger.error("a hosted link could not be read", metadata: ["ref": "\(ref)", "error": "\(error)"])
            return Self.page(LinkPages.missing(gone: false), status: .serviceUnavailable, headers: [.retryAfter: "2"])
        }
        guard let stored else { return Self.page(LinkPages.missing(gone: false), status: .notFound) }
        let receivedAt = ingest.now()
        guard stored.deletedAtMs == nil, !stored.link.isExpired(atMs: receivedAt) else {
            return Self.page(LinkPages.missing(gone: true), status: .gone)
        }
        let link = stored.link
        let tappedURL = LinkRouting.linkURL(host: config.domain(role), ref: ref)
            + (request.uri.query.map { "?\($0)" } ?? "")
        let userAgent = request.headers[.userAgent]
        // The validator's classifier: the click's verdict below is then a remembered one.
        let visitor = LinkVisitor(userAgent: userAgent, classifier: ingest.validator.userAgents)
        // The preview page's button brings the click id along: that click is stored already.
        let carried = role == .twin ? LinkClick.carriedClickId(inQuery: tappedURL) : nil
        let clickId = carried ?? UUID().uuidString.lowercased()
        if storing, carried == nil {
            await storeClick(id: clickId, link: link, tappedURL: tappedURL, request: request, context: context, receivedAt: receivedAt)
        } else if carried != nil {
            continued.increment()
        }
        switch routing.answer(link, to: visitor, on: role, clickId: clickId) {
        case .socialPage:
            return Self.page(pages.social(link), status: .ok)
        case .appPreview(let button, let withoutApp, let pasteboard):
            return Self.page(pages.appPreview(link, button: button, withoutApp: withoutApp, pasteboard: pasteboard), status: .ok)
        case .redirect(let location):
            return Response(status: .found, headers: [.location: location, .cacheControl: "no-store", .referrerPolicy: "no-referrer"])
        }
    }

    /// Stores the visit's click before the answer; what fails is counted and logged, and the
    /// person is sent on all the same.
    func storeClick(id: String, link: HostedLink, tappedURL: String, request: Request, context: LinkpulseRequestContext, receivedAt: Int64) async {
        let forwardedFor = ingest.forwardedAddresses(request)
        let facts = RequestFacts(
            receivedAtMs: receivedAt, clientIP: ingest.clientIP(context: context, forwardedFor: forwardedFor),
            userAgent: request.headers[.userAgent], acceptLanguage: request.headers[.acceptLanguage])
        let payload = LinkClick.payload(id: id, link: link, tappedURL: tappedURL, referrer: request.headers[.referer])
        let work: IngestWork
        switch ingest.validator.validate(payload, request: facts) {
        case .success(let event):
            work = IngestWork(events: [event], quarantine: [], personWaiting: true)
        case .failure(let problem):
            // Kept in quarantine like any refused event (a user agent past the limit, say).
            let raw = Array("{\"ref\":\(Self.jsonString(link.ref)),\"url\":\(Self.jsonString(tappedURL))}".utf8)
            work = IngestWork(
                events: [], quarantine: [ingest.quarantined(raw, index: nil, problem, request: facts, forwardedFor: forwardedFor)], personWaiting: true)
        }
        let result = await ingest.store(work)
        if let outcomes = result.outcomes, !work.events.isEmpty {
            _ = ingest.count(work.events, outcomes, rejected: 0)
            stored.increment()
        } else {
            if result.failure != nil {
                logger.warning("a hosted link's click was not stored; the visitor was sent on", metadata: ["ref": "\(link.ref)", "reason": "\(result.failure!.code)"])
            }
            ingest.metrics.rejected.increment(by: work.quarantine.count)
            unstored.increment()
        }
    }

    static func jsonString(_ text: String) -> String {
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// An HTML page, never cached, under the pages' Content-Security-Policy.
    static func page(_ html: String, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        fields[.contentSecurityPolicy] = LinkPages.contentSecurityPolicy
        fields[.xContentTypeOptions] = "nosniff"
        fields[.referrerPolicy] = "no-referrer"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

extension HTTPField.Name {
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}
