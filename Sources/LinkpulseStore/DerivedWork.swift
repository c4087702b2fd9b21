import Foundation
import Synchronization

/// The SQLite daemon's derived work: one loop, on one low-priority thread, that attributes what
/// each commit stored and, when a count is due, counts the attributed events into the rollups.
///
/// A turn of the loop (`AttributionStore.derivedTurn`) does one bounded piece of work and says
/// whether more is left; the loop then queues the next turn behind whatever the thread was
/// given meanwhile (an export's count, the admin endpoint's, a graceful stop). Commits wake it
/// (coalesced: a commit during a turn queues one more), the rollup timer makes a count due
/// (`countSoon`), and each turn does one of:
/// - a rollup pass, when a count is due and what it would count is attributed: every event
///   stored when the count was asked for, or a whole pass's worth;
/// - a step of the housekeeping a timer made due (sealing old events, deleting those past
///   their retention), every other turn while any is due, so that neither it nor attribution
///   waits for the other to finish;
/// - otherwise an attribution round of at most `SQLiteTuning.roundEvents` events.
///
/// Attribution and counting never run at once, so neither waits for the other: a count that
/// has caught up with attribution attributes next, on the same thread, and the attribution
/// file's WAL is started over between two turns with no rollup pass reading it.
///
/// A resolve raises the priority of its own commit's round instead
/// (`AttributionStore.followCommitsUrgently`): a thread's priority can be lowered but not
/// raised again without privileges, so those rounds run on a second thread at normal
/// priority, through the same attribution connection.
final class DerivedWork: Sendable {
    /// The loop's thread, at the rollups' low priority: under a load that takes every core,
    /// ingest comes first (measured: at nice 5 the follower cost batched ingest a quarter of its
    /// throughput) and the derived work catches up after.
    let thread = StoreThread(name: "linkpulse.derived", nice: 10)
    /// Turns asked for (a request during a turn queues the next one).
    private let turns: CoalescedWork
    /// The count due, if any (see `countSoon`).
    private let due = Mutex<CountDue?>(nil)
    /// The housekeeping due, in the order it was made due, each with whoever else asked for it
    /// meanwhile; whether the last turn was one of its steps (see `choreToStep`); and whether
    /// the loop has stopped (no chore is taken after).
    private let chores = Mutex<(due: [(chore: Chore, alsoTold: [Chore.Ended])], lastTurnWasChore: Bool, stopped: Bool)>(([], false, false))

    init() {
        turns = CoalescedWork(on: thread, coversRunning: false)
    }

    /// A count asked for by the rollup timer: every event stored through `targetSeq` (nil
    /// until a turn reads what is stored), in passes of `batch` events, each reported to
    /// `onPass`.
    struct CountDue: Sendable {
        var targetSeq: Int64?
        let batch: Int
        /// Counts one pass of at most `batch` attributed events; returns how many it counted.
        let pass: @Sendable (_ batch: Int) throws -> Int
        /// The seq through which the rollups have counted.
        let rolledThroughSeq: @Sendable () throws -> Int64
        let onPass: @Sendable (Result<(count: Int, took: Duration), any Error>) -> Void
    }

    /// Queues a turn unless one is queued (`turn` returns whether work is left).
    func wake(_ turn: @escaping @Sendable () -> Bool) {
        turns.request(repeating: turn)
    }

    /// Makes `count` due, through what is stored when a turn next looks; false when a count
    /// was due already (its target is then read again, so a backlog is worked off without
    /// waiting for the next tick).
    func countSoon(_ count: CountDue) -> Bool {
        due.withLock { due in
            guard due == nil else {
                due!.targetSeq = nil
                return false
            }
            due = count
            return true
        }
    }

    /// The count due, its target read (`storedThroughSeq`) if no turn has yet; nil when none is.
    func dueCount(storedThroughSeq: () throws -> Int64) rethrows -> CountDue? {
        guard var count = due.withLock({ $0 }) else { return nil }
        if count.targetSeq == nil {
            let target = try storedThroughSeq()
            due.withLock { due in if due != nil, due!.targetSeq == nil { due!.targetSeq = target } }
            count.targetSeq = target
        }
        return count
    }

    /// Whether a count is due.
    var countIsDue: Bool { due.withLock { $0 != nil } }

    /// Ends the count due once everything through its target is counted (unless a tick has
    /// asked for the target to be read again meanwhile), or at once with `rolledThrough` nil (a
    /// pass failed or found nothing: the next tick asks again).
    func countEnded(rolledThrough: Int64?) {
        due.withLock { due in
            guard let current = due else { return }
            if let rolledThrough, rolledThrough < current.targetSeq ?? .max { return }
            due = nil
        }
    }

    /// Housekeeping a timer makes due (sealing, retention): done a bounded step a turn.
    struct Chore: Sendable {
        typealias Ended = @Sendable (Result<Void, any Error>) -> Void
        /// What it is; one chore of a name is due at a time.
        let name: String
        /// One bounded step; returns whether more is left.
        let step: @Sendable () throws -> Bool
        /// Told once, when the last step has run, a step failed or the store closed.
        let ended: Ended
    }

