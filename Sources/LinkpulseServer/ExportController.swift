import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore

/// The CSV endpoints, behind a read key middleware:
/// - `GET /v1/export.csv`: a breakdown (`by`) or a time series (`interval`), with the
///   parameters of the JSON stats API;
/// - `GET /v1/events.csv`: every stored event of a range, streamed page by page;
/// - `GET /v1/exports`: the files the scheduled jobs wrote; `GET /v1/exports/{name}` one of them.
struct ExportController: Sendable {
    let exporter: CSVExporter
    let stats: StatsService
    let ledger: any ExportRecords
    let directory: URL

    func addRoutes(to router: some RouterMethods<LinkpulseRequestContext>) {
        router.get("v1/export.csv") { request, _ in
            await stream(request, known: QueryParameterNames.statsExport) { parameters, query throws(ParameterError) in
                try ExportContent.parseStats(parameters, query: query)
            }
        }
        router.get("v1/events.csv") { request, _ in
            await stream(request, known: QueryParameterNames.eventsExport) { parameters, query throws(ParameterError) in
                try ExportContent.parseEvents(parameters, query: query)
            }
        }
        router.get("v1/exports") { request, _ -> Response in
            await request.refusingUnknownParameters(known: []) {
                do {
                    return .json(ExportListResponse(exports: try await listedFiles()), status: .ok, compressingFor: request)
                } catch {
                    return .databaseUnavailable
                }
            }
        }
        router.get("v1/exports/{name}") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            guard ExportFiles.isValidName(name) else {
                return .error(.badRequest, code: "invalid_parameter", message: "Export file names are letters, digits, `-`, `_` and `.`, as listed by GET /v1/exports.", parameter: "name")
            }
            let known: Bool
            do {
                known = try await ledger.exportFiles().contains { $0.name == name }
            } catch {
                return .databaseUnavailable
            }
            // Recorded and still on disk (retention or an operator may have removed it).
            guard known, FileManager.default.fileExists(atPath: directory.appending(path: name).path),
                  let response = try? await download(name: name, context: context) else {
                return .error(.notFound, code: "not_found", message: "No export file is named \"\(name)\"; GET /v1/exports lists them.")
            }
            return response
        }
    }

    /// Parses the parameters (a 400 names the wrong one, or one the endpoint does not take),
    /// then streams the CSV.
    func stream(
        _ request: Request, known: Set<String>, _ parse: ([String: String], StatsQuery) throws(ParameterError) -> ExportContent
    ) async -> Response {
        let content: ExportContent
        do throws(ParameterError) {
            let parameters = try request.queryParameters(known: known)
            let query = try StatsQuery.parse(parameters, defaultZone: stats.defaultZone, nowMs: stats.now())
            content = try parse(parameters, query)
        } catch {
            return .badParameter(error)
        }
        let gzip = request.headers[.acceptEncoding]?.lowercased().contains("gzip") == true
        var headers: HTTPFields = [
            .contentType: "text/csv; charset=utf-8; header=present",
            .contentDisposition: "attachment; filename=\"\(CSVExporter.fileName(for: content))\"",
            .vary: "Accept-Encoding",
            .cacheControl: "no-store",
        ]
        if gzip { headers[.contentEncoding] = "gzip" }
        // How fresh the counts are (and the match types of events.csv), read before them.
        headers.append(contentsOf: HTTPFields.freshness(await stats.currentFreshness()))
        let exporter = self.exporter
        guard case .events(let query) = content else {
            // A stats export is one bounded answer: computed before anything is sent, so that a
            // database failure is still a 503 the client can retry.
            do {
                var bytes: [UInt8] = []
                _ = try await exporter.write(content, gzip: gzip) { chunk in bytes += chunk }
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            } catch let error as ParameterError {
                return .badParameter(error)
            } catch {
                return .databaseUnavailable
            }
        }
        // Raw events are streamed. The first page is read before the headers go out (a failing
        // database is a 503); a failure after that aborts the response, so the client sees a
        // broken transfer, never a short file that looks complete.
        let started: CSVExporter.StartedEvents
        do {
            started = try await exporter.startEvents(query)
        } catch let error as ParameterError {
            return .badParameter(error)
        } catch {
            return .databaseUnavailable
        }
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            _ = try await exporter.write(started, gzip: gzip) { chunk in
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        })
    }

    /// The recorded files that are still on disk, newest first.
    func listedFiles() async throws -> [ExportListing] {
        let clock = ZoneClock(identifier: stats.defaultZone)!
        return try await ledger.exportFiles().compactMap { file in
            FileManager.default.fileExists(atPath: directory.appending(path: file.name).path)
                ? ExportListing(file, clock: clock) : nil
        }
    }

    func download(name: String, context: LinkpulseRequestContext) async throws -> Response {
        let path = directory.appending(path: name).path
        let fileIO = FileIO()
        let body = try await fileIO.loadFile(path: path, context: context)
        let type = name.hasSuffix(".gz") ? "application/gzip" : "text/csv; charset=utf-8; header=present"
        var headers: HTTPFields = [
            .contentType: type,
            .contentDisposition: "attachment; filename=\"\(name)\"",
            .cacheControl: "private, max-age=0",
        ]
        if let size = body.contentLength { headers[.contentLength] = String(size) }
        return Response(status: .ok, headers: headers, body: body)
    }
}

/// `GET /v1/exports`.
struct ExportListResponse: Encodable {
    var exports: [ExportListing]
}

/// One export file as listed: name, job, the period it covers, size, rows, when written.
struct ExportListing: Encodable {
    var name: String
    var job: String
    var period: String
    var periodStart: String
    var periodEnd: String
    var size: Int64
    var rows: Int
    var createdAt: String

    enum CodingKeys: String, CodingKey {
        case name, job, period, size, rows
        case periodStart = "period_start", periodEnd = "period_end", createdAt = "created_at"
    }

    init(_ file: ExportFileRecord, clock: ZoneClock) {
        name = file.name
        job = file.job
        period = file.periodLabel
        periodStart = clock.format(file.periodStartMs)
        periodEnd = clock.format(file.periodEndMs)
        size = file.bytes
        rows = file.rows
        createdAt = clock.format(file.createdAtMs)
    }
}
