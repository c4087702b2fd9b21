import Foundation
import TestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LinkpulseDomain
import LinkpulseStore
import NIOCore
import Testing

@testable import LinkpulseServer

/// Scheduled exports driven by a fake clock: each period exported once, catch-up after downtime,
/// retention, failures retried, files served safely.
@Suite struct ExportSchedulerTests {
    static func ms(_ text: String) -> Int64 { Timestamp.parseRFC3339(text)! }

    static let config = """
        {"jobs": [
          {"name": "daily-by-ref", "period": "daily", "at": "00:10", "timezone": "UTC", "query": {"by": "ref"}, "gzip": true, "keep": 30},
          {"name": "hourly-events", "period": "hourly", "at": ":05", "timezone": "UTC", "events": true, "gzip": false, "keep": 3}
        ]}
        """

    struct Setup {
        let installation: TestInstallation
        let clock: MutexBox<Int64>
        let settings: ServerSettings
        let deps: AppDependencies

        init(exportDirectory: URL? = nil) throws {
            installation = try TestInstallation()
            let clock = MutexBox(ExportSchedulerTests.ms("2026-11-20T09:00:00Z"))
            self.clock = clock
            // The application's own export timer never ticks during a test (a tick racing the
            // test's scheduler wrote a period of the catch-up itself, once, under load): the
            // tests run the scheduler by hand.
            settings = ServerSettings(
                port: 0, exportDirectory: exportDirectory ?? installation.directory.appending(path: "exports"),
                exportJobs: try ExportConfig.parse(Data(ExportSchedulerTests.config.utf8), defaultZone: "UTC").jobs,
                exportCheckInterval: .seconds(3600))
            deps = installation.dependencies(now: { clock.value })
        }

        func scheduler(directory: URL? = nil) -> ExportScheduler {
            var settings = self.settings
            if let directory { settings.exportDirectory = directory }
            return exportScheduler(backend: SQLiteBackend(deps, settings: settings), settings: settings)
        }

        func file(_ name: String) -> URL { settings.exportDirectory.appending(path: name) }
    }

    /// Clicks every 20 minutes from Nov 18 to Nov 22, stored but not rolled up.
    static func sendClicks(_ client: some TestClientProtocol) async throws -> [Int64] {
        let start = ms("2026-11-18T00:00:00Z")
        let times = (0..<(4 * 72)).map { start + Int64($0) * 20 * 60_000 }
        let events: [[String: Any]] = times.enumerated().map { index, t in
            ["id": "s-\(index)", "type": "click", "timestamp": t, "platform": "ios", "ip": "198.51.100.\(index % 50)",
             "ref": "r\(index % 4)", "user_agent": SentEvent.personAgent]
        }
        try await AttributionScenarioTests.send(events, client)
        return times
    }

