import Foundation
import HTTPTypes
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import NIOCore

/// Segment's HTTP Tracking API, so apps can point the analytics SDK they already ship (Segment's
/// or RudderStack's) at Linkpulse: `POST /v1/batch`, `/v1/track`, `/v1/screen`, `/v1/page`,
/// `/v1/identify`, `/v1/group`, `/v1/alias`, and the short paths the client SDKs post to.
///
/// Authenticates with the write key (an ingest key) as HTTP Basic user name, as `writeKey` in
/// the body, or any way `/v1/events` accepts; maps link events through `SegmentMapping` and
/// validates, quarantines and stores them exactly like `/v1/events`; accepts and counts every
/// other message without storing it. Answers as the SDKs expect: `200 {"success":true}` once
/// stored, `400` when the body is not a Segment message or batch, `401` for a wrong key, `413`
/// too large, `503` + `Retry-After` when nothing could be stored (SDKs retry 5xx and 429 only).
struct SegmentController: Sendable {
    let ingest: IngestController
    let mapping: SegmentMapping

    /// Segment's limits: 500 KB a request (after decompression), 32 KB a message.
    static let maxRequestBytes = 512_000
    static let maxMessageBytes = IngestLimits.maxEventBytes

    /// The batch endpoint's paths: `/v1/batch`, and `/v1/b` where the mobile SDKs and
    /// analytics.js post batches.
    static let batchPaths = ["batch", "b"]

    /// A single-message endpoint's paths: `/v1/track`…, and the one-letter form analytics.js uses
    /// (`/v1/t`, `/v1/s`, `/v1/p`, `/v1/i`, `/v1/g`, `/v1/a`).
    static func paths(of type: SegmentMessageType) -> [String] { [type.rawValue, String(type.rawValue.prefix(1))] }

