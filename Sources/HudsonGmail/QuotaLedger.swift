/*!
 The cross-process view of one user's quota (issue 17, point 5). Gmail's per-user budget is
 one budget however many processes spend it: `hd-sync --watch`, the `hd-sync --push` that
 `hd-mark` runs, `hd-show` fetching a body and `hd-send` each have their own QuotaBucket, and
 without a shared account they would each believe they had the whole window.

 A `QuotaLedger` is that shared account: admissions of every process in the window, the
 interactive requests that some process is waiting to send, and the 429 penalty any of them
 has seen. It is storage with atomic steps, not policy: every decision (what fits, which lane
 goes first, how a penalty compounds) is made by QuotaBucket, inside the ledger's step, on the
 snapshot the step hands it. This module knows nothing of how a ledger is kept; the command
 line's is a small SQLite file (HudsonQuotaLedger).

 A ledger's operations are synchronous and must be short and bounded (a busy wait included):
 the bucket calls them on its own executor. One that fails throws `QuotaLedgerFailure`; the
 bucket then goes on with its own in-process accounting and reports the failure through
 `QuotaBucket.sharing` (a library never prints).
 */

/// What every process sharing a ledger has admitted in the window, as one admission step saw it.
public struct QuotaLedgerView: Sendable, Equatable {
    /// Units admitted to the interactive lane in the window, by every process.
    public var interactiveUnits: Int
    /// Units admitted to the background lane in the window, by every process.
    public var backgroundUnits: Int
    /// Whether another process (another ledger owner) has an interactive request waiting
    /// (a live lease). Background waits while one does.
    public var othersWaitingInteractive: Bool
    /// The penalty a 429 seen by any process imposes, while it lasts.
    public var penalty: QuotaPenalty?

    public init(interactiveUnits: Int = 0, backgroundUnits: Int = 0, othersWaitingInteractive: Bool = false,
                penalty: QuotaPenalty? = nil) {
        self.interactiveUnits = interactiveUnits
        self.backgroundUnits = backgroundUnits
        self.othersWaitingInteractive = othersWaitingInteractive
        self.penalty = penalty
    }

    /// Units admitted to both lanes.
    public var totalUnits: Int { interactiveUnits + backgroundUnits }
}

/// A shared penalty: the factor applied to the budget, and how long it still lasts.
public struct QuotaPenalty: Sendable, Equatable {
    public var factor: Double
    public var remaining: Duration

    public init(factor: Double, remaining: Duration) {
        self.factor = factor
        self.remaining = remaining
    }
}

/// One admission in the ledger's window, as seen from the moment of a step.
public struct QuotaLedgerEntry: Sendable, Equatable {
    /// How long until it leaves the window.
    public var expiresIn: Duration
    public var units: Int
    public var lane: QuotaLane

    public init(expiresIn: Duration, units: Int, lane: QuotaLane) {
        self.expiresIn = expiresIn
        self.units = units
        self.lane = lane
    }
}

/// The outcome of one admission step.
public struct QuotaLedgerAdmission: Sendable, Equatable {
    /// Whether the units were recorded.
    public var admitted: Bool
    /// The window as the step saw it, before recording.
    public var view: QuotaLedgerView
    /// When refused: every admission in the window, soonest to leave first, so the caller can
    /// work out when to ask again. Empty when admitted.
    public var entries: [QuotaLedgerEntry]
    /// When admitted: the ledger's name for the record, for `QuotaLedger.settle`.
    public var record: QuotaLedgerRecord?

    public init(admitted: Bool, view: QuotaLedgerView, entries: [QuotaLedgerEntry] = [],
                record: QuotaLedgerRecord? = nil) {
        self.admitted = admitted
        self.view = view
        self.entries = entries
        self.record = record
    }
}

/// A ledger's name for one admission: what it needs to find it again, and only it. Opaque
/// to the bucket.
public struct QuotaLedgerRecord: Sendable, Hashable {
    public var id: Int64
    public var stamp: Int64

    public init(id: Int64, stamp: Int64) {
        self.id = id
        self.stamp = stamp
    }
}

/// Why a ledger could not be used. The bucket then accounts in-process only; the caller may
/// report it (`QuotaBucket.sharing`).
public struct QuotaLedgerFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Operation: String, Sendable {
        case open, admit, settle, lease, penalize, view
    }

    public var operation: Operation
    /// What went wrong, in words (a path and the storage's reason; never a token).
    public var reason: String

    public init(_ operation: Operation, _ reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "quota ledger (\(operation.rawValue)): \(reason)" }
}

/// Whether a bucket's budget is shared with the other processes of its user.
public enum QuotaSharing: Sendable, Equatable {
    /// The bucket has no ledger: the budget is this process's alone.
    case inProcess
    /// Every admission goes through the shared ledger.
    case shared
    /// The ledger failed; the bucket accounts in-process until it works again (it is tried
    /// again after `Configuration.ledgerRetry`).
    case fellBack(QuotaLedgerFailure)
}

/// The shared account of one user's quota. Each instance is one owner (one process, in
/// practice): its own waiting interactive requests do not hold back its own background ones
/// in the ledger, since the bucket already orders those.
public protocol QuotaLedger: Sendable {
    /// In one atomic step: forgets admissions older than `window`, reads the window, calls
    /// `decide` with it, and records `units` for `lane` when `decide` says yes. Refused, the
    /// answer carries the window's entries.
    func admit(units: Int, lane: QuotaLane, window: Duration,
               decide: (QuotaLedgerView) -> Bool) throws(QuotaLedgerFailure) -> QuotaLedgerAdmission

    /// The request of an admission (`record`, with its `units` and `lane`) was answered: from
    /// now on it leaves the window one window from now, not from its admission (QuotaBucket,
    /// "Gmail counts a request when it arrives"). A record the window already forgot (its
    /// request was in flight longer than a window) is recorded again, now.
    func settle(record: QuotaLedgerRecord, units: Int, lane: QuotaLane) throws(QuotaLedgerFailure)

    /// Says that this owner has an interactive request waiting, for `lease` from now (the
    /// bucket renews it while it waits), or, with nil, that it has none any more. A lease
    /// that is not renewed lapses: a process killed while waiting holds nobody back for
    /// longer than its lease.
    func setInteractiveWaiting(lease: Duration?) throws(QuotaLedgerFailure)

    /// In one atomic step: reads the shared penalty in force (nil if none) and replaces it
    /// with what `update` makes of it.
    func penalize(_ update: (QuotaPenalty?) -> QuotaPenalty) throws(QuotaLedgerFailure)

    /// The window as it stands, without changing anything.
    func view(window: Duration) throws(QuotaLedgerFailure) -> QuotaLedgerView
}
