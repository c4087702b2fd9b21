import Foundation

/// One daemon's claim on a data directory: an exclusive `flock` on `serve.lock` in it, held as
/// long as the process lives (the kernel drops it when the process ends, `kill -9` included).
/// A second `serve` on the same files would write beside the first, and `restore` would
/// replace files under it; both refuse instead. Commands that are safe beside a daemon
/// (`rollup`, `backup`, `export`) do not take it.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name under the data directory.
    public static let fileName = "serve.lock"
    private let descriptor: Int32

    /// Takes the lock, creating the directory if need be; throws `StoreError.directoryInUse`
    /// when another process holds it.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appending(path: Self.fileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw StoreError.directoryInUse(directory.path, holder: Self.holder(in: directory))
        }
        ftruncate(descriptor, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        self.descriptor = descriptor
    }

    /// What the lock's holder wrote into the lock file, its process id (nil when empty or
    /// unreadable). Only meaningful while `isHeld(in:)`: a holder that ended leaves it behind.
    public static func holder(in directory: URL) -> String? {
        let text = try? String(contentsOfFile: directory.appending(path: fileName).path, encoding: .utf8)
        return text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `holder(in:)` as a process id.
    public static func holderProcessId(in directory: URL) -> Int32? {
        holder(in: directory).flatMap { Int32($0) }
    }

    /// Whether a process holds the lock on `directory` now.
    public static func isHeld(in directory: URL) -> Bool {
        let descriptor = open(directory.appending(path: fileName).path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }

    deinit {
        close(descriptor)
    }
}