    /// The key check of these routes: an ingest key in the headers or query, else the body's
    /// `writeKey` (checked by `handle` once the body is read), refused in Segment's shape.
    static func gate(_ keys: AccessKeys) -> AccessKeyMiddleware {
        AccessKeyMiddleware(keys: keys, needed: .ingest, keyMayBeInBody: true, refuse: { refusal, needed in Self.refusal(refusal, needed: needed) })
    }

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>, keys: AccessKeys) {
        let gate = Self.gate(keys)
        let group = router.group("v1").add(middleware: IngestCORSMiddleware()).add(middleware: gate)
        let endpoints = Self.batchPaths.map { ($0, SegmentMessageType?.none) }
            + SegmentMessageType.allCases.flatMap { type in Self.paths(of: type).map { ($0, Optional(type)) } }
        for (path, type) in endpoints {
            group.post(RouterPath(path)) { request, context in await handle(request, context: context, endpoint: type, gate: gate) }
            // Answered by the middleware; the route makes the path match for OPTIONS.
            group.on(RouterPath(path), method: .options) { _, _ in Response(status: .noContent) }
        }
    }

    /// One request: `endpoint` is the type a single-message endpoint implies, nil for `/v1/batch`.
    /// `context.access` is set when the key came in the headers; else `gate` checks the body's.
    func handle(_ request: Request, context: LinkpulseRequestContext, endpoint: SegmentMessageType?, gate: AccessKeyMiddleware) async -> Response {
        let receivedAt = ingest.now()
        var request = request
        let body: [UInt8]
        switch await IngestController.readBody(&request, limit: Self.maxRequestBytes) {
        case .bytes(let bytes): body = bytes
        case .refused(let refusal):
            // Kept only from a sender whose key is in its headers (the body cannot be read for one).
            if context.access != nil {
                let forwardedFor = ingest.forwardedAddresses(request)
                let facts = RequestFacts(
                    receivedAtMs: receivedAt, clientIP: ingest.clientIP(context: context, forwardedFor: forwardedFor), userAgent: nil)
                if let failure = await ingest.keepUndecodable(refusal, request: facts, forwardedFor: forwardedFor) { return Self.error(failure) }
            }
            return Self.error(refusal.status, code: refusal.code, message: refusal.message)
        }
        guard ingest.queue.admit(bytes: body.count) else { return Self.error(ingest.overloaded()) }
        defer { ingest.queue.leave(bytes: body.count) }
        let (framing, read) = SegmentBody.read(body)
        let envelope = read?.envelope
        if context.access == nil {
            guard let writeKey = envelope?.writeKey else { return Self.refusal(.missing, needed: .ingest) }
            if case .failure(let refusal) = await gate.check(writeKey) { return Self.refusal(refusal, needed: .ingest) }
        }

        let forwardedFor = ingest.forwardedAddresses(request)
        // The request's own User-Agent is the SDK's HTTP client, not the person's device: only
        // `context.userAgent` speaks for the device. The address is the device's when a client
        // SDK posts directly; server SDKs send `context.ip`, which wins.
        let facts = RequestFacts(
            receivedAtMs: receivedAt, clientIP: ingest.clientIP(context: context, forwardedFor: forwardedFor), userAgent: nil)

        if case .failure(let error) = framing, error.kind == .tooManyEvents {
            return Self.error(.contentTooLarge, code: "too_many_events", message: error.message)
        }
        /// Refuses the request as a whole, keeping its body in quarantine (as `/v1/events` does
        /// with a body that is not JSON): the SDK drops a request answered 4xx, so this copy is
        /// what is left of it.
        func refuseWhole(_ status: HTTPResponse.Status, code: String, _ message: String) async -> Response {
            let problem = EventError(code: code, field: nil, message: message)
            if let failure = await ingest.keepRefused(body, problem, request: facts, forwardedFor: forwardedFor) { return Self.error(failure) }
            return Self.error(status, code: code, message: message)
        }
        let notJSON = "The body is not JSON. Send a Segment batch {\"batch\":[…]} or one message object."
        guard case .success(let framed) = framing else { return await refuseWhole(.badRequest, code: "invalid_json", notJSON) }
        if read == nil, (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) == nil {
            return await refuseWhole(.badRequest, code: "invalid_json", notJSON)
        }
        guard let read, let envelope else {
            return await refuseWhole(
                .badRequest, code: "not_segment",
                "The body is not a Segment batch or message: send one JSON object, {\"batch\":[…messages…],\"sentAt\":…} or a single message such as {\"type\":\"track\",\"event\":\"Application Opened\",…}.")
        }
        if endpoint == nil, !envelope.hasBatch {
            return await refuseWhole(
                .badRequest, code: "not_a_batch",
                "`/v1/batch` takes {\"batch\":[…messages…],\"sentAt\":…}; post a single message to /v1/track and its siblings.")
        }
        if let endpoint, envelope.hasBatch || framed.count != 1 {
            return await refuseWhole(
                .badRequest, code: "not_a_message", "`/v1/\(endpoint.rawValue)` takes one message object; post batches to /v1/batch.")
        }
        if endpoint != nil, framed[0].rejection?.code == "event_too_large" {
            return await refuseWhole(.contentTooLarge, code: "message_too_large", "A message may be at most \(Self.maxMessageBytes) bytes.")
        }

        var events: [IngestEvent] = []
        var quarantine: [QuarantinedEvent] = []
        var ignored = 0
        for index in read.messages.indices {
            let problem: EventError
            switch read.message(at: index).map({ mapping.map($0, envelope: envelope, endpointType: endpoint) }) {
            case .success(.ignored):
                ignored += 1
                continue
            case .success(.linkEvent(let payload)):
                switch ingest.validator.validate(payload, request: facts) {
                case .success(let event):
                    events.append(event)
                    continue
                case .failure(let invalid): problem = invalid
                }
            case .success(.invalid(let invalid)), .failure(let invalid):
                problem = invalid
            }
            quarantine.append(ingest.quarantined(
                body[framed[index].range], index: endpoint == nil ? index : nil, problem, request: facts, forwardedFor: forwardedFor))
        }

        let stored = await ingest.store(IngestWork(events: events, quarantine: quarantine))
        guard let outcomes = stored.outcomes else { return Self.error(stored.failure!) }
        let (accepted, duplicates) = ingest.count(events, outcomes, rejected: quarantine.count)
        let metrics = ingest.metrics
        metrics.segmentStored.increment(by: accepted)
        metrics.segmentDuplicates.increment(by: duplicates)
        metrics.segmentIgnored.increment(by: ignored)
        metrics.segmentRejected.increment(by: quarantine.count)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"success":true}"#)))
    }

    /// A refused key in Segment's shape: the SDKs' own words for a missing or wrong write key,
    /// the standard message for a key of another kind.
    static func refusal(_ refusal: AccessRefusal, needed: AccessKind?) -> Response {
        switch refusal {
        case .missing, .unknown:
            Self.error(
                .unauthorized, code: "unauthorized",
                message: "Missing, wrong or revoked write key. Configure the SDK with a Linkpulse ingest key as its write key (HTTP Basic user name, empty password).")
        case .wrongKind:
            Self.error(.forbidden, code: "forbidden", message: refusal.message(needed: needed))
        }
    }

    /// A request-level error the SDKs can read (`code` and `message` at the top, as Segment
    /// answers), with Linkpulse's usual `error` object beside them.
    static func error(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) -> Response {
        struct Body: Encodable {
            var success = false
            var code: String
            var message: String
            var error: ErrorResponse.Detail
        }
        return .json(Body(code: code, message: message, error: .init(code: code, message: message)), status: status, headers: headers)
    }

    static func error(_ failure: StoreFailure) -> Response {
        error(.serviceUnavailable, code: failure.code, message: failure.message, headers: [.retryAfter: "\(failure.retryAfter)"])
    }

}