    @Test func eachPeriodIsExportedOnceAndMissedOnesCatchUp() async throws {
        let setup = try Setup()
        defer { setup.installation.remove() }
        try await buildApplication(backend: SQLiteBackend(setup.deps, settings: setup.settings), settings: setup.settings).test(.router) { client in
            let times = try await Self.sendClicks(client)
            // Nov 20 09:00: a new job starts with the latest due day and hour only (the 08:00 hour
            // is due at 09:05).
            let first = await setup.scheduler().runDue()
            #expect(first.failed.isEmpty)
            #expect(Set(first.written.map(\.name)) == ["daily-by-ref_2026-11-19.csv.gz", "hourly-events_2026-11-20T07.csv"])
            // Rollups were brought up to date first: the day's file counts every click of Nov 19.
            let day = try #require(first.written.first { $0.job == "daily-by-ref" })
            let dayText = String(decoding: try Zlib.inflate(Array(try Data(contentsOf: setup.file(day.name))), limit: 1 << 20), as: UTF8.self)
            let dayRows = try parseCSV(dayText).rows
            #expect(dayRows.count == 4)
            #expect(dayRows.map { Int($0[1]) ?? 0 }.reduce(0, +) == 72)
            let api = try await ExportHTTPTests.get(client, "/v1/export.csv?by=ref&from=2026-11-19&to=2026-11-19&tz=UTC")
            #expect(String(buffer: api.body) == dayText)
            let hour = try #require(first.written.first { $0.job == "hourly-events" })
            #expect(hour.rows == 3)
            #expect(try parseCSV(String(contentsOf: setup.file(hour.name), encoding: .utf8)).rows.count == 3)

            // Again at the same time, and after a restart (a new scheduler): nothing to do.
            #expect(await setup.scheduler().runDue().written.isEmpty)
            setup.clock.value = Self.ms("2026-11-21T00:09:59Z")
            #expect(await setup.scheduler().runDue(only: "daily-by-ref").written.isEmpty)

            // Down until Nov 22 09:30: Nov 20 and 21 once each; of 49 missed hours only the
            // newest 3 (what the job keeps); the older hour file falls to retention.
            setup.clock.value = Self.ms("2026-11-22T09:30:00Z")
            let catchUp = await setup.scheduler().runDue()
            #expect(catchUp.written.filter { $0.job == "daily-by-ref" }.map(\.periodLabel) == ["2026-11-20", "2026-11-21"])
            #expect(catchUp.written.filter { $0.job == "hourly-events" }.map(\.periodLabel) == ["2026-11-22T06", "2026-11-22T07", "2026-11-22T08"])
            #expect(catchUp.skipped == 46)
            #expect(!FileManager.default.fileExists(atPath: setup.file("hourly-events_2026-11-20T07.csv").path))
            #expect(await setup.scheduler().runDue().written.isEmpty)
            let hourly = try parseCSV(String(contentsOf: setup.file("hourly-events_2026-11-22T07.csv"), encoding: .utf8)).rows
            #expect(hourly.count == times.filter { $0 >= Self.ms("2026-11-22T07:00:00Z") && $0 < Self.ms("2026-11-22T08:00:00Z") }.count)

            // The listing and downloads.
            let listing = try await StatsOracleTests.get(client, "/v1/exports")
            let files = listing["exports"] as? [[String: Any]] ?? []
            #expect(files.count == 6)
            for file in files {
                let name = file["name"] as? String ?? ""
                let bytes = try Data(contentsOf: setup.file(name))
                #expect(file["size"] as? Int == bytes.count)
                let download = try await ExportHTTPTests.get(client, "/v1/exports/\(name)")
                #expect(download.status == .ok)
                #expect(Data(buffer: download.body) == bytes)
                #expect(download.headers[.contentDisposition] == "attachment; filename=\"\(name)\"")
            }
            let newest = try #require(files.first)
            #expect(newest["job"] as? String == "hourly-events" || newest["job"] as? String == "daily-by-ref")
            #expect(files.contains { $0["period"] as? String == "2026-11-21" && $0["period_start"] as? String == "2026-11-21T00:00:00+00:00" && $0["rows"] as? Int == 4 })
        }
    }

    @Test func pathTraversalAndUnknownFilesAreRefused() async throws {
        let setup = try Setup()
        defer { setup.installation.remove() }
        try await buildApplication(backend: SQLiteBackend(setup.deps, settings: setup.settings), settings: setup.settings).test(.router) { client in
            _ = try await Self.sendClicks(client)
            _ = await setup.scheduler().runDue()
            // A file in the export directory that no job wrote is not served either.
            try Data("secret".utf8).write(to: setup.file("planted.csv"))
            for name in ["..%2Flinkpulse.sqlite", "..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", ".partial-x", "a%00b.csv", "..", "secrets.json"] {
                let response = try await ExportHTTPTests.get(client, "/v1/exports/\(name)")
                #expect(response.status == .badRequest || response.status == .notFound, "\(name)")
                #expect(!String(buffer: response.body).contains("SQLite"), "\(name)")
            }
            #expect(try await ExportHTTPTests.get(client, "/v1/exports/planted.csv").status == .notFound)
            // A recorded file removed from disk is a 404 too, and drops out of the listing.
            let recorded = "daily-by-ref_2026-11-19.csv.gz"
            #expect(try await ExportHTTPTests.get(client, "/v1/exports/\(recorded)").status == .ok)
            try FileManager.default.removeItem(at: setup.file(recorded))
            #expect(try await ExportHTTPTests.get(client, "/v1/exports/\(recorded)").status == .notFound)
            let listing = try await StatsOracleTests.get(client, "/v1/exports")
            #expect((listing["exports"] as? [[String: Any]])?.contains { $0["name"] as? String == recorded } == false)
            #expect(try await ExportHTTPTests.get(client, "/v1/exports/..%2Flinkpulse.sqlite").status == .badRequest)
        }
    }

    @Test func aWriteFailureIsCountedAndRetriedAtTheNextTick() async throws {
        let setup = try Setup()
        defer { setup.installation.remove() }
        // An export directory that cannot be created (a regular file is in its way).
        let blocked = setup.installation.directory.appending(path: AppDatabase.eventsFileName).appending(path: "exports")
        try await buildApplication(backend: SQLiteBackend(setup.deps, settings: setup.settings), settings: setup.settings).test(.router) { client in
            _ = try await Self.sendClicks(client)
            let failed = await setup.scheduler(directory: blocked).runDue()
            #expect(failed.written.isEmpty)
            #expect(failed.failed.map(\.job).sorted() == ["daily-by-ref", "hourly-events"])
            #expect(try await setup.installation.database.exportLedger.lastExportedPeriod(job: "daily-by-ref") == nil)
            // Fixed by the next tick: the same periods are written then.
            let retried = await setup.scheduler().runDue()
            #expect(retried.failed.isEmpty)
            #expect(Set(retried.written.map(\.name)) == ["daily-by-ref_2026-11-19.csv.gz", "hourly-events_2026-11-20T07.csv"])
        }
    }

