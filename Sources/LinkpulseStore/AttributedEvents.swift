import Foundation
import GRDB
import LinkpulseDomain
import Synchronization

/// How far the attribution follower has come in this process, and the tasks waiting for it to
/// pass a seq (an app waiting for its answer): woken when a round commits, or at their deadline.
final class AttributionProgress: Sendable {
    private struct Waiter {
        var seq: Int64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var through: Int64 = 0
        var nextId = 0
        var waiters: [Int: Waiter] = [:]
    }

    private let state = Mutex(State())

    /// Records that every event through `seq` is attributed, and wakes who waited for it.
    func advance(to seq: Int64) {
        let ready = state.withLock { s -> [Waiter] in
            s.through = max(s.through, seq)
            let done = s.waiters.filter { $0.value.seq <= s.through }
            for id in done.keys { s.waiters[id] = nil }
            return Array(done.values)
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Starts over at `seq` (the attribution was reset).
    func restart(at seq: Int64) {
        state.withLock { $0.through = seq }
    }

    /// Waits until the follower has attributed `seq`, at most `timeout`; false when it had not.
    func wait(for seq: Int64, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { s -> Int? in
                guard s.through < seq else { return nil }
                s.nextId += 1
                s.waiters[s.nextId] = Waiter(seq: seq, continuation: continuation)
                return s.nextId
            }
            guard let id else { return continuation.resume(returning: true) }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }
}

/// What a read of one event's attribution found.
public enum AttributedEventRead: Sendable, Equatable {
    /// No event is stored under that seq or id.
    case notStored
    /// The event is stored, but the follower had not attributed it within the wait.
    case pending
    case attributed(AttributedEvent)
}

extension AppDatabase {
    /// The seq of the event stored under exactly this id, or nil (a reader; the writer's tail
    /// and the id index, as at ingest).
    public func storedSeq(ofEventId id: String) async throws -> Int64? {
        try await pool.read { db in
            try self.storedSeq(
                db, id: id, key: EventIdKey.of(id),
                IdLookups(indexed: try db.cachedStatement(sql: self.queries.indexedSeqsForKey), stored: try db.cachedStatement(sql: self.queries.eventIdAtSeq)))
        }
    }

    /// The stored event `seq` with its attribution, waiting up to `wait` for the follower to
    /// reach it (it runs moments after each commit). Clicks are answered as not attributed
    /// (`match` nil), like bots.
    public func attributedEvent(seq: Int64, wait: Duration) async throws -> AttributedEventRead {
        let deadline = ContinuousClock.now + wait
        while true {
            guard let (event, through) = try await readAttributedEvent(seq: seq) else { return .notStored }
            if through >= seq { return .attributed(event) }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .pending }
            // A round at normal priority: the follower runs after the load, an app waits now.
            followCommitsUrgently()
            _ = await attributionProgress.wait(for: seq, timeout: left)
        }
    }

    /// One read of `answer/attributed_event.sql`: the event and the attribution watermark.
    func readAttributedEvent(seq: Int64) async throws -> (AttributedEvent, through: Int64)? {
        try await pool.read { db in
            let s = HotStatement(try db.cachedStatement(sql: self.queries.attributedEvent), in: db)
            try s.bind(1, seq)
            guard try s.step() else { return nil }
            defer { s.finish() }
            let click = s.isNull(13) ? nil : AnsweredClick(
                id: s.text(13) ?? "", occurredAtMs: s.int64(14), url: s.text(15), properties: s.text(16),
                dimensions: LinkDimensions(ref: s.text(17), campaign: s.text(18), source: s.text(19), medium: s.text(20)))
            let event = AttributedEvent(
                seq: seq, kind: CompactEvent.kind(code: s.int64(0)), isBot: s.int64(1) != 0, isResolve: !s.isNull(2),
                own: LinkDimensions(ref: s.text(3), campaign: s.text(4), source: s.text(5), medium: s.text(6)),
                url: s.text(7), properties: s.text(8),
                match: s.text(10).flatMap(MatchType.init(rawValue:)), click: click,
                candidates: s.isNull(12) ? nil : Int(s.int64(12)), firstResolveSeq: s.isNull(21) ? nil : s.int64(21))
            return (event, s.int64(9))
        }
    }
}
