import Foundation
import Hummingbird
import LinkpulseDomain
import LinkpulseStore
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// Settings of `linkpulse serve` (flags and `LINKPULSE_…` variables map onto these).
public struct ServerSettings: Sendable {
    public var host: String
    public var port: Int
    public var trustProxy: Bool
    /// Most events that may wait for the writer before ingest answers 503.
    public var queueCapacity: Int
    /// How often the id index job looks at the writer's in-memory id tail.
    public var idIndexInterval: Duration
    /// How many new ids the writer holds in memory before they are merged into the id index.
    public var idMergeThreshold: Int
    /// How often the rollup job runs.
    public var rollupInterval: Duration
    /// The IANA zone stats use when a request names none.
    public var defaultTimeZone: String
    /// Where scheduled exports are written (and served from by `/v1/exports/{name}`).
    public var exportDirectory: URL
    /// The scheduled export jobs (from the exports config file); none by default.
    public var exportJobs: [ExportJob]
    /// How often each export job's timer looks for a due period.
    public var exportCheckInterval: Duration
    /// The dashboard's static files (see `DashboardAssets.locate`); nil serves none.
    public var dashboardsDirectory: URL?
    /// How the Segment-compatible endpoints map messages onto link events.
    public var segmentMapping: SegmentMapping
    /// `/v1/resolve` calls a second each client address may make (0: no limit), and at once.
    public var resolveRate: Double
    public var resolveBurst: Int
    /// How far behind the stored events the stats may be before `/readyz` says not ready.
    public var maxRollupLag: Duration
    /// Days a quarantined body is kept (0: forever), and how often old ones are looked for.
    public var quarantineRetentionDays: Int
    public var retentionInterval: Duration
    /// How long raw events are kept (`--retention-days`; by default forever).
    public var rawEventRetention: RawEventRetention
    /// When old raw events are sealed into compressed blocks (`--seal-after-days`), and how
    /// often the seal job looks for them.
    public var sealAge: SealAge
    public var sealInterval: Duration
    /// When the ingest writer waits for the derived work (`--ingest-pacing`).
    public var ingestPacing: IngestPacingLimit
    /// How often the daemon writes its keys' last uses and looks for keys created or revoked
    /// elsewhere (another daemon, `linkpulse keys`).
    public var keyRefreshInterval: Duration
    /// The link domains and apps hosted links are served for (`--links-config`); nil: hosted
    /// links are off.
    public var links: LinksConfig?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, trustProxy: Bool = false,
        queueCapacity: Int = 20_000, idIndexInterval: Duration = .milliseconds(500), idMergeThreshold: Int = 100_000,
        rollupInterval: Duration = .seconds(10), defaultTimeZone: String = "UTC",
        exportDirectory: URL = URL(fileURLWithPath: "data/exports", isDirectory: true), exportJobs: [ExportJob] = [],
        exportCheckInterval: Duration = .seconds(15), dashboardsDirectory: URL? = nil,
        segmentMapping: SegmentMapping = SegmentMapping(), resolveRate: Double = 5, resolveBurst: Int = 50,
        maxRollupLag: Duration = .seconds(300),
        quarantineRetentionDays: Int = 30, retentionInterval: Duration = .seconds(60),
        rawEventRetention: RawEventRetention = RawEventRetention(days: 0), ingestPacing: IngestPacingLimit = .standard,
        sealAge: SealAge = .standard, sealInterval: Duration = .seconds(10), keyRefreshInterval: Duration = .seconds(1),
        links: LinksConfig? = nil
    ) {
        self.links = links
        self.keyRefreshInterval = keyRefreshInterval
        self.sealAge = sealAge
        self.sealInterval = sealInterval
        self.ingestPacing = ingestPacing
        self.rawEventRetention = rawEventRetention
        self.quarantineRetentionDays = quarantineRetentionDays
        self.retentionInterval = retentionInterval
        self.maxRollupLag = maxRollupLag
        self.segmentMapping = segmentMapping
        self.resolveRate = resolveRate
        self.resolveBurst = resolveBurst
        self.dashboardsDirectory = dashboardsDirectory
        self.exportDirectory = exportDirectory
        self.exportJobs = exportJobs
        self.exportCheckInterval = exportCheckInterval
        self.rollupInterval = rollupInterval
        self.defaultTimeZone = defaultTimeZone
        self.idMergeThreshold = idMergeThreshold
        self.host = host
        self.port = port
        self.trustProxy = trustProxy
        self.queueCapacity = queueCapacity
        self.idIndexInterval = idIndexInterval
    }
}

/// The stats lag past which sustained ingest is paced (`--ingest-pacing`; see `IngestPacing`).
public enum IngestPacingLimit: Sendable, Equatable {
    /// One and a half rollup intervals (`auto`, the default).
    case standard
    /// Never pace: ingest at full speed, the stats catch up after the load.
    case off
    /// A lag of its own.
    case lag(Duration)

    /// The limit in ms for a rollup interval; nil when off.
    func lagLimitMs(rollupInterval: Duration) -> Int64? {
        switch self {
        case .standard: IngestPacing.standardLagLimitMs(rollupIntervalMs: rollupInterval.nanoseconds / 1_000_000)
        case .off: nil
        case .lag(let lag): max(lag.nanoseconds / 1_000_000, 1)
        }
    }
}
