import Foundation

/// Every tuned constant of a SQLite store, in one place: the sizes and times its mechanisms
/// (docs/architecture.md, "Background mechanisms") work by. Each was chosen by a measurement
/// recorded in docs/performance.md; change one there, with the benchmark that chose it.
///
/// What stays outside is not tuned but part of a format or an algorithm: the id filter's bits
/// per id, the cubes' layout, the visitor sketch's precision, the sealed blocks' size (changing
/// them changes what is on disk). The timers' intervals are the daemon's (`ServerSettings`).
public struct SQLiteTuning: Sendable, Equatable {
    // MARK: Derived work

    /// The most events one attribution round takes, and the most rows of the fingerprint index
    /// one transaction of its pruning deletes (about 1 MB of the file): a turn of the
    /// derived-work loop is short enough that a due count or a resolve waits little for it.
    public var roundEvents = 20_000
    /// The most 15-minute cells one rollup pass holds before it writes them, which bounds the
    /// pass's memory (a backlog of a long range counts in several passes).
    public var passCells = 65_536
    /// How many click index entries attribution keeps in memory (two a click, 16–24 bytes
    /// each); older clicks are looked up on disk.
    public var recentClickEntries = 1_000_000
    /// How far (ms) before the memory horizon attribution keeps its on-disk fingerprint index:
    /// seven days, so only events that arrive more than a week late (and a window of raw events
    /// each) take the slower lookup.
    public var fingerprintClicksKeptMs: Int64 = 7 * 86_400_000
    /// How long a round writes slices of a move of clicks to disk before the next round may
    /// run (at least one slice), and how long one pruning of the fingerprint index runs.
    public var moveSliceBudget: Duration = .milliseconds(100)
    /// How long after an app's round a move of clicks to disk waits: resolves closer together
    /// than this count as a flood, which the move must not slow.
    public var appsQuietFor: Duration = .milliseconds(100)

    // MARK: Files and their WALs

    /// The most of a file one transaction of a large sorted write rewrites (`WriteSlices`: the
    /// id index's merges and folds, moves of clicks to disk), so that its WAL holds at most
    /// about that much of it before a checkpoint.
    public var sliceBytes = 32 << 20
    /// A WAL past this size is started over: the checkpoint job then copies it to the end
    /// between two commits (`EventStore.walRestartWanted`, `AttributionStore.walRestartWanted`).
    public var walRestartBytes = 16 << 20
    /// How long the store must be quiet (nothing stored, attributed or counted) before every
    /// WAL is truncated to zero, and how long the attribution file's WAL may grow without a
    /// checkpoint before its writer runs one itself.
    public var quietFor: Duration = .seconds(5)
    /// The longest the derived work copies the attribution file's WAL to its end (between the
    /// slices of a move of clicks to disk), trying again while a reader's snapshot is in the
    /// way, before it goes on anyway.
    public var walWaitsAtMost: Duration = .seconds(2)
    /// The longest the next slice of a move of clicks to disk waits for the attribution WAL to
    /// start over before it is written all the same: clicks keep arriving meanwhile, and memory
    /// holds them.
    public var sliceWaitsAtMost: Duration = .seconds(5)
    /// The pause of a `RetryBackoff` while a reader's snapshot keeps a WAL from starting over
    /// (the next try of a checkpoint's copy, or of a slice waiting for room).
    public var retryAfter: Duration = .milliseconds(20)
    /// The ingest writer tries to finish a checkpoint for a WAL restart at most once in this
    /// long, so that the attempts do not slow the commits.
    public var restartAttemptSpacing: Duration = .milliseconds(50)
    /// Free pages the events database keeps for new events instead of giving them back.
    public var freePageReserveBytes = 64 << 20

    // MARK: The id index

    /// At open, ids are merged into the id index until at most this many remain in memory.
    public var tailLimit = 200_000
    /// The fewest keys the id index's recent level holds before it is folded into the main one:
    /// about a million keys (24 MiB of the index file), so a merge of 400,000 ids never rewrites
    /// more than that level's few thousand leaves.
    public var idFoldMinimum = 1 << 20
    /// The recent level is also folded once it holds this fraction (one in `idFoldRatio`) of
    /// the main level's keys.
    public var idFoldRatio = 8

    // MARK: Memory

    /// The connections' SQLite page caches.
    public var pageCaches = PageCaches.daemon
    /// The most decoded cube block sums the stats keep for long breakdowns.
    public var cubeSumsBytes = 32 << 20

    /// The daemon's (`serve`) and the default.
    public static let daemon = SQLiteTuning()

    /// The commands that have the machine to themselves (`rollup`, `generate`, `export`): the
    /// page caches the rebuild's throughput was measured with.
    public static let command = SQLiteTuning().with { $0.pageCaches = .command }

    public init() {}

    /// A copy changed by `change` (tests and commands adjust one or two values).
    public func with(_ change: (inout SQLiteTuning) -> Void) -> SQLiteTuning {
        var copy = self
        change(&copy)
        return copy
    }

    /// `walRestartBytes` in 4 KiB WAL frames.
    var walRestartPages: Int { walRestartBytes / 4096 }
}
