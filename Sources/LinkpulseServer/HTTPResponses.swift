import Foundation
import HTTPTypes
import Hummingbird

/// The body of every request-level error: `{"error":{"code":"…","message":"…"}}`.
struct ErrorResponse: Codable, Equatable {
    struct Detail: Codable, Equatable {
        var code: String
        var message: String
        /// The query parameter at fault, for `invalid_parameter` (absent otherwise).
        var parameter: String? = nil
        /// The body field at fault, for `invalid_field` (absent otherwise).
        var field: String? = nil
    }
    var error: Detail
}

extension Response {
    /// A JSON response from an `Encodable` value.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A request-level JSON error.
    static func error(
        _ status: HTTPResponse.Status, code: String, message: String, parameter: String? = nil, field: String? = nil, headers: HTTPFields = [:]
    ) -> Response {
        .json(ErrorResponse(error: .init(code: code, message: message, parameter: parameter, field: field)), status: status, headers: headers)
    }
}

/// Where a request presented an access key: `Authorization: Bearer KEY`, the user name of
/// `Authorization: Basic …` (Segment's SDKs send their write key so; the password is ignored),
/// `X-Linkpulse-Key: KEY` or `?key=KEY` (for `navigator.sendBeacon`, which cannot set
/// headers), in that order.
enum AccessKey {
    static let headerName = HTTPField.Name("X-Linkpulse-Key")!

    static func presented(in request: Request) -> String? {
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return String(parts[1].drop { $0 == " " })
            }
            if parts.count == 2, parts[0].lowercased() == "basic",
               let decoded = Data(base64Encoded: String(parts[1].trimmingCharacters(in: .whitespaces))) {
                let user = String(decoding: decoded, as: UTF8.self).prefix { $0 != ":" }
                if !user.isEmpty { return String(user) }
            }
        }
        if let key = request.headers[headerName] { return key }
        return request.uri.queryParameters["key"].map(String.init)
    }
}

import LinkpulseDomain
