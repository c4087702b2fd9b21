import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore

/// The access keys, managed with an admin key:
/// - `POST /v1/keys` `{"kind","name"}` → `201` with the new key's secret, shown this once;
/// - `GET /v1/keys` → every stored key, revoked ones included, never a secret;
/// - `DELETE /v1/keys/{id}` → `204` (the key is refused from then on, in every daemon within
///   2 s), `404` for an unknown id;
///
/// and, with any accepted key, `GET /v1/key`: which key the request carries and what it may do
/// (the dashboard asks it at sign-in).
struct KeysController: Sendable {
    let keys: AccessKeys

    struct CreatePayload: Decodable {
        var kind: String?
        var name: String?
    }

    /// A key as listed: never its secret or its digest. Times RFC 3339 UTC, `null` when none.
    struct KeyResponse: Encodable {
        var record: AccessKeyRecord

        enum CodingKeys: String, CodingKey {
            case id, name, kind, createdAt = "created_at", lastUsedAt = "last_used_at", revokedAt = "revoked_at"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(record.id, forKey: .id)
            try c.encode(record.name, forKey: .name)
            try c.encode(record.kind, forKey: .kind)
            try c.encode(Timestamp.formatUTC(record.createdAtMs), forKey: .createdAt)
            try c.encode(record.lastUsedAtMs.map(Timestamp.formatUTC), forKey: .lastUsedAt)
            try c.encode(record.revokedAtMs.map(Timestamp.formatUTC), forKey: .revokedAt)
        }
    }

    struct CreatedResponse: Encodable {
        var id, name: String
        var kind: AccessKind
        var key: String
        var createdAt: String

        enum CodingKeys: String, CodingKey { case id, name, kind, key, createdAt = "created_at" }
    }

    struct ListResponse: Encodable {
        var keys: [KeyResponse]
    }

    /// `GET /v1/key`: the key the request carries. `configured` is true for a key given by flag.
    struct CurrentResponse: Encodable {
        var id, name: String
        var kind: AccessKind
        var configured: Bool
        /// The kinds of routes the key opens (`ingest`, `read`, `admin`).
        var allows: [AccessKind]
        var may: String
    }

    /// Adds the admin routes to `admin` (a group behind an admin key middleware) and `GET /v1/key`
    /// to `anyKey` (behind one that takes every kind).
    func addRoutes(admin: some RouterMethods<LinkpulseRequestContext>, anyKey: some RouterMethods<LinkpulseRequestContext>) {
        admin.post("v1/keys") { request, context in await create(request, context: context) }
        admin.get("v1/keys") { _, _ -> Response in
            do {
                return .json(ListResponse(keys: try await keys.list().map(KeyResponse.init)), status: .ok)
            } catch {
                return .databaseUnavailable
            }
        }
        admin.delete("v1/keys/{id}") { _, context -> Response in
            let id = context.parameters.get("id") ?? ""
            do {
                guard try await keys.revoke(id: id) != nil else {
                    return .error(
                        .notFound, code: "not_found",
                        message: "No stored key has the id \"\(id)\"; GET /v1/keys lists them (keys given by flag end when the flag is removed).")
                }
                return Response(status: .noContent)
            } catch {
                return .databaseUnavailable
            }
        }
        anyKey.get("v1/key") { _, context -> Response in
            guard let grant = context.access else { return AccessRefusal.missing.response(needed: nil) }
            return .json(
                CurrentResponse(
                    id: grant.id, name: grant.name, kind: grant.kind, configured: grant.configured,
                    allows: AccessKind.allCases.filter(grant.kind.allows), may: grant.kind.powers),
                status: .ok)
        }
    }

    func create(_ request: Request, context: LinkpulseRequestContext) async -> Response {
        let payload: CreatePayload
        do {
            let body = try await request.body.collect(upTo: 16_384)
            payload = try JSONDecoder().decode(CreatePayload.self, from: Data(buffer: body))
        } catch {
            return .error(.badRequest, code: "invalid_json", message: "Send a JSON object {\"kind\":\"ingest|read|admin\",\"name\":\"…\"} of at most 16 KiB.")
        }
        guard let kindText = payload.kind, let kind = AccessKind(rawValue: kindText) else {
            return .error(.badRequest, code: "invalid_field", message: "`kind` must be one of ingest, read, admin.", field: "kind")
        }
        guard let name = payload.name, NewAccessKey.isValidName(name) else {
            return .error(
                .badRequest, code: "invalid_field",
                message: "`name` must be a string of 1 to 100 characters without control characters, saying who uses the key.", field: "name")
        }
        do {
            let key = try await keys.create(kind: kind, name: name)
            return .json(
                CreatedResponse(
                    id: key.record.id, name: key.record.name, kind: kind, key: key.secret,
                    createdAt: Timestamp.formatUTC(key.record.createdAtMs)),
                status: .created, headers: [.cacheControl: "no-store"])
        } catch {
            return .databaseUnavailable
        }
    }
}
