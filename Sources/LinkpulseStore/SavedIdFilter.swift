import CZlib
import Foundation

/// The id filter (`IdFilter`) kept in a file beside the id index between a clean close and the
/// next open, so that a start loads it instead of reading every key of the index to build it
/// again (about 2.5 s per 10 M ids before the daemon listens: two minutes at 500 M).
///
/// Why it is safe: the filter must hold every key of the index, or an id the index holds would
/// be taken as new and stored twice. The file is used only when the index is still exactly the
/// one it was saved over (`Covers`: the installation, the watermark and the number of keys, which
/// every merge changes), its words pass a checksum, and it is deleted once read, so it only ever
/// exists while the store is closed; a crash leaves none, and the filter is built as before.
struct SavedIdFilter {
    /// What a saved filter was built over.
    struct Covers: Equatable {
        /// The installation (`EventStore.databaseId`).
        var databaseId: String
        /// The seq through which every id is in the index.
        var indexedThrough: Int64
        /// Keys in the index, both levels.
        var keys: Int
    }

    /// The file's name in the data directory.
    static let fileName = "linkpulse-ids.filter"

    /// The first bytes of the file, with the format's version.
    static let magic: [UInt8] = Array("LPIDFLT1".utf8)

    /// Writes `filter` to `url` (through a temporary file renamed over it, so a file there is
    /// always whole).
    static func save(_ filter: IdFilter, covering covers: Covers, to url: URL) throws {
        #if _endian(big)
        let (capacity, count, bits) = { (f: (Int, Int, [UInt64])) in (f.0, f.1, f.2.map(\.littleEndian)) }(filter.saved)
        #else
        let (capacity, count, bits) = filter.saved
        #endif
        var header = magic
        let id = Array(covers.databaseId.utf8)
        for value in [Int64(capacity), Int64(count), covers.indexedThrough, Int64(covers.keys), Int64(bits.count), Int64(id.count)] {
            withUnsafeBytes(of: value.littleEndian) { header.append(contentsOf: $0) }
        }
        header.append(contentsOf: id)
        var sum = Checksum()
        sum.add(header)
        bits.withUnsafeBytes { sum.add($0) }
        let temporary = url.appendingPathExtension("tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        let file = try FileHandle(forWritingTo: temporary)
        do {
            try file.write(contentsOf: header)
            try bits.withUnsafeBytes { try file.write(contentsOf: $0) }
            try withUnsafeBytes(of: sum.value.littleEndian) { try file.write(contentsOf: $0) }
            try file.synchronize()
            try file.close()
        } catch {
            try? file.close()
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        guard rename(temporary.path, url.path) == 0 else {
            let error = CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The filter saved at `url` when it covers exactly `covers` and is whole; nil otherwise
    /// (none, another index, a damaged or truncated file). Deletes the file either way.
    static func load(from url: URL, expecting covers: Covers) -> IdFilter? {
        defer { try? FileManager.default.removeItem(at: url) }
        guard let data = try? Data(contentsOf: url, options: .alwaysMapped) else { return nil }
        return data.withUnsafeBytes { raw -> IdFilter? in
            var reader = Reader(bytes: raw)
            guard reader.take(magic.count).map(Array.init) == magic,
                  let capacity = reader.int64(), let count = reader.int64(), let through = reader.int64(),
                  let keys = reader.int64(), let words = reader.int64(), let idLength = reader.int64(),
                  idLength >= 0, idLength < 1 << 10, let id = reader.take(Int(idLength)),
                  String(decoding: id, as: UTF8.self) == covers.databaseId, through == covers.indexedThrough, keys == Int64(covers.keys),
                  case let headerEnd = reader.at,
                  words >= 0, words < Int64.max / 8, let wordBytes = reader.take(Int(words) * 8),
                  let stored = reader.int64(), reader.atEnd
            else { return nil }
            var sum = Checksum()
            sum.add(UnsafeRawBufferPointer(rebasing: raw[0..<headerEnd]))
            sum.add(wordBytes)
            guard UInt64(bitPattern: stored) == sum.value else { return nil }
            var bits = [UInt64](unsafeUninitializedCapacity: Int(words)) { buffer, initialized in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: wordBytes)
                initialized = Int(words)
            }
            #if _endian(big)
            for i in bits.indices { bits[i] = UInt64(littleEndian: bits[i]) }
            #endif
            return IdFilter(capacity: Int(capacity), count: Int(count), bits: bits)
        }
    }

    /// Reads the file's fields in order.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { at == bytes.count }

        mutating func take(_ n: Int) -> UnsafeRawBufferPointer? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)])
        }

        mutating func int64() -> Int64? {
            take(8).map { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        }
    }

    /// The CRC-32 of the file's bytes (zlib's), fed in parts: any damage to the words must make
    /// the file unusable, not a filter that misses keys.
    private struct Checksum {
        private var crc: UInt = crc32_z(0, nil, 0)

        /// Stored in the file's last 8 bytes.
        var value: UInt64 { UInt64(crc) }

        mutating func add(_ bytes: [UInt8]) { bytes.withUnsafeBytes { add($0) } }

        mutating func add(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress else { return }
            crc = crc32_z(crc, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }
}
