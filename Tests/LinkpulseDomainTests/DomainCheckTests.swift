import Foundation
import LinkpulseDomain
import Testing

/// What `linkpulse links check-domain` says of a link domain's association files, from the
/// answers alone: a redirect, a wrong type, a file too large, an app id or a certificate missing.
@Suite struct DomainCheckTests {
    static let config = HostedLinkTests.config
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
    static let apple = #"{"applinks":{"apps":[],"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/*"}]}]}}"#
    static let android = #"[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.shop","sha256_cert_fingerprints":["\#(fingerprint)"]}}]"#

    static func file(_ path: String, _ body: String, status: Int = 200, type: String? = "application/json", location: String? = nil) -> FetchedFile {
        FetchedFile(path: path, status: status, contentType: type, location: location, body: Array(body.utf8))
    }

    static var goodFiles: [FetchedFile] {
        DomainCheck.applePaths.map { file($0, apple) } + [file(DomainCheck.androidPath, android)]
    }

    static func problems(_ files: [FetchedFile], domain: String = "go.example.com") -> [String] {
        DomainCheck.findings(domain: domain, config: config, files: files).filter(\.problem).map(\.description)
    }

    @Test func aDomainServingItsFilesAsTheDaemonDoesHasNoProblem() {
        let findings = DomainCheck.findings(domain: "open.example.com", config: Self.config, files: Self.goodFiles)
        #expect(findings.count == 3 && findings.allSatisfy { !$0.problem }, "\(findings)")
        #expect(findings[0].message.contains("ABCDE12345.com.example.shop") && findings[2].message.contains("com.example.shop"))
    }

    @Test func eachWayAFileFailsIsNamedWithItsPath() {
        let aasa = DomainCheck.applePaths[0]
        let cases: [(FetchedFile, String)] = [
            (Self.file(aasa, "", status: 301, location: "https://www.example.com/x"), "without following redirects"),
            (Self.file(aasa, "nope", status: 404), "answers 404"),
            (Self.file(aasa, Self.apple, type: "text/html"), "not application/json"),
            (Self.file(aasa, Self.apple + String(repeating: " ", count: DomainCheck.appleLargestFile)), "at most 131072"),
            (Self.file(aasa, #"{"webcredentials":{}}"#), "no applinks.details"),
            (Self.file(aasa, Self.apple.replacingOccurrences(of: "ABCDE12345", with: "ZZZZZ99999")), "lacks the app ids ABCDE12345.com.example.shop"),
            (Self.file(DomainCheck.androidPath, "{}"), "not a list"),
            (Self.file(DomainCheck.androidPath, "[]"), "no handle_all_urls statement for com.example.shop"),
            (Self.file(DomainCheck.androidPath, Self.android.replacingOccurrences(of: "14:6D", with: "15:6D")), "lacks the certificate fingerprints 14:6D"),
        ]
        for (bad, expected) in cases {
            let files = Self.goodFiles.map { $0.path == bad.path ? bad : $0 }
            let problems = Self.problems(files)
            #expect(problems.count == 1 && problems[0].contains(bad.path) && problems[0].contains(expected), "\(problems)")
        }
        // JSON with a charset is JSON; fingerprints compare in any case.
        var typed = Self.goodFiles
        typed[0].contentType = "application/json; charset=utf-8"
        typed[2] = Self.file(DomainCheck.androidPath, Self.android.lowercased())
        #expect(Self.problems(typed).isEmpty)
    }

    @Test func aHostThatIsNotALinkDomainIsAProblem() {
        let problems = Self.problems(Self.goodFiles, domain: "www.example.com")
        #expect(problems.count == 1 && problems[0].contains("not one of the configuration's domains (go.example.com, open.example.com)"))
    }
}
