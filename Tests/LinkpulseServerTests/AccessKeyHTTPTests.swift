import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import NIOCore
import Synchronization
import TestSupport
import Testing

/// Access keys over HTTP, on both stores (on PostgreSQL, two daemons with the requests
/// alternating between them): each operation of the OpenAPI document takes exactly the kinds
/// of key its `security` names; keys are created, listed and revoked through `/v1/keys`; a
/// rotation under load loses nothing.
@Suite struct AccessKeyHTTPTests {
    /// The kind each security scheme of the document stands for.
    static let kindOfScheme: [String: AccessKind] = ["ingestKey": .ingest, "segmentWriteKey": .ingest, "readKey": .read, "adminKey": .admin]

    /// One operation of the document: its method, a path with its parameters filled in, and the
    /// kinds of key it takes (empty: public).
    struct Operation: CustomStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var kinds: Set<AccessKind>
        var description: String { "\(method) \(path)" }
    }

    /// Every operation of the document the daemon serves at `/openapi.json` (preflights left
    /// out: they carry no key by nature).
    static func operations(_ client: some TestClientProtocol) async throws -> [Operation] {
        let served = try await client.execute(uri: "/openapi.json", method: .get)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(buffer: served.body)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let filled = ["{event_id}": "no-such-event", "{name}": "no-such-file.csv", "{id}": "key_0000000000000000", "{path}": "index.html", "{ref}": "no-such-ref"]
        var operations: [Operation] = []
        for (template, methods) in paths.sorted(by: { $0.key < $1.key }) {
            var path = template
            for (parameter, value) in filled { path = path.replacingOccurrences(of: parameter, with: value) }
            for (name, value) in methods where name != "options" {
                let operation = try #require(value as? [String: Any])
                let security = try #require(operation["security"] as? [[String: Any]], "\(name) \(template) states its security")
                let kinds = Set(security.flatMap { $0.keys }.map { kindOfScheme[$0]! })
                operations.append(Operation(method: HTTPRequest.Method(name.uppercased())!, path: path, kinds: kinds))
            }
        }
        return operations
    }

    /// Sends `operation` with `key` (nil: none): a small body for a POST, the key as a bearer token.
    static func send(_ client: some TestClientProtocol, _ operation: Operation, key: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        let body = operation.method == .post ? ByteBuffer(string: #"{"kind":"nonsense"}"#) : nil
        return try await client.execute(uri: operation.path, method: operation.method, headers: headers, body: body)
    }

    static func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
    }

    /// Creates a key through `POST /v1/keys` with the admin key; its id and secret.
    static func create(_ client: some TestClientProtocol, kind: AccessKind, name: String) async throws -> (id: String, secret: String) {
        let response = try await client.execute(
            uri: "/v1/keys", method: .post, headers: [.authorization: "Bearer \(TestInstallation.adminKey)", .contentType: "application/json"],
            body: ByteBuffer(string: #"{"kind":"\#(kind.rawValue)","name":"\#(name)"}"#))
        #expect(response.status == .created, "\(String(buffer: response.body))")
        let body = json(response)
        return (try #require(body["id"] as? String), try #require(body["key"] as? String))
    }

    /// Waits until `GET /v1/key` with `secret` answers `status` several times in a row (on
    /// PostgreSQL the requests alternate between the daemons, so both answer so), and returns
    /// how long that took; fails past `limit`. A bound on progress only: how soon a change
    /// reaches every daemon is the refresh's (`AccessKeyRefreshTests`: at the next one, every
    /// second), and `ops/bench/keys.sh` measures it; a loaded test run answers far slower.
    @discardableResult
    static func waitUntil(
        _ client: some TestClientProtocol, key secret: String, answers status: HTTPResponse.Status, within limit: Duration = .seconds(60)
    ) async throws -> Duration {
        let start = ContinuousClock.now
        var streak = 0
        let held = try await eventually(within: limit, every: .milliseconds(25)) {
            // Four answers in a row, asked back to back once the first has come.
            while streak < 4 {
                let response = try await client.execute(uri: "/v1/key", method: .get, headers: [.authorization: "Bearer \(secret)"])
                guard response.status == status else {
                    streak = 0
                    return false
                }
                streak += 1
            }
            return true
        }
        try #require(held, "GET /v1/key did not answer \(status) in \(limit)")
        return ContinuousClock.now - start
    }

    @Test(arguments: StoreBackend.allCases)
    func everyOperationTakesExactlyTheKindsItsDocumentNames(on backend: StoreBackend) async throws {
        try await backend.test("key_kinds") { client, _ in
            let operations = try await Self.operations(client)
            #expect(operations.count > 25, "\(operations)")
            #expect(operations.contains { $0.path == "/v1/keys" && $0.kinds == [.admin] })
            #expect(operations.contains { $0.path == "/v1/stats/summary" && $0.kinds == [.read, .admin] })
            // Keys of each kind made through the API, then revoked: a revoked key is unknown.
            var revoked: [AccessKind: String] = [:]
            for kind in AccessKind.allCases {
                let key = try await Self.create(client, kind: kind, name: "revoked \(kind.rawValue)")
                try await Self.waitUntil(client, key: key.secret, answers: .ok)
                let deleted = try await client.execute(
                    uri: "/v1/keys/\(key.id)", method: .delete, headers: [.authorization: "Bearer \(TestInstallation.adminKey)"])
                #expect(deleted.status == .noContent)
                try await Self.waitUntil(client, key: key.secret, answers: .unauthorized)
                revoked[kind] = key.secret
            }
            let keys: [AccessKind: String] = [.ingest: TestInstallation.ingestKey, .read: TestInstallation.readKey, .admin: TestInstallation.adminKey]
            for operation in operations {
                let keyed = !operation.kinds.isEmpty
                let none = try await Self.send(client, operation, key: nil)
                if keyed {
                    #expect(none.status == .unauthorized, "\(operation) without a key")
                } else {
                    #expect(none.status != .unauthorized && none.status != .forbidden, "\(operation) is public")
                }
                for kind in AccessKind.allCases {
                    let answer = try await Self.send(client, operation, key: keys[kind])
                    if !keyed || operation.kinds.contains(kind) {
                        #expect(answer.status != .unauthorized && answer.status != .forbidden, "\(operation) takes a \(kind) key: \(answer.status)")
                    } else {
                        #expect(answer.status == .forbidden, "\(operation) refuses a \(kind) key: \(answer.status)")
                        #expect(Self.json(answer)["code"] as? String ?? (Self.json(answer)["error"] as? [String: Any])?["code"] as? String == "forbidden")
                    }
                    let stale = try await Self.send(client, operation, key: revoked[kind])
                    if keyed {
                        #expect(stale.status == .unauthorized, "\(operation) refuses a revoked \(kind) key: \(stale.status)")
                    }
                }
            }
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func keysAreCreatedListedAndRevokedThroughTheAPI(on backend: StoreBackend) async throws {
        try await backend.test("key_api") { client, _ in
            let admin: HTTPFields = [.authorization: "Bearer \(TestInstallation.adminKey)", .contentType: "application/json"]
            // Bad bodies name the field.
            for (body, field) in [(#"{"kind":"root","name":"x"}"#, "kind"), (#"{"kind":"read"}"#, "name"), (#"{"kind":"read","name":""}"#, "name")] {
                let refused = try await client.execute(uri: "/v1/keys", method: .post, headers: admin, body: ByteBuffer(string: body))
                #expect(refused.status == .badRequest)
                #expect((Self.json(refused)["error"] as? [String: Any])?["field"] as? String == field, "\(body)")
            }
            let notJSON = try await client.execute(uri: "/v1/keys", method: .post, headers: admin, body: ByteBuffer(string: "kind=read"))
            #expect(notJSON.status == .badRequest)

            let bi = try await Self.create(client, kind: .read, name: "BI export")
            #expect(bi.secret.hasPrefix("lpr_") && bi.secret.count == 36 && bi.id.hasPrefix("key_"))
            try await Self.waitUntil(client, key: bi.secret, answers: .ok)
            let current = try await client.execute(uri: "/v1/key", method: .get, headers: [.authorization: "Bearer \(bi.secret)"])
            let said = Self.json(current)
            #expect(said["id"] as? String == bi.id && said["kind"] as? String == "read" && said["name"] as? String == "BI export")
            #expect(said["allows"] as? [String] == ["read"] && said["configured"] as? Bool == false)
            let flag = Self.json(try await client.execute(uri: "/v1/key", method: .get, headers: [.authorization: "Bearer \(TestInstallation.adminKey)"]))
            #expect(flag["configured"] as? Bool == true && flag["allows"] as? [String] == ["read", "admin"], "\(flag)")
            // The read key reads the stats; its use is noted (at most once a minute).
            let stats = try await client.execute(uri: "/v1/stats/summary", method: .get, headers: [.authorization: "Bearer \(bi.secret)"])
            #expect(stats.status == .ok)

            // The list shows it, never a secret; a read key may not list.
            let listed = try await client.execute(uri: "/v1/keys", method: .get, headers: admin)
            #expect(listed.status == .ok)
            let text = String(buffer: listed.body)
            #expect(!text.contains(bi.secret) && !text.contains("digest"), "\(text)")
            let entry = try #require((Self.json(listed)["keys"] as? [[String: Any]])?.first { $0["id"] as? String == bi.id })
            #expect(entry["name"] as? String == "BI export" && entry["kind"] as? String == "read")
            #expect(entry["revoked_at"] is NSNull && (entry["created_at"] as? String)?.hasSuffix("Z") == true)
            #expect(try await client.execute(uri: "/v1/keys", method: .get, headers: [.authorization: "Bearer \(bi.secret)"]).status == .forbidden)

            // Revoked: 204, refused everywhere, listed with its time; unknown id 404.
            let revoke = try await client.execute(uri: "/v1/keys/\(bi.id)", method: .delete, headers: admin)
            #expect(revoke.status == .noContent)
            try await Self.waitUntil(client, key: bi.secret, answers: .unauthorized)
            let after = try #require((Self.json(try await client.execute(uri: "/v1/keys", method: .get, headers: admin))["keys"] as? [[String: Any]])?
                .first { $0["id"] as? String == bi.id })
            #expect(after["revoked_at"] is String)
            #expect(try await client.execute(uri: "/v1/keys/key_nope", method: .delete, headers: admin).status == .notFound)
        }
    }

    /// Ingest goes on with key A while B is created, the sender switches to B, and A is revoked:
    /// every acknowledged event is stored once, A is refused everywhere once revoked (by every
    /// daemon at its next refresh), and B is never refused once it is accepted.
    @Test(arguments: StoreBackend.allCases)
    func aKeyRotatedUnderLoadLosesNoEvent(on backend: StoreBackend) async throws {
        try await backend.test("key_rotation", live: true) { client, probe in
            let a = try await Self.create(client, kind: .ingest, name: "app 1.0")
            try await Self.waitUntil(client, key: a.secret, answers: .ok)
            let current = Locked(a.secret)
            let acked = Locked<[String]>([])
            let refusedB = Locked(0)
            let stop = Locked(false)
            let sender = Task {
                var number = 0
                while !stop.withLock({ $0 }) {
                    number += 1
                    let key = current.withLock { $0 }
                    let ids = (0..<20).map { "rot-\(number)-\($0)" }
                    let body = "[" + ids.map { #"{"id":"\#($0)","type":"click","ref":"rot"}"# }.joined(separator: ",") + "]"
                    let response = try await client.execute(
                        uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(key)", .contentType: "application/json"],
                        body: ByteBuffer(string: body))
                    if response.status == .accepted {
                        acked.withLock { $0 += ids }
                    } else if key != a.secret {
                        refusedB.withLock { $0 += 1 }
                    }
                }
            }
            func waitForAcks(_ count: Int) async throws {
                try #require(await eventually(within: .seconds(60), every: .milliseconds(10)) { acked.withLock { $0.count } >= count }, "ingest stalled")
            }
            try await waitForAcks(200)
            let b = try await Self.create(client, kind: .ingest, name: "app 1.1")
            try await Self.waitUntil(client, key: b.secret, answers: .ok)
            current.withLock { $0 = b.secret }
            let switched = acked.withLock { $0.count }
            try await waitForAcks(switched + 200)
            let revoke = try await client.execute(
                uri: "/v1/keys/\(a.id)", method: .delete, headers: [.authorization: "Bearer \(TestInstallation.adminKey)"])
            #expect(revoke.status == .noContent)
            try await Self.waitUntil(client, key: a.secret, answers: .unauthorized)
            let revokedAt = acked.withLock { $0.count }
            try await waitForAcks(revokedAt + 200)
            stop.withLock { $0 = true }
            try await sender.value
            // B worked throughout, and after A's end.
            #expect(refusedB.withLock { $0 } == 0)
            let ids = acked.withLock { $0 }
            #expect(Set(ids).count == ids.count)
            let stored = try probe.count(
                sqlite: "SELECT count(DISTINCT event_id) FROM events WHERE event_id LIKE 'rot-%'",
                postgres: "SELECT count(DISTINCT event_id) FROM lp_events WHERE event_id LIKE 'rot-%'")
            #expect(stored == ids.count, "every acknowledged event stored once")
        }
    }
}
