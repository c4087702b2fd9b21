import LinkpulseDomain
import Logging
import PostgresNIO

/// The hosted links in PostgreSQL (`lp_links`): the same records as the SQLite store's
/// `LinkLedger`, shared by every daemon on the database.
public struct PostgresLinkLedger: LinkRecords {
    let client: PostgresClient
    let queries: LinkQueries
    let logger: Logger

    public func link(ref: String) async throws -> StoredLink? {
        try await stored(client.query(PostgresStore.query(queries.byRef, ref), logger: logger)).first
    }

    public func links(limit: Int, offset: Int) async throws -> [HostedLink] {
        try await stored(client.query(PostgresStore.query(queries.page, Int64(limit), Int64(offset)), logger: logger)).map(\.link)
    }

    public func linkCount() async throws -> Int {
        for try await count in try await client.query(PostgresQuery(unsafeSQL: queries.count), logger: logger).decode(Int64.self) {
            return Int(count)
        }
        return 0
    }

    public func insertLink(_ link: HostedLink) async throws -> Bool {
        try await answersRef(PostgresQuery(unsafeSQL: queries.insert, binds: Self.bindings(link, then: [link.createdAtMs, link.updatedAtMs])))
    }

    public func insertLinks(_ links: [HostedLink]) async throws -> [String] {
        let sql = queries.insert
        return try await client.withTransaction(logger: logger) { connection in
            var skipped: [String] = []
            for link in links {
                let query = PostgresQuery(unsafeSQL: sql, binds: try Self.bindings(link, then: [link.createdAtMs, link.updatedAtMs]))
                var inserted = false
                for try await _ in try await connection.query(query, logger: logger).decode(String.self) { inserted = true }
                if !inserted { skipped.append(link.ref) }
            }
            return skipped
        }
    }

    public func updateLink(_ link: HostedLink) async throws -> Bool {
        try await answersRef(PostgresQuery(unsafeSQL: queries.update, binds: Self.bindings(link, then: [link.updatedAtMs])))
    }

    public func deleteLink(ref: String, atMs: Int64) async throws -> Bool {
        try await answersRef(PostgresStore.query(queries.delete, ref, atMs))
    }

    /// Whether `query` (a write with `RETURNING ref`) changed a row.
    private func answersRef(_ query: PostgresQuery) async throws -> Bool {
        for try await _ in try await client.query(query, logger: logger).decode(String.self) { return true }
        return false
    }

    /// `$1`…`$15` of `links/insert.sql` and `links/update.sql` (the link's fields, absent
    /// ones as NULL), then `times`.
    static func bindings(_ link: HostedLink, then times: [Int64]) throws -> PostgresBindings {
        var binds = PostgresBindings(capacity: 15 + times.count)
        try binds.append(link.ref)
        try binds.append(link.app)
        try binds.append(link.url)
        for text in [link.campaign, link.source, link.medium, link.deepLink.storedJSON, link.iosURL, link.androidURL, link.desktopURL] {
            try binds.append(text)
        }
        try binds.append(link.iosPreview)
        for text in [link.social.title, link.social.description, link.social.image] { try binds.append(text) }
        try binds.append(link.expiresAtMs)
        for time in times { try binds.append(time) }
        return binds
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
