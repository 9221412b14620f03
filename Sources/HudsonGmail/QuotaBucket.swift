/*!
 The per-user quota scheduler (local-first-sync.md "QuotaBucket"; gmail-api.md §3: 6,000
 units per user per minute, per-method costs in GmailMethod). A rolling one-minute ledger of
 admitted units, with two lanes: `.interactive` (someone is waiting: triage, send, on-demand
 hydration) is always served before `.background` (polling, backfill, hydration), and
 background is admitted only while its own usage in the window stays within a reserved share
 of the budget, so it can never saturate the window and a foreground archive stays instant.
 A 429 shrinks what the bucket admits until the window clears. Callers charge *before* they
 send, so the bucket bounds what reaches Gmail rather than reacting to what already did.
 */

/// Who is waiting for a request: decides priority and which share of the budget it may use.
public enum QuotaLane: String, Sendable, Hashable, CaseIterable {
    /// A person is waiting (triage, send, opening a message). Served first.
    case interactive
    /// Nobody is waiting (polling, backfill, hydration). Capped to a share of the budget.
    case background
}

/// Usage of the current rolling window, for progress lines.
public struct QuotaStats: Sendable, Equatable {
    /// Units admitted to the interactive lane in the last window.
    public var interactiveUnits: Int
    /// Units admitted to the background lane in the last window.
    public var backgroundUnits: Int
    /// What the whole window admits now (lower than the budget while penalised).
    public var effectiveBudget: Int
    /// What background may use of it.
    public var backgroundBudget: Int
    public var waitingInteractive: Int
    public var waitingBackground: Int

    /// Units admitted to both lanes in the last window.
    public var totalUnits: Int { interactiveUnits + backgroundUnits }
}

