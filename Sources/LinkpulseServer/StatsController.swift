import Dispatch
import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore

/// `GET /v1/stats/summary`, `/v1/stats/breakdown` and `/v1/stats/timeseries`, behind a read
/// key middleware. Every answer is computed from the rollups (see `StatsReader.statsCounts`) and is JSON,
/// gzip-compressed when the client accepts it, and says how fresh it is (`FreshAnswer`, and the
/// `Linkpulse-Counted-Through` and `Linkpulse-Lag-Seconds` headers).
struct StatsController: Sendable {
    let stats: StatsService

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.get("v1/stats/summary") { request, _ in
            await answer(request, known: QueryParameterNames.summary) { parameters, query in
                let range = RangeEcho(query)
                return SummaryResponse(from: range.from, to: range.to, tz: range.tz, metrics: try await stats.summary(query))
            }
        }
        router.get("v1/stats/breakdown") { request, _ in
            await answer(request, known: QueryParameterNames.breakdown) { parameters, query in
                try await stats.breakdown(try BreakdownQuery.parse(parameters, stats: query))
            }
        }
        router.get("v1/stats/timeseries") { request, _ in
            await answer(request, known: QueryParameterNames.timeseries) { parameters, query in
                try await stats.timeseries(query, interval: try SeriesInterval.parse(parameters, stats: query))
            }
        }
    }

    /// Reads the common parameters (refusing any the endpoint does not take), runs `body`, and
    /// encodes its answer or error.
    func answer(
        _ request: Request, known: Set<String>, _ body: ([String: String], StatsQuery) async throws -> some Encodable
    ) async -> Response {
        do {
            let parameters = try request.queryParameters(known: known)
            let query = try StatsQuery.parse(parameters, defaultZone: stats.defaultZone, nowMs: stats.now())
            let freshness = await stats.currentFreshness()
            return .json(
                FreshAnswer(answer: try await body(parameters, query), freshness: freshness), status: .ok, compressingFor: request,
                headers: .freshness(freshness))
        } catch let error as ParameterError {
            return .badParameter(error)
        } catch {
            return .databaseUnavailable
        }
    }
}

extension Response {
    /// JSON, gzip-compressed when the request accepts gzip and the body is worth it.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, compressingFor request: Request, headers more: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = Array((try? encoder.encode(value)) ?? Data("{}".utf8))
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .vary: "Accept-Encoding"]
        headers.append(contentsOf: more)
        if bytes.count > 512, request.headers[.acceptEncoding]?.lowercased().contains("gzip") == true {
            bytes = Zlib.gzip(bytes)
            headers[.contentEncoding] = "gzip"
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension Request {
    /// The query parameters, the last value winning; `key` is not one of them. A name the
    /// endpoint does not take (not in `known`) is refused, naming it.
    func queryParameters(known: Set<String>) throws(ParameterError) -> [String: String] {
        let query = uri.queryParameters
        try QueryParameterNames.refuseUnknown(query.map { String($0.key) }, known: known)
        var parameters: [String: String] = [:]
        for (name, value) in query where name != "key" {
            parameters[String(name)] = String(value)
        }
        return parameters
    }

    /// `answer`, unless the request carries a query parameter the endpoint does not take.
    func refusingUnknownParameters(known: Set<String>, _ answer: () async -> Response) async -> Response {
        do throws(ParameterError) {
            _ = try queryParameters(known: known)
        } catch {
            return .badParameter(error)
        }
        return await answer()
    }
}
