#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Foundation
import LinkpulseDomain
import LinkpulseStore

/// Export files written safely: into a temporary name in the target directory, fsynced, then
/// renamed over the final name and the directory fsynced, so that a crash at any moment
/// leaves either the old file or the whole new one under the final name, never a part.
public enum ExportFiles {
    /// Temporary files start with this; `removeStalePartials` deletes leftovers of a crash.
    static let partialPrefix = ".partial-"

    /// A failure writing an export file (disk full, permissions…), with the system's words.
    public struct WriteError: Error, CustomStringConvertible {
        public var path: String
        public var operation: String
        public var code: Int32

        public var description: String {
            "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }

    /// The thread every export file is created, written, synced and renamed on: blocking file
    /// work never runs on the cooperative pool.
    static let thread = StoreThread(name: "linkpulse.export-files")

    /// An open temporary file that chunks are appended to. Used by one export at a time, its
    /// calls made one after another on `ExportFiles.thread`.
    public final class Partial: @unchecked Sendable {
        let descriptor: Int32
        let temporaryPath: String
        let finalPath: String
        let directoryPath: String
        public private(set) var bytesWritten: Int64 = 0
        private var closed = false

        init(directory: URL, name: String) throws {
            directoryPath = directory.path
            finalPath = directory.appending(path: name).path
            temporaryPath = directory.appending(path: "\(ExportFiles.partialPrefix)\(UUID().uuidString)-\(name)").path
            descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw WriteError(path: temporaryPath, operation: "creating", code: errno) }
        }

        deinit {
            if !closed {
                close(descriptor)
                unlink(temporaryPath)
            }
        }

        /// Appends bytes (all of them, or throws).
        public func write(_ bytes: [UInt8]) throws {
            try bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw WriteError(path: temporaryPath, operation: "writing", code: errno)
                    }
                    offset += written
                }
            }
            bytesWritten += Int64(bytes.count)
        }

        /// Makes the file durable and moves it to its final name (replacing any file there).
        public func commit() throws {
            guard fsync(descriptor) == 0 else { throw WriteError(path: temporaryPath, operation: "syncing", code: errno) }
            closed = true
            close(descriptor)
            guard rename(temporaryPath, finalPath) == 0 else {
                let code = errno
                unlink(temporaryPath)
                throw WriteError(path: finalPath, operation: "renaming into", code: code)
            }
            // The rename itself is durable only once the directory is synced.
            let directory = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
        }

        /// Abandons the file: closes and deletes it.
        public func discard() {
            guard !closed else { return }
            closed = true
            close(descriptor)
            unlink(temporaryPath)
        }
    }

    /// Writes a file atomically: `body` gets a sink for its chunks; the file appears under
    /// `name` only when `body` returned and everything is on disk. Returns what `body` returned
    /// and the file's size. The file work itself runs on `thread`.
    public static func write<T>(
        directory: URL, name: String, _ body: (_ sink: (consuming [UInt8]) async throws -> Void) async throws -> T
    ) async throws -> (result: T, bytes: Int64) {
        let partial = try await thread.run {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try Partial(directory: directory, name: name)
        }
        do {
            let result = try await body { chunk in
                let bytes = chunk
                try await thread.run { try partial.write(bytes) }
            }
            try await thread.run { try partial.commit() }
            return (result, partial.bytesWritten)
        } catch {
            _ = try? await thread.run { partial.discard() }
            throw error
        }
    }

    /// Deletes temporary files a crash left behind in `directory`; returns how many.
    @discardableResult
    public static func removeStalePartials(in directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names where name.hasPrefix(partialPrefix) {
            if unlink(directory.appending(path: name).path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Whether `name` can be an export file's name: safe bytes only, no leading dot (so no
    /// `..`, no hidden or temporary files), no separators.
    public static func isValidName(_ name: String) -> Bool {
        (1...255).contains(name.utf8.count) && name.utf8.first != UInt8(ascii: ".")
            && name.utf8.allSatisfy(ExportJob.isSafeFileByte)
    }
}
