import Foundation
import HTTPTypes
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Metrics
import NIOCore

/// `POST /v1/resolve`: the app's first-launch call (deferred deep linking). The body is one
/// `install` or `open` event exactly as `/v1/events` takes it, with the hints the app has
/// (`install_referrer`, `click_id` with `click_id_source`). The event is validated, quarantined
/// or stored like any other (durable before the answer, exactly once by `id`); the answer is
/// what attribution decided for it, the same answer the stats count
/// (`ResolveAnswer`). A retry of the same id stores nothing and gets the same answer.
///
/// Every request takes a token of its client address's bucket (`RateLimiter`): the ingest key
/// is public, and the limit keeps it from being used to probe who clicked what.
struct ResolveController: Sendable {
    let ingest: IngestController
    /// The SQLite store's answers or the PostgreSQL store's.
    let answers: any AttributionAnswers
    let limiter: MutexBox<RateLimiter>
    /// The hosted links: an app opened by one is answered its deep link.
    let links: any LinkRecords
    /// How long a request waits for the attribution follower before answering 503.
    let attributionWait: Duration
    let resolved = ResolveMetrics()

    init(
        ingest: IngestController, answers: any AttributionAnswers, links: any LinkRecords, rate: Double, burst: Int,
        attributionWait: Duration = .seconds(3)
    ) {
        self.ingest = ingest
        self.links = links
        self.answers = answers
        self.limiter = MutexBox(RateLimiter(rate: rate, burst: burst))
        self.attributionWait = attributionWait
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>, access: AccessKeyMiddleware) {
        let group = router.group("v1/resolve").add(middleware: IngestCORSMiddleware()).add(middleware: access)
        group.post(use: resolve)
        // Answered by the middleware; the route makes the path match for OPTIONS.
        group.on("", method: .options) { _, _ in Response(status: .noContent) }
    }

    /// An event-level error, as `/v1/events` reports it per event: what, which field (`null`
    /// for the event as a whole), how to fix.
    struct EventErrorResponse: Encodable {
        var error: EventError

        enum Keys: String, CodingKey { case error }
        enum DetailKeys: String, CodingKey { case code, field, message }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            var detail = c.nestedContainer(keyedBy: DetailKeys.self, forKey: .error)
            try detail.encode(error.code, forKey: .code)
            try detail.encode(error.field, forKey: .field)
            try detail.encode(error.message, forKey: .message)
        }
    }

    @Sendable func resolve(_ request: Request, context: LinkpulseRequestContext) async -> Response {
        let receivedAt = ingest.now()
        let forwardedFor = ingest.forwardedAddresses(request)
        let client = ingest.clientIP(context: context, forwardedFor: forwardedFor)
        var wait: Int?
        limiter.update { wait = $0.take(client ?? "", nowMs: receivedAt) }
        if let wait {
            resolved.limited.increment()
            return .error(
                .tooManyRequests, code: "rate_limited",
                message: "Too many resolve calls from this address. Retry after the Retry-After delay; an app needs one call a launch.",
                headers: [.retryAfter: "\(wait)"])
        }

        var request = request
        let body: [UInt8]
        switch await IngestController.readBody(&request, limit: IngestLimits.maxEventBytes) {
        case .bytes(let bytes): body = bytes
        case .refused(let refusal):
            let facts = RequestFacts(receivedAtMs: receivedAt, clientIP: client, userAgent: request.headers[.userAgent])
            if let failure = await ingest.keepUndecodable(refusal, request: facts, forwardedFor: forwardedFor) { return failure.response }
            return .error(refusal.status, code: refusal.code, message: refusal.message)
        }
        let facts = RequestFacts(receivedAtMs: receivedAt, clientIP: client, userAgent: request.headers[.userAgent])

        let decoded: Result<EventPayload, EventError>
        switch IngestBody.frame(body, format: .json) {
        case .success(let framed) where framed.count == 1 && body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{"):
            decoded = PayloadDecoding.decode(body, framed)[0]
        case .success:
            decoded = .failure(EventError(
                code: "not_an_object", field: nil,
                message: "Send one install or open event as a JSON object, such as {\"type\":\"install\",\"id\":\"…\",\"install_referrer\":\"…\"}."))
        case .failure(let error):
            decoded = .failure(EventError(code: "invalid_json", field: nil, message: error.message))
        }
        let validated = decoded.flatMap { payload -> Result<EventPayload, EventError> in
            // Without an id a retry would be a second install: the app makes one and resends it.
            guard case .absent = payload.id else { return .success(payload) }
            return .failure(EventError(
                code: "missing_field", field: "id",
                message: "A resolve needs `id`: make one on the device (a UUID) at first launch and send the same one again when retrying, so the install is stored once and answered the same."))
        }.flatMap { ingest.validator.validate($0, request: facts) }.flatMap { event -> Result<IngestEvent, EventError> in
            guard event.kind == .install || event.kind == .open else {
                return .failure(EventError(
                    code: "invalid_value", field: "type",
                    message: "Only `install` and `open` events can be resolved (got \(event.kind.rawValue)); send other events to /v1/events."))
            }
            var resolving = event
            resolving.isResolve = true
            return .success(resolving)
        }
        var event: IngestEvent
        switch validated {
        case .success(let valid):
            event = valid
            // Opened by a hosted link (its URL is one): the link's deep link, as if sent.
            if let url = event.url, let opened = HostedLinkURL(url, linkDomains: ingest.validator.linkDomains) {
                do {
                    if let stored = try await links.link(ref: opened.ref), stored.deletedAtMs == nil {
                        event = event.addingDeepLink(of: stored.link)
                    }
                } catch {
                    return .databaseUnavailable
                }
            }
        case .failure(let problem):
            let record = ingest.quarantined(body, index: nil, problem, request: facts, forwardedFor: forwardedFor)
            let stored = await ingest.store(IngestWork(events: [], quarantine: [record]))
            if let failure = stored.failure { return failure.response }
            ingest.metrics.rejected.increment()
            return .json(EventErrorResponse(error: problem), status: .badRequest)
        }

        let stored = await ingest.store(IngestWork(events: [event], quarantine: []))
        guard let outcomes = stored.outcomes else { return stored.failure!.response }
        _ = ingest.count([event], outcomes, rejected: 0)
        do {
            let seq: Int64?
            switch outcomes.first {
            case .stored(let storedSeq): seq = storedSeq
            default: seq = try await answers.storedSeq(ofEventId: event.id)
            }
            guard let seq else { throw StoreError.closed }
            switch try await answers.attributedEvent(seq: seq, wait: attributionWait) {
            case .attributed(let attributed):
                var answer = ResolveAnswer(attributed)
                // An event first sent to /v1/events and now resolved under its id: no earlier resolve.
                answer.firstSession = answer.firstSession ?? true
                resolved.count(answer)
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: answer.jsonBytes)))
            case .pending:
                resolved.pending.increment()
                return .error(
                    .serviceUnavailable, code: "attribution_pending",
                    message: "The event is stored, but its attribution is not ready yet. Retry the same request (same id) after the Retry-After delay.",
                    headers: [.retryAfter: "1"])
            case .expired:
                return .error(
                    .gone, code: "expired",
                    message: "This id was stored longer ago than the installation keeps raw events (--retention-days): its answer is no longer kept. Send a new event with a new id.",
                    parameter: "id")
            case .notStored:
                throw StoreError.closed
            }
        } catch {
            return .error(
                .serviceUnavailable, code: "storage_unavailable",
                message: "The answer could not be read. Retry the same request (same id) later; the event is stored once whatever happens.",
                headers: [.retryAfter: "2"])
        }
    }
}

