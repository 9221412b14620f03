/*!
 An in-memory QuotaLedger for the bucket's tests: one shared account (`MemoryQuotaAccount`)
 and a handle per owner (`MemoryQuotaLedger`), each handle standing in for one process. Time
 is the ManualClock's, so buckets and ledger agree on it. A handle can be told to fail, like
 a ledger file on a full disk.
 */

import HudsonGmail
import Synchronization

final class MemoryQuotaAccount: Sendable {
    struct Admission: Equatable {
        var time: Duration
        var units: Int
        var lane: QuotaLane
        var owner: Int
        var record: Int64 = 0
    }

    struct State {
        var admissions: [Admission] = []
        /// Every admission ever recorded, for checks over rolling windows.
        var history: [Admission] = []
        var leases: [Int: Duration] = [:]
        var penalty: (factor: Double, until: Duration)?
        var lastRecord: Int64 = 0
        /// Every settle: the record and when.
        var settled: [(record: Int64, time: Duration)] = []
    }

    let clock: ManualClock
    let state = Mutex(State())

    init(clock: ManualClock) {
        self.clock = clock
    }

    func handle(owner: Int) -> MemoryQuotaLedger { MemoryQuotaLedger(account: self, owner: owner) }

    var history: [Admission] { state.withLock { $0.history } }

    /// Every settle: the record and when.
    var settled: [(record: Int64, time: Duration)] { state.withLock { $0.settled } }

    /// When `owner`'s lease lapses, if it has one.
    func lease(of owner: Int) -> Duration? { state.withLock { $0.leases[owner] } }

    /// Sets a lease directly, as a process that is then killed would have.
    func setLease(owner: Int, until: Duration) { state.withLock { $0.leases[owner] = until } }
}

final class MemoryQuotaLedger: QuotaLedger {
    let account: MemoryQuotaAccount
    let owner: Int
    /// While set, every operation fails with it.
    let failure = Mutex<QuotaLedgerFailure?>(nil)
    /// Operations attempted, failed or not.
    let calls = Mutex(0)

    init(account: MemoryQuotaAccount, owner: Int) {
        self.account = account
        self.owner = owner
    }

    private func check(_ operation: QuotaLedgerFailure.Operation) throws(QuotaLedgerFailure) {
        calls.withLock { $0 += 1 }
        if let failure = failure.withLock({ $0 }) { throw QuotaLedgerFailure(operation, failure.reason) }
    }

    private func view(_ state: MemoryQuotaAccount.State, now: Duration, window: Duration) -> QuotaLedgerView {
        var view = QuotaLedgerView()
        for admission in state.admissions where admission.time > now - window {
            if admission.lane == .background { view.backgroundUnits += admission.units } else { view.interactiveUnits += admission.units }
        }
        view.othersWaitingInteractive = state.leases.contains { $0.key != owner && $0.value > now }
        if let penalty = state.penalty, penalty.until > now {
            view.penalty = QuotaPenalty(factor: penalty.factor, remaining: penalty.until - now)
        }
        return view
    }

    func admit(units: Int, lane: QuotaLane, window: Duration,
               decide: (QuotaLedgerView) -> Bool) throws(QuotaLedgerFailure) -> QuotaLedgerAdmission {
        try check(.admit)
        let owner = self.owner
        return account.state.withLock { state in
            // Read under the lock, as the SQLite ledger reads it inside its transaction: the
            // recorded times then follow the order of the records.
            let now = account.clock.now
            state.admissions.removeAll { $0.time <= now - window }
            let view = self.view(state, now: now, window: window)
            if decide(view) {
                state.lastRecord += 1
                let admission = MemoryQuotaAccount.Admission(time: now, units: units, lane: lane, owner: owner,
                                                             record: state.lastRecord)
                state.admissions.append(admission)
                state.history.append(admission)
                return QuotaLedgerAdmission(admitted: true, view: view,
                                            record: QuotaLedgerRecord(id: admission.record, stamp: 0))
            }
            let entries = state.admissions.sorted { $0.time < $1.time }.map { QuotaLedgerEntry(expiresIn: $0.time + window - now, units: $0.units, lane: $0.lane) }
            return QuotaLedgerAdmission(admitted: false, view: view, entries: entries)
        }
    }

    func settle(record: QuotaLedgerRecord, units: Int, lane: QuotaLane) throws(QuotaLedgerFailure) {
        try check(.settle)
        let now = account.clock.now
        let owner = self.owner
        account.state.withLock { state in
            state.settled.append((record.id, now))
            // Records are never reused here.
            if let index = state.admissions.firstIndex(where: { $0.record == record.id && $0.owner == owner }) {
                state.admissions[index].time = max(state.admissions[index].time, now)
            } else {
                state.admissions.append(.init(time: now, units: units, lane: lane, owner: owner, record: record.id))
            }
        }
    }

    func setInteractiveWaiting(lease: Duration?) throws(QuotaLedgerFailure) {
        try check(.lease)
        let now = account.clock.now
        let owner = self.owner
        account.state.withLock { $0.leases[owner] = lease.map { now + $0 } }
    }

    func penalize(_ update: (QuotaPenalty?) -> QuotaPenalty) throws(QuotaLedgerFailure) {
        try check(.penalize)
        let now = account.clock.now
        account.state.withLock { state in
            var current: QuotaPenalty?
            if let penalty = state.penalty, penalty.until > now {
                current = QuotaPenalty(factor: penalty.factor, remaining: penalty.until - now)
            }
            let next = update(current)
            state.penalty = (next.factor, now + next.remaining)
        }
    }

    func view(window: Duration) throws(QuotaLedgerFailure) -> QuotaLedgerView {
        try check(.view)
        let now = account.clock.now
        return account.state.withLock { view($0, now: now, window: window) }
    }
}
