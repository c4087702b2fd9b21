/// How much SQLite page cache the connections of an installation keep, in KiB each. SQLite's
/// default is about 2 MiB per file a connection has open, attached ones included: with every
/// file attached to every connection, that added up to tens of megabytes of a daemon that
/// shares its memory with ingest.
public struct PageCaches: Sendable, Equatable {
    /// The rollup file's connection, which writes the passes.
    public let rollupKiB: Int
    /// The attribution file's connection, which writes the answers and moves clicks to disk.
    public let attributionKiB: Int
    /// Every file attached to the events writer beside its own (the id index, the derived
    /// files); nil keeps SQLite's default. Those reads look up a few keys. The events readers
    /// keep SQLite's default: they answer stats and resolves from the rollup and attribution
    /// files, and serve the derived work its pages of events.
    public let attachedKiB: Int?

    /// The daemon's (`serve`) and the default: small caches, the OS page cache behind them.
    /// Under `ops/bench/ingest.sh` they took the daemon's peak RSS from about 180 to 147 MB at
    /// the same throughput and freshness (2026-11-28).
    public static let daemon = PageCaches(rollupKiB: 4096, attributionKiB: 2048, attachedKiB: 256)

    /// The commands that have the machine to themselves (`rollup`, `generate`, `export`): the
    /// caches the rebuild's throughput was measured with.
    public static let command = PageCaches(rollupKiB: 16384, attributionKiB: 8192, attachedKiB: nil)
}
