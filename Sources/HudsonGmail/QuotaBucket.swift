/*!
 The per-user quota scheduler (local-first-sync.md "QuotaBucket"; gmail-api.md §3: 6,000
 units per user per minute, per-method costs in GmailMethod). A rolling one-minute ledger of
 admitted units, with two lanes: `.interactive` (someone is waiting: triage, send, on-demand
 hydration) is always served before `.background` (polling, backfill, hydration), and
 background is admitted only while its own usage in the window stays within a reserved share
 of the budget, so it can never saturate the window and a foreground archive stays instant.
 A 429 shrinks what the bucket admits until the window clears: a first one by a fifth, each
 further one while that lasts by half (gmail-api.md §4: "back off and reduce parallelism").
 What background never takes stays free for interactive requests through a penalty. Callers charge *before* they
 send, so the bucket bounds what reaches Gmail rather than reacting to what already did.

 Gmail counts a request when it arrives, which is after the bucket admitted it: the request
 may wait for an HTTP connection or a token, and a batch's parts are counted one by one as
 Gmail reaches them. Were the units to leave the window one window after their admission,
 they would leave before Gmail's, and a request admitted at that moment would find Gmail's
 window still full (a 429 at every turn of a saturated window). So a request's units are
 held while it is in flight (`admit` … `settle`), and leave one window after its answer came,
 the latest moment Gmail can have counted it. `acquire` admits units that are settled at once.

 Across processes (issue 17, point 5): given a `QuotaLedger`, the bucket also admits a request
 only when the window of *every* process of the user has room for it, the same rules applied
 to the shared counts, in one atomic step of the ledger that records it. While the bucket has
 an interactive request waiting it holds a lease in the ledger, renewed while it waits, and no
 other process admits background work while a lease is live; a 429 penalty is shared too.
 The in-process lanes, their priority and the local penalty work as without a ledger; the
 ledger only adds refusals. When the ledger fails, the bucket goes on alone and says so
 (`sharing`), trying the ledger again after `ledgerRetry`.
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
    /// Units of the interactive lane still counted in the window: in flight, or answered
    /// within the last window.
    public var interactiveUnits: Int
    /// Units of the background lane still counted in the window, likewise.
    public var backgroundUnits: Int
    /// What the whole window admits now (lower than the budget while penalised).
    public var effectiveBudget: Int
    /// What background may use of it.
    public var backgroundBudget: Int
    public var waitingInteractive: Int
    public var waitingBackground: Int

    /// Units of both lanes still counted in the window.
    public var totalUnits: Int { interactiveUnits + backgroundUnits }
}

/// An admission whose request is in flight, to `settle` once it is answered.
public struct QuotaTicket: Sendable, Hashable {
    let id: UInt64
    /// The clock instant of the admission.
    public let admittedAt: Duration
    /// The shared ledger's record of the admission, when one recorded it.
    let record: QuotaLedgerRecord?
}

/// A rolling-minute, two-lane limiter of Gmail quota units.
public actor QuotaBucket {
    /// Budget and policy.
    public struct Configuration: Sendable, Equatable {
        /// Units per window for one user (gmail-api.md §3: 6,000 per minute).
        public var budget: Int
        /// Share of the (effective) budget background may use, in 0...1. The default, 95 %,
        /// lets a first sync run at the ceiling (issue 43 §4: ≥ 90 % of the per-user quota) and
        /// keeps 5 % free for whoever is waiting, and never less than `interactiveFloor` (300
        /// units, a quarter of a smaller window), penalties included: six `batchModify`, or a
        /// send and four, which interactive requests, served first, find at once; a larger
        /// interactive burst also takes the background units freed next, as no background
        /// request is admitted while one waits.
        public var backgroundShare: Double
        /// The rolling window.
        public var window: Duration
        /// Multiplier applied to the effective budget by a 429 while no penalty is in force.
        /// Mild: at the ceiling, the window is already full when the 429 comes, so the new
        /// budget is first waited out (about a window × (1 − factor)); a halving stalled a
        /// backfill for half a minute per 429, for Gmail's "Too many concurrent requests",
        /// which asks for less parallelism, not for a minute's silence (issue 43 §4).
        public var firstPenaltyFactor: Double
        /// Multiplier applied by each further 429 while a penalty is in force, compounding:
        /// a server that keeps refusing soon gets an eighth of the budget (`minimumFactor`).
        public var penaltyFactor: Double
        /// The effective budget never drops below budget × this.
        public var minimumFactor: Double
        /// A penalty lasts one window, or the server's Retry-After when longer, capped here.
        public var maximumPenalty: Duration
        /// With a ledger: how long the announcement of a waiting interactive request holds back
        /// the other processes' background work unless renewed (the bucket renews it every
        /// third of it while it waits, so a killed process holds nobody back for longer).
        public var interactiveLease: Duration
        /// With a ledger: how often a background request that only another process's waiting
        /// interactive request holds back asks again.
        public var sharedPoll: Duration
        /// After the ledger fails, how long the bucket accounts alone before trying it again.
        public var ledgerRetry: Duration

        public init(
            budget: Int = 6_000, backgroundShare: Double = 0.95, window: Duration = .seconds(60),
            firstPenaltyFactor: Double = 0.8, penaltyFactor: Double = 0.5, minimumFactor: Double = 0.125, maximumPenalty: Duration = .seconds(600),
            interactiveLease: Duration = .seconds(3), sharedPoll: Duration = .milliseconds(100),
            ledgerRetry: Duration = .seconds(10)
        ) {
            self.budget = max(1, budget)
            self.backgroundShare = min(1, max(0, backgroundShare))
            self.window = window
            self.firstPenaltyFactor = min(1, max(0.01, firstPenaltyFactor))
            self.penaltyFactor = min(1, max(0.01, penaltyFactor))
            self.minimumFactor = min(1, max(0.01, minimumFactor))
            self.maximumPenalty = maximumPenalty
            self.interactiveLease = max(.milliseconds(30), interactiveLease)
            self.sharedPoll = max(.milliseconds(1), sharedPoll)
            self.ledgerRetry = ledgerRetry
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
        /// Whether the admission stays in flight until `settle` (`admit`), or is settled at
        /// once (`acquire`).
        var inFlight: Bool
        var continuation: CheckedContinuation<QuotaTicket, any Error>
    }

    struct Limits {
        var total: Int
        var background: Int
        /// The budget before any penalty, which nothing exceeds.
        var ceiling: Int
        /// What background never takes: interactive requests find it free as long as their
        /// own units in the window leave room, even when a penalty put the window over `total`.
        var interactiveReserve: Int { total - background }
    }

    /// The shared ledger's answer for one request.
    private enum SharedAnswer {
        /// Admitted; the ledger's record of it, when a ledger recorded it.
        case admitted(record: QuotaLedgerRecord?)
        /// Refused: ask again after this long.
        case wait(Duration)
    }

    /// Read from any isolation (a progress line derives its ceiling from it): constant and Sendable.
    public nonisolated let configuration: Configuration
    private let clock: SchedulingClock
    /// Admissions in time order; those before `head` have left the window (the array is cut
    /// now and then, not at every admission).
    private var ledger: [Entry] = []
    private var head = 0
    /// Admissions whose request is still in flight, by ticket; they leave the window only
    /// once settled and one window has passed since.
    private var inFlight: [UInt64: Entry] = [:]
    /// The units of `ledger[head...]` and of `inFlight`, kept as entries come and go.
    private var used = (total: 0, background: 0)
    private var interactiveQueue: [Waiter] = []
    private var backgroundQueue: [Waiter] = []
    private var nextWaiterID: UInt64 = 0
    private var factor: Double = 1
    private var penaltyUntil: Duration?
    /// Deadlines of wake-up tasks in flight; a new one is started only when it is earlier.
    private var timers: [Duration] = []
    /// The cross-process account, if any.
    private let sharedLedger: (any QuotaLedger)?
    /// The last failure of the ledger, and until when the bucket does without it.
    private var ledgerFailure: QuotaLedgerFailure?
    private var ledgerRetryAt: Duration?
    private var ledgerFailing = false
    /// When the lease announcing a waiting interactive request is due for renewal; nil when
    /// none is announced.
    private var leaseRenewal: Duration?

    /// - Parameter ledger: the account shared with the user's other processes; without one
    ///   the budget is this process's alone.
    public init(configuration: Configuration = Configuration(), clock: SchedulingClock = .continuous,
                ledger: (any QuotaLedger)? = nil) {
        self.configuration = configuration
        self.clock = clock
        self.sharedLedger = ledger
    }

    /// Whether the budget is shared with the other processes right now.
    public var sharing: QuotaSharing {
        guard sharedLedger != nil else { return .inProcess }
        if ledgerFailing, let ledgerFailure { return .fellBack(ledgerFailure) }
        return .shared
    }

    /// The most recent failure of the ledger, even when it has worked again since.
    public var lastLedgerFailure: QuotaLedgerFailure? { ledgerFailure }

    /// Waits until `units` fit the window for `lane`, then records them, as if their request
    /// were answered at once. Throws `CancellationError` if the task is cancelled while
    /// waiting (nothing is charged then).
    ///
    /// A request larger than its lane's limit is admitted only into an empty window, so it
    /// cannot wait forever; that is the one case in which a limit is exceeded.
    /// - Returns: the clock instant at which the units were admitted.
    @discardableResult
    public func acquire(units: Int, lane: QuotaLane) async throws -> Duration {
        try await wait(units: units, lane: lane, inFlight: false).admittedAt
    }

    /// Waits until `units` fit the window for `lane`, as `acquire`, and records them for a
    /// request about to be sent: they stay in the window until the caller `settle`s the
    /// ticket once the request's answer came (or it failed or was given up), and one window
    /// after that. Every ticket must be settled, or its units never leave.
    public func admit(units: Int, lane: QuotaLane) async throws -> QuotaTicket {
        try await wait(units: units, lane: lane, inFlight: true)
    }

    /// Ends a ticket's flight: its units leave the window one window from now. A ticket
    /// settled twice, or not in flight, changes nothing.
    public func settle(_ ticket: QuotaTicket) {
        guard let entry = inFlight.removeValue(forKey: ticket.id) else { return }
        let now = clock.now()
        // The units stay counted in `used`; only their departure is now known.
        ledger.append(Entry(time: now, units: entry.units, lane: entry.lane))
        if let record = ticket.record, let shared = usableLedger(now) {
            do {
                try shared.settle(record: record, units: entry.units, lane: entry.lane)
                ledgerWorked()
            } catch {
                ledgerFailed(error, at: now)
            }
        }
        // A waiter that only units in flight held back now has an instant to wake at.
        pump()
    }

    private func wait(units: Int, lane: QuotaLane, inFlight: Bool) async throws -> QuotaTicket {
        try Task.checkCancellation()
        let units = max(0, units)
        let now = clock.now()
        prune(now)
        nextWaiterID += 1
        let id = nextWaiterID
        let queueAhead = lane == .interactive ? !interactiveQueue.isEmpty : !(interactiveQueue.isEmpty && backgroundQueue.isEmpty)
        if !queueAhead, Self.fits(units, lane: lane, usage: usage(), limits: limits(at: now)),
           case .admitted(let record) = admitShared(units: units, lane: lane, now: now) {
            return admission(id: id, units: units, lane: lane, inFlight: inFlight, record: record, at: now)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<QuotaTicket, any Error>) in
                let waiter = Waiter(id: id, units: units, lane: lane, inFlight: inFlight, continuation: continuation)
                if lane == .interactive { interactiveQueue.append(waiter) } else { backgroundQueue.append(waiter) }
                pump()
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Records a rate-limit response: the effective budget shrinks by `firstPenaltyFactor`, or
    /// by `penaltyFactor` while a penalty is in force (down to `minimumFactor`), until one
    /// window, or `retryAfter` seconds if longer, has passed.
    public func penalize(retryAfter: Double?) {
        let now = clock.now()
        refreshPenalty(now)
        factor = Self.penalized(factor: penaltyUntil == nil ? nil : factor, configuration)
        var length = configuration.window
        if let retryAfter, retryAfter.isFinite, retryAfter > length.inSeconds {
            length = min(.seconds(retryAfter), configuration.maximumPenalty)
        }
        penaltyUntil = max(penaltyUntil ?? now, now + length)
        guard let shared = usableLedger(now) else { return }
        let configuration = self.configuration
        do {
            try shared.penalize { current in
                QuotaPenalty(factor: Self.penalized(factor: current?.factor, configuration),
                             remaining: max(current?.remaining ?? .zero, length))
            }
            ledgerWorked()
        } catch {
            ledgerFailed(error, at: now)
        }
    }

    /// The factor after one more 429, given the one in force (nil: none is).
    static func penalized(factor current: Double?, _ configuration: Configuration) -> Double {
        guard let current else { return max(configuration.minimumFactor, configuration.firstPenaltyFactor) }
        return max(configuration.minimumFactor, current * configuration.penaltyFactor)
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
        // When the shared ledger refused the head, how long until it is worth asking again.
        var sharedWait: Duration?
        while let head = interactiveQueue.first, Self.fits(head.units, lane: .interactive, usage: usage(), limits: limit) {
            let answer = admitShared(units: head.units, lane: .interactive, now: now)
            guard case .admitted(let record) = answer else {
                if case .wait(let wait) = answer { sharedWait = wait }
                break
            }
            interactiveQueue.removeFirst()
            admit(head, record: record, at: now)
        }
        // Strict priority: background waits while any interactive request waits.
        if interactiveQueue.isEmpty {
            while let head = backgroundQueue.first, Self.fits(head.units, lane: .background, usage: usage(), limits: limit) {
                let answer = admitShared(units: head.units, lane: .background, now: now)
                guard case .admitted(let record) = answer else {
                    if case .wait(let wait) = answer { sharedWait = wait }
                    break
                }
                backgroundQueue.removeFirst()
                admit(head, record: record, at: now)
            }
        }
        maintainLease(now)
        guard let head = interactiveQueue.first ?? backgroundQueue.first else { return }
        // nil: only units in flight hold the head back, and `settle` will pump again.
        var deadline = earliestAdmission(units: head.units, lane: head.lane, now: now)
        if let sharedWait { deadline = max(deadline ?? now, now + sharedWait) }
        if let leaseRenewal { deadline = min(deadline ?? leaseRenewal, leaseRenewal) }
        if let deadline { schedule(at: deadline) }
    }

    private func admit(_ waiter: Waiter, record: QuotaLedgerRecord?, at now: Duration) {
        let ticket = admission(id: waiter.id, units: waiter.units, lane: waiter.lane, inFlight: waiter.inFlight,
                               record: record, at: now)
        waiter.continuation.resume(returning: ticket)
    }

    /// Records an admission, in flight or settled at once, and makes its ticket.
    private func admission(id: UInt64, units: Int, lane: QuotaLane, inFlight: Bool, record: QuotaLedgerRecord?,
                           at now: Duration) -> QuotaTicket {
        let entry = Entry(time: now, units: units, lane: lane)
        if inFlight {
            self.inFlight[id] = entry
            count(entry)
        } else {
            self.record(entry)
        }
        return QuotaTicket(id: id, admittedAt: now, record: inFlight ? record : nil)
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
        while head < ledger.count, ledger[head].time <= cutoff {
            used.total -= ledger[head].units
            if ledger[head].lane == .background { used.background -= ledger[head].units }
            head += 1
        }
        if head == ledger.count {
            ledger.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= ledger.count {
            ledger.removeFirst(head)
            head = 0
        }
    }

    private func record(_ entry: Entry) {
        ledger.append(entry)
        count(entry)
    }

    /// Adds an admission's units to `used` (in the window or in flight).
    private func count(_ entry: Entry) {
        used.total += entry.units
        if entry.lane == .background { used.background += entry.units }
    }

    private func refreshPenalty(_ now: Duration) {
        if let until = penaltyUntil, now >= until {
            penaltyUntil = nil
            factor = 1
        }
    }

    private func usage() -> (total: Int, background: Int) { used }

    /// The local penalty's factor at `time` (1 when none is in force).
    private func localFactor(at time: Duration) -> Double {
        penaltyUntil.map { time < $0 } ?? false ? factor : 1
    }

    private func limits(at time: Duration) -> Limits {
        Self.limits(configuration, factor: localFactor(at: time))
    }

    /// The limits of the whole window and of background for a budget shrunk by `factor`.
    static func limits(_ configuration: Configuration, factor: Double) -> Limits {
        let total = max(1, Int(Double(configuration.budget) * factor))
        // What interactive requests find free is at least `interactiveFloor` units (at most a
        // quarter of the window), also when 429s have shrunk the budget: 5 % of a budget
        // halved three times is less than one `messages.send` (100 units).
        let floor = min(interactiveFloor, total / 4)
        let background = max(1, min(Int(Double(total) * configuration.backgroundShare), total - floor))
        return Limits(total: total, background: background, ceiling: max(1, configuration.budget))
    }

    /// Units of every window background never takes: a send (100) and four `batchModify` (50).
    static let interactiveFloor = 300

    static func fits(_ units: Int, lane: QuotaLane, usage: (total: Int, background: Int), limits: Limits) -> Bool {
        if usage.total == 0 { return true }
        // The reserve is the interactive lane's whatever background did before a 429 shrank
        // the window under it: the person waiting is not held back by the backfill's units.
        if lane == .interactive, usage.total - usage.background + units <= limits.interactiveReserve,
           usage.total + units <= limits.ceiling { return true }
        guard usage.total + units <= limits.total else { return false }
        return lane == .interactive || usage.background + units <= limits.background
    }

    /// The first instant at which `units` would fit for `lane` in this process's window; nil
    /// when they fit only once requests in flight are settled.
    private func earliestAdmission(units: Int, lane: QuotaLane, now: Duration) -> Duration? {
        let window = configuration.window
        let entries = ledger[head...].map { QuotaLedgerEntry(expiresIn: $0.time + window - now, units: $0.units, lane: $0.lane) }
        let changes = penaltyUntil.map { [$0 - now] } ?? []
        let wait = Self.earliestFit(units: units, lane: lane, usage: usage(), entries: entries, limitChanges: changes) {
            self.limits(at: now + $0)
        }
        if wait == nil, inFlight.isEmpty {
            // Cannot happen (an empty window admits anything); a timer at the last expiry
            // keeps the waiter from being stranded all the same.
            return now + (entries.last?.expiresIn ?? .zero)
        }
        return wait.map { now + $0 }
    }

    /// How long from now until `units` would fit for `lane` (zero if they fit now): usage only
    /// falls when an entry leaves the window and limits only rise when a penalty ends, so
    /// those instants are the only candidates. One pass over the entries, soonest to leave
    /// first. Nil when they do not fit even after every entry has left: what holds them back
    /// is not among the entries (units in flight, or entries a ledger left out).
    static func earliestFit(
        units: Int, lane: QuotaLane, usage: (total: Int, background: Int), entries: [QuotaLedgerEntry],
        limitChanges: [Duration], limits: (Duration) -> Limits
    ) -> Duration? {
        if fits(units, lane: lane, usage: usage, limits: limits(.zero)) { return .zero }
        var remaining = usage
        var changes = limitChanges.filter { $0 > .zero }.sorted()[...]
        var index = 0
        var instant = Duration.zero
        while index < entries.count || !changes.isEmpty {
            if let change = changes.first, index == entries.count || change < entries[index].expiresIn {
                instant = change
                changes.removeFirst()
            } else {
                instant = entries[index].expiresIn
                while index < entries.count, entries[index].expiresIn <= instant {
                    remaining.total -= entries[index].units
                    if entries[index].lane == .background { remaining.background -= entries[index].units }
                    index += 1
                }
            }
            if fits(units, lane: lane, usage: remaining, limits: limits(instant)) { return max(.zero, instant) }
        }
        return nil
    }

    // MARK: - The shared ledger

    /// The ledger, unless there is none or it failed less than `ledgerRetry` ago.
    private func usableLedger(_ now: Duration) -> (any QuotaLedger)? {
        guard let sharedLedger else { return nil }
        if let retryAt = ledgerRetryAt, now < retryAt { return nil }
        return sharedLedger
    }

    private func ledgerWorked() {
        ledgerFailing = false
        ledgerRetryAt = nil
    }

    /// Goes on without the ledger for `ledgerRetry`. An announced lease is left to lapse.
    private func ledgerFailed(_ error: QuotaLedgerFailure, at now: Duration) {
        ledgerFailure = error
        ledgerFailing = true
        ledgerRetryAt = now + configuration.ledgerRetry
        leaseRenewal = nil
    }

    /// Asks the ledger to admit `units` that fit this process's own window. Without a usable
    /// ledger the local decision stands (`.admitted`).
    private func admitShared(units: Int, lane: QuotaLane, now: Duration) -> SharedAnswer {
        guard let shared = usableLedger(now) else { return .admitted(record: nil) }
        let configuration = self.configuration
        let local = localFactor(at: now)
        let answer: QuotaLedgerAdmission
        do {
            answer = try shared.admit(units: units, lane: lane, window: configuration.window) { view in
                Self.fitsShared(units, lane: lane, view: view, localFactor: local, configuration: configuration)
            }
        } catch {
            ledgerFailed(error, at: now)
            return .admitted(record: nil)
        }
        ledgerWorked()
        if answer.admitted { return .admitted(record: answer.record) }
        return .wait(sharedWait(units: units, lane: lane, answer: answer, now: now))
    }

    /// The bucket's rules over the shared window: background also waits while another process
    /// has an interactive request waiting, and the budget shrinks by the larger of the local
    /// and the shared penalty.
    static func fitsShared(_ units: Int, lane: QuotaLane, view: QuotaLedgerView, localFactor: Double,
                           configuration: Configuration) -> Bool {
        if lane == .background && view.othersWaitingInteractive { return false }
        let factor = min(localFactor, view.penalty?.factor ?? 1)
        return fits(units, lane: lane, usage: (view.totalUnits, view.backgroundUnits),
                    limits: limits(configuration, factor: factor))
    }

    /// How long until a request the ledger refused is worth asking about again: when it would
    /// fit the shared window as the ledger showed it, but no sooner than `sharedPoll` while
    /// another process's waiting interactive request holds background back (it may be
    /// admitted, or lapse, at any moment), and never longer than a window plus the longest
    /// penalty (whatever the ledger said).
    private func sharedWait(units: Int, lane: QuotaLane, answer: QuotaLedgerAdmission, now: Duration) -> Duration {
        let view = answer.view
        let localEnd = penaltyUntil.map { $0 - now }
        let sharedEnd = view.penalty?.remaining
        let configuration = self.configuration
        let local = localFactor(at: now)
        // Entries the ledger left out (it returns the oldest only) leave later than the last
        // one it returned: asking again then is the soonest that can succeed.
        var wait = Self.earliestFit(
            units: units, lane: lane, usage: (view.totalUnits, view.backgroundUnits), entries: answer.entries,
            limitChanges: [localEnd, sharedEnd].compactMap { $0 }
        ) { offset in
            let localNow = localEnd.map { offset < $0 } ?? false ? local : 1
            let sharedNow = sharedEnd.map { offset < $0 } ?? false ? (view.penalty?.factor ?? 1) : 1
            return Self.limits(configuration, factor: min(localNow, sharedNow))
        } ?? max(answer.entries.last?.expiresIn ?? .zero, [localEnd, sharedEnd].compactMap { $0 }.max() ?? .zero)
        if lane == .background && view.othersWaitingInteractive { wait = max(wait, configuration.sharedPoll) }
        return min(max(wait, .milliseconds(1)), configuration.window + configuration.maximumPenalty)
    }

    /// Announces, renews or withdraws the lease that holds back other processes' background
    /// work while an interactive request of this process waits.
    private func maintainLease(_ now: Duration) {
        guard let shared = usableLedger(now) else { return }
        do {
            if !interactiveQueue.isEmpty {
                if let renewal = leaseRenewal, now < renewal { return }
                try shared.setInteractiveWaiting(lease: configuration.interactiveLease)
                leaseRenewal = now + configuration.interactiveLease / 3
            } else if leaseRenewal != nil {
                leaseRenewal = nil
                try shared.setInteractiveWaiting(lease: nil)
            }
            ledgerWorked()
        } catch {
            ledgerFailed(error, at: now)
        }
    }
}
