import Foundation
import LinkpulseDomain

/// The counts of every value of one dimension in one block of days, stored as ONE blob per
/// block (`dimension_blocks.entries`): a breakdown over 90 days then reads about ten blobs
/// instead of tens of thousands of rows.
///
/// Format: a little-endian UInt32 entry count, then per entry, sorted by value then audience:
/// UInt16 value length, the value's UTF-8 bytes, UInt8 1 for bots (else 0), and the nine
/// counts of `ConversionCounts` in table column order, each an Int64. Sketches are not kept here.
struct DimensionBlock {
    struct Key: Hashable, Comparable {
        var value: String
        var isBot: Bool

        static func < (a: Key, b: Key) -> Bool { a.value != b.value ? a.value < b.value : (!a.isBot && b.isBot) }
    }

    var entries: [Key: ConversionCounts] = [:]

    init() {}

    /// Reads a stored blob; a malformed one reads as far as it is well-formed.
    init(_ bytes: UnsafeRawBufferPointer) {
        Self.forEachEntry(in: bytes) { value, isBot, counts in entries[Key(value: value, isBot: isBot)] = counts }
    }

    mutating func add(_ counts: ConversionCounts, value: String, isBot: Bool) {
        var counts = counts
        counts.clickVisitors = VisitorSketch()
        entries[Key(value: value, isBot: isBot), default: ConversionCounts()].add(counts)
    }

    var serialized: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + entries.count * 96)
        func append<T: FixedWidthInteger>(_ x: T) { withUnsafeBytes(of: x.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt32(entries.count))
        for key in entries.keys.sorted() {
            let c = entries[key]!
            let utf8 = Array(key.value.utf8.prefix(Int(UInt16.max)))
            append(UInt16(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(key.isBot ? 1 : 0)
            for n in [c.events, c.clicks, c.fallbacks, c.installsClickId, c.installsRef, c.installsFingerprint,
                      c.installsOrganic, c.opens, c.deferredOpens] { append(Int64(n)) }
        }
        return bytes
    }

    /// The nine counts of an entry as one vector (lanes 0…8, in table column order), for
    /// adding up thousands of entries quickly.
    typealias Vector = SIMD16<Int64>

    static func counts(_ v: Vector) -> ConversionCounts {
        var c = ConversionCounts()
        c.events = Int(v[0]); c.clicks = Int(v[1]); c.fallbacks = Int(v[2]); c.installsClickId = Int(v[3])
        c.installsRef = Int(v[4]); c.installsFingerprint = Int(v[5]); c.installsOrganic = Int(v[6])
        c.opens = Int(v[7]); c.deferredOpens = Int(v[8])
        return c
    }

    /// Calls `body` with every entry of a stored blob as a vector, without building a dictionary.
    static func forEachVector(in bytes: UnsafeRawBufferPointer, _ body: (String, Bool, Vector) -> Void) {
        forEachRaw(in: bytes) { value, isBot, at in
            var v = Vector()
            for lane in 0..<9 {
                v[lane] = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: at + lane * 8, as: Int64.self))
            }
            body(value, isBot, v)
        }
    }

    /// Calls `body` with every entry of a stored blob, without building a dictionary.
    static func forEachEntry(in bytes: UnsafeRawBufferPointer, _ body: (String, Bool, ConversionCounts) -> Void) {
        forEachVector(in: bytes) { value, isBot, v in body(value, isBot, counts(v)) }
    }

    /// Walks the entries: value, audience and the byte offset of the nine counts.
    static func forEachRaw(in bytes: UnsafeRawBufferPointer, _ body: (String, Bool, Int) -> Void) {
        guard bytes.count >= 4 else { return }
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self)))
        var offset = 4
        for _ in 0..<count {
            guard offset + 2 <= bytes.count else { return }
            let length = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            offset += 2
            guard offset + length + 1 + 72 <= bytes.count else { return }
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]), as: UTF8.self)
            offset += length
            let isBot = bytes[offset] == 1
            body(value, isBot, offset + 1)
            offset += 1 + 72
        }
    }
}

extension DimensionBlock {
    /// One entry of a stored blob, by position in a buffer of concatenated blobs.
    struct EntryPosition {
        var valueStart: Int
        var valueLength: Int
        var isBot: Bool
        var countsAt: Int
    }

    /// The totals of several stored blocks, value by value: the blocks' entries are sorted, so
    /// they are merged in step (like the merge of merge sort) and each value's bytes become a
    /// String once, instead of being hashed once per block.
    static func sum(_ blobs: [[UInt8]]) -> [(value: String, people: Vector, bots: Vector)] {
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for blob in blobs {
            ranges.append(buffer.count..<(buffer.count + blob.count))
            buffer.append(contentsOf: blob)
        }
        return sum(buffer, ranges)
    }

    /// As `sum(_:)`, for blobs already laid end to end in one buffer (one copy from SQLite).
    static func sum(_ buffer: [UInt8], _ blobs: [Range<Int>]) -> [(value: String, people: Vector, bots: Vector)] {
        var lists: [[EntryPosition]] = []
        for range in blobs {
            let base = range.lowerBound
            // Positions of every entry (the layout of `serialized`), checked against the blob's size.
            var list: [EntryPosition] = []
            let end = range.upperBound
            let count = range.count >= 4
                ? Int(buffer[base]) | Int(buffer[base + 1]) << 8 | Int(buffer[base + 2]) << 16 | Int(buffer[base + 3]) << 24 : 0
            list.reserveCapacity(count)
            var offset = base + 4
            for _ in 0..<count {
                guard offset + 2 <= end else { break }
                let length = Int(buffer[offset]) | Int(buffer[offset + 1]) << 8
                guard offset + 2 + length + 1 + 72 <= end else { break }
                list.append(EntryPosition(
                    valueStart: offset + 2, valueLength: length, isBot: buffer[offset + 2 + length] == 1,
                    countsAt: offset + 2 + length + 1))
                offset += 2 + length + 1 + 72
            }
            lists.append(list)
        }
        var result: [(value: String, people: Vector, bots: Vector)] = []
        buffer.withUnsafeBytes { bytes in
            func compare(_ a: EntryPosition, _ b: EntryPosition) -> Int32 {
                let n = min(a.valueLength, b.valueLength)
                let c = n == 0 ? 0 : memcmp(bytes.baseAddress! + a.valueStart, bytes.baseAddress! + b.valueStart, n)
                return c != 0 ? c : Int32(a.valueLength - b.valueLength)
            }
            func vector(_ at: Int) -> Vector {
                var v = Vector()
                for lane in 0..<9 { v[lane] = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: at + lane * 8, as: Int64.self)) }
                return v
            }
            var cursors = [Int](repeating: 0, count: lists.count)
            while true {
                // The smallest value under any cursor.
                var smallest: EntryPosition?
                for (k, list) in lists.enumerated() where cursors[k] < list.count {
                    let e = list[cursors[k]]
                    if smallest == nil || compare(e, smallest!) < 0 { smallest = e }
                }
                guard let head = smallest else { break }
                var people = Vector(), bots = Vector()
                for (k, list) in lists.enumerated() {
                    while cursors[k] < list.count, compare(list[cursors[k]], head) == 0 {
                        let e = list[cursors[k]]
                        if e.isBot { bots &+= vector(e.countsAt) } else { people &+= vector(e.countsAt) }
                        cursors[k] += 1
                    }
                }
                let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[head.valueStart..<(head.valueStart + head.valueLength)]), as: UTF8.self)
                result.append((value, people, bots))
            }
        }
        return result
    }
}