/// Counts of `/v1/resolve` answers by match type, and of refused calls.
struct ResolveMetrics: Sendable {
    let byMatch: [MatchType: Counter] = Dictionary(
        uniqueKeysWithValues: MatchType.allCases.map { ($0, Counter(label: "linkpulse_resolve_answers_total", dimensions: [("match_type", $0.rawValue)])) })
    let limited = Counter(label: "linkpulse_resolve_rate_limited_total")
    let pending = Counter(label: "linkpulse_resolve_pending_total")

    func count(_ answer: ResolveAnswer) {
        byMatch[answer.matchType]?.increment()
    }
}

/// `GET /v1/attributions/{event_id}` (read key): how a stored install, open or fallback was
/// attributed, in the words of `/v1/resolve`'s answer, within moments of its 2xx (the request
/// waits up to `wait` for the attribution follower, then answers 503 with `Retry-After`).
struct AttributionController: Sendable {
    /// The SQLite store's answers or the PostgreSQL store's.
    let answers: any AttributionAnswers
    let wait: Duration

    /// The answer, with what only the read key may see: the matched click's whole `properties`.
    struct Body: Encodable {
        var eventId: String
        var type: EventKind
        var attribution: ResolveAnswer
        var clickProperties: [String: PropertyValue]?

        enum CodingKeys: String, CodingKey { case eventId = "event_id", type, attribution, clickProperties = "click_properties" }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eventId, forKey: .eventId)
            try c.encode(type, forKey: .type)
            try c.encode(attribution, forKey: .attribution)
            try c.encode(clickProperties, forKey: .clickProperties)  // null when none
        }
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.get("v1/attributions/{event_id}") { request, context in await read(request, context: context) }
    }

    func read(_ request: Request, context: LinkpulseRequestContext) async -> Response {
        guard let id = context.parameters.get("event_id"), !id.isEmpty else {
            return .error(.badRequest, code: "invalid_parameter", message: "Name the event by its id: /v1/attributions/{event_id}.", parameter: "event_id")
        }
        do {
            switch try await answers.attributedEvent(eventId: id, wait: wait) {
            case .attributed(let event):
                let answer = ResolveAnswer(event)
                let properties = answer.click?.properties.flatMap {
                    try? JSONDecoder().decode([String: PropertyValue].self, from: Data($0.utf8))
                }
                return .json(Body(eventId: id, type: event.kind, attribution: answer, clickProperties: properties), status: .ok)
            case .pending:
                return .error(
                    .serviceUnavailable, code: "attribution_pending",
                    message: "The event is stored but not attributed yet; retry after the Retry-After delay.", headers: [.retryAfter: "1"])
            case .notStored:
                return .error(.notFound, code: "not_found", message: "No event is stored under this id.")
            case .expired:
                return .error(.notFound, code: "expired", message: "The event stored under this id is older than the installation keeps raw events (--retention-days).")
            }
        } catch {
            return .error(.serviceUnavailable, code: "storage_unavailable", message: "The store could not be read; retry later.", headers: [.retryAfter: "2"])
        }
    }
}
