import Foundation

/// Small files that must be on disk before the caller goes on (markers): written, flushed, and
/// their directory entry flushed too.
enum SyncedFiles {
    /// Creates (or replaces) the file at `url` with `contents`, flushed with its directory entry.
    static func create(_ url: URL, contents: String) throws {
        let file = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(file) }
        let written = contents.withCString { write(file, $0, strlen($0)) }
        guard written == contents.utf8.count, fsync(file) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        try syncDirectory(url.deletingLastPathComponent())
    }

    /// Flushes a directory's entries (a file created or deleted in it) to disk.
    static func syncDirectory(_ directory: URL) throws {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
