import Foundation

/// How a large write of sorted rows into a file is cut into slices, each a key range in a
/// transaction of its own, so that the file's WAL holds at most about `maxBytes` of it before a
/// checkpoint: sorted rows spread over a whole table rewrite nearly every leaf of it, and in one
/// transaction all of that goes through the WAL. Used by the id index's merges and by
/// attribution's moves of clicks from memory to disk.
public enum WriteSlices {
    /// The most of a file one slice covers: 32 MiB.
    public static let maxBytes = 32 << 20

    /// How many slices `items` sorted rows take so that each covers at most `sliceBytes` of the
    /// file at `path` (its size now), and at least `atLeast`; never more than one per row, and
    /// always at least one.
    static func count(items: Int, filePath: String, sliceBytes: Int = maxBytes, atLeast: Int = 1) -> Int {
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: filePath)[.size] as? Int) ?? 0
        let wanted = max(atLeast, (fileBytes + sliceBytes - 1) / sliceBytes)
        return max(1, min(wanted, items))
    }

    /// The rows of slice `slice` (from 0) of `slices`, out of `count` rows: equal shares, in order.
    static func range(_ slice: Int, of slices: Int, count: Int) -> Range<Int> {
        count * slice / slices..<count * (slice + 1) / slices
    }
}
