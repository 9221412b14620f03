/*!
 The time source shared by the retry loop and the QuotaBucket. Both need "now" on a monotonic
 scale, a way to wait, and (for HTTP-date `Retry-After` values) the wall-clock date. Passing
 them in as one value is what lets the tests drive time by hand: a test clock advances on
 demand and records every requested sleep, so no test ever really waits.
 */

import Foundation

/// A monotonic clock, a sleeper and a wall clock, injectable for tests.
public struct SchedulingClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    public var now: @Sendable () -> Duration
    /// Waits for the given duration; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// Waits until `now()` reaches the given instant (at once if it has); throws
    /// `CancellationError` when the task is cancelled. A timer set for an instant uses this
    /// rather than `sleep(deadline - now())`: time that passes between reading `now` and
    /// starting to wait would otherwise be added to the wait, and a clock that jumps (a
    /// test's, driven by hand) would leave the timer waiting for an instant after the jump.
    public var sleepUntil: @Sendable (Duration) async throws -> Void
    /// The calendar date, used only to turn an HTTP-date `Retry-After` into seconds.
    public var wallClock: @Sendable () -> Date

    public init(
        now: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        sleepUntil: @escaping @Sendable (Duration) async throws -> Void,
        wallClock: @escaping @Sendable () -> Date
    ) {
        self.now = now
        self.sleep = sleep
        self.sleepUntil = sleepUntil
        self.wallClock = wallClock
    }

    /// Real time: `ContinuousClock` for now and sleeping, `Date()` for the wall clock.
    public static var continuous: SchedulingClock {
        let clock = ContinuousClock()
        let origin = clock.now
        return SchedulingClock(
            now: { clock.now - origin },
            sleep: { try await clock.sleep(for: $0) },
            sleepUntil: { try await clock.sleep(until: origin + $0) },
            wallClock: { Date() }
        )
    }
}

extension Duration {
    /// The duration in seconds as a Double.
    var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
