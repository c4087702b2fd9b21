import Foundation

/// Numbers by the bytes of an event's four link columns (ref, campaign, source, medium, as
/// SQLite hands them over), for a rollup pass: an event whose columns were met before in the
/// pass gets the number its link values were given from one hash of those bytes and one
/// comparison, instead of four `String`s made and hashed (with the tuple lookups they fed, a
/// fifth of the counting side of a rebuild). It only remembers what the caller decided from
/// the strings, so it answers exactly what that would: the same bytes make the same strings.
struct RawLinkCache {
    /// The key bytes of every entry, one after another.
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    /// An open-addressing table of entry indexes (-1: free), at most half full.
    private var slots = [Int32](repeating: -1, count: 1 << 12)
    /// The key being looked up: built by `key(_:)`, then passed to `insert` after a miss.
    private(set) var scratch: [UInt8] = []

    private struct Entry {
        var hash: UInt64
        var offset: Int
        var length: Int
        var number: UInt32
    }

    /// The longest value a key holds (longer ones are not cached: the caller takes the slow way).
    static let maxValueBytes = Int(UInt16.max)

    /// Builds the key of four nullable text values (each `nil` for SQL NULL) into `scratch`;
    /// false when a value is too long to cache.
    mutating func key(_ values: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?)) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        // One value after the other (no array of the four made per event).
        return append(values.0) && append(values.1) && append(values.2) && append(values.3)
    }

    private mutating func append(_ value: UnsafeBufferPointer<UInt8>?) -> Bool {
        guard let value else {
            scratch.append(0)
            return true
        }
        guard value.count <= Self.maxValueBytes else { return false }
        // A NULL and an empty value differ, and lengths keep the values apart.
        scratch.append(1)
        scratch.append(UInt8(truncatingIfNeeded: value.count))
        scratch.append(UInt8(truncatingIfNeeded: value.count >> 8))
        scratch.append(contentsOf: value)
        return true
    }

    /// The number remembered for the key in `scratch`, or nil.
    func lookup() -> UInt32? {
        let hash = Self.hash(scratch)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            let entry = entries[index]
            if entry.hash == hash && entry.length == scratch.count && matches(entry) { return entry.number }
            slot = (slot + 1) & mask
        }
    }

    /// Remembers `number` for the key in `scratch` (after `lookup` found none).
    mutating func insert(_ number: UInt32) {
        if 2 * (entries.count + 1) > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            for index in entries.indices { place(index) }
        }
        entries.append(Entry(hash: Self.hash(scratch), offset: arena.count, length: scratch.count, number: number))
        arena.append(contentsOf: scratch)
        place(entries.count - 1)
    }

    private mutating func place(_ index: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: entries[index].hash) & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(index)
    }

    private func matches(_ entry: Entry) -> Bool {
        arena.withUnsafeBufferPointer { stored in
            scratch.withUnsafeBufferPointer { key in
                memcmp(stored.baseAddress! + entry.offset, key.baseAddress!, key.count) == 0
            }
        }
    }

    /// A fast hash of the key, eight bytes at a time (a multiply-xorshift mix per word).
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            var offset = 0
            while offset + 8 <= raw.count {
                h = mix(h ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < raw.count {
                tail |= UInt64(raw[offset]) << shift
                shift += 8
                offset += 1
            }
            return mix(h ^ tail)
        }
    }

    private static func mix(_ x: UInt64) -> UInt64 {
        var h = x &* 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        h ^= h >> 29
        return h
    }
}
