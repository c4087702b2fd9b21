import Foundation
import GRDB
import LinkpulseDomain

/// A link as a store holds it: the link, and when it was deleted (its ref then answers 410).
public struct StoredLink: Sendable, Equatable {
    public var link: HostedLink
    public var deletedAtMs: Int64?

    public init(link: HostedLink, deletedAtMs: Int64? = nil) {
        self.link = link
        self.deletedAtMs = deletedAtMs
    }
}

/// The hosted links in whichever store the daemon runs on (`LinkLedger` in SQLite,
/// `PostgresLinkLedger`). Every daemon reads a link from the store when it is asked for, so a
/// change made through one daemon serves on all of them at once.
public protocol LinkRecords: Sendable {
    /// The link of `ref`, deleted or not; nil when no link ever had it.
    func link(ref: String) async throws -> StoredLink?
    /// Links that are not deleted, newest first.
    func links(limit: Int, offset: Int) async throws -> [HostedLink]
    /// How many links are not deleted.
    func linkCount() async throws -> Int
    /// Stores a new link; false when its ref is taken (by a link, deleted or not).
    func insertLink(_ link: HostedLink) async throws -> Bool
    /// Stores new links in one transaction, skipping those whose ref is taken; returns the
    /// refs it skipped (`linkpulse links import`).
    func insertLinks(_ links: [HostedLink]) async throws -> [String]
    /// Writes every field of a link that is not deleted; false when there is none with its ref.
    func updateLink(_ link: HostedLink) async throws -> Bool
    /// Marks the link of `ref` deleted at `atMs`; false when there is none, or it was deleted.
    func deleteLink(ref: String, atMs: Int64) async throws -> Bool
}

/// The statements of a links table (`links/` for SQLite, `postgres/links/`; `all`, SQLite's
/// only, for `linkpulse copy`).
struct LinkQueries: Sendable {
    let byRef, page, count, insert, update, delete: String
    let all: String?

    init(under folder: String) throws {
        byRef = try SQLQueries.text(folder + "by_ref.sql")
        page = try SQLQueries.text(folder + "page.sql")
        count = try SQLQueries.text(folder + "count.sql")
        insert = try SQLQueries.text(folder + "insert.sql")
        update = try SQLQueries.text(folder + "update.sql")
        delete = try SQLQueries.text(folder + "delete.sql")
        all = try? SQLQueries.text(folder + "all.sql")
    }

    var statements: [String] { [byRef, page, count, insert, update, delete] + (all.map { [$0] } ?? []) }
}

/// The hosted links of a SQLite installation: the `links` table of the events database (so a
/// backup carries them), written in short deferred transactions beside the ingest writer and
/// read on the pool's readers.
public final class LinkLedger: LinkRecords {
    let pool: DatabasePool
    let queries: LinkQueries

    init(pool: DatabasePool, queries: LinkQueries) {
        self.pool = pool
        self.queries = queries
    }

    public func link(ref: String) async throws -> StoredLink? {
        let sql = queries.byRef
        return try await pool.read { db in
            // The hot path of every tap: a statement compiled once per connection.
            try Row.fetchOne(db.cachedStatement(sql: sql), arguments: ["ref": ref]).map(Self.stored)
        }
    }

    public func links(limit: Int, offset: Int) async throws -> [HostedLink] {
        let sql = queries.page
        return try await pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: ["limit": limit, "offset": offset]).map { Self.stored($0).link }
        }
    }

    /// Every link, deleted ones included, oldest first (`linkpulse copy`).
    func everyLink() async throws -> [StoredLink] {
        guard let sql = queries.all else { return [] }
        return try await pool.read { db in try Row.fetchAll(db, sql: sql).map(Self.stored) }
    }

    public func linkCount() async throws -> Int {
        let sql = queries.count
        return try await pool.read { db in try Int.fetchOne(db, sql: sql) ?? 0 }
    }

    public func insertLink(_ link: HostedLink) async throws -> Bool {
        let sql = queries.insert
        return try await pool.writeDeferred { db in
            var arguments = Self.arguments(link)
            arguments["created_at_ms"] = link.createdAtMs
            try db.execute(sql: sql, arguments: StatementArguments(arguments))
            return db.changesCount > 0
        }
    }

    public func insertLinks(_ links: [HostedLink]) async throws -> [String] {
        let sql = queries.insert
        return try await pool.writeDeferred { db in
            var skipped: [String] = []
            for link in links {
                var arguments = Self.arguments(link)
                arguments["created_at_ms"] = link.createdAtMs
                try db.execute(sql: sql, arguments: StatementArguments(arguments))
                if db.changesCount == 0 { skipped.append(link.ref) }
            }
            return skipped
        }
    }

    /// The links of the installation under `directory` on connections of their own, for
    /// `linkpulse links` beside a running daemon (see `AppDatabase.eventsBeside`); nil when its
    /// events database has no links table yet.
    public static func beside(directory: URL) throws -> LinkLedger? {
        guard let pool = try AppDatabase.eventsBeside(directory: directory, holding: "links") else { return nil }
        return LinkLedger(pool: pool, queries: try SQLQueries.load().links)
    }

    /// Closes the connections `beside` opened (those of an `AppDatabase` close with it).
    public func close() throws {
        try pool.close()
    }

    public func updateLink(_ link: HostedLink) async throws -> Bool {
        let sql = queries.update
        return try await pool.writeDeferred { db in
            try db.execute(sql: sql, arguments: StatementArguments(Self.arguments(link)))
            return db.changesCount > 0
        }
    }

    public func deleteLink(ref: String, atMs: Int64) async throws -> Bool {
        let sql = queries.delete
        return try await pool.writeDeferred { db in
            try db.execute(sql: sql, arguments: ["ref": ref, "deleted_at_ms": atMs])
            return db.changesCount > 0
        }
    }

    /// The named parameters of `links/insert.sql` and `links/update.sql` (all but the
    /// creation time, which only an insert writes).
    static func arguments(_ link: HostedLink) -> [String: (any DatabaseValueConvertible)?] {
        [
            "ref": link.ref, "app": link.app, "url": link.url, "campaign": link.campaign, "source": link.source,
            "medium": link.medium, "deep_link": link.deepLink.storedJSON, "ios_url": link.iosURL,
            "android_url": link.androidURL, "desktop_url": link.desktopURL, "ios_preview": link.iosPreview,
            "social_title": link.social.title, "social_description": link.social.description, "social_image": link.social.image,
            "expires_at_ms": link.expiresAtMs, "updated_at_ms": link.updatedAtMs,
        ]
    }

    /// A row of `links/by_ref.sql` or `links/page.sql`, read by column name.
    static func stored(_ row: Row) -> StoredLink {
        StoredLink(
            link: HostedLink(
                ref: row["ref"], url: row["url"], app: row["app"], campaign: row["campaign"], source: row["source"],
                medium: row["medium"], deepLink: DeepLinkContent(storedJSON: row["deep_link"]), iosURL: row["ios_url"],
                androidURL: row["android_url"], desktopURL: row["desktop_url"], iosPreview: row["ios_preview"],
                social: SocialPreview(title: row["social_title"], description: row["social_description"], image: row["social_image"]),
                expiresAtMs: row["expires_at_ms"], createdAtMs: row["created_at_ms"], updatedAtMs: row["updated_at_ms"]),
            deletedAtMs: row["deleted_at_ms"])
    }
}
