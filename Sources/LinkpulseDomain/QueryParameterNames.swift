/// The query parameters each read endpoint takes. A name it does not take (`?campain=spring`)
/// is refused with a `400` naming it, so a typo never answers as if no filter had been given.
/// `key` (a read key in the URL) is taken everywhere and checked before these.
public enum QueryParameterNames {
    /// Range, zone, link filters and bots: every stats and CSV export endpoint.
    public static let common: Set<String> = ["from", "to", "tz", "campaign", "ref", "source", "medium", "platform", "include_bots"]
    /// The audience filters (`country`, `device`…): the stats and their exports, not the raw
    /// events (`events.csv` filters by link dimensions only; its rows carry the audience).
    public static let audience = Set(StatsDimension.audience.map(\.rawValue))
    /// What every stats answer and its export takes.
    public static let stats = common.union(audience)
    /// A breakdown's order and page.
    public static let page: Set<String> = ["by", "sort", "order", "limit", "offset"]

    public static let summary = stats
    public static let breakdown = stats.union(page)
    public static let timeseries = stats.union(["interval"])
    /// `export.csv`: a breakdown's or a time series' parameters.
    public static let statsExport = breakdown.union(["interval"])
    public static let eventsExport = common
    /// `GET /v1/links`: its page, and with `stats=true` the range, zone and bots of the figures.
    public static let links: Set<String> = ["limit", "offset", "stats", "from", "to", "tz", "include_bots"]
    /// `qr.png`.
    public static let qrCode: Set<String> = ["scale"]
    /// `GET /v1/admin/quarantine`.
    public static let quarantine: Set<String> = ["limit"]

    /// Those taken by every endpoint.
    public static let everywhere: Set<String> = ["key"]

    /// Refuses the first name of `given` (in order) that `known` lacks, naming it, the closest
    /// known name when one is a likely typo, and every name the endpoint takes.
    public static func refuseUnknown(_ given: some Sequence<String>, known: Set<String>) throws(ParameterError) {
        for name in given where !known.contains(name) && !everywhere.contains(name) {
            let closest = known.map { (name: $0, distance: editDistance($0, name)) }
                .filter { $0.distance <= max(1, $0.name.count / 3) }
                .min { ($0.distance, $0.name) < ($1.distance, $1.name) }
            let hint = closest.map { " Did you mean `\($0.name)`?" } ?? ""
            let takes = known.isEmpty ? "This endpoint takes no query parameters." : "This endpoint takes \(known.sorted().map { "`\($0)`" }.joined(separator: ", "))."
            throw ParameterError(name, "`\(name)` is not a parameter here.\(hint) \(takes)")
        }
    }

    /// The edits (insertions, deletions, substitutions, swaps of neighbours) from one short
    /// name to another: `campain` → `campaign` and `srot` → `sort` are one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }
}
