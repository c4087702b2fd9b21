import CZlib
import Foundation

/// A run of stored events packed into one compressed blob: the cold form of `event_rows`.
///
/// Every value keeps its SQLite storage class and its exact bytes (an id stored as text stays
/// text, a UUID's 16 bytes stay a blob), so a row read back from a block is the row that was
/// sealed, column for column. The rows are laid out column after column (the values of one
/// column side by side compress far better than whole rows: link strings and codes repeat),
/// integers as zigzag varints of the difference from the column's previous integer (seqs and
/// event times in store order are nearly consecutive), then the whole is deflated with the
/// system zlib.
///
/// Layout before deflating: a format byte, the row count, then per column the byte length of
/// its stream (varints), then the streams. Stored as the uncompressed length (a varint) followed
/// by the zlib stream, so a reader inflates in one call into a buffer of the right size
/// (`Inflated`). Pure; no SQLite.
enum EventBlock {
    /// One value as SQLite stores it.
    enum Value: Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text([UInt8])
        case blob([UInt8])
    }

    /// The format written by this build (the first byte of an inflated block).
    static let format: UInt8 = 1

    private enum Tag: UInt8 {
        case null = 0, integer, real, text, blob
    }

    /// Encodes rows of `columnCount` values each (every row the same width) and deflates them.
    static func encode(rows: [[Value]], columnCount: Int, level: Int32 = 6) -> [UInt8] {
        var streams = [[UInt8]](repeating: [], count: columnCount)
        var previous = [Int64](repeating: 0, count: columnCount)
        for row in rows {
            precondition(row.count == columnCount, "every row of a block has every column")
            for (c, value) in row.enumerated() {
                switch value {
                case .null:
                    streams[c].append(Tag.null.rawValue)
                case .integer(let v):
                    streams[c].append(Tag.integer.rawValue)
                    appendVarint(zigzag(v &- previous[c]), to: &streams[c])
                    previous[c] = v
                case .real(let v):
                    streams[c].append(Tag.real.rawValue)
                    withUnsafeBytes(of: v.bitPattern.littleEndian) { streams[c].append(contentsOf: $0) }
                case .text(let bytes):
                    streams[c].append(Tag.text.rawValue)
                    appendVarint(UInt64(bytes.count), to: &streams[c])
                    streams[c].append(contentsOf: bytes)
                case .blob(let bytes):
                    streams[c].append(Tag.blob.rawValue)
                    appendVarint(UInt64(bytes.count), to: &streams[c])
                    streams[c].append(contentsOf: bytes)
                }
            }
        }
        var plain: [UInt8] = [format]
        appendVarint(UInt64(rows.count), to: &plain)
        appendVarint(UInt64(columnCount), to: &plain)
        for stream in streams { appendVarint(UInt64(stream.count), to: &plain) }
        for stream in streams { plain.append(contentsOf: stream) }

        var out: [UInt8] = []
        appendVarint(UInt64(plain.count), to: &out)
        let header = out.count
        var bound = compressBound(uLong(plain.count))
        out.append(contentsOf: repeatElement(0, count: Int(bound)))
        let status = out.withUnsafeMutableBufferPointer { buffer in
            compress2(buffer.baseAddress! + header, &bound, plain, uLong(plain.count), level)
        }
        precondition(status == Z_OK, "zlib compress2 failed (\(status))")
        out.removeLast(out.count - header - Int(bound))
        return out
    }

    /// Why a stored block could not be read.
    struct Corrupt: Error, CustomStringConvertible {
        let description: String
    }

    /// Where one value lies in the inflated bytes.
    struct Cell {
        var tag: UInt8
        /// The integer (tag integer), the bit pattern (real), or where the bytes start (text, blob).
        var number: Int64
        /// The byte count of a text or blob.
        var length: Int32
    }

    /// An inflated block. Its columns are parsed when first read (a recount reads half of
    /// them), each once. Not thread-safe: one connection's readers use it.
    final class Inflated {
        /// The inflated bytes.
        let bytes: [UInt8]
        /// How many rows and columns it holds.
        let rowCount: Int
        let columnCount: Int
        /// Where each column's stream starts in `bytes` (and, last, where the final one ends).
        private let starts: [Int]
        /// Per column, once parsed: where each row's value lies (`rowCount` cells). Held
        /// through pointers the block owns, so reading a cell (once for every column of every
        /// row a statement reads) takes no reference count: an array of arrays took a retain
        /// and a release a cell, 4% of a recount of sealed events.
        private let parsed: UnsafeMutablePointer<UnsafeMutablePointer<Cell>?>

        /// Inflates a block written by `encode` and reads its shape; throws `Corrupt` when it is
        /// not one (zlib's checksum covers every byte of it).
        init(compressed: UnsafeRawBufferPointer) throws {
            var at = 0
            // Deflate never shrinks data more than about 1,032 times: a larger length is damage.
            guard let plainCount = EventBlock.readVarint(compressed, &at), plainCount <= UInt64(compressed.count) * 1_100 + 64 else {
                throw Corrupt(description: "the block's length is missing or impossible")
            }
            var plain = [UInt8](repeating: 0, count: Int(plainCount))
            var produced = uLong(plainCount)
            let status = plain.withUnsafeMutableBufferPointer { out in
                uncompress(out.baseAddress, &produced, compressed.baseAddress!.assumingMemoryBound(to: UInt8.self) + at, uLong(compressed.count - at))
            }
            guard status == Z_OK, produced == uLong(plainCount) else {
                throw Corrupt(description: "the block does not inflate (zlib status \(status))")
            }
            (rowCount, columnCount, starts) = try plain.withUnsafeBytes { plain in
                var at = 1
                guard plain.count > 0, plain[0] == format else { throw Corrupt(description: "unknown block format") }
                guard let rows = EventBlock.readVarint(plain, &at), let columns = EventBlock.readVarint(plain, &at), rows < 1 << 24, columns < 1 << 12 else {
                    throw Corrupt(description: "the block's shape is missing")
                }
                var lengths: [Int] = []
                for _ in 0..<columns {
                    guard let length = EventBlock.readVarint(plain, &at), length < 1 << 40 else { throw Corrupt(description: "a column length is missing") }
                    lengths.append(Int(length))
                }
                var starts = [at]
                for length in lengths { starts.append(starts[starts.count - 1] + length) }
                guard starts[starts.count - 1] == plain.count else { throw Corrupt(description: "the column lengths do not add up") }
                return (Int(rows), Int(columns), starts)
            }
            bytes = plain
            parsed = .allocate(capacity: columnCount)
            parsed.initialize(repeating: nil, count: columnCount)
        }

        deinit {
            for column in 0..<columnCount { parsed[column]?.deallocate() }
            parsed.deallocate()
        }

        /// The cell of `row` in `column`.
        func cell(row: Int, column: Int) throws -> Cell {
            if let cells = parsed[column] { return cells[row] }
            let cells = UnsafeMutablePointer<Cell>.allocate(capacity: rowCount)
            do {
                try parse(column, into: cells)
            } catch {
                cells.deallocate()
                throw error
            }
            parsed[column] = cells
            return cells[row]
        }

        /// Parses column `c` into `cells` (room for `rowCount`; `Cell` is trivial, so cells a
        /// damaged column leaves unwritten need no deinitializing).
        private func parse(_ c: Int, into cells: UnsafeMutablePointer<Cell>) throws {
            try bytes.withUnsafeBytes { plain in
                var p = starts[c]
                let stop = starts[c + 1]
                var previous: Int64 = 0
                for r in 0..<rowCount {
                    guard p < stop, let tag = Tag(rawValue: plain[p]) else { throw Corrupt(description: "column \(c) is cut short") }
                    p += 1
                    var cell = Cell(tag: tag.rawValue, number: 0, length: 0)
                    switch tag {
                    case .null:
                        break
                    case .integer:
                        guard let z = EventBlock.readVarint(plain, &p) else { throw Corrupt(description: "column \(c) is cut short") }
                        previous = previous &+ EventBlock.unzigzag(z)
                        cell.number = previous
                    case .real:
                        guard p + 8 <= stop else { throw Corrupt(description: "column \(c) is cut short") }
                        cell.number = Int64(littleEndian: plain.loadUnaligned(fromByteOffset: p, as: Int64.self))
                        p += 8
                    case .text, .blob:
                        guard let length = EventBlock.readVarint(plain, &p), length <= UInt64(stop - p) else {
                            throw Corrupt(description: "column \(c) is cut short")
                        }
                        cell.number = Int64(p)
                        cell.length = Int32(length)
                        p += Int(length)
                    }
                    (cells + r).initialize(to: cell)
                }
                guard p == stop else { throw Corrupt(description: "column \(c) has bytes left over") }
            }
        }

        /// The value of `row` in `column`, as it was encoded.
        func value(row: Int, column: Int) throws -> Value {
            let cell = try cell(row: row, column: column)
            switch Tag(rawValue: cell.tag)! {
            case .null: return .null
            case .integer: return .integer(cell.number)
            case .real: return .real(Double(bitPattern: UInt64(bitPattern: cell.number)))
            case .text: return .text(Array(bytes[Int(cell.number)..<Int(cell.number) + Int(cell.length)]))
            case .blob: return .blob(Array(bytes[Int(cell.number)..<Int(cell.number) + Int(cell.length)]))
            }
        }

        /// The integer of `row` in `column` (0 when the value is not an integer).
        func integer(row: Int, column: Int) throws -> Int64 {
            let cell = try cell(row: row, column: column)
            return cell.tag == Tag.integer.rawValue ? cell.number : 0
        }

        /// Every value of every row, row by row.
        func rows() throws -> [[Value]] {
            try (0..<rowCount).map { row in try (0..<columnCount).map { try value(row: row, column: $0) } }
        }
    }

    /// Whether a cell is NULL, an integer, a real or text (else a blob), SQLite's fundamental types.
    static func isNull(_ cell: Cell) -> Bool { cell.tag == Tag.null.rawValue }
    static func isInteger(_ cell: Cell) -> Bool { cell.tag == Tag.integer.rawValue }
    static func isReal(_ cell: Cell) -> Bool { cell.tag == Tag.real.rawValue }
    static func isText(_ cell: Cell) -> Bool { cell.tag == Tag.text.rawValue }

    // MARK: - Varints

    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    static func unzigzag(_ z: UInt64) -> Int64 { Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1) }

    /// Varints as cube parts write them (LEB128: seven bits a byte, low first).
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) { CubePart.appendVarint(value, to: &out) }
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ at: inout Int) -> UInt64? { CubePart.readVarint(bytes, &at) }
}
