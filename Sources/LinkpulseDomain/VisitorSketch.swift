import Foundation

/// A mergeable count of distinct visitors.
///
/// Exact while it holds at most `exactLimit` visitors (sorted 64-bit hashes), a HyperLogLog of
/// 2^14 registers beyond (standard error 0.8%, estimated with Ertl's improved estimator, which
/// has no bias to correct in any range). Merging sketches gives the sketch of the union, so a
/// count over any set of rollup rows is exact up to 1,000 visitors and within about 2% beyond.
public struct VisitorSketch: Sendable, Equatable {
    /// Sets up to this size stay exact.
    public static let exactLimit = 1_000
    static let precision = 14
    static let registerCount = 1 << precision

    enum Storage: Sendable, Equatable {
        /// Sorted, without repeats: merging two is one linear pass, with no hashing.
        case exact([UInt64])
        case registers([UInt8])
    }

    var storage: Storage

    public init() { storage = .exact([]) }

    /// The 64-bit hash of a visitor id that sketches count. Stable across processes and
    /// versions (FNV-1a over UTF-8, finished with a MurmurHash3 mix so every bit avalanches).
    public static func hash(_ visitorId: String) -> UInt64 {
        var id = visitorId
        return id.withUTF8 { hash(utf8: $0) }
    }

    /// `hash(_:)` of a visitor id's UTF-8 bytes (read straight from storage, no `String` made).
    public static func hash(utf8 bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }

    /// Adds one visitor by its `hash(_:)`.
    public mutating func insert(hash: UInt64) {
        switch storage {
        case .exact(var sorted):
            storage = .exact([])  // keeps `sorted` uniquely referenced while it changes
            var low = 0, high = sorted.count
            while low < high {
                let mid = (low + high) / 2
                if sorted[mid] < hash { low = mid + 1 } else { high = mid }
            }
            if low < sorted.count && sorted[low] == hash {
                storage = .exact(sorted)
                return
            }
            sorted.insert(hash, at: low)
            storage = sorted.count > Self.exactLimit ? .registers(Self.registers(of: sorted)) : .exact(sorted)
        case .registers(var registers):
            storage = .exact([])
            Self.update(&registers, hash)
            storage = .registers(registers)
        }
    }

    /// Adds every visitor of `other`.
    public mutating func merge(_ other: VisitorSketch) {
        if other.isEmpty { return }
        switch (storage, other.storage) {
        case (.exact(let mine), .exact(let theirs)):
            let union = Self.union(mine, theirs)
            storage = union.count > Self.exactLimit ? .registers(Self.registers(of: union)) : .exact(union)
        case (.registers(var registers), .exact(let theirs)):
            storage = .exact([])
            registers.withUnsafeMutableBufferPointer { target in for h in theirs { Self.update(target, h) } }
            storage = .registers(registers)
        case (.exact(let mine), .registers(var registers)):
            registers.withUnsafeMutableBufferPointer { target in for h in mine { Self.update(target, h) } }
            storage = .registers(registers)
        case (.registers(var registers), .registers(let theirs)):
            storage = .exact([])
            registers.withUnsafeMutableBufferPointer { target in
                theirs.withUnsafeBufferPointer { source in
                    for i in 0..<Self.registerCount { target[i] = max(target[i], source[i]) }
                }
            }
            storage = .registers(registers)
        }
    }

