import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore

/// The hosted links API: `POST /v1/links`, `PATCH` and `DELETE /v1/links/{ref}` with a key that
/// may manage links (admin); `GET /v1/links` (with `stats=true`, each link's metrics over a
/// range), `GET /v1/links/{ref}` and its QR codes with a read key.
/// Without `--links-config` every route answers `404 links_off`, saying how to turn them on.
struct LinksController: Sendable {
    let links: any LinkRecords
    /// Nil when hosted links are off.
    let config: LinksConfig?
    /// Each listed link's metrics, when asked for.
    let stats: StatsService
    let now: @Sendable () -> Int64

    /// Largest link body.
    static let maxBodyBytes = 64 << 10
    /// `limit` of `GET /v1/links`: its default and its largest value.
    static let defaultPage = 100
    static let largestPage = 1_000

    func addRoutes(read: some RouterMethods<LinkpulseRequestContext>, admin: some RouterMethods<LinkpulseRequestContext>) {
        read.get("v1/links") { request, _ in await list(request) }
        read.get("v1/links/{ref}") { request, context in
            await request.refusingUnknownParameters(known: []) { await show(context.parameters.get("ref") ?? "") }
        }
        read.get("v1/links/{ref}/qr.svg") { request, context in
            await request.refusingUnknownParameters(known: []) { await qrCode(context.parameters.get("ref") ?? "", format: .svg) }
        }
        read.get("v1/links/{ref}/qr.png") { request, context in
            await request.refusingUnknownParameters(known: QueryParameterNames.qrCode) {
                await qrCode(context.parameters.get("ref") ?? "", format: .png(scale: request.uri.queryParameters["scale"]))
            }
        }
        admin.post("v1/links") { request, _ in await create(request) }
        admin.patch("v1/links/{ref}") { request, context in await change(context.parameters.get("ref") ?? "", request) }
        admin.delete("v1/links/{ref}") { _, context in await delete(context.parameters.get("ref") ?? "") }
    }

    /// A link as the API shows it: every field, `null` when unset, with its short URL.
    struct LinkResponse: Encodable {
        var link: HostedLink
        var shortURL: String
        /// Over the list's range, when `stats=true` asked for it (zeros for a link without events).
        var stats: ConversionMetrics?

        enum Keys: String, CodingKey {
            case ref, url, app, campaign, source, medium, social
            case shortURL = "short_url", deepLink = "deep_link", iosURL = "ios_url", androidURL = "android_url"
            case desktopURL = "desktop_url", iosPreview = "ios_preview", expiresAt = "expires_at"
            case createdAt = "created_at", updatedAt = "updated_at", stats
        }

