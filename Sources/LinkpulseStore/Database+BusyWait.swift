import GRDB
import GRDBSQLite

extension Database {
    /// Runs `body` with SQLite's busy handler off (a lock another connection holds fails at
    /// once instead of being waited for), then sets the connection's configured timeout again.
    /// For a checkpoint that must not wait for readers (`AttributionStore.restartCheckpoint`);
    /// only connections configured with `busyMode = .timeout` use it.
    func withBusyWaitOff<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_busy_timeout(sqliteConnection, 0)
        defer {
            if case .timeout(let seconds) = configuration.busyMode {
                sqlite3_busy_timeout(sqliteConnection, Int32(seconds * 1000))
            }
        }
        return try body()
    }
}
