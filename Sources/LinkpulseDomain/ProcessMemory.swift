/// The memory of a process as Linux reports it in `/proc/<pid>/status`, in bytes.
///
/// Resident memory has two halves that cost very differently. The **anonymous** half is the
/// daemon's own: heap, stacks, SQLite's page caches. The **file-backed** half is pages of the
/// binary and its libraries, mapped from the OS page cache. Those pages are clean, shared with
/// every other process that maps the same files, and dropped by the kernel whenever it needs
/// the room. The binary with the Swift and Foundation libraries keeps about 40 MB of them
/// resident, whatever the load (see docs/performance.md, Ingest), so a resident figure says
/// little about the daemon until it is split.
public struct ProcessMemory: Sendable, Equatable {
    /// Resident set size (`VmRSS`): every page of the process in RAM.
    public var residentBytes: Int64
    /// The largest resident set size since the process started (`VmHWM`).
    public var peakResidentBytes: Int64
    /// Virtual memory size (`VmSize`): every mapping, resident or not.
    public var virtualBytes: Int64
    /// The anonymous part of the resident set (`RssAnon`).
    public var anonymousBytes: Int64
    /// The file-backed part of the resident set (`RssFile`).
    public var fileBytes: Int64
    /// The shared-memory part of the resident set (`RssShmem`): SQLite's `-shm` files.
    public var sharedBytes: Int64

    public init(residentBytes: Int64, peakResidentBytes: Int64, virtualBytes: Int64, anonymousBytes: Int64, fileBytes: Int64, sharedBytes: Int64) {
        self.residentBytes = residentBytes
        self.peakResidentBytes = peakResidentBytes
        self.virtualBytes = virtualBytes
        self.anonymousBytes = anonymousBytes
        self.fileBytes = fileBytes
        self.sharedBytes = sharedBytes
    }

    /// Reads the text of `/proc/<pid>/status`. Nil when a field is missing or not a count of
    /// kB: a kernel that does not report the split (before Linux 4.5) has no `RssAnon`.
    public init?(status: String) {
        var kB: [Substring: Int64] = [:]
        for line in status.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon]
            guard Self.fields.contains(name) else { continue }
            let value = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard value.count == 2, value[1] == "kB", let count = Int64(value[0]), count >= 0 else { return nil }
            kB[name] = count
        }
        guard let rss = kB["VmRSS"], let hwm = kB["VmHWM"], let size = kB["VmSize"], let anon = kB["RssAnon"],
              let file = kB["RssFile"], let shmem = kB["RssShmem"]
        else { return nil }
        self.init(
            residentBytes: rss * 1024, peakResidentBytes: hwm * 1024, virtualBytes: size * 1024, anonymousBytes: anon * 1024,
            fileBytes: file * 1024, sharedBytes: shmem * 1024)
    }

    private static let fields: Set<Substring> = ["VmRSS", "VmHWM", "VmSize", "RssAnon", "RssFile", "RssShmem"]
}
