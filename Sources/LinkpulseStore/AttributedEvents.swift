import Foundation
import GRDB
import LinkpulseDomain
import Synchronization

/// How far the attribution follower has come in this process, and the tasks waiting for it to
/// pass a seq (an app waiting for its answer): woken when a round commits, or at their deadline
/// by one `DeadlineTimer` armed for the earliest. A round that reads the answers its waiters want hands them over
/// with the wake-up, so a waiter does not read its own (a hop to a reader and a query each).
final class AttributionProgress: Sendable {
    /// How a wait ended.
    enum Reached: Sendable {
        /// The seq is attributed and the round read its answer (as `readAttributedEvent`).
        case answered(AttributedEvent)
        /// The seq is attributed; the answer is for the waiter to read.
        case attributed
        /// The deadline came first.
        case timedOut
    }

    private struct Waiter {
        var seq: Int64
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Reached, Never>
    }

    private struct State {
        var through: Int64 = 0
        var nextId = 0
        var waiters: [Int: Waiter] = [:]
        /// Seqs of stored resolves whose callers will wait for their answers but may not have
        /// begun to yet (see `expect`).
        var expected: Set<Int64> = []
        /// Answers a round read for an expected seq before its caller began to wait, by seq,
        /// with when they were parked (see `advance`).
        var parked: [Int64: (answer: AttributedEvent, at: ContinuousClock.Instant)] = [:]
    }

    private let state = Mutex(State())
    /// Ends the waits past their deadline (`expire`).
    private let deadlines = DeadlineTimer(label: "linkpulse.attribution.deadlines")

    init() {
        deadlines.onFire { [weak self] in self?.expire() }
    }

    /// Ends the waits past their deadline; returns the earliest deadline left.
    private func expire() -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let (expired, next) = state.withLock { s -> ([Waiter], ContinuousClock.Instant?) in
            let expired = s.waiters.filter { $0.value.deadline <= now }
            for id in expired.keys { s.waiters[id] = nil }
            return (Array(expired.values), s.waiters.values.lazy.map(\.deadline).min())
        }
        for waiter in expired { waiter.continuation.resume(returning: .timedOut) }
        return next
    }

    /// How long a parked answer waits for its caller before it is dropped (the caller then
    /// reads it itself).
    static let parkedFor: Duration = .seconds(10)

    /// Records that every event through `seq` is attributed, and wakes who waited for it, with
    /// their answer when `answers` holds it. An answer for an expected seq whose caller has not
    /// begun to wait yet is parked for it (`wait` takes it).
    func advance(to seq: Int64, answers: [Int64: AttributedEvent] = [:]) {
        let now = ContinuousClock.now
        let ready = state.withLock { s -> [Waiter] in
            s.through = max(s.through, seq)
            var done: [Waiter] = []
            if !s.waiters.isEmpty {
                let reached = s.waiters.filter { $0.value.seq <= s.through }
                for id in reached.keys { s.waiters[id] = nil }
                done = Array(reached.values)
            }
            if !s.expected.isEmpty {
                let through = s.through
                let due = s.expected.filter { $0 <= through }
                s.expected.subtract(due)
                let served = Set(done.lazy.map(\.seq))
                for seq in due where !served.contains(seq) {
                    if let answer = answers[seq] { s.parked[seq] = (answer, now) }
                }
            }
            if s.parked.count > 256 {
                s.parked = s.parked.filter { now - $0.value.at < Self.parkedFor }
            }
            return done
        }
        for waiter in ready {
            waiter.continuation.resume(returning: answers[waiter.seq].map(Reached.answered) ?? .attributed)
        }
    }

    /// Says that callers will wait for the answers of these stored seqs (the resolves of a
    /// commit, told by the writer before it wakes a round): a round reads their answers even
    /// when it runs before the callers begin to wait, and parks them (see `advance`).
    func expect(_ seqs: some Sequence<Int64>) {
        state.withLock { s in
            for seq in seqs where seq > s.through { s.expected.insert(seq) }
        }
    }

    /// The seqs at or before `seq` that someone waits for or is expected to: the answers a
    /// round through `seq` can hand over.
    func awaitedSeqs(through seq: Int64) -> Set<Int64> {
        state.withLock { s in
            var seqs = Set(s.waiters.values.lazy.filter { $0.seq <= seq }.map(\.seq))
            for expected in s.expected where expected <= seq { seqs.insert(expected) }
            return seqs
        }
    }

    /// How many answers are parked for callers that have not taken them yet.
    var parkedCount: Int { state.withLock { $0.parked.count } }

    /// The seq through which this process has seen every event attributed.
    var through: Int64 { state.withLock { $0.through } }

    /// Starts over at `seq` (the attribution was reset).
    func restart(at seq: Int64) {
        state.withLock { $0.through = seq }
    }

    /// Waits until the follower has attributed `seq`, at most `timeout`. For a seq already
    /// attributed it returns at once, with the answer a round parked for it if there is one.
    @discardableResult
    func wait(for seq: Int64, timeout: Duration) async -> Reached {
        let deadline = ContinuousClock.now + timeout
        return await withCheckedContinuation { continuation in
            let reached = state.withLock { s -> Reached? in
                guard s.through < seq else { return s.parked.removeValue(forKey: seq).map { .answered($0.answer) } ?? .attributed }
                s.nextId += 1
                s.waiters[s.nextId] = Waiter(seq: seq, deadline: deadline, continuation: continuation)
                return nil
            }
            if let reached {
                continuation.resume(returning: reached)
            } else {
                deadlines.arm(by: deadline)
            }
        }
    }
}

/// What a read of one event's attribution found.
public enum AttributedEventRead: Sendable, Equatable {
    /// No event is stored under that seq or id.
    case notStored
    /// The event was stored, but retention has deleted its raw row since (and its attribution).
    case expired
    /// The event is stored, but the follower had not attributed it within the wait.
    case pending
    case attributed(AttributedEvent)
}

