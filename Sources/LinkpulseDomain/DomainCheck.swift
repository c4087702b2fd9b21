import Foundation

/// One association file as a link domain answered it to an outside fetch (no redirect followed).
public struct FetchedFile: Sendable, Equatable {
    public var path: String
    public var status: Int
    public var contentType: String?
    /// The `Location` of a redirect.
    public var location: String?
    public var body: [UInt8]

    public init(path: String, status: Int, contentType: String?, location: String?, body: [UInt8]) {
        self.path = path
        self.status = status
        self.contentType = contentType
        self.location = location
        self.body = body
    }
}

/// What `linkpulse links check-domain` says of one file: fine, or a problem that keeps apps from
/// opening the domain's links, with what to do.
public struct DomainFinding: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var problem: Bool
    public var message: String

    public init(path: String, problem: Bool, message: String) {
        self.path = path
        self.problem = problem
        self.message = message
    }

    public var description: String { "\(problem ? "problem" : "ok     ") \(path): \(message)" }
}

/// The checks of a link domain's setup as Apple's and Google's verifiers see it: the
/// association files reachable without a redirect, as JSON, small enough, naming every app of
/// the configuration with its ids and certificates.
public enum DomainCheck {
    public static let applePaths = ["/.well-known/apple-app-site-association", "/apple-app-site-association"]
    public static let androidPath = "/.well-known/assetlinks.json"
    /// Every file a check fetches.
    public static var paths: [String] { applePaths + [androidPath] }
    /// The largest `apple-app-site-association` Apple accepts (uncompressed).
    public static let appleLargestFile = 128 * 1024

    /// The findings for `domain`'s fetched files against `config`.
    public static func findings(domain: String, config: LinksConfig, files: [FetchedFile]) -> [DomainFinding] {
        var findings: [DomainFinding] = []
        if config.role(ofHost: domain) == nil {
            findings.append(DomainFinding(
                path: "/", problem: true,
                message: "\(domain) is not one of the configuration's domains (\(config.domains.joined(separator: ", "))): the daemon serves no link there."))
        }
        for file in files {
            findings.append(contentsOf: check(file, config: config))
        }
        return findings
    }

    static func check(_ file: FetchedFile, config: LinksConfig) -> [DomainFinding] {
        func problem(_ message: String) -> [DomainFinding] { [DomainFinding(path: file.path, problem: true, message: message)] }
        if (300..<400).contains(file.status) {
            return problem("answers \(file.status) to \(file.location ?? "somewhere else"): Apple and Google fetch it without following redirects. Serve it from the daemon on this domain.")
        }
        guard file.status == 200 else {
            return problem("answers \(file.status), not 200: the verifiers find no file. Check that the proxy sends this path to the daemon.")
        }
        let type = file.contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/json" else {
            return problem("is served as \(file.contentType ?? "no Content-Type"), not application/json.")
        }
        let parsed = try? JSONSerialization.jsonObject(with: Data(file.body))
        if applePaths.contains(file.path) {
            if file.body.count > appleLargestFile {
                return problem("is \(file.body.count) bytes; Apple reads at most \(appleLargestFile).")
            }
            guard let object = parsed as? [String: Any], let details = (object["applinks"] as? [String: Any])?["details"] as? [[String: Any]] else {
                return problem("is not an association file (no applinks.details).")
            }
            let listed = Set(details.flatMap { detail in (detail["appIDs"] as? [String] ?? []) + [detail["appID"] as? String].compactMap { $0 } })
            let wanted = config.apps.flatMap { $0.ios?.appIds ?? [] }
            let missing = wanted.filter { !listed.contains($0) }
            if !missing.isEmpty { return problem("lacks the app ids \(missing.joined(separator: ", ")) of the configuration.") }
            return [DomainFinding(path: file.path, problem: false, message: "\(file.body.count) bytes, lists \(wanted.isEmpty ? "no iOS app (none configured)" : wanted.joined(separator: ", ")).")]
        }
        guard let statements = parsed as? [[String: Any]] else {
            return problem("is not a list of Digital Asset Links statements.")
        }
        var found: [String] = []
        for app in config.apps {
            guard let android = app.android else { continue }
            let statement = statements.first { statement in
                let target = statement["target"] as? [String: Any]
                return target?["package_name"] as? String == android.package
                    && (statement["relation"] as? [String] ?? []).contains("delegate_permission/common.handle_all_urls")
            }
            guard let statement else {
                return problem("has no handle_all_urls statement for \(android.package).")
            }
            let served = Set(((statement["target"] as? [String: Any])?["sha256_cert_fingerprints"] as? [String] ?? []).map { $0.uppercased() })
            let missing = android.sha256CertFingerprints.filter { !served.contains($0.uppercased()) }
            if !missing.isEmpty { return problem("lacks the certificate fingerprints \(missing.joined(separator: ", ")) of \(android.package).") }
            found.append(android.package)
        }
        return [DomainFinding(path: file.path, problem: false, message: "lists \(found.isEmpty ? "no Android app (none configured)" : found.joined(separator: ", ")).")]
    }
}
