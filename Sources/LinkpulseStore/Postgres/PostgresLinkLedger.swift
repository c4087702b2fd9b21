import LinkpulseDomain
import Logging
import PostgresNIO

/// The hosted links in PostgreSQL (`lp_links`): the same records as the SQLite store's
/// `LinkLedger`, shared by every daemon on the database.
public struct PostgresLinkLedger: LinkRecords {
    let client: PostgresClient
    let queries: Statements
    let logger: Logger

    /// `queries/postgres/links/`, their parameters named.
    struct Statements: Sendable {
        let byRef, page, count, insert, update, delete: PostgresStatement

        init(_ links: LinkQueries) {
            (byRef, page, count) = (PostgresStatement(named: links.byRef), PostgresStatement(named: links.page), PostgresStatement(named: links.count))
            (insert, update, delete) = (PostgresStatement(named: links.insert), PostgresStatement(named: links.update), PostgresStatement(named: links.delete))
        }
    }

    init(client: PostgresClient, queries: LinkQueries, logger: Logger) {
        self.client = client
        self.queries = Statements(queries)
        self.logger = logger
    }

    public func link(ref: String) async throws -> StoredLink? {
        try await stored(client.query(queries.byRef.query(["ref": ref]), logger: logger)).first
    }

    public func links(limit: Int, offset: Int) async throws -> [HostedLink] {
        try await stored(client.query(queries.page.query(["limit": Int64(limit), "offset": Int64(offset)]), logger: logger)).map(\.link)
    }

    public func linkCount() async throws -> Int {
        for try await count in try await client.query(queries.count.query(), logger: logger).decode(Int64.self) {
            return Int(count)
        }
        return 0
    }

    public func insertLink(_ link: HostedLink) async throws -> Bool {
        try await answersRef(queries.insert.query(binding: Self.fields(link) + [("created_at_ms", link.createdAtMs), ("updated_at_ms", link.updatedAtMs)]))
    }

    public func insertLinks(_ links: [HostedLink]) async throws -> [String] {
        let sql = queries.insert
        return try await client.withTransaction(logger: logger) { connection in
            var skipped: [String] = []
            for link in links {
                let query = try sql.query(binding: Self.fields(link) + [("created_at_ms", link.createdAtMs), ("updated_at_ms", link.updatedAtMs)])
                var inserted = false
                for try await _ in try await connection.query(query, logger: logger).decode(String.self) { inserted = true }
                if !inserted { skipped.append(link.ref) }
            }
            return skipped
        }
    }

    public func updateLink(_ link: HostedLink) async throws -> Bool {
        try await answersRef(queries.update.query(binding: Self.fields(link) + [("updated_at_ms", link.updatedAtMs)]))
    }

    public func deleteLink(ref: String, atMs: Int64) async throws -> Bool {
        try await answersRef(queries.delete.query(["ref": ref, "deleted_at_ms": atMs]))
    }

    /// Whether `query` (a write with `RETURNING ref`) changed a row.
    private func answersRef(_ query: PostgresQuery) async throws -> Bool {
        for try await _ in try await client.query(query, logger: logger).decode(String.self) { return true }
        return false
    }

    /// The link's fields as `links/insert.sql` and `links/update.sql` name them (absent ones
    /// NULL); the times are the caller's.
    static func fields(_ link: HostedLink) -> [(name: String, value: PostgresStatement.Value)] {
        [
            ("ref", link.ref), ("app", link.app), ("url", link.url), ("campaign", link.campaign), ("source", link.source),
            ("medium", link.medium), ("deep_link", link.deepLink.storedJSON), ("ios_url", link.iosURL), ("android_url", link.androidURL),
            ("desktop_url", link.desktopURL), ("ios_preview", link.iosPreview), ("social_title", link.social.title),
            ("social_description", link.social.description), ("social_image", link.social.image), ("expires_at_ms", link.expiresAtMs),
        ]
    }

    /// The rows of `links/by_ref.sql` or `links/page.sql`, read by column name.
    private func stored(_ rows: PostgresRowSequence) async throws -> [StoredLink] {
        var links: [StoredLink] = []
        for try await row in rows {
            let r = row.makeRandomAccess()
            func text(_ column: String) throws -> String? { try r[column].decode(String?.self) }
            func ms(_ column: String) throws -> Int64? { try r[column].decode(Int64?.self) }
            links.append(StoredLink(
                link: HostedLink(
                    ref: try r["ref"].decode(String.self), url: try r["url"].decode(String.self), app: try r["app"].decode(String.self),
                    campaign: try text("campaign"), source: try text("source"), medium: try text("medium"),
                    deepLink: DeepLinkContent(storedJSON: try text("deep_link")), iosURL: try text("ios_url"),
                    androidURL: try text("android_url"), desktopURL: try text("desktop_url"),
                    iosPreview: try r["ios_preview"].decode(Bool.self),
                    social: SocialPreview(title: try text("social_title"), description: try text("social_description"), image: try text("social_image")),
                    expiresAtMs: try ms("expires_at_ms"), createdAtMs: try r["created_at_ms"].decode(Int64.self),
                    updatedAtMs: try r["updated_at_ms"].decode(Int64.self)),
                deletedAtMs: try ms("deleted_at_ms")))
        }
        return links
    }
}
