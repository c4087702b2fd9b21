import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL store lives, from the URL an operator gives `--database` (or
/// `LINKPULSE_DATABASE`): `postgres://user[:password]@host[:port]/database`, `postgresql://` too.
///
/// Query parameters, as libpq reads them: `sslmode` (`disable`, the default on loopback;
/// `prefer`, the default elsewhere; `require`), and `host=/path` for a Unix socket directory
/// (the host part is then left empty: `postgres://user@/db?host=/var/run/postgresql`). The
/// user name, password and database are percent-decoded. A password in the URL is never
/// printed: `description` shows `***` in its place.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// The socket file inside this directory (`.s.PGSQL.<port>`), as libpq names it.
        case socket(directory: String, port: Int)
    }

    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var endpoint: Endpoint
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// Why a URL is refused: says what to write instead.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(endpoint: Endpoint, user: String, password: String? = nil, database: String, tls: TLSMode = .disable) {
        self.endpoint = endpoint; self.user = user; self.password = password; self.database = database; self.tls = tls
    }

    /// Reads `url`; throws `Invalid` naming the part that is wrong.
    public init(url: String) throws {
        let example = "postgres://user:password@host:5432/database"
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else {
            throw Invalid(description: "`\(Self.redacted(url))` is not a URL; write it as \(example).")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw Invalid(description: "the database URL must start with postgres:// (got \(scheme)://); write it as \(example).")
        }
        guard let user = parts.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw Invalid(description: "the database URL names no user; write it as \(example).")
        }
        let database = String(parts.percentEncodedPath.drop { $0 == "/" }).removingPercentEncoding ?? ""
        guard !database.isEmpty, !database.contains("/") else {
            throw Invalid(description: "the database URL names no database after the host; write it as \(example).")
        }
        var query: [String: String] = [:]
        for item in parts.queryItems ?? [] { query[item.name] = item.value ?? "" }
        if let unknown = query.keys.sorted().first(where: { $0 != "sslmode" && $0 != "host" }) {
            throw Invalid(description: "unknown parameter `\(unknown)` in the database URL; the parameters are sslmode and host.")
        }
        let port = parts.port ?? 5432
        let host = parts.percentEncodedHost.flatMap { $0.removingPercentEncoding } ?? ""
        if let directory = query["host"], directory.hasPrefix("/") {
            endpoint = .socket(directory: directory, port: port)
        } else if !host.isEmpty {
            endpoint = .tcp(host: host, port: port)
        } else {
            throw Invalid(description: "the database URL names no host; write it as \(example), or ?host=/socket/directory for a Unix socket.")
        }
        let loopback = ["localhost", "127.0.0.1", "::1"].contains(host)
        switch query["sslmode"] {
        case nil: tls = loopback || host.isEmpty ? .disable : .prefer
        case let mode?:
            guard let known = TLSMode(rawValue: mode) else {
                throw Invalid(description: "sslmode must be disable, prefer or require (got `\(mode)`).")
            }
            tls = known
        }
        self.user = user
        password = parts.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.database = database
    }

    /// The URL with its password replaced by `***`, for logs and errors.
    public var description: String {
        let credentials = user + (password == nil ? "" : ":***")
        switch endpoint {
        case .tcp(let host, let port):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "postgres://\(credentials)@\(shown):\(port)/\(database)?sslmode=\(tls.rawValue)"
        case .socket(let directory, let port):
            return "postgres://\(credentials)@:\(port)/\(database)?host=\(directory)"
        }
    }

    /// `url` with anything between `:` and `@` after the scheme hidden (for a URL too broken to read).
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let schemeEnd = url.range(of: "://") else { return url }
        let credentials = url[schemeEnd.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// The configuration of a single connection to this location (the derived work's, which
    /// holds a session lock), with the pool's session settings.
    var connectionConfiguration: PostgresConnection.Configuration {
        get throws {
            var configuration: PostgresConnection.Configuration
            switch endpoint {
            case .tcp(let host, let port):
                let tls: PostgresConnection.Configuration.TLS = switch self.tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
                configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
            case .socket(let directory, let port):
                configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
            }
            configuration.options.additionalStartupParameters = Self.sessionParameters
            return configuration
        }
    }

    /// What every session of the daemon sets at connection: its name in `pg_stat_activity`;
    /// `synchronous_commit` on (a 2xx means committed, whatever the server's default); UTC.
    static let sessionParameters = [("application_name", "linkpulse"), ("synchronous_commit", "on"), ("TimeZone", "UTC")]

    /// The client configuration this location describes.
    var clientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS = switch self.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        case .socket(let directory, let port):
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        configuration.options.additionalStartupParameters = Self.sessionParameters
        return configuration
    }
}