    @Test func theDaemonRunsDueJobsOnItsTimers() async throws {
        let setup = try Setup()
        defer { setup.installation.remove() }
        var settings = setup.settings
        settings.exportCheckInterval = .milliseconds(200)
        try await buildApplication(backend: SQLiteBackend(setup.deps, settings: settings), settings: settings).test(.live) { client in
            _ = try await Self.sendClicks(client)
            try await eventually(within: .seconds(20), every: .milliseconds(100)) {
                FileManager.default.fileExists(atPath: setup.file("daily-by-ref_2026-11-19.csv.gz").path)
                    && FileManager.default.fileExists(atPath: setup.file("hourly-events_2026-11-20T07.csv").path)
            }
            #expect(FileManager.default.fileExists(atPath: setup.file("daily-by-ref_2026-11-19.csv.gz").path))
            #expect(FileManager.default.fileExists(atPath: setup.file("hourly-events_2026-11-20T07.csv").path))
        }
    }
}

extension ExportSchedulerTests {
    /// The daemons' own export timers, with a fake clock: on SQLite one daemon, on PostgreSQL
    /// two daemons, each with an export directory of its own. Every period is written once, by
    /// one daemon (on PostgreSQL the one doing the derived work), whichever daemon is asked for
    /// the listing; after downtime the missed periods catch up, as on SQLite.
    @Test(arguments: StoreBackend.allCases)
    func eachPeriodIsWrittenOnceByOneDaemon(on backend: StoreBackend) async throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "linkpulse-exports-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directories = [root.appending(path: "daemon-0"), root.appending(path: "daemon-1")]
        // Nov 20 00:04, before the clicks: the jobs start with Nov 18 and the hour 22:00 of Nov 19,
        // whichever comes first of the clicks and the timers' first tick (they are not checked);
        // Nov 19 is due at 00:10. The clicks of Nov 19 are in the past already.
        let clock = MutexBox(Self.ms("2026-11-20T00:04:00Z"))
        let settings = ServerSettings(
            port: 0, rollupInterval: .seconds(3600), exportDirectory: directories[0],
            exportJobs: try ExportConfig.parse(Data(Self.config.utf8), defaultZone: "UTC").jobs,
            exportCheckInterval: .milliseconds(200), ingestPacing: .off)
        try await backend.test("scheduled_exports", settings: settings, now: { clock.value }, live: true, perDaemon: { settings, index in
            settings.exportDirectory = directories[index]
        }) { client, _ in
            /// The finished files in each daemon's directory.
            func written() -> [Set<String>] {
                directories.map { Set(((try? FileManager.default.contentsOfDirectory(atPath: $0.path)) ?? []).filter { !$0.hasPrefix(".partial-") }) }
            }
            /// Waits until the daemons have written `expected` in all, then watches a second more
            /// (five ticks of each daemon's jobs) for a file too many; the files of each directory.
            func waitFor(_ expected: Set<String>) async throws -> [Set<String>] {
                let all = { written().reduce(into: Set<String>(), { $0.formUnion($1) }) }
                try await eventually(within: .seconds(60), every: .milliseconds(100)) { all() == expected }
                try await eventually(within: .seconds(1), every: .milliseconds(100)) { all() != expected }
                return written()
            }
            let daily = { (days: ClosedRange<Int>) in Set(days.map { "daily-by-ref_2026-11-\($0).csv.gz" }) }
            let hourly = { (hours: [String]) in Set(hours.map { "hourly-events_2026-11-\($0).csv" }) }
            let times = try await Self.sendClicks(client)
            let first = try await waitFor(daily(18...18).union(hourly(["19T22"])))
            // One daemon writes; the other writes nothing.
            let writer = try #require(directories.indices.first { !first[$0].isEmpty })
            #expect(first[writer] == daily(18...18).union(hourly(["19T22"])))
            #expect(first.indices.allSatisfy { $0 == writer || first[$0].isEmpty })

            // Nov 20 09:00: Nov 19 once, the newest 3 of the 9 hours due, by the same daemon; the
            // older hour file falls to retention.
            clock.value = Self.ms("2026-11-20T09:00:00Z")
            let second = try await waitFor(daily(18...19).union(hourly(["20T05", "20T06", "20T07"])))
            #expect(second[writer] == daily(18...19).union(hourly(["20T05", "20T06", "20T07"])))
            #expect(second.indices.allSatisfy { $0 == writer || second[$0].isEmpty })
            // The stats were brought up to date first: the day's file counts every click of Nov 19.
            let day = directories[writer].appending(path: "daily-by-ref_2026-11-19.csv.gz")
            let dayText = String(decoding: try Zlib.inflate(Array(try Data(contentsOf: day)), limit: 1 << 20), as: UTF8.self)
            #expect(try parseCSV(dayText).rows.map { Int($0[1]) ?? 0 }.reduce(0, +) == 72)
            let api = try await ExportHTTPTests.get(client, "/v1/export.csv?by=ref&from=2026-11-19&to=2026-11-19&tz=UTC")
            #expect(String(buffer: api.body) == dayText)
            let hour = try parseCSV(String(contentsOf: directories[writer].appending(path: "hourly-events_2026-11-20T06.csv"), encoding: .utf8)).rows
            #expect(hour.count == 3 && hour.count == times.filter { $0 >= Self.ms("2026-11-20T06:00:00Z") && $0 < Self.ms("2026-11-20T07:00:00Z") }.count)

            // Down until Nov 22 09:30: Nov 20 and 21, the newest 3 hours.
            clock.value = Self.ms("2026-11-22T09:30:00Z")
            let third = try await waitFor(daily(18...21).union(hourly(["22T06", "22T07", "22T08"])))
            #expect(third[writer] == daily(18...21).union(hourly(["22T06", "22T07", "22T08"])))
            #expect(third.indices.allSatisfy { $0 == writer || third[$0].isEmpty })
            // A daemon lists the recorded files in its own directory: on PostgreSQL (requests
            // alternating) the writer lists seven, the other none (sharing the directory is the
            // operator's choice).
            var counts: [Int] = []
            for _ in 0..<2 {
                let listing = try await StatsOracleTests.get(client, "/v1/exports")
                counts.append((listing["exports"] as? [[String: Any]])?.count ?? -1)
            }
            #expect(counts.sorted() == (backend == .sqlite ? [7, 7] : [0, 7]))
        }
    }
}

