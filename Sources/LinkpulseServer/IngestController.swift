import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import HTTPTypes
import NIOCore

/// The answer to an ingest request: counts and, per rejected event, why.
struct IngestResponse: Codable, Equatable {
    struct EventProblem: Codable, Equatable {
        var index: Int
        var code: String
        var field: String?
        var message: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(index, forKey: .index)
            try c.encode(code, forKey: .code)
            try c.encode(field, forKey: .field)  // null rather than absent, for regular clients
            try c.encode(message, forKey: .message)
        }
    }

    var accepted: Int
    var duplicates: Int
    var rejected: Int
    var errors: [EventProblem]

    /// The JSON response. The common answer (nothing rejected) is written directly: it is on
    /// every ingest request and the encoder's set-up costs more than the request's own work.
    func response(status: HTTPResponse.Status) -> Response {
        guard errors.isEmpty else { return .json(self, status: status) }
        let text = #"{"accepted":\#(accepted),"duplicates":\#(duplicates),"errors":[],"rejected":\#(rejected)}"#
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// Why the writer could not store a request's work: always a 503 with `Retry-After`.
struct StoreFailure: Error {
    var code: String
    /// Seconds the client should wait before retrying.
    var retryAfter: Int
    var message: String

    /// The request-level JSON error of `/v1/events`.
    var response: Response {
        .error(.serviceUnavailable, code: code, message: message, headers: [.retryAfter: "\(retryAfter)"])
    }
}

/// `POST /v1/events` (behind an ingest key middleware): reads the body (gzip/deflate, JSON,
/// array, `{"batch":[…]}`, NDJSON), validates each event on its own, hands valid and rejected
/// events to the writer, and answers only once they are committed.
struct IngestController: Sendable {
    let queue: IngestQueue
    let validator: EventValidator
    let trustProxy: Bool
    let metrics: IngestMetrics
    /// Refuses work while the data directory's filesystem is short of space.
    let storage: StorageGuard
    /// The current time in UTC milliseconds (a parameter so tests can pin it).
    let now: @Sendable () -> Int64

    /// The routes, CORS outside the key check (a refusal carries the CORS header too).
    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>, access: AccessKeyMiddleware) {
        let group = router.group("v1/events").add(middleware: IngestCORSMiddleware()).add(middleware: access)
        group.post(use: ingest)
        // Answered by the middleware; the route makes the path match for OPTIONS.
        group.on("", method: .options) { _, _ in Response(status: .noContent) }
    }

    @Sendable func ingest(_ request: Request, context: LinkpulseRequestContext) async -> Response {
        let receivedAt = now()
        let forwardedFor = forwardedAddresses(request)
        let facts = RequestFacts(
            receivedAtMs: receivedAt,
            clientIP: clientIP(context: context, forwardedFor: forwardedFor),
            userAgent: request.headers[.userAgent])
        var request = request
        let body: [UInt8]
        switch await readBody(&request) {
        case .bytes(let bytes): body = bytes
        case .refused(let refusal):
            if let failure = await keepUndecodable(refusal, request: facts, forwardedFor: forwardedFor) { return failure.response }
            return .error(refusal.status, code: refusal.code, message: refusal.message)
        }
        // Read (I/O, which a slow client makes long) before a place is taken; parsed, validated
        // and stored (the CPU and the writer) only with one.
        guard queue.admit(bytes: body.count) else { return overloaded().response }
        defer { queue.leave(bytes: body.count) }
        let format = Self.format(of: request)

        let framed: [FramedEvent]
        switch IngestBody.frame(body, format: format) {
        case .success(let events):
            framed = events
        case .failure(let error) where error.kind == .tooManyEvents:
            return .error(.contentTooLarge, code: "too_many_events", message: error.message)
        case .failure(let error):
            // Not JSON at all: kept in quarantine all the same, then refused as a whole.
            let problem = EventError(code: "invalid_json", field: nil, message: error.message)
            if let failure = await keepRefused(body, problem, request: facts, forwardedFor: forwardedFor) { return failure.response }
            return .error(.badRequest, code: "invalid_json", message: error.message)
        }

        var events: [IngestEvent] = []
        var positions: [Int] = []
        var quarantine: [QuarantinedEvent] = []
        var problems: [IngestResponse.EventProblem] = []
        for (index, decoded) in PayloadDecoding.decode(body, framed).enumerated() {
            switch decoded.flatMap({ validator.validate($0, request: facts) }) {
            case .success(let event):
                events.append(event)
                positions.append(index)
            case .failure(let problem):
                problems.append(.init(index: index, code: problem.code, field: problem.field, message: problem.message))
                quarantine.append(quarantined(body[framed[index].range], index: index, problem, request: facts, forwardedFor: forwardedFor))
            }
        }

        let stored = await store(IngestWork(events: events, quarantine: quarantine))
        guard let outcomes = stored.outcomes else { return stored.failure!.response }
        let (accepted, duplicates) = count(events, outcomes, rejected: problems.count)
        let answer = IngestResponse(accepted: accepted, duplicates: duplicates, rejected: problems.count, errors: problems)
        let allRejected = events.isEmpty && !problems.isEmpty
        return answer.response(status: allRejected ? .badRequest : .accepted)
    }

    /// The quarantine record of `raw` (one event, or a whole body with a nil `index`), its
    /// addresses scrubbed.
    func quarantined(
        _ raw: some Collection<UInt8>, index: Int?, _ problem: EventError, request facts: RequestFacts, forwardedFor: [String]
    ) -> QuarantinedEvent {
        QuarantinedEvent.make(raw: raw, index: index, error: problem, request: facts, forwardedFor: forwardedFor, hasher: validator.hasher)
    }

    /// Keeps a body refused as a whole in quarantine and counts it; the failure when it could
    /// not be stored (the client must then retry rather than be told its body is bad).
    func keepRefused(_ body: [UInt8], _ problem: EventError, request facts: RequestFacts, forwardedFor: [String]) async -> StoreFailure? {
        metrics.rejected.increment()
        let record = quarantined(body, index: nil, problem, request: facts, forwardedFor: forwardedFor)
        return await store(IngestWork(events: [], quarantine: [record])).failure
    }

    /// Keeps a body that did not decode (broken gzip or deflate: bad input) in quarantine,
    /// base64-encoded since its bytes are not text, before it is answered 400; the failure
    /// when it could not be kept. Refusals that read nothing of the body (413 over the limits,
    /// 415 an unknown encoding) keep nothing.
    func keepUndecodable(_ refusal: BodyRefusal, request facts: RequestFacts, forwardedFor: [String]) async -> StoreFailure? {
        guard let raw = refusal.undecodable else { return nil }
        let text = "base64:" + Data(raw.prefix(QuarantinedEvent.maxRawBytes)).base64EncodedString()
        let problem = EventError(code: refusal.code, field: nil, message: refusal.message)
        return await keepRefused(Array(text.utf8), problem, request: facts, forwardedFor: forwardedFor)
    }

    /// Counts a stored request in the ingest metrics; returns how many of its events were
    /// newly stored and how many were duplicates.
    func count(_ events: [IngestEvent], _ outcomes: [StoredOutcome], rejected: Int) -> (accepted: Int, duplicates: Int) {
        let duplicates = outcomes.filter { $0 == .duplicate }.count
        metrics.accepted.increment(by: outcomes.count - duplicates)
        metrics.duplicates.increment(by: duplicates)
        metrics.rejected.increment(by: rejected)
        metrics.bots.increment(by: zip(events, outcomes).filter { $0.0.isBot && $0.1 != .duplicate }.count)
        return (outcomes.count - duplicates, duplicates)
    }

    /// Hands work to the writer; a disk short of space, a full queue or a failed commit becomes
    /// a `StoreFailure` (a 503 with Retry-After).
    func store(_ work: IngestWork) async -> (outcomes: [StoredOutcome]?, failure: StoreFailure?) {
        if storage.isLow {
            metrics.insufficientStorage.increment()
            return (nil, StoreFailure(
                code: "insufficient_storage", retryAfter: 5,
                message: "The server's disk is nearly full; nothing of this request was stored. Retry after the Retry-After delay: ingest resumes by itself once there is room."))
        }
        do {
            return (try await queue.submit(work), nil)
        } catch IngestQueue.Failure.full {
            return (nil, overloaded())
        } catch IngestQueue.Failure.closed {
            return (nil, StoreFailure(
                code: "shutting_down", retryAfter: 2, message: "The server is restarting. Retry this request shortly; nothing of it was stored."))
        } catch {
            return (nil, StoreFailure(
                code: "storage_unavailable", retryAfter: 5,
                message: "The events could not be written to disk. Retry this request later; nothing of it was stored."))
        }
    }

    /// The answer to a request the daemon has no room for now (the writer's queue is full, or
    /// more than the in-flight byte limit is in hand), counted.
    func overloaded() -> StoreFailure {
        metrics.overloaded.increment()
        return StoreFailure(
            code: "overloaded", retryAfter: 1,
            message: "The server is busy writing earlier events. Retry this request after the Retry-After delay; nothing of it was stored.")
    }

    /// The body, inflated when compressed, or why the request ends here.
    enum BodyRead {
        case bytes([UInt8])
        case refused(BodyRefusal)
    }

    /// A request refused while its body was read: too large, an unknown or broken encoding.
    struct BodyRefusal {
        var status: HTTPResponse.Status
        var code: String
        var message: String
        /// The body as received, when it was read but did not decode.
        var undecodable: [UInt8]? = nil
    }

    func readBody(_ request: inout Request) async -> BodyRead {
        await Self.readBody(&request, limit: IngestLimits.maxBodyBytes)
    }

    /// Reads a request body of at most `limit` bytes after decompression (gzip, deflate or none).
    static func readBody(_ request: inout Request, limit: Int) async -> BodyRead {
        let tooLarge = BodyRefusal(
            status: .contentTooLarge, code: "body_too_large",
            message: "The body is larger than \(limit) bytes (after decompression). Send fewer events per request.")
        let encoding = request.headers[.contentEncoding].map { $0.lowercased().filter { $0 != " " } } ?? "identity"
        guard ["identity", "gzip", "x-gzip", "deflate"].contains(encoding) else {
            return .refused(BodyRefusal(
                status: .unsupportedMediaType, code: "unsupported_encoding",
                message: "Content-Encoding \(encoding) is not supported; send the body plain, gzip or deflate."))
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            return .refused(tooLarge)
        }
        let raw = Array(buffer.readableBytesView)
        guard encoding != "identity" else { return .bytes(raw) }
        do {
            return .bytes(try Zlib.inflate(raw, limit: limit))
        } catch .tooLarge {
            return .refused(tooLarge)
        } catch {
            return .refused(BodyRefusal(
                status: .badRequest, code: "invalid_encoding",
                message: "The body is not valid \(encoding) data; compress the whole body or drop Content-Encoding.", undecodable: raw))
        }
    }

    static func format(of request: Request) -> BodyFormat {
        let type = request.headers[.contentType]?.lowercased() ?? ""
        let ndjson = ["application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"]
        return ndjson.contains { type.hasPrefix($0) } ? .ndjson : .json
    }

    /// `X-Forwarded-For` entries, read only when the proxy in front is trusted.
    func forwardedAddresses(_ request: Request) -> [String] {
        guard trustProxy else { return [] }
        return request.headers[values: .init("X-Forwarded-For")!]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// The visitor's address: with a trusted proxy, the last `X-Forwarded-For` entry (the one
    /// the proxy itself saw; entries to its left are whatever the client claimed), else the peer.
    func clientIP(context: LinkpulseRequestContext, forwardedFor: [String]) -> String? {
        if let forwarded = forwardedFor.last, let address = canonicalIP(forwarded) { return address }
        return context.remoteAddress?.ipAddress.flatMap(canonicalIP)
    }
}
