import AsyncHTTPClient
import Foundation
import LinkpulseDomain
import TestSupport
import Testing

/// `linkpulse keys` beside the real daemon on SQLite, and an installation of an older version
/// upgraded in place: its keys kept in clear keep working, and no secret stays in clear under
/// the data directory or reaches the log.
@Suite struct AccessKeyCommandTests {
    /// Waits until `GET /v1/key` with `key` answers `status` (fails past 60 s: a bound on
    /// progress; the daemon takes a change at its next refresh, every second, which
    /// `AccessKeyRefreshTests` checks and `ops/bench/keys.sh` measures).
    static func waitUntil(_ http: HTTPClient, _ base: String, key: String, answers status: Int) async throws {
        try #require(
            await eventually(within: .seconds(60)) { try await LiveHTTP.send(http, base + "/v1/key", method: .GET, key: key).status == status },
            "GET /v1/key did not answer \(status)")
    }

    @Test func keysMadeBesideARunningDaemonTakeEffectAndNoSecretIsKeptInClear() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        // The secrets file of an older version: its generated keys in clear beside the hashing secret.
        let (oldIngest, oldRead) = ("lpi_" + String(repeating: "1f", count: 16), "lpr_" + String(repeating: "2e", count: 16))
        let old = #"{"hash_secret":"\#(String(repeating: "c3", count: 32))","ingest_key":"\#(oldIngest)","read_key":"\#(oldRead)"}"#
        try Data(old.utf8).write(to: data.appending(path: "secrets.json"))

        let http = HTTPClient.shared
        let daemon = try DaemonProcess(data: data)
        defer { daemon.kill9() }  // a failed expectation must not leave it running
        let base = daemon.baseURL
        // The old keys keep working, as keys of their kind; the file no longer holds them.
        let batch = LiveHTTP.batch(prefix: "old", count: 5)
        #expect(try await LiveHTTP.send(http, base + "/v1/events", key: oldIngest, body: batch.body).status == 202)
        #expect(try await LiveHTTP.send(http, base + "/v1/stats/summary", method: .GET, key: oldRead).status == 200)
        #expect(try await LiveHTTP.send(http, base + "/v1/stats/summary", method: .GET, key: oldIngest).status == 403)
        let secrets = try String(contentsOf: data.appending(path: "secrets.json"), encoding: .utf8)
        #expect(!secrets.contains(oldIngest) && !secrets.contains(oldRead) && secrets.contains("hash_secret"), "\(secrets)")

        // A key made beside the running daemon is accepted at its first request (the daemon looks
        // for a key it does not know); one revoked is refused from the daemon's next refresh.
        let admin = try LiveHTTP.createKey(.admin, in: data, name: "ops")
        #expect(try await LiveHTTP.send(http, base + "/v1/key", method: .GET, key: admin).status == 200, "at its first request")
        let listing = try LiveHTTP.command(["keys", "list", "--data-dir", data.path])
        #expect(listing.status == 0, "\(listing.output)")
        let rows = listing.output.split(separator: "\n").filter { $0.hasPrefix("key_") }
        #expect(rows.count == 3, "\(listing.output)")
        #expect(rows.contains { $0.contains(" admin ") && $0.contains("ops") })
        let oldReadRow = try #require(rows.first { $0.contains(" read ") && $0.contains("read key of before") })
        let oldReadId = String(oldReadRow.prefix { $0 != " " })
        let revoke = try LiveHTTP.command(["keys", "revoke", oldReadId, "--data-dir", data.path])
        #expect(revoke.status == 0 && revoke.output.contains("revoked \(oldReadId)"), "\(revoke.output)")
        try await Self.waitUntil(http, base, key: oldRead, answers: 401)
        #expect(try await LiveHTTP.send(http, base + "/v1/stats/summary", method: .GET, key: admin).status == 200, "admin may read")
        #expect(try LiveHTTP.command(["keys", "revoke", "key_nope", "--data-dir", data.path]).status != 0)

        // The daemon writes when a key was last used (its own timer, a second at most later).
        func opsRow() throws -> Substring? {
            try LiveHTTP.command(["keys", "list", "--data-dir", data.path]).output.split(separator: "\n").first { $0.contains("ops") }
        }
        try await eventually(within: .seconds(10), every: .milliseconds(100)) { try opsRow()?.filter({ $0 == "Z" }).count == 2 }
        let row = try #require(try opsRow())
        #expect(row.filter { $0 == "Z" }.count == 2 && row.hasSuffix("-"), "created and last used, not revoked: \(row)")
        #expect(daemon.terminate() == 0)

        // No secret in clear under the data directory (databases, their WALs, the secrets file)
        // nor in the daemon's log.
        let log = DaemonProcess.read(daemon.logFile)
        let files = FileManager.default.enumerator(at: data, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        #expect(files.count > 3)
        for secret in [oldIngest, oldRead, admin] {
            #expect(!log.contains(secret), "a key in the log")
            for file in files {
                guard let bytes = FileManager.default.contents(atPath: file.path) else { continue }
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "a key in clear in \(file.lastPathComponent)")
            }
        }
    }
}
