import Foundation
import GRDB

extension AppDatabase {
    /// Deletes quarantined bodies received before `beforeMs`, in transactions of at most
    /// `batch` rows (ingest commits between them); returns how many went. Synchronous: run it
    /// from a timer's queue, never from the cooperative pool.
    public func pruneQuarantine(receivedBeforeMs beforeMs: Int64, batch: Int = 2_000) throws -> Int {
        let sql = queries.deleteOldQuarantine
        var total = 0
        while true {
            let deleted = try writeEvents { db -> Int in
                try db.execute(sql: sql, arguments: [beforeMs, batch])
                return db.changesCount
            }
            total += deleted
            if deleted < batch { return total }
        }
    }
}
