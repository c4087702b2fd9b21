import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseServer
import LinkpulseStore
import NIOCore
import TestSupport
import Testing

@Suite struct IngestQueueTests {
    func work(_ count: Int) -> IngestWork {
        IngestWork(
            events: (0..<count).map {
                IngestEvent(id: "q\($0)", kind: .open, occurredAtMs: 0, receivedAtMs: 0, platform: .ios, visitorId: "v")
            },
            quarantine: [])
    }

    @Test func admissionCountsBodyBytesAndAlwaysTakesARequestAlone() {
        let queue = IngestQueue(capacity: 100, inFlightByteLimit: 1_000)
        #expect(queue.admit(bytes: 600))
        #expect(queue.admit(bytes: 400), "up to the limit")
        #expect(!queue.admit(bytes: 1), "past it")
        queue.leave(bytes: 600)
        #expect(queue.admit(bytes: 300))
        #expect(!queue.admit(bytes: 301))
        queue.leave(bytes: 400)
        queue.leave(bytes: 300)
        #expect(queue.admit(bytes: 5_000), "a request alone is taken, however large")
        #expect(!queue.admit(bytes: 1))
        queue.leave(bytes: 5_000)
        #expect(queue.admit(bytes: 1_000))
    }

    @Test func ingestPastTheInFlightBytesAnswers503WithoutParsing() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        // A limit no body fits beside another: with one request held in flight, a second is refused.
        let queue = IngestQueue(capacity: 50_000, inFlightByteLimit: 10)
        var deps = installation.dependencies()
        deps.parts.queue = queue
        #expect(queue.admit(bytes: 10), "a request already in flight")
        try await installation.application(deps).test(.router) { client in
            let refused = try await client.postEvents(#"{"id":"a1","type":"click","ref":"r"}"#)
            #expect(refused.status == .serviceUnavailable && refused.headers[.retryAfter] == "1")
            #expect(String(buffer: refused.body).contains(#""code":"overloaded""#))
            queue.leave(bytes: 10)
            let taken = try await client.postEvents(#"{"id":"a1","type":"click","ref":"r"}"#)
            #expect(taken.status == .accepted)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 1)
        #expect(try installation.count("SELECT count(*) FROM quarantine") == 0, "nothing of the refused request was kept")
    }

    @Test func refusesWhenFullAndDrainsWhenClosed() async throws {
        let queue = IngestQueue(capacity: 3)
        let first = Task { try await queue.submit(work(2)) }
        try await eventually(every: .milliseconds(1)) { queue.depth == 2 }
        await #expect(throws: IngestQueue.Failure.full) { try await queue.submit(work(2)) }

        let batch = try #require(await queue.take())
        #expect(batch.count == 1)
        batch[0].finish(.success([.stored(seq: 1), .duplicate]))
        #expect(try await first.value == [.stored(seq: 1), .duplicate])

        let late = Task { try await queue.submit(work(1)) }
        try await eventually(every: .milliseconds(1)) { queue.depth == 1 }
        queue.close()
        await #expect(throws: IngestQueue.Failure.closed) { try await queue.submit(work(1)) }
        // What was queued before closing is still handed out, then the writer is told to stop.
        let remaining = try #require(await queue.take())
        remaining[0].finish(.success([.duplicate]))
        #expect(try await late.value == [.duplicate])
        #expect(await queue.take() == nil)
    }

    @Test func aFullQueueAnswers503WithRetryAfter() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        // Hold the database's write lock from outside so the writer stalls on its first commit.
        let blocker = try DatabaseQueue(path: installation.directory.appending(path: AppDatabase.eventsFileName).path)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? blocker.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                held.signal()
                release.wait()
                try db.execute(sql: "ROLLBACK")
            }
        }
        held.wait()
        let deps = installation.dependencies(queueCapacity: 1)
        try await installation.application(deps).test(.router) { client in
            // s1 taken by the writer, which stalls on it; s2 then fills the queue.
            let stalled = Task { try await client.postEvents(#"{"id":"s1","type":"open"}"#).status }
            try #require(await eventually(every: .milliseconds(1)) { deps.parts.queue.handedOut == 1 })
            let queued = Task { try await client.postEvents(#"{"id":"s2","type":"open"}"#).status }
            try #require(await eventually(every: .milliseconds(1)) { deps.parts.queue.depth == 1 })
            let refused = try await client.postEvents(#"{"id":"s3","type":"open"}"#)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(refused.headers[.accessControlAllowOrigin] == "*")
            #expect(try refused.decode(ErrorAnswer.self).error.code == "overloaded")

            release.signal()
            #expect(try await stalled.value == .accepted)
            #expect(try await queued.value == .accepted)
        }
        try blocker.close()
        #expect(try installation.count("SELECT count(*) FROM events") == 2)
        #expect(try installation.count("SELECT count(*) FROM events WHERE event_id = 's3'") == 0)
    }

    @Test func concurrentCopiesOfOneEventAreStoredOnce() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        try await installation.application().test(.router) { client in
            let answers = try await withThrowingTaskGroup(of: IngestAnswer.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await client.postEvents(#"{"id":"same","type":"install"}"#).decode(IngestAnswer.self) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.accepted).reduce(0, +) == 1)
            #expect(answers.map(\.duplicates).reduce(0, +) == 49)
        }
        #expect(try installation.count("SELECT count(*) FROM events") == 1)
    }

    @Test func noRawAddressIsWrittenAnywhere() async throws {
        let installation = try TestInstallation(durability: .full)
        defer { installation.remove() }
        let app = installation.application(settings: ServerSettings(port: 0, trustProxy: true))
        try await app.test(.router) { client in
            _ = try await client.postEvents(
                #"[{"type":"click","ref":"r","ip":"203.0.113.77"},{"type":"bogus","ip":"203.0.113.78"}]"#,
                headers: [.init("X-Forwarded-For")!: "198.51.100.79"])
            _ = try await client.postEvents("not json 198.51.100.79", headers: [.init("X-Forwarded-For")!: "198.51.100.79"])
        }
        try installation.database.close()
        // Every byte on disk: database, WAL, id index, secrets.
        let files = try FileManager.default.contentsOfDirectory(atPath: installation.directory.path)
        #expect(files.contains { $0.hasSuffix("-wal") } || files.contains(AppDatabase.eventsFileName))
        for file in files {
            let bytes = try Data(contentsOf: installation.directory.appending(path: file))
            for address in ["203.0.113.77", "203.0.113.78", "198.51.100.79"] {
                #expect(bytes.range(of: Data(address.utf8)) == nil, "\(address) found in \(file)")
            }
        }
    }
}