        enum SocialKeys: String, CodingKey { case title, description, image }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(link.ref, forKey: .ref)
            try c.encode(shortURL, forKey: .shortURL)
            try c.encode(link.url, forKey: .url)
            try c.encode(link.app, forKey: .app)
            try c.encode(link.campaign, forKey: .campaign)
            try c.encode(link.source, forKey: .source)
            try c.encode(link.medium, forKey: .medium)
            try c.encode(link.deepLink, forKey: .deepLink)
            try c.encode(link.iosURL, forKey: .iosURL)
            try c.encode(link.androidURL, forKey: .androidURL)
            try c.encode(link.desktopURL, forKey: .desktopURL)
            try c.encode(link.iosPreview, forKey: .iosPreview)
            var social = c.nestedContainer(keyedBy: SocialKeys.self, forKey: .social)
            try social.encode(link.social.title, forKey: .title)
            try social.encode(link.social.description, forKey: .description)
            try social.encode(link.social.image, forKey: .image)
            try c.encode(link.expiresAtMs.map(Timestamp.formatUTC), forKey: .expiresAt)
            try c.encode(Timestamp.formatUTC(link.createdAtMs), forKey: .createdAt)
            try c.encode(Timestamp.formatUTC(link.updatedAtMs), forKey: .updatedAt)
            try c.encodeIfPresent(stats, forKey: .stats)
        }
    }

    struct ListResponse: Encodable {
        var links: [LinkResponse]
        /// How many links there are in all (not deleted), for paging.
        var total: Int
        var limit: Int
        var offset: Int
        /// The range of the links' `stats`, as a stats answer echoes it.
        var from: String?
        var to: String?
        var tz: String?
    }

    func response(_ link: HostedLink, config: LinksConfig) -> LinkResponse {
        LinkResponse(link: link, shortURL: LinkRouting.linkURL(host: config.primaryDomain, ref: link.ref))
    }

    static let off = Response.error(
        .notFound, code: "links_off",
        message: "Hosted links are off: start the daemon with --links-config FILE (its link domains and apps; see docs/links.md).")

    func list(_ request: Request) async -> Response {
        guard let config else { return Self.off }
        let parameters: [String: String]
        do throws(ParameterError) { parameters = try request.queryParameters(known: QueryParameterNames.links) } catch {
            return .badParameter(error)
        }
        guard let limit = Self.count(parameters["limit"], default: Self.defaultPage), (1...Self.largestPage).contains(limit) else {
            return .error(.badRequest, code: "invalid_parameter", message: "`limit` is a whole number from 1 to \(Self.largestPage).", parameter: "limit")
        }
        guard let offset = Self.count(parameters["offset"], default: 0) else {
            return .error(.badRequest, code: "invalid_parameter", message: "`offset` is a whole number, 0 or more.", parameter: "offset")
        }
        // With `stats=true`, the stats API's range, zone and bots (its filters are not taken here).
        let range: StatsQuery?
        do throws(ParameterError) {
            range = try StatsQuery.flag(parameters, "stats") == true
                ? StatsQuery.parse(parameters, defaultZone: stats.defaultZone, nowMs: stats.now()) : nil
        } catch {
            return .badParameter(error)
        }
        do {
            let page = try await links.links(limit: limit, offset: offset)
            let total = try await links.linkCount()
            var answers = page.map { response($0, config: config) }
            var echo: RangeEcho?
            var freshness: Freshness?
            if let range {
                freshness = await stats.currentFreshness()
                let metrics = try await stats.metrics(of: page.map(\.ref), by: .ref, range)
                for i in answers.indices { answers[i].stats = metrics[answers[i].link.ref] }
                echo = RangeEcho(range)
            }
            let list = ListResponse(links: answers, total: total, limit: limit, offset: offset, from: echo?.from, to: echo?.to, tz: echo?.tz)
            return .json(FreshAnswer(answer: list, freshness: freshness), status: .ok, compressingFor: request, headers: .freshness(freshness))
        } catch {
            return .databaseUnavailable
        }
    }

    static func count(_ text: String?, default value: Int) -> Int? {
        guard let text else { return value }
        guard let number = Int(text), number >= 0 else { return nil }
        return number
    }

    func show(_ ref: String) async -> Response {
        guard let config else { return Self.off }
        do {
            guard let stored = try await links.link(ref: ref), stored.deletedAtMs == nil else { return Self.notFound(ref) }
            return .json(response(stored.link, config: config), status: .ok)
        } catch {
            return .databaseUnavailable
        }
    }

    enum QRFormat {
        case svg
        /// `scale`: the query's pixels per module, if given.
        case png(scale: Substring?)
    }

    /// Pixels per module of a PNG QR code: the default, and the largest (a 2,000-pixel image
    /// of the largest short URL).
    static let defaultQRScale = 8
    static let largestQRScale = 40

    /// The QR code of a link's short URL. A link's short URL changes only with the configured
    /// primary domain, so the image may be kept for a day.
    func qrCode(_ ref: String, format: QRFormat) async -> Response {
        guard let config else { return Self.off }
        var scale = Self.defaultQRScale
        if case .png(let given?) = format {
            guard let number = Int(given), (1...Self.largestQRScale).contains(number) else {
                return .error(.badRequest, code: "invalid_parameter",
                              message: "`scale` is the pixels per module, a whole number from 1 to \(Self.largestQRScale).", parameter: "scale")
            }
            scale = number
        }
        do {
            guard let stored = try await links.link(ref: ref), stored.deletedAtMs == nil else { return Self.notFound(ref) }
            guard let code = QRCode(LinkRouting.linkURL(host: config.primaryDomain, ref: stored.link.ref)) else {
                return .error(.internalServerError, code: "qr_failed", message: "The short URL does not fit in a QR code.")
            }
            let bytes: [UInt8]
            let type: String
            switch format {
            case .svg: (bytes, type) = (Array(code.svg().utf8), "image/svg+xml")
            case .png: (bytes, type) = (code.png(scale: scale), "image/png")
            }
            return Response(
                status: .ok,
                headers: [.contentType: type, .cacheControl: "private, max-age=86400"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        } catch {
            return .databaseUnavailable
        }
    }

    static func notFound(_ ref: String) -> Response {
        .error(.notFound, code: "not_found", message: "No link has the ref \"\(ref)\"; GET /v1/links lists them.")
    }

    func create(_ request: Request) async -> Response {
        guard let config else { return Self.off }
        let body: [String: JSONValue]
        switch await Self.object(request) {
        case .success(let object): body = object
        case .failure(let refusal): return refusal.response
        }
        let fields = LinkFields(config: config)
        let link: HostedLink
        do {
            link = try fields.create(body, nowMs: now(), newRef: LinkRefs.random)
        } catch {
            return Self.refused(error)
        }
        do {
            // A generated ref that happens to be taken is drawn again; a given one is a conflict.
            var candidate = link
            for _ in 0..<5 {
                if try await links.insertLink(candidate) {
                    return .json(response(candidate, config: config), status: .created, headers: [.location: "/v1/links/\(candidate.ref)"])
                }
                guard body["ref"] == nil || body["ref"] == .null else { break }
                candidate.ref = LinkRefs.random()
            }
            return .error(
                .conflict, code: "ref_taken",
                message: "The ref \"\(link.ref)\" belongs to another link (or to one deleted: a ref is never given out twice). Choose another, or leave ref out to have one made.",
                field: "ref")
        } catch {
            return .databaseUnavailable
        }
    }

    func change(_ ref: String, _ request: Request) async -> Response {
        guard let config else { return Self.off }
        let body: [String: JSONValue]
        switch await Self.object(request) {
        case .success(let object): body = object
        case .failure(let refusal): return refusal.response
        }
        do {
            guard let stored = try await links.link(ref: ref), stored.deletedAtMs == nil else { return Self.notFound(ref) }
            let changed: HostedLink
            do { changed = try LinkFields(config: config).patch(stored.link, with: body, nowMs: now()) } catch { return Self.refused(error) }
            guard try await links.updateLink(changed) else { return Self.notFound(ref) }
            return .json(response(changed, config: config), status: .ok)
        } catch {
            return .databaseUnavailable
        }
    }

    func delete(_ ref: String) async -> Response {
        guard config != nil else { return Self.off }
        do {
            guard try await links.deleteLink(ref: ref, atMs: now()) else { return Self.notFound(ref) }
            return Response(status: .noContent)
        } catch {
            return .databaseUnavailable
        }
    }

    /// A field's problem as a `400`, the way ingest reports one.
    static func refused(_ error: EventError) -> Response {
        .error(.badRequest, code: error.code, message: error.message, field: error.field)
    }

    struct BodyRefusal: Error {
        var response: Response
    }

    /// The request's body as one JSON object.
    static func object(_ request: Request) async -> Result<[String: JSONValue], BodyRefusal> {
        guard let buffer = try? await request.body.collect(upTo: maxBodyBytes) else {
            return .failure(BodyRefusal(response: .error(.contentTooLarge, code: "too_large", message: "A link's body is at most \(maxBodyBytes / 1024) KiB.")))
        }
        guard case .object(let object)? = JSONValue.parse(Array(buffer: buffer)) else {
            return .failure(BodyRefusal(response: .error(
                .badRequest, code: "invalid_json",
                message: "Send the link as one JSON object, such as {\"url\":\"https://example.com/shoes\",\"campaign\":\"spring\"}.")))
        }
        return .success(object)
    }
}