/// Where answers about one stored event's attribution come from (`POST /v1/resolve`,
/// `GET /v1/attributions/{id}`): the SQLite store (`StoredAttributions`) or the PostgreSQL one
/// (`PostgresStore`).
public protocol AttributionAnswers: Sendable {
    /// The seq of the event stored under exactly this id, or nil.
    func storedSeq(ofEventId id: String) async throws -> Int64?
    /// The stored event `seq` with its attribution, waiting up to `wait` for the attribution to
    /// reach it.
    func attributedEvent(seq: Int64, wait: Duration) async throws -> AttributedEventRead
}

extension AttributionAnswers {
    /// The event stored under `eventId` with its attribution, waiting up to `wait` for the
    /// attribution to reach it.
    public func attributedEvent(eventId: String, wait: Duration) async throws -> AttributedEventRead {
        guard let seq = try await storedSeq(ofEventId: eventId) else { return .notStored }
        return try await attributedEvent(seq: seq, wait: wait)
    }
}

/// The SQLite store's answers: the id looked up in the events, the answer read through the
/// attribution follower.
public struct StoredAttributions: AttributionAnswers {
    let events: EventStore
    let attribution: AttributionStore

    public init(events: EventStore, attribution: AttributionStore) {
        self.events = events
        self.attribution = attribution
    }

    public func storedSeq(ofEventId id: String) async throws -> Int64? {
        try await events.storedSeq(ofEventId: id)
    }

    public func attributedEvent(seq: Int64, wait: Duration) async throws -> AttributedEventRead {
        try await attribution.attributedEvent(seq: seq, wait: wait)
    }
}

extension AttributionStore {
    /// The stored event `seq` with its attribution, waiting up to `wait` for the follower to
    /// reach it (it runs moments after each commit). Clicks are answered as not attributed
    /// (`match` nil), like bots.
    public func attributedEvent(seq: Int64, wait: Duration) async throws -> AttributedEventRead {
        let deadline = ContinuousClock.now + wait
        // An event just stored is not attributed yet: wait for the round, which hands over the
        // answer it read (or the waiter reads it once). A round that has already passed it may
        // have parked its answer (a resolve the writer told it about): the wait takes it.
        if progress.through < seq { followCommitsUrgently() }
        if case .answered(let event) = await progress.wait(for: seq, timeout: wait) { return .attributed(event) }
        while true {
            guard let (event, through) = try await readAttributedEvent(seq: seq) else {
                // A seq the id index knows whose row is gone was deleted by retention.
                return events.rawHorizon.ms == nil ? .notStored : .expired
            }
            if through >= seq { return .attributed(event) }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .pending }
            // A round at normal priority: the follower runs after the load, an app waits now.
            followCommitsUrgently()
            if case .answered(let event) = await progress.wait(for: seq, timeout: left) { return .attributed(event) }
        }
    }

    /// The answers of the waiters a round through `seq` can serve, read by the round once it
    /// has committed, in one transaction of an events reader: by the seq, each event
    /// attributed through `seq` whose row is there.
    func answersAwaited(through seq: Int64) -> [Int64: AttributedEvent] {
        let awaited = progress.awaitedSeqs(through: seq)
        guard !awaited.isEmpty else { return [:] }
        do {
            return try events.pool.read { db in
                var answers: [Int64: AttributedEvent] = [:]
                for wanted in awaited {
                    if let (event, through) = try attributedEventRow(db, seq: wanted), through >= wanted {
                        answers[wanted] = event
                    }
                }
                return answers
            }
        } catch {
            return [:]  // the waiters read their answers themselves
        }
    }

    /// One read of `answer/attributed_event.sql`: the event and the attribution watermark.
    func readAttributedEvent(seq: Int64) async throws -> (AttributedEvent, through: Int64)? {
        try await events.pool.read { db in try self.attributedEventRow(db, seq: seq) }
    }

    /// `answer/attributed_event.sql` for `seq`, on an events reader: the event and the
    /// attribution watermark.
    func attributedEventRow(_ db: Database, seq: Int64) throws -> (AttributedEvent, through: Int64)? {
        let s = HotStatement(try db.cachedStatement(sql: self.queries.attributedEvent), in: db)
        try s.bind(":seq", seq)
        guard try s.step() else { return nil }
        defer { s.finish() }
        typealias C = AttributedEventColumn
        let click = s.isNull(C.clickEventId) ? nil : AnsweredClick(
            id: s.withStoredId(C.clickEventId) { String(decoding: $0, as: UTF8.self) } ?? "", occurredAtMs: s.int64(C.clickOccurredAtMs),
            url: s.text(C.clickUrl), properties: s.text(C.clickProperties),
            dimensions: LinkDimensions(ref: s.text(C.clickRef), campaign: s.text(C.clickCampaign), source: s.text(C.clickSource), medium: s.text(C.clickMedium)))
        let event = AttributedEvent(
            seq: seq, kind: CompactEvent.kind(code: s.int64(C.type)), isBot: s.int64(C.bot) != 0, isResolve: !s.isNull(C.resolve),
            own: LinkDimensions(ref: s.text(C.ref), campaign: s.text(C.campaign), source: s.text(C.source), medium: s.text(C.medium)),
            url: s.text(C.url), properties: s.text(C.properties),
            match: s.matchType(C.matchType), click: click,
            candidates: s.isNull(C.candidates) ? nil : Int(s.int64(C.candidates)),
            firstResolveSeq: s.isNull(C.firstResolveSeq) ? nil : s.int64(C.firstResolveSeq))
        return (event, s.int64(C.attributedThroughSeq))
    }
}
