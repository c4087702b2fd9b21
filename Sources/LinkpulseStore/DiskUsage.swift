import Foundation

/// What one of the installation's SQLite files takes on disk.
public struct StoreFileUsage: Sendable, Equatable {
    /// A short name for metrics and logs: `events`, `ids`, `attribution`, `rollups`.
    public var name: String
    /// The database file itself.
    public var databaseBytes: Int64
    /// Its write-ahead log (0 when there is none).
    public var walBytes: Int64
}

/// The bytes the installation's files take and the room left on the filesystem that holds them.
public struct DiskUsage: Sendable, Equatable {
    public var files: [StoreFileUsage]
    /// Bytes an unprivileged process may still write on the data directory's filesystem.
    public var freeBytes: Int64
    /// The size of that filesystem.
    public var totalBytes: Int64

    /// Reads the sizes of the installation's files under `directory` and its filesystem's
    /// free space (`statvfs`). A missing file counts as 0 bytes.
    public static func read(directory: URL) throws -> DiskUsage {
        var space = statvfs()
        guard statvfs(directory.path, &space) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let block = Int64(space.f_frsize)
        let files = StoreFiles.all.map { file in
            StoreFileUsage(
                name: file.name, databaseBytes: Self.size(directory.appending(path: file.fileName)),
                walBytes: Self.size(directory.appending(path: file.fileName + "-wal")))
        }
        return DiskUsage(files: files, freeBytes: Int64(space.f_bavail) * block, totalBytes: Int64(space.f_blocks) * block)
    }

    static func size(_ file: URL) -> Int64 {
        var info = stat()
        return stat(file.path, &info) == 0 ? Int64(info.st_size) : 0
    }
}

/// The SQLite files of an installation under its data directory, and what each holds.
public enum StoreFiles {
    /// One file: its short name and file name.
    public struct File: Sendable {
        public var name: String
        public var fileName: String
        /// Whether the file is rebuilt from the events database when missing or foreign.
        public var derived: Bool
    }

    /// The events database (events, quarantine, export ledger): the installation's only source.
    public static let events = File(name: "events", fileName: AppDatabase.eventsFileName, derived: false)
    public static let all: [File] = [
        events,
        File(name: "ids", fileName: AppDatabase.idIndexFileName, derived: true),
        File(name: "attribution", fileName: AppDatabase.attributionFileName, derived: true),
        File(name: "rollups", fileName: AppDatabase.rollupFileName, derived: true),
    ]

    /// Every path SQLite may keep for the files under `directory`: each database with its WAL,
    /// shared-memory index and rollback journal.
    public static func paths(in directory: URL) -> [URL] {
        all.flatMap { file in
            ["", "-wal", "-shm", "-journal"].map { directory.appending(path: file.fileName + $0) }
        }
    }
}
