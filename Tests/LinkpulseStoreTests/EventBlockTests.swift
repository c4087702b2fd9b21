import Foundation
import LinkpulseDomain
import Testing

@testable import LinkpulseStore

/// A sealed block gives back every value exactly as it was stored, with its storage class.
@Suite struct EventBlockTests {
    static func randomValue(_ rng: inout SplitMix64, column: Int) -> EventBlock.Value {
        switch rng.next() % 7 {
        case 0: return .null
        case 1: return .integer(Int64(bitPattern: rng.next()))
        case 2: return .integer(Int64(rng.next() % 1_000) - 500)
        case 3: return .real(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
        case 4: return .text(Array((["", "summer-sale", "ünïcødé ✓", "a\u{0}b"][Int(rng.next() % 4)] + "\(column)").utf8))
        case 5: return .blob((0..<Int(rng.next() % 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        default: return .blob([])
        }
    }

    @Test func everyValueComesBackExactly() throws {
        var rng = SplitMix64(seed: 7)
        for (rowCount, columnCount) in [(1, 1), (3, 26), (1_024, 26), (300, 5)] {
            var rows = (0..<rowCount).map { r in (0..<columnCount).map { Self.randomValue(&rng, column: $0 + r % 3) } }
            rows[0][0] = .integer(.min)
            if rowCount > 1 { rows[1][0] = .integer(.max) }  // the largest jump a delta can make
            let encoded = EventBlock.encode(rows: rows, columnCount: columnCount)
            let block = try encoded.withUnsafeBytes { try EventBlock.Inflated(compressed: $0) }
            #expect(block.rowCount == rowCount && block.columnCount == columnCount)
            for r in 0..<rowCount {
                for c in 0..<columnCount where try block.value(row: r, column: c) != rows[r][c] {
                    Issue.record("row \(r) column \(c): \(try block.value(row: r, column: c)) instead of \(rows[r][c])")
                }
            }
        }
    }

    @Test func consecutiveSeqsAndRepeatedLinksCompress() throws {
        let rows: [[EventBlock.Value]] = (0..<1_024).map { i in
            [.integer(1_000_000 + Int64(i)), .integer(1_795_000_000_000 + Int64(i) * 350), .text(Array("summer-sale".utf8)), .null]
        }
        let encoded = EventBlock.encode(rows: rows, columnCount: 4)
        #expect(encoded.count < 1_024 * 4, "\(encoded.count) bytes for 1,024 rows")
    }

    @Test func aDamagedBlockIsRefusedNotMisread() {
        let rows: [[EventBlock.Value]] = (0..<50).map { [.integer(Int64($0)), .text(Array("ref-\($0)".utf8))] }
        let encoded = EventBlock.encode(rows: rows, columnCount: 2)
        for damaged in [Array(encoded.prefix(encoded.count / 2)), [], [0x05, 0x01, 0x02], encoded.map { $0 ^ 0x5A }] {
            #expect(throws: EventBlock.Corrupt.self) { try damaged.withUnsafeBytes { try EventBlock.Inflated(compressed: $0) } }
        }
    }
}