    /// Adds every visitor of a stored sketch (`serialized`), reading registers or hashes
    /// straight from the bytes: no copy of a stored sketch per row once this one holds
    /// registers (stats merge thousands of rows of hour sketches a request).
    public mutating func merge(serialized bytes: UnsafeRawBufferPointer) {
        let hashCount = (bytes.count - 1) / 8
        let isRegisters = bytes.first == 1 && bytes.count == 1 + Self.registerCount
        let isHashes = bytes.first == 0 && (bytes.count - 1) % 8 == 0
        guard isRegisters || isHashes, case .registers(var registers) = storage else {
            if isRegisters, case .exact(let mine) = storage {
                storage = .registers(Self.registers(of: mine))
                return merge(serialized: bytes)
            }
            return merge(VisitorSketch(serialized: bytes))
        }
        storage = .exact([])  // keeps `registers` uniquely referenced while it changes
        registers.withUnsafeMutableBufferPointer { target in
            if isRegisters {
                for i in 0..<Self.registerCount { target[i] = max(target[i], bytes[1 + i]) }
            } else {
                // Order and repeats do not matter to registers: no check of the stored order.
                for i in 0..<hashCount {
                    Self.update(target, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 1 + i * 8, as: UInt64.self)))
                }
            }
        }
        storage = .registers(registers)
    }

    /// The sorted union of two sorted arrays without repeats.
    static func union(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var result: [UInt64] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] { result.append(a[i]); i += 1 }
            else if b[j] < a[i] { result.append(b[j]); j += 1 }
            else { result.append(a[i]); i += 1; j += 1 }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }

    static func registers(of hashes: [UInt64]) -> [UInt8] {
        var registers = [UInt8](repeating: 0, count: registerCount)
        registers.withUnsafeMutableBufferPointer { target in for h in hashes { update(target, h) } }
        return registers
    }

    /// The number of distinct visitors: exact up to `exactLimit`, estimated beyond.
    public var count: Int {
        switch storage {
        case .exact(let sorted): sorted.count
        case .registers(let registers): Int(Self.estimate(registers).rounded())
        }
    }

    public var isEmpty: Bool { if case .exact(let sorted) = storage { sorted.isEmpty } else { false } }

    private static func update(_ registers: inout [UInt8], _ hash: UInt64) {
        registers.withUnsafeMutableBufferPointer { update($0, hash) }
    }

    @inline(__always)
    private static func update(_ registers: UnsafeMutableBufferPointer<UInt8>, _ hash: UInt64) {
        let index = Int(hash >> UInt64(64 - precision))
        let rest = hash << UInt64(precision)
        let rank = UInt8(min(rest.leadingZeroBitCount, 64 - precision) + 1)
        if rank > registers[index] { registers[index] = rank }
    }

    /// Ertl, "New cardinality estimation algorithms for HyperLogLog sketches" (2017), the
    /// improved raw estimator: unbiased from a handful of visitors to billions.
    static func estimate(_ registers: [UInt8]) -> Double {
        let q = 64 - precision
        var histogram = [Int](repeating: 0, count: q + 2)
        for r in registers { histogram[Int(r)] += 1 }
        let m = Double(registerCount)
        var z = m * tau(1 - Double(histogram[q + 1]) / m)
        for k in stride(from: q, through: 1, by: -1) { z = 0.5 * (z + Double(histogram[k])) }
        z += m * sigma(Double(histogram[0]) / m)
        return m * m / (2 * log(2.0)) / z
    }

    private static func sigma(_ x: Double) -> Double {
        if x == 1 { return .infinity }
        var x = x, y = 1.0, z = x, previous = 0.0
        repeat {
            x *= x
            previous = z
            z += x * y
            y += y
        } while z != previous
        return z
    }

    private static func tau(_ x: Double) -> Double {
        if x == 0 || x == 1 { return 0 }
        var x = x, y = 1.0, z = 1 - x, previous = 0.0
        repeat {
            x = x.squareRoot()
            previous = z
            y *= 0.5
            z -= (1 - x) * (1 - x) * y
        } while z != previous
        return z / 3
    }
}

extension VisitorSketch {
    /// The stored form: tag 0 then sorted 8-byte little-endian hashes, or tag 1 then the
    /// registers. Readers accept exactly what writers produce; anything else is empty.
    public var serialized: [UInt8] {
        switch storage {
        case .exact(let sorted):
            var bytes = [UInt8](repeating: 0, count: 1 + sorted.count * 8)
            bytes.withUnsafeMutableBytes { raw in
                for (i, h) in sorted.enumerated() { raw.storeBytes(of: h.littleEndian, toByteOffset: 1 + i * 8, as: UInt64.self) }
            }
            return bytes
        case .registers(let registers):
            return [1] + registers
        }
    }

