import GRDB
import LinkpulseDomain

/// What retention takes out of the attribution file: the follower's connection runs each of
/// these between two rounds (they queue behind a round in progress).
extension AttributionStore {
    /// After a new raw-event horizon is recorded: clicks the follower may no longer match are
    /// those before it, and the round in progress, which may still have matched one, ends
    /// before this returns.
    func adoptRawHorizon() throws {
        let retention = queries.retention
        try queue.inDatabase { db in
            try db.execute(sql: retention.attributionByClick)
            try db.inTransaction(.deferred) {
                try db.cachedStatement(sql: queries.attribution.lock).execute()
                return .commit
            }
        }
    }

    /// Takes what the file keeps of expiring events out of it, in one transaction: the
    /// attributions of installs, opens and fallbacks (they are counted in the rollups), and
    /// clicks from the on-disk ref index.
    func forget(_ expired: [ExpiredEvent]) throws {
        let retention = queries.retention
        try queue.inDatabase { db in
            try db.inTransaction(.deferred) {
                let forget = HotStatement(try db.cachedStatement(sql: retention.deleteAttribution), in: db)
                let unindex = HotStatement(try db.cachedStatement(sql: retention.deleteRefClick), in: db)
                for event in expired {
                    if event.isClick {
                        guard let ref = event.ref else { continue }
                        try unindex.bind(":ref", ref)
                        try unindex.bind(":occurred_at_ms", event.occurredAtMs)
                        try unindex.bind(":seq", event.seq)
                        try unindex.run()
                    } else {
                        try forget.bind(":seq", event.seq)
                        try forget.run()
                    }
                }
                return .commit
            }
        }
    }

    /// Drops the on-disk fingerprint index's hours before `horizonMs`, `batch` rows a
    /// transaction.
    func dropFingerprintClicks(before horizonMs: Int64, batch: Int) throws {
        while try queue.inDatabase({ db in try deleteFingerprintClicks(db, before: horizonMs, batch: batch) }) == batch {}
    }

    /// One batch of `dropFingerprintClicks` (and of `pruneFingerprintClicks`): at most `batch`
    /// rows of the on-disk fingerprint index's hours before the one of `ms`, oldest first, on
    /// `db`. Returns how many went.
    func deleteFingerprintClicks(_ db: Database, before ms: Int64, batch: Int) throws -> Int {
        let hour = TimeGrain.floor(ms, TimeGrain.hourMs) / TimeGrain.hourMs
        try db.cachedStatement(sql: queries.retention.deleteOldFingerprintClicks).execute(arguments: ["hour": hour, "batch": batch])
        return db.changesCount
    }
}