    /// What became of a chore made due.
    enum ChoreTaken {
        /// Due: the loop must be woken.
        case due
        /// One of its name is due already: that one goes on, and the chore's `ended` is told
        /// when it ends.
        case joined
        /// The loop has stopped: the chore's `ended` is told so now.
        case stopped
    }

    /// Makes `chore` due.
    func choreSoon(_ chore: Chore) -> ChoreTaken {
        let taken = chores.withLock { chores -> ChoreTaken in
            if chores.stopped { return .stopped }
            if let at = chores.due.firstIndex(where: { $0.chore.name == chore.name }) {
                chores.due[at].alsoTold.append(chore.ended)
                return .joined
            }
            chores.due.append((chore, []))
            return .due
        }
        if taken == .stopped { chore.ended(.failure(StoreError.closed)) }
        return taken
    }

    /// Whether any housekeeping is due.
    var choresDue: Bool { chores.withLock { !$0.due.isEmpty } }

    /// The chore whose step this turn takes: the first due, unless the last turn took one
    /// (attribution then gets the turn, so a long retention run never holds up the stats).
    func choreToStep() -> Chore? {
        chores.withLock { chores in
            guard let first = chores.due.first, !chores.lastTurnWasChore else {
                chores.lastTurnWasChore = false
                return nil
            }
            chores.lastTurnWasChore = true
            return first.chore
        }
    }

    /// Runs one step of `chore`, ending it when nothing is left or the step failed.
    func step(_ chore: Chore) {
        let outcome: Result<Void, any Error>
        do {
            if try chore.step() { return }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        let alsoTold = chores.withLock { chores -> [Chore.Ended] in
            guard let at = chores.due.firstIndex(where: { $0.chore.name == chore.name }) else { return [] }
            return chores.due.remove(at: at).alsoTold
        }
        chore.ended(outcome)
        for ended in alsoTold { ended(outcome) }
    }

    /// Ends every chore still due with `error`, and any made due later (the store closes).
    func dropChores(_ error: any Error) {
        let dropped = chores.withLock { chores in
            defer { (chores.due, chores.stopped) = ([], true) }
            return chores.due
        }
        for (chore, alsoTold) in dropped {
            chore.ended(.failure(error))
            for ended in alsoTold { ended(.failure(error)) }
        }
    }

    /// Lets the queued turns finish and ends the thread; housekeeping still due ends unfinished
    /// (its timer makes it due again after the next start).
    func stop() {
        thread.stop()
        dropChores(StoreError.closed)
    }
}

extension AttributionStore {
    /// Wakes the derived-work loop for what was just stored (the writer calls it after each
    /// commit, the rollup timer after making a count due). Returns at once.
    func followCommits() {
        derived.wake { [self] in derivedTurn() }
    }

    /// Makes `chore` due on the derived-work loop and wakes it (see `DerivedWork.choreSoon`).
    func choreSoon(_ chore: DerivedWork.Chore) {
        if derived.choreSoon(chore) == .due { followCommits() }
    }

    /// One turn of the derived-work loop (see `DerivedWork`): a rollup pass when a count is
    /// due and ready, else an attribution round. Returns whether work is left.
    func derivedTurn() -> Bool {
        if closing.withLock({ $0 }) { return false }
        do {
            try restartAttributionWALIfWanted()
            let count = try derived.dueCount(storedThroughSeq: { try events.maxSeq() })
            if let count, try countIsReady(count) {
                countPass(count)
                return true
            }
            if let chore = derived.choreToStep() {
                derived.step(chore)
                return true
            }
            let processed = try attributeRound(maxEvents: tuning.roundEvents)
            if closing.withLock({ $0 }) { return false }
            if let count, processed < tuning.roundEvents {
                // Everything stored when the round began is attributed: the count goes on.
                if processed == 0 { countPass(count) }
                return true
            }
            return followerGoesOn(afterRoundOf: processed, batch: tuning.roundEvents) || derived.choresDue
        } catch {
            logger.error("derived work failed; the next commit or rollup tick retries it", metadata: ["error": "\(error)"])
            derived.countEnded(rolledThrough: nil)
            return false
        }
    }

    /// Whether the count's next pass has something whole to count: every event through its
    /// target attributed, or a pass's worth.
    private func countIsReady(_ count: DerivedWork.CountDue) throws -> Bool {
        let attributed = progress.through
        if attributed >= count.targetSeq ?? .max { return true }
        return attributed - (try count.rolledThroughSeq()) >= Int64(count.batch)
    }

    /// One pass of the count due, reported to it; the count ends when it has caught up with its
    /// target, or when a pass fails or finds nothing to count.
    private func countPass(_ count: DerivedWork.CountDue) {
        let start = ContinuousClock.now
        do {
            let counted = try count.pass(count.batch)
            count.onPass(.success((counted, ContinuousClock.now - start)))
            derived.countEnded(rolledThrough: counted == 0 ? nil : try count.rolledThroughSeq())
        } catch {
            count.onPass(.failure(error))
            derived.countEnded(rolledThrough: nil)
        }
    }
}