    /// The stored form of the sketch of exactly the visitors `sortedDistinct` (ascending
    /// hashes, no repeats), appended to `bytes`: the bytes `serialized` gives for that sketch,
    /// without building it (rollup passes write hundreds of thousands of small ones).
    public static func appendSerialized(sortedDistinct hashes: UnsafeBufferPointer<UInt64>, to bytes: inout [UInt8]) {
        if hashes.count > exactLimit { return appendSerialized(manyHashes: hashes, to: &bytes) }
        bytes.append(0)
        for h in hashes { withUnsafeBytes(of: h.littleEndian) { bytes.append(contentsOf: $0) } }
    }

    /// Appends the stored form of the sketch of `hashes` when they hold more than `exactLimit`
    /// distinct values: registers, which read the hashes in any order, repeats and all.
    public static func appendSerialized(manyHashes hashes: UnsafeBufferPointer<UInt64>, to bytes: inout [UInt8]) {
        var registers = [UInt8](repeating: 0, count: registerCount)
        registers.withUnsafeMutableBufferPointer { target in for h in hashes { update(target, h) } }
        bytes.append(1)
        bytes.append(contentsOf: registers)
    }

    /// How many bytes `appendSerialized` writes for `count` distinct visitors.
    public static func serializedLength(distinct count: Int) -> Int {
        count > exactLimit ? 1 + registerCount : 1 + 8 * count
    }

    /// Reads `serialized` bytes back.
    public init(serialized bytes: UnsafeRawBufferPointer) {
        self.init()
        guard let tag = bytes.first else { return }
        if tag == 1, bytes.count == 1 + Self.registerCount {
            storage = .registers(Array(bytes[1...]))
        } else if tag == 0, (bytes.count - 1) % 8 == 0 {
            var sorted: [UInt64] = []
            sorted.reserveCapacity((bytes.count - 1) / 8)
            var ordered = true
            for i in stride(from: 1, to: bytes.count, by: 8) {
                let h = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if let last = sorted.last, last >= h { ordered = false }
                sorted.append(h)
            }
            // Writers store sorted hashes; anything else is repaired rather than trusted.
            if !ordered { sorted = Array(Set(sorted)).sorted() }
            storage = sorted.count > Self.exactLimit ? .registers(Self.registers(of: sorted)) : .exact(sorted)
        }
    }

    public init(serialized bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { VisitorSketch(serialized: $0) }
    }
}

/// Unions many sketches at once: exact visitors are collected and sorted once at the end,
/// instead of one merge (and one new array) per sketch added.
public struct VisitorSketchUnion: Sendable {
    var hashes: [UInt64] = []
    var estimated: VisitorSketch?

    public init() {}

    /// Adds every visitor of `sketch`.
    public mutating func add(_ sketch: VisitorSketch) {
        switch sketch.storage {
        case .exact(let sorted): hashes.append(contentsOf: sorted)
        case .registers: estimated = estimated.map { var e = $0; e.merge(sketch); return e } ?? sketch
        }
    }

    /// The union of everything added.
    public var sketch: VisitorSketch {
        var result = VisitorSketch()
        if !hashes.isEmpty {
            var sorted = hashes.sorted()
            var kept = 0
            for h in sorted where kept == 0 || sorted[kept - 1] != h {
                sorted[kept] = h
                kept += 1
            }
            sorted.removeLast(sorted.count - kept)
            result.storage = sorted.count > VisitorSketch.exactLimit ? .registers(VisitorSketch.registers(of: sorted)) : .exact(sorted)
        }
        if let estimated { result.merge(estimated) }
        return result
    }
}
