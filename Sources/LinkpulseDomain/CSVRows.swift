/// CSV text as Linkpulse writes it (RFC 4180, UTF-8): rows end in CRLF; a cell holding a quote,
/// comma, CR or LF is quoted with its quotes doubled; an empty cell is a missing value.
///
/// Spreadsheet safety: a text cell starting with `=`, `+`, `-`, `@`, tab, CR or LF would be run
/// as a formula by Excel, LibreOffice or Google Sheets, so it gets a leading `'`. So that every
/// value can be read back exactly, a text cell that itself starts with `'` gets one too: a reader
/// drops one leading `'` from any text cell (`CSVRows.restoreText`). Numbers are never prefixed.
public struct CSVRows: Sendable {
    /// The encoded rows so far.
    public private(set) var bytes: [UInt8] = []
    private var atRowStart = true

    public init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer (keeping its capacity), for writers that flush in chunks.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        atRowStart = true
    }

    /// Appends a header or data row of text cells.
    public mutating func row(_ cells: [String?]) {
        for cell in cells { text(cell) }
        endRow()
    }

    /// Appends a text cell (empty when nil), neutralised and quoted as needed.
    public mutating func text(_ value: String?) {
        separate()
        guard var value else { return }
        value.withUTF8 { appendText($0) }
    }

    /// Appends a text cell from UTF-8 bytes (for example straight from SQLite).
    public mutating func text(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        appendText(value)
    }

    private mutating func appendText(_ value: UnsafeBufferPointer<UInt8>) {
        guard let first = value.first else { return }
        let prefixed = Self.needsPrefix(first)
        var needsQuotes = false
        for byte in value where byte == 0x22 || byte == 0x2C || byte == 0x0D || byte == 0x0A {
            needsQuotes = true
            break
        }
        if needsQuotes { bytes.append(0x22) }
        if prefixed { bytes.append(0x27) }
        if needsQuotes {
            for byte in value {
                if byte == 0x22 { bytes.append(0x22) }
                bytes.append(byte)
            }
            bytes.append(0x22)
        } else {
            bytes.append(contentsOf: value)
        }
    }

    /// Appends a whole number.
    public mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(0x2D) }
        appendDigits(value.magnitude, minimumCount: 1)
    }

    /// Appends a whole number.
    public mutating func integer(_ value: Int) { integer(Int64(value)) }

    /// Appends a ratio as a decimal with exactly 4 places (`0.1250`), empty when undefined.
    public mutating func rate(_ value: Double?) {
        guard let value, value.isFinite else {
            separate()
            return
        }
        let scaled = Int64((value * 10_000).rounded(.toNearestOrAwayFromZero))
        separate()
        if scaled < 0 { bytes.append(0x2D) }
        let (whole, fraction) = scaled.magnitude.quotientAndRemainder(dividingBy: 10_000)
        appendDigits(whole, minimumCount: 1)
        bytes.append(0x2E)
        appendDigits(fraction, minimumCount: 4)
    }

    /// Appends an instant as RFC 3339 with the zone's offset, like `ZoneClock.format`
    /// (`2026-11-21T14:03:07.250+05:30`), written straight into the buffer; empty when nil.
    public mutating func timestamp(_ ms: Int64?, clock: ZoneClock) {
        separate()
        guard let ms else { return }
        let offset = clock.offsetMs(at: ms)
        let (seconds, millis) = (ms + offset).quotientAndRemainderFloored(dividingBy: 1000)
        let (days, secondOfDay) = seconds.quotientAndRemainderFloored(dividingBy: 86_400)
        let date = Timestamp.civilFromDays(Int(days))
        appendDigits(UInt64(max(date.year, 0)), minimumCount: 4)
        bytes.append(0x2D)
        appendDigits(UInt64(date.month), minimumCount: 2)
        bytes.append(0x2D)
        appendDigits(UInt64(date.day), minimumCount: 2)
        bytes.append(0x54)
        appendDigits(UInt64(secondOfDay / 3600), minimumCount: 2)
        bytes.append(0x3A)
        appendDigits(UInt64(secondOfDay % 3600 / 60), minimumCount: 2)
        bytes.append(0x3A)
        appendDigits(UInt64(secondOfDay % 60), minimumCount: 2)
        if millis != 0 {
            bytes.append(0x2E)
            appendDigits(UInt64(millis), minimumCount: 3)
        }
        let offsetMinutes = offset / 60_000
        bytes.append(offsetMinutes < 0 ? 0x2D : 0x2B)
        appendDigits(UInt64(abs(offsetMinutes) / 60), minimumCount: 2)
        bytes.append(0x3A)
        appendDigits(UInt64(abs(offsetMinutes) % 60), minimumCount: 2)
    }

    /// Ends the current row with CRLF.
    public mutating func endRow() {
        bytes.append(0x0D)
        bytes.append(0x0A)
        atRowStart = true
    }

    /// Undoes the spreadsheet neutralisation of a text cell read back by a CSV parser.
    public static func restoreText(_ cell: String) -> String {
        cell.first == "'" ? String(cell.dropFirst()) : cell
    }

    /// Whether a text cell starting with this byte gets a leading `'`.
    static func needsPrefix(_ first: UInt8) -> Bool {
        switch first {
        case 0x3D, 0x2B, 0x2D, 0x40, 0x09, 0x0D, 0x0A, 0x27: true  // = + - @ tab CR LF '
        default: false
        }
    }

    private mutating func separate() {
        if atRowStart {
            atRowStart = false
        } else {
            bytes.append(0x2C)
        }
    }

    /// Appends the decimal digits of `value`, zero-padded to `minimumCount`, in one pass over
    /// reserved bytes (no temporary slices: this runs several times per exported row).
    private mutating func appendDigits(_ value: UInt64, minimumCount: Int) {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        count = max(count, minimumCount)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(0x30), count: count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var rest = value
            var index = start + count - 1
            while rest > 0 {
                buffer[index] = 0x30 + UInt8(rest % 10)
                rest /= 10
                index -= 1
            }
        }
    }
}

extension CSVRows {
    /// The metric columns of stats exports, named as in the JSON API, `installs_by_match` and
    /// `opens_by_match` spread over five columns each (the opens' last, so that the columns
    /// older files have keep their places).
    public static let metricColumns = [
        "clicks", "unique_clicks", "fallbacks", "installs", "opens", "deferred_opens",
        "install_rate", "open_rate", "fallback_rate",
        "installs_install_referrer", "installs_click_id", "installs_ref", "installs_fingerprint", "installs_organic", "bot_events",
        "opens_install_referrer", "opens_click_id", "opens_ref", "opens_fingerprint", "opens_organic",
    ]

    /// Appends the cells of `metricColumns` (the row is not ended).
    public mutating func metrics(_ m: ConversionMetrics) {
        for count in [m.clicks, m.uniqueClicks, m.fallbacks, m.installs, m.opens, m.deferredOpens] { integer(count) }
        rate(m.installRate)
        rate(m.openRate)
        rate(m.fallbackRate)
        let (installs, opens) = (m.installsByMatch, m.opensByMatch)
        for count in [installs.installReferrer, installs.clickId, installs.ref, installs.fingerprint, installs.organic, m.botEvents] { integer(count) }
        for count in [opens.installReferrer, opens.clickId, opens.ref, opens.fingerprint, opens.organic] { integer(count) }
    }
}
