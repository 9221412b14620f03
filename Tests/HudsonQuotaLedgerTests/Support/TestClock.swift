/*!
 One hand-driven time for the buckets and the ledgers of a test (after HudsonGmailTests'
 ManualClock, which this target cannot import): the buckets read it as a SchedulingClock, the
 ledgers as nanoseconds from `origin`. Auto-advancing, every sleep returns at once and moves
 time on; gated, a sleep waits for `advance(by:)`. `set(_:)` moves it anywhere, backwards
 too, as a reboot moves CLOCK_BOOTTIME.
 */
import Foundation
import HudsonGmail
import Synchronization

final class TestClock: Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var sleepers: [Sleeper] = []
        var nextID = 0
    }

    private let state = Mutex(State())
    private let autoAdvance: Bool
    /// The ledgers' reading at time zero, as if the machine had been up a while.
    let origin: Int64

    init(autoAdvance: Bool, origin: Int64 = 1_000_000_000_000) {
        self.autoAdvance = autoAdvance
        self.origin = origin
    }

    var now: Duration { state.withLock { $0.now } }
    var pendingSleepers: Int { state.withLock { $0.sleepers.count } }

    /// The ledgers' clock.
    var nanoseconds: @Sendable () -> Int64 {
        { let (seconds, attoseconds) = self.now.components
          return self.origin + seconds * 1_000_000_000 + attoseconds / 1_000_000_000 }
    }

    var scheduling: SchedulingClock {
        SchedulingClock(
            now: { self.now },
            sleep: { duration in try await self.wait { $0 + duration } },
            sleepUntil: { deadline in try await self.wait { _ in deadline } },
            wallClock: { Date(timeIntervalSince1970: 1_733_140_800) }
        )
    }

    private func wait(deadline: @escaping @Sendable (Duration) -> Duration) async throws {
        try Task.checkCancellation()
        if autoAdvance {
            state.withLock { $0.now = max($0.now, deadline($0.now)) }
            return
        }
        let id = state.withLock { state -> Int in
            state.nextID += 1
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
        set(now + duration)
    }

    /// Moves time to `instant` (backwards too) and wakes every sleeper whose deadline has come.
    func set(_ instant: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = instant
            let due = state.sleepers.filter { $0.deadline <= instant }
            state.sleepers.removeAll { $0.deadline <= instant }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// Polls `condition` with yields (no sleeping) until it holds; false if it never does.
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<200_000 {
        if await condition() { return true }
        await Task.yield()
    }
    return false
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
