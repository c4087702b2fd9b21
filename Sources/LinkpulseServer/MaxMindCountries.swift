import CMaxMindDB
import CSystemTuning
import Foundation
import LinkpulseDomain

/// Countries from an MMDB file the operator points at (`--geoip`: GeoLite2 Country or City, DB-IP
/// Lite, or any database with `country.iso_code`), read with the system's libmaxminddb.
///
/// libmaxminddb maps its file into memory. It maps a private copy here (an anonymous in-memory
/// file), so the file on disk may be replaced or overwritten in place, as `cp` does, while the
/// daemon reads: a mapping of the file itself would then read half-written data, or fault
/// when the file shrank. The next load (`SIGHUP`) reads the new file.
final class MaxMindCountries: CountryLookup, @unchecked Sendable {
    // MMDB_s is read-only after MMDB_open, and libmaxminddb's lookups are thread-safe on it.
    private let database: UnsafeMutablePointer<MMDB_s>

    /// Whether `bytes` are an MMDB file: its metadata starts after the marker
    /// `\xAB\xCD\xEFMaxMind.com`, within the file's last 128 KiB.
    static func isMMDB(_ bytes: Data) -> Bool {
        let marker = Data([0xAB, 0xCD, 0xEF] + Array("MaxMind.com".utf8))
        let tail = bytes.suffix(128 << 10)
        return tail.range(of: marker) != nil
    }

    /// Opens the database whose file (at `path`) holds `bytes`.
    init(path: String, bytes: Data) throws {
        let copy = linkpulse_private_file("linkpulse-geoip")
        guard copy >= 0 else { throw AudienceData.Unusable(description: "--geoip \(path): no memory file for its copy (errno \(errno))") }
        defer { close(copy) }
        let written = bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(copy, raw.baseAddress! + offset, raw.count - offset)
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard written else { throw AudienceData.Unusable(description: "--geoip \(path): its copy could not be written (errno \(errno))") }
        database = .allocate(capacity: 1)
        // MMDB_open maps the copy and closes its own descriptor; the mapping outlives ours.
        let status = MMDB_open("/proc/self/fd/\(copy)", UInt32(MMDB_MODE_MMAP), database)
        guard status == MMDB_SUCCESS else {
            database.deallocate()
            throw AudienceData.Unusable(description: "--geoip \(path): \(String(cString: MMDB_strerror(status)))")
        }
    }

    deinit {
        MMDB_close(database)
        database.deallocate()
    }

    /// The database's type as its metadata states it (`GeoLite2-Country`).
    var databaseType: String { database.pointee.metadata.database_type.map { String(cString: $0) } ?? "unnamed" }

    /// When it was built (UTC date).
    var built: String { Timestamp.formatUTC(Int64(database.pointee.metadata.build_epoch) * 1000) }

    func country(of address: String) -> String {
        let address = IPAddress.unmappingIPv4(address)
        var gaiError: Int32 = 0
        var mmdbError: Int32 = 0
        var result = MMDB_lookup_string(database, address, &gaiError, &mmdbError)
        guard gaiError == 0, mmdbError == MMDB_SUCCESS, result.found_entry else { return "" }
        var data = MMDB_entry_data_s()
        // `country` → `iso_code`, NULL-terminated, as MMDB_aget_value takes a path.
        let found = "country".withCString { country in
            "iso_code".withCString { isoCode in
                let path: [UnsafePointer<CChar>?] = [country, isoCode, nil]
                return MMDB_aget_value(&result.entry, &data, path)
            }
        }
        guard found == MMDB_SUCCESS, data.has_data, data.type == UInt32(MMDB_DATA_TYPE_UTF8_STRING), data.data_size == 2,
            let text = data.utf8_string
        else { return "" }
        let code = String(decoding: UnsafeRawBufferPointer(start: text, count: 2), as: UTF8.self)
        return code.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? code : ""
    }
}
