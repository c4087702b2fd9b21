import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import TestSupport
import Testing

/// `POST /v1/resolve` end to end through the real router: a click, then the app's first launch,
/// by each path a click can reach it; retries; the stats count what the app was told.
@Suite struct ResolveHTTPTests {
    typealias Scenario = AttributionScenarioTests
    static let minute = Scenario.minute
    static let hour = Scenario.hour

    struct Reply {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var json: [String: Any]
        var text: String
    }

    /// One resolve as an app sends it (a `503 attribution_pending` is retried after its
    /// `Retry-After`, as the contract tells apps to).
    static func resolve(_ body: [String: Any], _ client: some TestClientProtocol, key: String = TestInstallation.ingestKey) async throws -> Reply {
        let bytes = try JSONSerialization.data(withJSONObject: body)
        let response = try await client.retryingAttributionPending {
            try await client.execute(
                uri: "/v1/resolve", method: .post,
                headers: [.authorization: "Bearer \(key)", .contentType: "application/json"],
                body: ByteBuffer(bytes: bytes))
        }
        let text = String(buffer: response.body)
        return Reply(
            status: response.status, headers: response.headers,
            json: (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:], text: text)
    }

    /// An install as the app sends it on first launch (the address as a server-side sender would).
    static func install(_ id: String, at offset: Int64, ip: String = "198.51.100.77", platform: String = "android", _ extra: [String: Any] = [:]) -> [String: Any] {
        Scenario.event(id, "install", at: offset, ip: ip, platform: platform, extra)
    }

