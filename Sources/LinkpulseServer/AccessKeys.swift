import Foundation
import HTTPTypes
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Synchronization

/// The keys this daemon accepts: the stored ones (an in-memory table of their keyed hashes,
/// reloaded when the store's key version moves) and the ones given by flag. A request's key
/// costs one HMAC and one dictionary read (an unknown key at most one small read of the store,
/// see below); its use is noted in memory and written at most once a minute per key, by
/// `refresh`.
///
/// Keys created or revoked through this daemon take effect at once; those created or revoked
/// elsewhere (another daemon on PostgreSQL, `linkpulse keys`) at this daemon's next `refresh`,
/// which the access-keys timer runs every second. A key this daemon does not know yet is looked
/// for in the store before it is refused (`authorizeLookingFurther`), so a key made beside the
/// daemon works at its first request.
public final class AccessKeys: Sendable {
    let store: any AccessKeyRecords
    let hasher: AccessKeyHasher
    let configured: [(kind: AccessKind, digest: String)]
    let now: @Sendable () -> Int64
    private let state: Mutex<State>

    private struct State {
        var table: AccessKeyTable
        /// The store's key version the table was read at; nil before the first read.
        var version: Int64?
        var uses = AccessKeyUses()
        /// When an unknown key last made this daemon read the store's key version.
        var lastLookFurtherMs: Int64?
    }

    /// The shortest time between two reads of the store an unknown key causes: unknown keys
    /// sent in a flood cost at most ten small reads a second.
    public static let lookFurtherIntervalMs: Int64 = 100

    /// - Parameters:
    ///   - store: where the keys are kept (either backend's ledger).
    ///   - hashSecret: the installation's hashing secret (`InstallationSecrets.hashSecretBytes`).
    ///   - configured: keys given by flag (`--ingest-key`, `--read-key`, `--admin-key`), by
    ///     kind; accepted as keys of their kind, never stored.
    public init(
        store: any AccessKeyRecords, hashSecret: [UInt8], configured: [AccessKind: String] = [:],
        now: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) {
        self.store = store
        hasher = AccessKeyHasher(secret: hashSecret)
        let hasher = hasher
        self.configured = configured.sorted { $0.key < $1.key }.filter { !$0.value.isEmpty }.map { ($0.key, hasher.digest(of: $0.value)) }
        self.now = now
        state = Mutex(State(table: AccessKeyTable(records: [], configured: self.configured)))
    }

    /// The key `secret` is, when this daemon accepts it, and notes its use.
    public func authorize(_ secret: String) -> AccessGrant? {
        let digest = hasher.digest(of: secret)
        let nowMs = now()
        return state.withLock { state in
            guard let grant = state.table.find(digest: digest) else { return nil }
            if !grant.configured { _ = state.uses.note(grant.id, nowMs: nowMs) }
            return grant
        }
    }

    /// The key `secret` is, as `authorize` finds it; a key not found sends this daemon to the
    /// store's key version first (at most once per `lookFurtherIntervalMs`), and reloads the
    /// keys when it moved, so a key made a moment ago by `linkpulse keys` or another daemon is
    /// accepted without waiting for the next `refresh`.
    public func authorizeLookingFurther(_ secret: String) async -> AccessGrant? {
        if let grant = authorize(secret) { return grant }
        let nowMs = now()
        let mayLook = state.withLock { state in
            if let last = state.lastLookFurtherMs, nowMs - last < Self.lookFurtherIntervalMs, nowMs >= last { return false }
            state.lastLookFurtherMs = nowMs
            return true
        }
        guard mayLook, let version = try? await store.accessKeysVersion(),
              state.withLock({ $0.version }) != version, (try? await reload()) != nil
        else { return nil }
        return authorize(secret)
    }

    /// How many keys of each kind are accepted now.
    public var acceptedCounts: [AccessKind: Int] {
        state.withLock { $0.table.acceptedCounts }
    }

    /// Reloads the keys when the store's version moved (or was never read), then writes the
    /// uses noted since the last call. Run every second by the access-keys timer. The read
    /// comes first: a write that waits behind a busy ingest writer never delays a revocation.
    public func refresh() async throws {
        let version = try await store.accessKeysVersion()
        if state.withLock({ $0.version }) != version { try await reload() }
        let uses = state.withLock { $0.uses.drain() }
        do {
            try await store.recordAccessKeyUses(uses)
        } catch {
            state.withLock { $0.uses.restore(uses) }
            throw error
        }
    }

    /// Reads every stored key and replaces the table with them.
    public func reload() async throws {
        // The version first: a change between the two reads is seen again at the next refresh.
        let version = try await store.accessKeysVersion()
        let records = try await store.accessKeys()
        let table = AccessKeyTable(records: records, configured: configured)
        state.withLock {
            $0.table = table
            $0.version = version
        }
    }

    /// Stores a new key of `kind` named `name` and accepts it at once; the secret in the answer
    /// is shown to its creator this once and kept nowhere.
    public func create(kind: AccessKind, name: String) async throws -> NewAccessKey {
        let key = NewAccessKey(kind: kind, name: name, hasher: hasher, nowMs: now())
        guard try await store.insertAccessKey(key.record) else { throw AccessKeyCollision() }
        try await reload()
        return key
    }

