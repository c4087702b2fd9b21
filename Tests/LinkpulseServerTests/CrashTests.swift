import AsyncHTTPClient
import Foundation
import LinkpulseDomain
import GRDB
import LinkpulseStore
import NIOCore
import Synchronization
import TestSupport
import Testing

/// How many requests the load generators have seen acknowledged so far.
final class AckCount: Sendable {
    let value = Atomic<Int>(0)
}

/// What the load generators know: ids they sent at least once, and ids the server acknowledged.
final class Ledger: Sendable {
    private let state = Mutex((sent: Set<String>(), acked: Set<String>()))
    func sent(_ ids: [String]) { state.withLock { $0.sent.formUnion(ids) } }
    func acked(_ ids: [String]) { state.withLock { $0.acked.formUnion(ids) } }
    var sent: Set<String> { state.withLock { $0.sent } }
    var acked: Set<String> { state.withLock { $0.acked } }
}

/// The address of the daemon currently running (it changes at every restart).
final class CurrentServer: Sendable {
    private let url = Mutex<String?>(nil)
    var baseURL: String? {
        get { url.withLock { $0 } }
        set { url.withLock { $0 = newValue } }
    }
}

@Suite(.serialized) struct CrashTests {
    static let ingestKey = "lpi_crash_test_key"

    /// Posts batches of fresh events, retrying each batch (same ids) until it is acknowledged,
    /// as a mobile client does. Stops taking new batches once `stop` is set.
    static func client(
        number: Int, http: HTTPClient, server: CurrentServer, ledger: Ledger, stop: Locked<Bool>
    ) async {
        var batchNumber = 0
        while !stop.withLock({ $0 }) {
            batchNumber += 1
            let size = batchNumber % 3 == 0 ? 1 : 20
            let ids = (0..<size).map { _ in UUID().uuidString.lowercased() }
            let body = "[" + ids.map { #"{"id":"\#($0)","type":"click","ref":"crash-\#(number)"}"# }.joined(separator: ",") + "]"
            ledger.sent(ids)
            // Retried until acknowledged, through every kill and restart.
            _ = try? await eventually(within: .seconds(120), every: .milliseconds(10)) {
                // Some retries resend the same events inside a bigger request.
                guard let base = server.baseURL else { return false }
                var request = HTTPClientRequest(url: base + "/v1/events")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(ingestKey)")
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
                guard let response = try? await http.execute(request, timeout: .seconds(5)),
                      (try? await response.body.collect(upTo: 1 << 20)) != nil, response.status == .accepted
                else { return false }
                ledger.acked(ids)
                return true
            }
        }
    }

    @Test func acknowledgedEventsSurviveKill9ExactlyOnce() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["LINKPULSE_INGEST_KEY": Self.ingestKey, "LINKPULSE_LOG_LEVEL": "notice"]

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let ledger = Ledger()
        let server = CurrentServer()
        let stop = Locked(false)
        var daemon = try DaemonProcess(dataDirectory: data, environment: environment)
        server.baseURL = daemon.baseURL

        let clients = Task {
            await withTaskGroup(of: Void.self) { group in
                for number in 0..<8 {
                    group.addTask { await Self.client(number: number, http: http, server: server, ledger: ledger, stop: stop) }
                }
            }
        }

        // Each kill lands once the clients have had a few hundred events acknowledged since the
        // last start, a number drawn at random: a point in the stream, whatever the machine's speed.
        func acknowledged(atLeast more: Int) async throws {
            let target = ledger.acked.count + more
            try #require(await eventually(within: .seconds(120), every: .milliseconds(5)) { ledger.acked.count >= target }, "the load stalled")
        }
        var kills = 0
        for _ in 0..<6 {
            try await acknowledged(atLeast: Int.random(in: 200...600))
            server.baseURL = nil
            daemon.kill9()
            kills += 1
            daemon = try DaemonProcess(dataDirectory: data, environment: environment)
            server.baseURL = daemon.baseURL
        }
        try await acknowledged(atLeast: 200)
        // No new batches; in-flight ones retry until acknowledged. Then a graceful stop.
        stop.withLock { $0 = true }
        await clients.value
        let status = daemon.terminate()
        try await http.shutdown()
        #expect(kills >= 5)
        #expect(status == 0, "exit status after SIGTERM; log:\n\(daemon.log)")

        let sent = ledger.sent
        let acked = ledger.acked
        #expect(acked.count > 500, "too little load to mean anything: \(acked.count) acknowledged")
        #expect(acked == sent, "every batch was retried until acknowledged")

        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let db = try DatabaseQueue(path: data.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        let stored = try await db.read { db in try String.fetchAll(db, sql: "SELECT event_id FROM events") }
        let storedSet = Set(stored)
        #expect(stored.count == storedSet.count, "\(stored.count - storedSet.count) events stored twice")
        #expect(acked.subtracting(storedSet).isEmpty, "\(acked.subtracting(storedSet).count) acknowledged events lost")
        #expect(storedSet.subtracting(sent).isEmpty, "events stored that nobody sent")
        try db.close()
    }

    @Test func sigtermFinishesInFlightRequestsAndExitsZero() async throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "linkpulse-term-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let key = try LiveHTTP.createKey(.ingest, in: data)
        let daemon = try DaemonProcess(data: data)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        // Eight clients post one event after another; SIGTERM lands while requests are in flight,
        // once the daemon has acknowledged some (a loaded machine may take a while to get there).
        let firstAcks = AckCount()
        let acked = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<8 {
                group.addTask {
                    var count = 0
                    for n in 0..<100_000 {
                        var request = HTTPClientRequest(url: daemon.baseURL + "/v1/events?key=\(key)")
                        request.method = .POST
                        request.body = .bytes(ByteBuffer(string: #"{"id":"term-\#(client)-\#(n)","type":"open"}"#))
                        // Once the server stops accepting, requests fail: those are not acknowledged.
                        guard let response = try? await http.execute(request, timeout: .seconds(2)),
                              response.status == .accepted
                        else { return count }
                        count += 1
                        firstAcks.value.add(1, ordering: .relaxed)
                    }
                    return count
                }
            }
            try await eventually(within: .seconds(30), every: .milliseconds(5)) { firstAcks.value.load(ordering: .relaxed) >= 100 }
            #expect(daemon.terminate() == 0)
            return try await group.reduce(0, +)
        }
        #expect(acked > 0)
        try await http.shutdown()
        #expect(daemon.log.contains("ingest writer drained"))
        var config = Configuration()
        config.readonly = true
        config.prepareDatabase { db in try AppDatabase.prepareEventsReader(db) }
        let db = try DatabaseQueue(path: data.appending(path: AppDatabase.eventsFileName).path, configuration: config)
        #expect(try await db.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") } == acked)
        try db.close()
    }
}

extension DaemonProcess {
    convenience init(data: URL) throws {
        try self.init(dataDirectory: data, environment: ["LINKPULSE_LOG_LEVEL": "info"])
    }
}
