import LinkpulseStore
import Logging
import Metrics
import ServiceLifecycle

/// The one writer: takes everything the queue holds, commits it in one transaction, and
/// answers each waiting request. On graceful shutdown it closes the queue, then drains what
/// was already accepted before returning, so every acknowledged event is on disk.
///
/// With a pacer, a commit first waits while the pacer holds (the stats are behind and not
/// catching up), except a commit carrying a resolve: an app is waiting for that answer (a
/// resolve that arrives during a wait ends it). Requests arriving meanwhile join the commit
/// that follows the wait.
public struct IngestWriterService: Service {
    let queue: IngestQueue
    /// Where commits go: the SQLite store or the PostgreSQL one.
    let database: any IngestStore
    let metrics: IngestMetrics
    let pacer: IngestPacer?
    let logger: Logger

    public init(queue: IngestQueue, database: any IngestStore, metrics: IngestMetrics, pacer: IngestPacer? = nil, logger: Logger) {
        self.queue = queue
        self.database = database
        self.metrics = metrics
        self.pacer = pacer
        self.logger = logger
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            while var batch = await queue.take() {
                if let pacer, pacer.holding, !batch.contains(where: \.urgent) {
                    let wakeup = Wakeup<IngestPacer.HoldEnded>()
                    queue.onUrgentSubmission { wakeup.wake(.urgent) }
                    if await pacer.waitWhileHolding(wakeup) > .zero { batch += queue.takeIfAny() }
                }
                metrics.queueDepth.record(queue.depth)
                await commit(batch)
            }
            logger.info("ingest writer drained")
        } onGracefulShutdown: {
            pacer?.stop()
            queue.close()
        }
    }

    func commit(_ batch: [IngestQueue.Pending]) async {
        let start = ContinuousClock.now
        do {
            let outcomes = try await database.ingest(batch.map(\.work))
            metrics.commitDuration.recordNanoseconds((ContinuousClock.now - start).nanoseconds)
            metrics.commitSize.record(batch.reduce(0) { $0 + $1.work.events.count })
            for (pending, result) in zip(batch, outcomes) { pending.finish(.success(result)) }
        } catch {
            // One request's bad luck must not fail its neighbours: retry them one by one.
            if batch.count > 1 {
                logger.warning("group commit failed; retrying requests one by one", metadata: ["error": "\(error)"])
                for pending in batch { await commit([pending]) }
                return
            }
            metrics.commitFailures.increment()
            logger.error("commit failed", metadata: ["error": "\(error)"])
            batch[0].finish(.failure(error))
        }
    }
}

/// The ingest path's metrics, created once (labels are fixed: never a ref or campaign).
public struct IngestMetrics: Sendable {
    let accepted = Counter(label: "linkpulse_ingest_events_total", dimensions: [("outcome", "accepted")])
    let duplicates = Counter(label: "linkpulse_ingest_events_total", dimensions: [("outcome", "duplicate")])
    let rejected = Counter(label: "linkpulse_ingest_events_total", dimensions: [("outcome", "rejected")])
    let bots = Counter(label: "linkpulse_ingest_bot_events_total")
    let overloaded = Counter(label: "linkpulse_ingest_overloaded_requests_total")
    /// Requests refused because the disk was short of space (see `StorageGuard`).
    let insufficientStorage = Counter(label: "linkpulse_ingest_insufficient_storage_requests_total")
    let commitFailures = Counter(label: "linkpulse_ingest_commit_failures_total")
    let commitDuration = Metrics.Timer(label: "linkpulse_ingest_commit_duration_seconds", preferredDisplayUnit: .seconds)
    let commitSize = Recorder(label: "linkpulse_ingest_commit_events", aggregate: true)
    let queueDepth = Gauge(label: "linkpulse_ingest_queue_events")
    /// Messages of the Segment-compatible endpoints, by what became of them; `ignored` are
    /// messages that are not link events (accepted, counted, not stored).
    let segmentStored = Counter(label: "linkpulse_segment_messages_total", dimensions: [("outcome", "stored")])
    let segmentDuplicates = Counter(label: "linkpulse_segment_messages_total", dimensions: [("outcome", "duplicate")])
    let segmentIgnored = Counter(label: "linkpulse_segment_messages_total", dimensions: [("outcome", "ignored")])
    let segmentRejected = Counter(label: "linkpulse_segment_messages_total", dimensions: [("outcome", "rejected")])

    public init() {}
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double { Double(nanoseconds) / 1e9 }
}
