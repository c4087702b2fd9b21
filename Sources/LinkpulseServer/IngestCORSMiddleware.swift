import Hummingbird

/// CORS for the ingest endpoint, which browsers call from any site: every response, errors
/// included and with or without an `Origin` header, carries `Access-Control-Allow-Origin: *`,
/// and `OPTIONS` preflights are answered here. (Hummingbird's `CORSMiddleware` only acts when
/// an `Origin` header is present.) `*` does not cover `Authorization`, so it is listed.
struct IngestCORSMiddleware<Context: RequestContext>: RouterMiddleware {
    static var allowHeaders: String { "Authorization, Content-Type, Content-Encoding, X-Linkpulse-Key" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options {
            return Response(
                status: .noContent,
                headers: [
                    .accessControlAllowOrigin: "*",
                    .accessControlAllowMethods: "POST, OPTIONS",
                    .accessControlAllowHeaders: Self.allowHeaders,
                    .accessControlMaxAge: "86400",
                ])
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Errors thrown by the framework (a route's own errors are already responses).
            response = try error.response(from: request, context: context)
        }
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }
}