/// The real `linkpulse export` killed with -9 while writing: the final name never holds a part.
@Suite(.serialized) struct ExportCrashTests {
    @Test func aKilledExportLeavesNoPartialFileUnderTheFinalName() async throws {
        let installation = try TestInstallation()
        defer { installation.remove() }
        let outcome = try await installation.storeGeneratedTraffic(events: 60_000, days: 2, refs: 100, campaigns: 5, seed: 5)
        _ = try await onThreadOfItsOwn { [database = installation.database] in try database.rollups.rollUpAll() }
        try installation.database.close()
        let out = installation.directory.appending(path: "out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let target = out.appending(path: "events.csv.gz")

        func export() throws -> ChildProcess {
            try ChildProcess(
                executable: DaemonProcess.binary.path,
                arguments: [
                    "export", "--data-dir", installation.directory.path, "--events", "--from", "2026-11-17", "--to", "2026-11-20",
                    "--gzip", "--out", target.path, "--log-level", "error",
                ],
                output: "/dev/null")
        }

        var killedMidWrite = 0
        for _ in 0..<5 where killedMidWrite < 2 {
            let process = try export()
            // Wait until the temporary file has data, then kill.
            var partial: String?
            eventuallyBlocking(within: .seconds(30), every: .milliseconds(1)) {
                partial = (try? FileManager.default.contentsOfDirectory(atPath: out.path))?.first {
                    $0.hasPrefix(".partial-")
                        && ((try? FileManager.default.attributesOfItem(atPath: out.appending(path: $0).path)[.size] as? Int) ?? 0) > 0
                }
                return partial != nil || !process.isRunning
            }
            kill(process.pid, SIGKILL)
            if partial != nil && process.status(wait: true) == 128 + SIGKILL {
                killedMidWrite += 1
                #expect(!FileManager.default.fileExists(atPath: target.path))
            }
            ExportFiles.removeStalePartials(in: out)
        }
        #expect(killedMidWrite >= 1)
        // Left to finish, it writes the whole file.
        #expect(try export().status(wait: true) == 0)
        let text = String(decoding: try Zlib.inflate(Array(try Data(contentsOf: target)), limit: 1 << 30), as: UTF8.self)
        #expect(try parseCSV(text).rows.count == outcome.stored)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == ["events.csv.gz"])
    }
}