    /// The daemon lists attribution's recent clicks when it starts, not in the first round an
    /// app's resolve waits for: with nothing stored or sent, they are listed all the same.
    @Test func theDaemonListsRecentClicksWhenItStarts() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let attribution = installation.database.attribution
        #expect(!attribution.hasListedRecentClicks, "nothing lists them before the daemon is built")
        let app = installation.application()
        try await eventually(within: .seconds(60)) { attribution.hasListedRecentClicks }
        #expect(attribution.hasListedRecentClicks, "the daemon did not list them at start")
        _ = app
    }

    @Test(arguments: StoreBackend.allCases)
    func eachPathToTheFirstLaunchIsAnsweredAsTheStatsCountIt(on backend: StoreBackend) async throws {
        try await backend.test("resolve_paths") { client, _ in
            try await Scenario.send([
                Scenario.event("c-referrer", "click", at: 0, platform: "android", [
                    "ref": "shoes", "campaign": "spring", "source": "newsletter", "url": "https://go.example/shoes?deep_link_value=from-url&deep_link_sub2=b%20c",
                    "properties": ["deep_link_value": "shoe-123", "deep_link_sub1": 7],
                ]),
                Scenario.event("c-paste", "click", at: 0, ip: "198.51.100.2", ["ref": "hats", "campaign": "fall", "url": "https://go.example/hats"]),
                Scenario.event("c-fp", "click", at: 0, ip: "198.51.100.9", platform: "ios", ["ref": "bags", "campaign": "summer", "os_version": "17.1"]),
            ], client)

            // Android: the click id came back through the Play Install Referrer.
            let referrer = try await Self.resolve(Self.install("i-referrer", at: 20 * Self.minute, [
                "install_referrer": "lp_click=c-referrer&utm_source=google-play&utm_medium=store", "device_id": "dev-a",
            ]), client)
            #expect(referrer.status == .ok, "\(referrer.text)")
            #expect(referrer.json["matched"] as? Bool == true && referrer.json["certain"] as? Bool == true)
            #expect(referrer.json["match_type"] as? String == "install_referrer")
            // The referrer's utm values count as sent by the install; the click fills the rest.
            #expect(referrer.json["ref"] as? String == "shoes" && referrer.json["campaign"] as? String == "spring")
            #expect(referrer.json["source"] as? String == "google-play" && referrer.json["medium"] as? String == "store")
            let click = referrer.json["click"] as? [String: Any] ?? [:]
            #expect(click["id"] as? String == "c-referrer")
            #expect(click["timestamp"] as? String == Timestamp.formatUTC(Scenario.t0))
            #expect(click["url"] as? String == "https://go.example/shoes?deep_link_value=from-url&deep_link_sub2=b%20c")
            // Properties win over the URL's parameters, which fill the rest (decoded).
            #expect(referrer.json["deep_link"] as? [String: String] == ["value": "shoe-123", "sub1": "7", "sub2": "b c"])
            #expect(referrer.json["candidates"] as? Int == 1 && referrer.json["first_session"] as? Bool == true)
            #expect(!referrer.text.contains("198.51.100") && !referrer.text.contains("ip_hash"))

            // The same id again: the same answer, nothing stored.
            let retry = try await Self.resolve(Self.install("i-referrer", at: 20 * Self.minute, [
                "install_referrer": "lp_click=c-referrer&utm_source=google-play&utm_medium=store", "device_id": "dev-a",
            ]), client)
            #expect(retry.status == .ok && retry.text == referrer.text)
            // The same device, a later launch under another id: not its first session any more.
            let again = try await Self.resolve(Scenario.event("o-again", "open", at: 3 * Self.hour, platform: "android", ["device_id": "dev-a"]), client)
            #expect(again.json["first_session"] as? Bool == false)
            #expect(again.json["matched"] as? Bool == false && again.json["match_type"] as? String == "organic")

            // iOS: the landing page's pasteboard.
            let pasted = try await Self.resolve(Self.install("i-paste", at: 5 * Self.minute, ip: "203.0.113.200", platform: "ios", [
                "click_id": "c-paste", "click_id_source": "pasteboard",
            ]), client)
            #expect(pasted.json["match_type"] as? String == "click_id" && pasted.json["certain"] as? Bool == true)
            #expect(pasted.json["ref"] as? String == "hats" && pasted.json["deep_link"] as? [String: String] == [:])

            // Nothing travelled: same address, platform and OS within the window — a guess.
            let guessed = try await Self.resolve(Self.install("i-fp", at: Self.hour, ip: "198.51.100.9", platform: "ios", ["os_version": "17.1.2"]), client)
            #expect(guessed.json["match_type"] as? String == "fingerprint")
            #expect(guessed.json["matched"] as? Bool == true && guessed.json["certain"] as? Bool == false)
            #expect(guessed.json["ref"] as? String == "bags" && guessed.json["candidates"] as? Int == 1)
            #expect((guessed.json["click"] as? [String: Any])?["id"] as? String == "c-fp")

            // Outside the window (two hours by default): organic, not matched.
            let late = try await Self.resolve(Self.install("i-late", at: 2 * Self.hour + 1, ip: "198.51.100.9", platform: "ios"), client)
            #expect(late.json["matched"] as? Bool == false && late.json["match_type"] as? String == "organic")
            #expect(late.json["click"] is NSNull && late.json["ref"] is NSNull && late.json["candidates"] as? Int == 0)

            // The stats count each install under the match the app was told.
            _ = try await Scenario.rollUp(client)
            let metrics = try await Scenario.metrics(client, "")
            #expect(metrics["install_referrer"] == 1 && metrics["click_id"] == 1 && metrics["fingerprint"] == 1 && metrics["organic"] == 1)
            let shoes = try await Scenario.metrics(client, "ref=shoes")
            #expect(shoes["installs"] == 1 && shoes["install_referrer"] == 1)

            // The read API gives the same answer by event id.
            let read = try await client.execute(
                uri: "/v1/attributions/i-fp", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
            let readJSON = try JSONSerialization.jsonObject(with: Data(buffer: read.body)) as? [String: Any] ?? [:]
            let attribution = readJSON["attribution"] as? [String: Any] ?? [:]
            #expect(read.status == .ok && readJSON["type"] as? String == "install")
            #expect(attribution["match_type"] as? String == "fingerprint" && attribution["candidates"] as? Int == 1)
            #expect(readJSON["click_properties"] is NSNull)
            let byReferrer = try await client.execute(
                uri: "/v1/attributions/i-referrer", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
            let referrerJSON = try JSONSerialization.jsonObject(with: Data(buffer: byReferrer.body)) as? [String: Any] ?? [:]
            let properties = referrerJSON["click_properties"] as? [String: Any] ?? [:]
            #expect(properties.count == 2 && properties["deep_link_value"] as? String == "shoe-123")
            #expect((properties["deep_link_sub1"] as? NSNumber)?.intValue == 7)
            #expect((referrerJSON["attribution"] as? [String: Any])?["first_session"] as? Bool == true)
            let unknown = try await client.execute(
                uri: "/v1/attributions/nope", method: .get, headers: [.authorization: "Bearer \(TestInstallation.readKey)"], body: nil)
            #expect(unknown.status == .notFound)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func severalClicksThatFitAreCountedAndTheNewestWins(on backend: StoreBackend) async throws {
        try await backend.test("resolve_newest") { client, _ in
            try await Scenario.send([
                Scenario.event("c-old", "click", at: 0, ip: "198.51.100.30", ["ref": "first", "campaign": "a"]),
                Scenario.event("c-new", "click", at: 10 * Self.minute, ip: "198.51.100.30", ["ref": "second", "campaign": "b"]),
                Scenario.event("c-other-os", "click", at: 15 * Self.minute, ip: "198.51.100.30", ["ref": "third", "os_version": "16.0"]),
            ], client)
            let answer = try await Self.resolve(Self.install("i-two", at: 20 * Self.minute, ip: "198.51.100.30", platform: "ios", ["os_version": "17.1"]), client)
            #expect(answer.json["match_type"] as? String == "fingerprint" && answer.json["candidates"] as? Int == 2)
            #expect(answer.json["ref"] as? String == "second" && (answer.json["click"] as? [String: Any])?["id"] as? String == "c-new")
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aResolveBeforeItsClickIsOrganicAndStaysSo(on backend: StoreBackend) async throws {
        try await backend.test("resolve_race") { client, probe in
            // The click's own request lost the race: the install is stored first.
            let first = try await Self.resolve(Self.install("i-race", at: Self.minute, ["click_id": "c-race", "click_id_source": "app_link"]), client)
            #expect(first.status == .ok && first.json["match_type"] as? String == "organic")
            try await Scenario.send([Scenario.event("c-race", "click", at: 0, platform: "android", ["ref": "late"])], client)
            // Store order decides, once: a retry after the click arrived gets the same answer.
            let retry = try await Self.resolve(Self.install("i-race", at: Self.minute, ["click_id": "c-race", "click_id_source": "app_link"]), client)
            #expect(retry.text == first.text)
            // A click and a resolve naming it, at the same moment: whichever the writer stored
            // first decides, and the answer says so.
            async let clickSent: Void = Scenario.send([Scenario.event("c-race2", "click", at: 0, platform: "android", ["ref": "race"])], client)
            async let raced = Self.resolve(Self.install("i-race2", at: Self.minute, ["click_id": "c-race2", "click_id_source": "other"]), client)
            let (_, second) = try await (clickSent, raced)
            let clickSeq = try await #require(try await probe.answers.storedSeq(ofEventId: "c-race2"))
            let clickFirst = try await #require(try await probe.answers.storedSeq(ofEventId: "i-race2")) > clickSeq
            #expect(second.json["match_type"] as? String == (clickFirst ? "click_id" : "organic"))
            #expect(second.json["ref"] as? String? == (clickFirst ? "race" : nil))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func badRequestsAreRefusedAndKept(on backend: StoreBackend) async throws {
        try await backend.test("resolve_refused") { client, probe in
            let click = try await Self.resolve(Scenario.event("c-x", "click", at: 0, ["ref": "x"]), client)
            #expect(click.status == .badRequest)
            #expect((click.json["error"] as? [String: Any])?["field"] as? String == "type")
            let source = try await Self.resolve(Self.install("i-x", at: 0, ["click_id": "c", "click_id_source": "clipboard"]), client)
            #expect((source.json["error"] as? [String: Any])?["field"] as? String == "click_id_source")
            let lonely = try await Self.resolve(Self.install("i-y", at: 0, ["click_id_source": "pasteboard"]), client)
            #expect((lonely.json["error"] as? [String: Any])?["field"] as? String == "click_id")
            var anonymous = Self.install("i-none", at: 0)
            anonymous["id"] = nil
            let noId = try await Self.resolve(anonymous, client)
            #expect(noId.status == .badRequest && (noId.json["error"] as? [String: Any])?["field"] as? String == "id")
            let unauthorized = try await Self.resolve(Self.install("i-z", at: 0), client, key: "wrong")
            #expect(unauthorized.status == .unauthorized)
            let batch = try await client.execute(
                uri: "/v1/resolve", method: .post, headers: [.authorization: "Bearer \(TestInstallation.ingestKey)"],
                body: ByteBuffer(string: "[{\"type\":\"install\"}]"))
            #expect(batch.status == .badRequest)
            let batchError = (try JSONSerialization.jsonObject(with: Data(buffer: batch.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect(batchError?["code"] as? String == "not_an_object" && batchError?["field"] is NSNull)
            // A bot is stored as one and never matched.
            let bot = try await Self.resolve(Self.install("i-bot", at: 0, ["user_agent": "curl/8.5.0", "click_id": "c-x"]), client)
            #expect(bot.status == .ok && bot.json["matched"] as? Bool == false)
            #expect(try probe.count(sqlite: "SELECT count(*) FROM quarantine", postgres: "SELECT count(*) FROM lp_quarantine") == 5)
            #expect(try probe.count(sqlite: "SELECT count(*) FROM events WHERE resolve = 1", postgres: "SELECT count(*) FROM lp_events WHERE resolve") == 1)
        }
    }

    @Test func eachAddressHasItsOwnBucket() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let settings = ServerSettings(port: 0, trustProxy: true, rollupInterval: .seconds(3600), resolveRate: 0.01, resolveBurst: 2)
        try await installation.application(settings: settings).test(.router) { client in
            func call(_ id: String, from address: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/resolve", method: .post,
                    headers: [.authorization: "Bearer \(TestInstallation.ingestKey)", .init("X-Forwarded-For")!: address],
                    body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: Self.install(id, at: 0))))
            }
            #expect(try await call("r1", from: "192.0.2.1").status == .ok)
            #expect(try await call("r2", from: "192.0.2.1").status == .ok)
            let limited = try await call("r3", from: "192.0.2.1")
            #expect(limited.status == .tooManyRequests && Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try await call("r4", from: "192.0.2.2").status == .ok)
        }
    }
}