/// A rolling-minute, two-lane limiter of Gmail quota units.
public actor QuotaBucket {
    /// Budget and policy.
    public struct Configuration: Sendable, Equatable {
        /// Units per window for one user (gmail-api.md §3: 6,000 per minute).
        public var budget: Int
        /// Share of the (effective) budget background may use, in 0...1.
        public var backgroundShare: Double
        /// The rolling window.
        public var window: Duration
        /// Multiplier applied to the effective budget by each 429, compounding.
        public var penaltyFactor: Double
        /// The effective budget never drops below budget × this.
        public var minimumFactor: Double
        /// A penalty lasts one window, or the server's Retry-After when longer, capped here.
        public var maximumPenalty: Duration

        public init(
            budget: Int = 6_000, backgroundShare: Double = 0.7, window: Duration = .seconds(60),
            penaltyFactor: Double = 0.5, minimumFactor: Double = 0.125, maximumPenalty: Duration = .seconds(600)
        ) {
            self.budget = max(1, budget)
            self.backgroundShare = min(1, max(0, backgroundShare))
            self.window = window
            self.penaltyFactor = min(1, max(0.01, penaltyFactor))
            self.minimumFactor = min(1, max(0.01, minimumFactor))
            self.maximumPenalty = maximumPenalty
        }
    }

    private struct Entry {
        var time: Duration
        var units: Int
        var lane: QuotaLane
    }

    private struct Waiter {
        var id: UInt64
        var units: Int
        var lane: QuotaLane
        var continuation: CheckedContinuation<Duration, any Error>
    }

    private struct Limits {
        var total: Int
        var background: Int
    }

    public let configuration: Configuration
    private let clock: SchedulingClock
    /// Admissions in time order; pruned to the current window.
    private var ledger: [Entry] = []
    private var interactiveQueue: [Waiter] = []
    private var backgroundQueue: [Waiter] = []
    private var nextWaiterID: UInt64 = 0
    private var factor: Double = 1
    private var penaltyUntil: Duration?
    /// Deadlines of wake-up tasks in flight; a new one is started only when it is earlier.
    private var timers: [Duration] = []

    public init(configuration: Configuration = Configuration(), clock: SchedulingClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
    }

    /// Waits until `units` fit the window for `lane`, then records them. Throws
    /// `CancellationError` if the task is cancelled while waiting (nothing is charged then).
    ///
    /// A request larger than its lane's limit is admitted only into an empty window, so it
    /// cannot wait forever; that is the one case in which a limit is exceeded.
    /// - Returns: the clock instant at which the units were admitted.
    @discardableResult
    public func acquire(units: Int, lane: QuotaLane) async throws -> Duration {
        try Task.checkCancellation()
        let units = max(0, units)
        let now = clock.now()
        prune(now)
        let queueAhead = lane == .interactive ? !interactiveQueue.isEmpty : !(interactiveQueue.isEmpty && backgroundQueue.isEmpty)
        if !queueAhead, fits(units, lane: lane, usage: usage(), limits: limits(at: now)) {
            ledger.append(Entry(time: now, units: units, lane: lane))
            return now
        }
        nextWaiterID += 1
        let id = nextWaiterID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Duration, any Error>) in
                let waiter = Waiter(id: id, units: units, lane: lane, continuation: continuation)
                if lane == .interactive { interactiveQueue.append(waiter) } else { backgroundQueue.append(waiter) }
                pump()
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Records a rate-limit response: the effective budget shrinks by `penaltyFactor` (down to
    /// `minimumFactor`) until one window, or `retryAfter` seconds if longer, has passed.
    public func penalize(retryAfter: Double?) {
        let now = clock.now()
        refreshPenalty(now)
        factor = max(configuration.minimumFactor, factor * configuration.penaltyFactor)
        var length = configuration.window
        if let retryAfter, retryAfter.isFinite, retryAfter > length.inSeconds {
            length = min(.seconds(retryAfter), configuration.maximumPenalty)
        }
        penaltyUntil = max(penaltyUntil ?? now, now + length)
    }

    /// Units used per lane in the current window, the effective limits and the queue lengths.
    public func stats() -> QuotaStats {
        let now = clock.now()
        prune(now)
        let used = usage()
        let limit = limits(at: now)
        return QuotaStats(
            interactiveUnits: used.total - used.background, backgroundUnits: used.background,
            effectiveBudget: limit.total, backgroundBudget: limit.background,
            waitingInteractive: interactiveQueue.count, waitingBackground: backgroundQueue.count
        )
    }

    // MARK: - Scheduling

    /// Admits every waiter that may go now, interactive first, then arranges to run again
    /// when the head waiter could next fit.
    private func pump() {
        let now = clock.now()
        prune(now)
        let limit = limits(at: now)
        while let head = interactiveQueue.first, fits(head.units, lane: .interactive, usage: usage(), limits: limit) {
            interactiveQueue.removeFirst()
            admit(head, at: now)
        }
        // Strict priority: background waits while any interactive request waits.
        if interactiveQueue.isEmpty {
            while let head = backgroundQueue.first, fits(head.units, lane: .background, usage: usage(), limits: limit) {
                backgroundQueue.removeFirst()
                admit(head, at: now)
            }
        }
        guard let head = interactiveQueue.first ?? backgroundQueue.first else { return }
        schedule(at: earliestAdmission(units: head.units, lane: head.lane, now: now))
    }

    private func admit(_ waiter: Waiter, at now: Duration) {
        ledger.append(Entry(time: now, units: waiter.units, lane: waiter.lane))
        waiter.continuation.resume(returning: now)
    }

    private func schedule(at deadline: Duration) {
        if let earliest = timers.min(), earliest <= deadline { return }
        timers.append(deadline)
        let clock = self.clock
        Task {
            // An instant, not a duration: time that passes before the task runs is not
            // slept twice, and a jump of the clock in between cannot strand the timer.
            try? await clock.sleepUntil(deadline)
            self.timerFired(deadline)
        }
    }

    private func timerFired(_ deadline: Duration) {
        if let index = timers.firstIndex(of: deadline) { timers.remove(at: index) }
        pump()
    }

    private func cancelWaiter(_ id: UInt64) {
        if let index = interactiveQueue.firstIndex(where: { $0.id == id }) {
            interactiveQueue.remove(at: index).continuation.resume(throwing: CancellationError())
        } else if let index = backgroundQueue.firstIndex(where: { $0.id == id }) {
            backgroundQueue.remove(at: index).continuation.resume(throwing: CancellationError())
        }
        // A departed head may have been what held the others back.
        pump()
    }

    // MARK: - Accounting

    private func prune(_ now: Duration) {
        refreshPenalty(now)
        let cutoff = now - configuration.window
        if let firstKept = ledger.firstIndex(where: { $0.time > cutoff }) {
            if firstKept > 0 { ledger.removeFirst(firstKept) }
        } else {
            ledger.removeAll()
        }
    }

    private func refreshPenalty(_ now: Duration) {
        if let until = penaltyUntil, now >= until {
            penaltyUntil = nil
            factor = 1
        }
    }

    private func usage() -> (total: Int, background: Int) {
        ledger.reduce(into: (0, 0)) { sum, entry in
            sum.0 += entry.units
            if entry.lane == .background { sum.1 += entry.units }
        }
    }

    private func limits(at time: Duration) -> Limits {
        let penalised = penaltyUntil.map { time < $0 } ?? false
        let total = max(1, Int(Double(configuration.budget) * (penalised ? factor : 1)))
        let background = max(1, Int(Double(total) * configuration.backgroundShare))
        return Limits(total: total, background: background)
    }

    private func fits(_ units: Int, lane: QuotaLane, usage: (total: Int, background: Int), limits: Limits) -> Bool {
        if usage.total == 0 { return true }
        guard usage.total + units <= limits.total else { return false }
        return lane == .interactive || usage.background + units <= limits.background
    }

    /// The first instant at which `units` would fit for `lane`: usage only falls when an
    /// entry leaves the window and limits only rise when a penalty ends, so those instants
    /// are the only candidates. One pass over the time-ordered ledger.
    private func earliestAdmission(units: Int, lane: QuotaLane, now: Duration) -> Duration {
        var remaining = usage()
        var penaltyEnd = penaltyUntil.flatMap { $0 > now ? $0 : nil }
        var index = 0
        while index < ledger.count {
            let expiry = ledger[index].time + configuration.window
            if let end = penaltyEnd, end < expiry {
                if fits(units, lane: lane, usage: remaining, limits: limits(at: end)) { return end }
                penaltyEnd = nil
            }
            while index < ledger.count, ledger[index].time + configuration.window == expiry {
                remaining.total -= ledger[index].units
                if ledger[index].lane == .background { remaining.background -= ledger[index].units }
                index += 1
            }
            if fits(units, lane: lane, usage: remaining, limits: limits(at: expiry)) { return expiry }
        }
        return max(now, penaltyEnd ?? now)
    }
}