    /// Revokes the stored key `id`, refused at once here; nil when no stored key has that id.
    public func revoke(id: String) async throws -> AccessKeyRecord? {
        let revoked = try await store.revokeAccessKey(id: id, atMs: now())
        try await reload()
        return revoked
    }

    /// Every stored key, revoked ones included, with their last uses as stored.
    public func list() async throws -> [AccessKeyRecord] {
        try await store.accessKeys()
    }

    /// Stores the keys an older version kept in clear (`secrets.json`'s `ingest_key` and
    /// `read_key`, or the PostgreSQL installation's values) as keys of their kind, so they keep
    /// working once the clear copies are deleted. Stored once, under an id derived from the
    /// secret, however many daemons adopt them. Returns the ids adopted now.
    @discardableResult
    public func adopt(_ secrets: [AccessKind: String]) async throws -> [String] {
        var adopted: [String] = []
        for (kind, secret) in secrets.sorted(by: { $0.key < $1.key }) where !secret.isEmpty {
            let record = NewAccessKey.adopted(secret: secret, kind: kind, name: "\(kind.rawValue) key of before", hasher: hasher, nowMs: now())
            if try await store.insertAccessKey(record) { adopted.append(record.id) }
        }
        return adopted
    }
}

/// A new key's random id or secret matched a stored one's (2^-64 odds): nothing was stored.
public struct AccessKeyCollision: Error, CustomStringConvertible {
    public var description: String { "the new key's id or secret is taken; try again" }
}

/// What a key middleware found: nothing to authorize with, a key no daemon accepts (unknown
/// or revoked), or a key of another kind than the routes need.
enum AccessRefusal: Error {
    case missing, unknown
    case wrongKind(AccessGrant)

    /// `401` for a missing or unaccepted key, `403` for one of the wrong kind.
    var status: HTTPResponse.Status {
        if case .wrongKind = self { return .forbidden }
        return .unauthorized
    }

    /// What to do about it, for a route group that needs `needed` (nil: any key).
    func message(needed: AccessKind?) -> String {
        switch self {
        case .missing, .unknown:
            let which = needed.map { $0 == .read ? "read or admin " : "\($0.rawValue) " } ?? ""
            return "Missing, wrong or revoked \(which)key. Send it as `Authorization: Bearer KEY`, `X-Linkpulse-Key: KEY` or `?key=KEY`; `linkpulse keys create` makes one."
        case .wrongKind(let grant):
            let which = needed == .read ? "a read or admin key" : "an \(needed?.rawValue ?? "other") key"
            return "This is \(grant.kind == .read ? "a" : "an") \(grant.kind.rawValue) key (it may \(grant.kind.powers)); this endpoint needs \(which)."
        }
    }

    /// The standard JSON error (`{"error":{"code","message"}}`).
    func response(needed: AccessKind?) -> Response {
        .error(status, code: status == .forbidden ? "forbidden" : "unauthorized", message: message(needed: needed))
    }
}

/// The one key check of a route group: reads the presented key (`AccessKey.presented`), finds
/// its kind and lets the handler run with `context.access` set, or answers `401` (no key, an
/// unknown or revoked one) or `403` (a key of a kind these routes do not take).
struct AccessKeyMiddleware: RouterMiddleware {
    typealias Context = LinkpulseRequestContext
    let keys: AccessKeys
    /// The kind the routes need; nil: any accepted key.
    let needed: AccessKind?
    /// A request without a key in its headers or query goes on to the handler, which checks the
    /// key its body carries (Segment's `writeKey`) with `authorizeInBody`.
    var keyMayBeInBody = false
    /// How a refusal is answered (Segment's endpoints answer in Segment's shape).
    var refuse: @Sendable (AccessRefusal, AccessKind?) -> Response = { $0.response(needed: $1) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let secret = AccessKey.presented(in: request) else {
            if keyMayBeInBody { return try await next(request, context) }
            return refuse(.missing, needed)
        }
        switch await check(secret) {
        case .success(let grant):
            var context = context
            context.access = grant
            return try await next(request, context)
        case .failure(let refusal):
            return refuse(refusal, needed)
        }
    }

    /// The key `secret` checked against what these routes need.
    func check(_ secret: String) async -> Result<AccessGrant, AccessRefusal> {
        guard let grant = await keys.authorizeLookingFurther(secret) else { return .failure(.unknown) }
        if let needed, !grant.kind.allows(needed) { return .failure(.wrongKind(grant)) }
        return .success(grant)
    }
}

/// The key middlewares of the daemon's route groups, one per kind a group needs.
struct AccessGates: Sendable {
    let keys: AccessKeys

    var ingest: AccessKeyMiddleware { AccessKeyMiddleware(keys: keys, needed: .ingest) }
    var read: AccessKeyMiddleware { AccessKeyMiddleware(keys: keys, needed: .read) }
    var admin: AccessKeyMiddleware { AccessKeyMiddleware(keys: keys, needed: .admin) }
    /// Any accepted key, of whatever kind.
    var anyKey: AccessKeyMiddleware { AccessKeyMiddleware(keys: keys, needed: nil) }
}
