import Foundation
import LinkpulseDomain

/// How a large write of sorted rows into a file is cut into slices, each a key range in a
/// transaction of its own, so that the file's WAL holds at most about `SQLiteTuning.sliceBytes`
/// of it before a checkpoint: sorted rows spread over a whole table rewrite nearly every leaf of
/// it, and in one transaction all of that goes through the WAL. Used by the id index's merges and by
/// attribution's moves of clicks from memory to disk.
public enum WriteSlices {
    /// How many slices `items` sorted rows take so that each covers at most `sliceBytes` of the
    /// file at `path` (its size now), and at least `atLeast`; never more than one per row, and
    /// always at least one.
    static func count(items: Int, filePath: String, sliceBytes: Int, atLeast: Int = 1) -> Int {
        count(items: items, coveredBytes: fileBytes(filePath), sliceBytes: sliceBytes, atLeast: atLeast)
    }

    /// How many slices `items` sorted rows take so that each covers at most `sliceBytes` of
    /// `coveredBytes` (the part of a file the rows are spread over), and at least `atLeast`;
    /// never more than one per row, and always at least one.
    static func count(items: Int, coveredBytes: Int, sliceBytes: Int, atLeast: Int = 1) -> Int {
        let wanted = max(atLeast, (coveredBytes + sliceBytes - 1) / sliceBytes)
        return max(1, min(wanted, items))
    }

    /// The size of the file at `path` now (0 when it cannot be read).
    static func fileBytes(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Slice `slice` (from 0) of `slices` equal shares of the id index's keys (`EventIdKey`:
    /// 48-bit, signed), in key order: the ranges are contiguous and together cover every 64-bit
    /// key (the first reaches down to `Int64.min`, the last up to `Int64.max`). For keys spread
    /// evenly (hashes, as the id index's are), each range holds about the same share of a
    /// table's rows, so it can be cut without reading them.
    static func keyRange(_ slice: Int, of slices: Int) -> ClosedRange<Int64> {
        precondition(slices > 0 && (0..<slices).contains(slice))
        let span = Int64(1) << EventIdKey.bits
        // Positions 0..<span are the keys -span/2 ..< span/2, in order.
        func start(_ slice: Int) -> Int64 { span / Int64(slices) * Int64(slice) - span / 2 }
        let low = slice == 0 ? Int64.min : start(slice)
        let high = slice == slices - 1 ? Int64.max : start(slice + 1) - 1
        return low...high
    }

    /// The rows of slice `slice` (from 0) of `slices`, out of `count` rows: equal shares, in order.
    static func range(_ slice: Int, of slices: Int, count: Int) -> Range<Int> {
        count * slice / slices..<count * (slice + 1) / slices
    }
}
