/*!
 A hand-driven SchedulingClock for tests. In auto-advance mode every sleep returns at once and
 moves virtual time forward by the requested amount, so retry loops run instantly while their
 delays are recorded and their time bounds still apply. In gated mode a sleep suspends until
 the test calls `advance(by:)`, so a test can hold the QuotaBucket at a chosen instant and
 look at who is waiting.
 */

import Foundation
import HudsonGmail
import Synchronization

final class ManualClock: Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var sleeps: [Duration] = []
        var sleepers: [Sleeper] = []
        var nextID = 0
        var timerWaits = 0
        var beforeNextWait: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    private let autoAdvance: Bool
    /// The wall-clock date at virtual time zero.
    let epoch: Date

    init(autoAdvance: Bool = true, epoch: Date = Date(timeIntervalSince1970: 1_733_140_800)) {
        self.autoAdvance = autoAdvance
        self.epoch = epoch
    }

    var now: Duration { state.withLock { $0.now } }

    /// Every duration passed to `sleep`, in call order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Sleeps waiting for `advance` (gated mode).
    var pendingSleepers: Int { state.withLock { $0.sleepers.count } }

    /// Calls of `sleep(until:)` so far, those that returned at once included (a timer due
    /// now never waits, so a busy loop of timers leaves `pendingSleepers` at 0).
    var timerWaits: Int { state.withLock { $0.timerWaits } }

    var scheduling: SchedulingClock {
        SchedulingClock(
            now: { self.now },
            sleep: { try await self.sleep($0) },
            sleepUntil: { try await self.sleep(until: $0) },
            wallClock: { self.epoch.addingTimeInterval(self.now.inSecondsForTests) }
        )
    }

    /// Sleeps for `duration`, recorded in `sleeps`.
    func sleep(_ duration: Duration) async throws {
        try await wait(recording: duration) { now in now + duration }
    }

    /// Sleeps until the clock reads `deadline` (a timer; not recorded in `sleeps`).
    func sleep(until deadline: Duration) async throws {
        state.withLock { $0.timerWaits += 1 }
        try await wait(recording: nil) { _ in deadline }
    }

    /// Runs `action` once, at the start of the next sleep of either kind, before its
    /// deadline is worked out: a test's way to make time pass between a sleeper's decision
    /// to sleep and its wait.
    func beforeNextWait(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.beforeNextWait = action }
    }

    /// The one way to wait. The deadline is worked out under the lock, from the time at
    /// that moment, so an `advance` is either before the wait (and counted) or after it
    /// (and wakes it).
    private func wait(recording duration: Duration?, deadline: @escaping @Sendable (Duration) -> Duration) async throws {
        try Task.checkCancellation()
        state.withLock { state in defer { state.beforeNextWait = nil }; return state.beforeNextWait }?()
        if autoAdvance {
            state.withLock {
                if let duration { $0.sleeps.append(duration) }
                $0.now = max($0.now, deadline($0.now))
            }
            return
        }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            if let duration { state.sleeps.append(duration) }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    let due = deadline(state.now)
                    if due <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: due, continuation: continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

extension Duration {
    var inSecondsForTests: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Polls `condition` until it holds; false if it still does not after 300 s. Polls yield (no
/// sleeping) at first, then sleep a millisecond between polls. The bound is in time, not polls,
/// and generous: a condition may wait for a server's thread and URLSession, which a machine busy
/// with other builds runs slowly, or for another task, which parallel suites can keep from
/// running for a minute or more; 200,000 yields lasted well under a second when the pool was free.
func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .seconds(300))
    var polls = 0
    while true {
        if await condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        polls += 1
        if polls < 10_000 { await Task.yield() } else { try? await Task.sleep(for: .milliseconds(1)) }
    }
}

/// A lock-protected value that closures running on other tasks and threads may share.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
