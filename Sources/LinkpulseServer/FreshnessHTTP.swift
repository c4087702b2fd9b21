import HTTPTypes
import Hummingbird
import LinkpulseDomain
import Synchronization

/// One daemon's `RecountWatch`, shared by whatever reads its progress (stats answers,
/// `/readyz`, `/metrics`, the admin API).
final class RecountTracker: Sendable {
    private let watch: Mutex<RecountWatch>

    /// The tracker of a store whose progress was `storedThroughSeq` and `countedThroughSeq`
    /// when it opened.
    init(storedThroughSeq: Int64, countedThroughSeq: Int64) {
        watch = Mutex(RecountWatch(storedThroughSeq: storedThroughSeq, countedThroughSeq: countedThroughSeq))
    }

    /// Takes one reading (see `RecountWatch.observe`).
    func observe(storedThroughSeq: Int64, countedThroughSeq: Int64) -> Int64? {
        watch.withLock { $0.observe(storedThroughSeq: storedThroughSeq, countedThroughSeq: countedThroughSeq) }
    }
}

/// A stats answer with its freshness beside its own fields: `counted_through` (RFC 3339, UTC:
/// every stored event received before it is counted in the answer) and `lag_seconds`.
struct FreshAnswer<Answer: Encodable>: Encodable {
    let answer: Answer
    let freshness: Freshness?

    enum CodingKeys: String, CodingKey {
        case countedThrough = "counted_through", lagSeconds = "lag_seconds"
    }

    func encode(to encoder: any Encoder) throws {
        try answer.encode(to: encoder)
        guard let freshness else { return }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Timestamp.formatUTC(freshness.countedThroughMs), forKey: .countedThrough)
        try c.encode(freshness.lagSeconds, forKey: .lagSeconds)
    }
}

extension HTTPField.Name {
    /// Every stored event received before this instant (RFC 3339, UTC) is counted in the answer.
    static let linkpulseCountedThrough = Self("Linkpulse-Counted-Through")!
    /// How long the oldest stored event the answer does not count yet has waited, in seconds.
    static let linkpulseLagSeconds = Self("Linkpulse-Lag-Seconds")!
}

extension HTTPFields {
    /// The freshness headers of an answer counted from the rollups (none when unknown).
    static func freshness(_ freshness: Freshness?) -> HTTPFields {
        guard let freshness else { return [:] }
        return [.linkpulseCountedThrough: Timestamp.formatUTC(freshness.countedThroughMs), .linkpulseLagSeconds: "\(freshness.lagSeconds)"]
    }
}
