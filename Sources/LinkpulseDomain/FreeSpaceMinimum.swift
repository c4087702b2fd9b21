/// How much free space the data directory's filesystem must keep before ingest stops taking
/// events (`--min-free-disk`): a size, a share of the filesystem, or both, in which case the
/// smaller one applies (so a small disk is not held to a large server's floor). Ingest refuses
/// while the free space is below it (503 `insufficient_storage`), well before SQLite would
/// fail a commit for want of space, and takes events again as soon as there is room.
public struct FreeSpaceMinimum: Sendable, Equatable, CustomStringConvertible {
    /// A fixed number of bytes, if given.
    public var bytes: Int64?
    /// A percentage of the filesystem's size, if given.
    public var percent: Double?

    /// The default: the smaller of 1 GiB and 5% of the filesystem.
    public static let standard = FreeSpaceMinimum(bytes: 1 << 30, percent: 5)
    /// No floor at all (`--min-free-disk 0`).
    public static let off = FreeSpaceMinimum(bytes: 0, percent: nil)

    public init(bytes: Int64?, percent: Double?) {
        self.bytes = bytes
        self.percent = percent
    }

    /// Reads `1GiB`, `512MiB`, `500MB`, `2g`, `5%`, a plain number of bytes, or two of them
    /// joined by a comma (`1GiB,5%`: the smaller applies). Units: B, KB/MB/GB/TB (powers of
    /// 1000), KiB/MiB/GiB/TiB and the one-letter K/M/G/T (powers of 1024), any case.
    /// Nil for anything else, and for a percentage outside 0…100.
    public init?(parsing text: String) {
        var bytes: Int64?
        var percent: Double?
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        for part in parts {
            let item = Self.trimmed(part)
            if item.hasSuffix("%") {
                guard percent == nil, let value = Double(item.dropLast()), value.isFinite, (0...100).contains(value) else { return nil }
                percent = value
            } else {
                guard bytes == nil, let value = Self.size(item) else { return nil }
                bytes = value
            }
        }
        self.init(bytes: bytes, percent: percent)
    }

    /// A size with an optional unit, in bytes (the units of `init(parsing:)`); nil for anything else.
    public static func size(_ text: String) -> Int64? {
        let digits = text.prefix { $0.isNumber || $0 == "." }
        guard let number = Double(digits), number.isFinite, number >= 0 else { return nil }
        let (kib, mib, gib, tib) = (1024.0, 1048576.0, 1073741824.0, 1099511627776.0)
        let units: [String: Double] = [
            "": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
            "k": kib, "m": mib, "g": gib, "t": tib, "kib": kib, "mib": mib, "gib": gib, "tib": tib,
        ]
        let unit = trimmed(text.dropFirst(digits.count)).lowercased()
        guard let scale = units[unit], number * scale < 9e18 else { return nil }
        return Int64(number * scale)
    }

    static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// The free bytes a filesystem of `totalBytes` must keep.
    public func requiredBytes(totalBytes: Int64) -> Int64 {
        let share = percent.map { Int64(Double(totalBytes) * $0 / 100) }
        switch (bytes, share) {
        case let (bytes?, share?): return min(bytes, share)
        case let (bytes?, nil): return bytes
        case let (nil, share?): return share
        case (nil, nil): return 0
        }
    }

    /// Whether `freeBytes` of a filesystem of `totalBytes` is below the floor.
    public func isLow(freeBytes: Int64, totalBytes: Int64) -> Bool {
        freeBytes < requiredBytes(totalBytes: totalBytes)
    }

    public var description: String {
        [bytes.map { "\($0) bytes" }, percent.map { "\($0)%" }].compactMap { $0 }.joined(separator: " or ")
    }
}
