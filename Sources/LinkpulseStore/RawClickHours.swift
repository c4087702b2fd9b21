import LinkpulseDomain

/// The non-bot clicks of whole UTC hours, read from the raw events and kept by fingerprint for
/// one attribution round: what a fingerprint lookup before the on-disk index's span finds
/// (`DiskClicks`, see `SQLiteTuning.fingerprintClicksKeptMs`).
///
/// Why hours, read once a round: the events that arrive that late come in numbers, from the
/// same days (a phone that was offline for weeks, a batch an app held back), and each one's
/// window is two hours of every click. Read per lookup, a window was scanned again for every
/// event in it (a replay of 10 M generated events, 2% of them held back to the end, went from
/// 84 s to 190 s); read per hour, each hour is read once for all of them.
///
/// Bounded: past `maxClicks`, the hours read first are dropped (and read again if asked for).
final class RawClickHours {
    /// A click of an hour: its time, seq and OS version (major.minor).
    struct Click {
        var ms: Int64
        var seq: Int64
        var osVersion: String?
    }

    /// The hours read, by hour since 1970: each fingerprint's clicks, newest first.
    private var hours: [Int64: [Fingerprint: [Click]]] = [:]
    /// The hours held, in the order they were read (the first goes first).
    private var readOrder: [Int64] = []
    /// How many clicks the hours held have.
    private(set) var held = 0
    let maxClicks: Int
    /// Reads one hour's clicks by fingerprint, and how many (`EventStore.rawClicks(ofHour:)`).
    private let readHour: (Int64) throws -> (byFingerprint: [Fingerprint: [Click]], count: Int)

    init(readHour: @escaping (Int64) throws -> (byFingerprint: [Fingerprint: [Click]], count: Int), maxClicks: Int = 500_000) {
        self.readHour = readHour
        self.maxClicks = maxClicks
    }

    /// The clicks with this fingerprint in [fromMs, throughMs] stored before seq `storedBefore`,
    /// newest first (of clicks at the same instant, the one stored last first).
    func clicks(
        with fingerprint: Fingerprint, from fromMs: Int64, through throughMs: Int64, storedBefore: Int64
    ) throws -> [RecentClicks.FingerprintMatch] {
        var found: [RecentClicks.FingerprintMatch] = []
        let firstHour = TimeGrain.floor(fromMs, TimeGrain.hourMs) / TimeGrain.hourMs
        var hour = TimeGrain.floor(throughMs, TimeGrain.hourMs) / TimeGrain.hourMs
        while hour >= firstHour {
            for click in try clicks(ofHour: hour)[fingerprint] ?? []
            where click.ms >= fromMs && click.ms <= throughMs && click.seq < storedBefore {
                found.append(RecentClicks.FingerprintMatch(ms: click.ms, seq: click.seq, osVersion: click.osVersion))
            }
            hour -= 1
        }
        return found
    }

    /// One hour's clicks by fingerprint, read when not held.
    private func clicks(ofHour hour: Int64) throws -> [Fingerprint: [Click]] {
        if let held = hours[hour] { return held }
        let (byFingerprint, count) = try readHour(hour)
        while held + count > maxClicks, let oldest = readOrder.first {
            readOrder.removeFirst()
            held -= hours.removeValue(forKey: oldest)?.values.reduce(0) { $0 + $1.count } ?? 0
        }
        hours[hour] = byFingerprint
        readOrder.append(hour)
        held += count
        return byFingerprint
    }
}
