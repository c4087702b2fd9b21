import ArgumentParser
import AsyncHTTPClient
import CSV
import Foundation
import LinkpulseDomain
import LinkpulseStore
import NIOCore

/// `linkpulse links create|list|delete|import`: the hosted links, beside a running daemon on
/// the same `--data-dir` (or `--database`). A link made here serves at once: every daemon reads
/// links from the store when they are asked for. `linkpulse links check-domain` fetches a link
/// domain's association files as Apple and Google do, and says what keeps apps from opening it.
struct Links: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create, list, delete and import hosted links, beside a running daemon.",
        discussion: """
            Works on the SQLite installation under --data-dir, or the PostgreSQL database of --database. \
            --links-config (LINKPULSE_LINKS_CONFIG) is the daemon's file of link domains and apps: links are checked \
            against it (their app, their short URL's domain).
            """,
        subcommands: [Create.self, List.self, Delete.self, Import.self, CheckDomain.self])

    /// The daemon's file of link domains and apps.
    struct ConfigOption: ParsableArguments {
        @Option(help: "The link domains and apps, as the daemon's --links-config (LINKPULSE_LINKS_CONFIG).")
        var linksConfig: String? = Environment.string("links-config")

        func config() throws -> LinksConfig {
            guard let linksConfig else { throw ValidationError("--links-config is required: the daemon's file of link domains and apps.") }
            guard let data = FileManager.default.contents(atPath: linksConfig) else { throw ValidationError("--links-config: cannot read \(linksConfig).") }
            do { return try LinksConfig(json: data) } catch { throw ValidationError("--links-config \(linksConfig): \(error)") }
        }
    }

    /// The options every subcommand on the links themselves takes.
    struct Place: ParsableArguments {
        @OptionGroup var storage: StorageOptions
        @OptionGroup var database: DatabaseOption
        @OptionGroup var linksConfig: ConfigOption

        func config() throws -> LinksConfig { try linksConfig.config() }

        /// The links of the installation, handed to `body`, then closed.
        func withLinks<T>(_ body: (any LinkRecords) async throws -> T) async throws -> T {
            let logger = storage.bootstrapLogging()
            if let location = database.location {
                let store = try await PostgresStore.open(location, logger: logger, nowMs: Int64(Date().timeIntervalSince1970 * 1000))
                do {
                    let result = try await body(store.links)
                    await store.close()
                    return result
                } catch {
                    await store.close()
                    throw error
                }
            }
            return try await storage.besideDaemon(
                feature: "hosted links", open: LinkLedger.beside(directory:), close: { try $0.close() }, logger: logger, body)
        }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a link; prints its ref, then its short URL on the last line. `import` takes every field.")

        @OptionGroup var place: Place

        @Option(help: "The content's web page (absolute http or https), where desktops go.")
        var url: String
        @Option(help: "The short URL's path (letters, digits, _ and -); made when not given.")
        var ref: String?
        @Option(help: "The configured app it opens (default: the first).")
        var app: String?
        @Option var campaign: String?
        @Option var source: String?
        @Option var medium: String?
        @Option(help: "What the app opens (the deep link's value).")
        var deepLink: String?

        func run() async throws {
            let config = try place.config()
            var body: [String: JSONValue] = ["url": .string(url)]
            for (key, value) in [("ref", ref), ("app", app), ("campaign", campaign), ("source", source), ("medium", medium)] {
                if let value { body[key] = .string(value) }
            }
            if let deepLink { body["deep_link"] = .object(["value": .string(deepLink)]) }
            let link: HostedLink
            do { link = try LinkFields(config: config).create(body, nowMs: Links.now(), newRef: LinkRefs.random) } catch {
                throw ValidationError("--\(error.field?.replacingOccurrences(of: "_", with: "-") ?? "url"): \(error.message)")
            }
            guard try await place.withLinks({ try await $0.insertLink(link) }) else {
                throw ValidationError("the ref \(link.ref) is taken (by a link, or by one deleted: a ref is never given out twice).")
            }
            print(link.ref)
            print(LinkRouting.linkURL(host: config.primaryDomain, ref: link.ref))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the links (newest first): ref, short URL, campaign, web page.")

        @OptionGroup var place: Place

        @Option(help: "Most links to list.")
        var limit: Int = 100

        func run() async throws {
            let config = try place.config()
            let links = try await place.withLinks { try await $0.links(limit: max(1, limit), offset: 0) }
            for link in links {
                print([link.ref, LinkRouting.linkURL(host: config.primaryDomain, ref: link.ref), link.campaign ?? "-", link.url].joined(separator: "\t"))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a link: its ref answers 410 from then on and is never given out again.")

        @OptionGroup var place: Place

        @Argument(help: "The link's ref.")
        var ref: String

        func run() async throws {
            guard try await place.withLinks({ try await $0.deleteLink(ref: ref, atMs: Links.now()) }) else {
                throw ValidationError("no link has the ref \(ref) (or it was deleted already).")
            }
            print("deleted \(ref)")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the links of a CSV file, one a row, in transactions of 10,000.",
            discussion: """
                The header row names the columns: ref, url, app, campaign, source, medium, deep_link_value, \
                deep_link_sub1…deep_link_sub10, ios_url, android_url, desktop_url, ios_preview (true/false), social_title, \
                social_description, social_image, expires_at (RFC 3339). Only url is required; an empty cell is a field \
                not given, an empty ref one made. Every row is checked first: one that cannot be served stops the import \
                before anything is stored, naming its line and field. Rows whose ref is taken are skipped and counted.
                """)

        @OptionGroup var place: Place

        @Argument(help: "The CSV file (UTF-8, comma-separated, RFC 4180 quoting).")
        var file: String

        func run() async throws {
            let config = try place.config()
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("\(file) is not UTF-8 text") }
            let reader: CSVReader
            do { reader = try CSVReader(string: text, hasHeaderRow: true) } catch { throw ValidationError("\(file): not CSV: \(error)") }
            let header = (reader.headerRow ?? []).map { $0.trimmingCharacters(in: .whitespaces) }
            do { try LinkCSV.checkHeader(header) } catch { throw ValidationError("\(file), header: \(error.message)") }
            let fields = LinkFields(config: config)
            let now = Links.now()
            var links: [HostedLink] = []
            var refs = Set<String>()
            var line = 1
            while let row = reader.next() {
                line += 1
                let body = LinkCSV.body(header: header, row: row)
                let link: HostedLink
                do { link = try fields.create(body, nowMs: now, newRef: LinkRefs.random) } catch {
                    throw ValidationError("\(file), line \(line), \(error.field ?? "row"): \(error.message); nothing was imported.")
                }
                guard refs.insert(link.ref).inserted else {
                    throw ValidationError("\(file), line \(line): the ref \(link.ref) is on an earlier line too; nothing was imported.")
                }
                links.append(link)
            }
            if let error = reader.error { throw ValidationError("\(file), near line \(line): \(error); nothing was imported.") }
            let skipped = try await place.withLinks { store in
                var skipped: [String] = []
                for start in stride(from: 0, to: links.count, by: 10_000) {
                    skipped += try await store.insertLinks(Array(links[start..<min(start + 10_000, links.count)]))
                }
                return skipped
            }
            print("imported \(links.count - skipped.count) links" + (skipped.isEmpty ? "" : "; skipped \(skipped.count) whose ref is taken: \(skipped.prefix(10).joined(separator: ", "))\(skipped.count > 10 ? ", …" : "")"))
        }
    }

    struct CheckDomain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-domain",
            abstract: "Fetch a link domain's association files as Apple and Google do, and say what is wrong with them.",
            discussion: """
                Fetches /.well-known/apple-app-site-association, /apple-app-site-association and \
                /.well-known/assetlinks.json from https://DOMAIN (every configured domain when none is given), following \
                no redirect, and checks each: 200, application/json, at most 128 KiB for Apple, every app id and \
                certificate fingerprint of --links-config listed. --via sends the requests to another address (the \
                daemon itself, before DNS or TLS are set up) with the domain as Host. Exits 1 when anything is wrong.
                """)

        @OptionGroup var linksConfig: ConfigOption

        @Argument(help: "The link domain to check (default: every domain of --links-config).")
        var domain: String?

        @Option(help: "Fetch from this base URL instead (such as http://127.0.0.1:8080), sending the domain as Host.")
        var via: String?

        /// Longest wait for one file.
        static let timeout = TimeAmount.seconds(15)
        /// Largest file read (Apple's limit is a tenth of it).
        static let largestBody = 4 << 20

        func run() async throws {
            let config = try linksConfig.config()
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: Self.timeout)))
            var problems = 0
            for domain in domain.map({ [$0.lowercased()] }) ?? config.domains {
                print(domain)
                var files: [FetchedFile] = []
                var unreachable: [DomainFinding] = []
                for path in DomainCheck.paths {
                    do {
                        files.append(try await fetch(path, domain: domain, client: client))
                    } catch {
                        // A domain that cannot be reached once is not tried again for its other files.
                        unreachable.append(DomainFinding(path: path, problem: true, message: "cannot be fetched from \(base(domain)): \(error)"))
                        break
                    }
                }
                let findings = unreachable + DomainCheck.findings(domain: domain, config: config, files: files)
                for finding in findings { print("  \(finding)") }
                problems += findings.filter(\.problem).count
            }
            try await client.shutdown()
            guard problems == 0 else {
                print("\(problems) problem\(problems == 1 ? "" : "s"): apps will not open these links until they are fixed.")
                throw ExitCode(1)
            }
            print("every file is as Apple and Google want it.")
        }

        func base(_ domain: String) -> String {
            guard var via else { return "https://\(domain)" }
            while via.hasSuffix("/") { via.removeLast() }
            return via
        }

        func fetch(_ path: String, domain: String, client: HTTPClient) async throws -> FetchedFile {
            var request = HTTPClientRequest(url: base(domain) + path)
            if via != nil { request.headers.replaceOrAdd(name: "Host", value: domain) }
            request.headers.add(name: "User-Agent", value: "linkpulse-check-domain")
            let response = try await client.execute(request, timeout: Self.timeout)
            let body = try await response.body.collect(upTo: Self.largestBody)
            return FetchedFile(
                path: path, status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
                location: response.headers.first(name: "Location"), body: Array(buffer: body))
        }
    }
}
