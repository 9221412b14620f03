/*!
 The write-path actor: drains the mutation queue to Gmail (optimistic-mutations.md;
 sync-engine-reference.md, MutationFlusher). Per pass:

   label operations (create, rename, delete: LabelFlusher.swift) → claim pending rows →
   record, durably, that they may be sent → send → gate → retire what the history echo
   has confirmed

 Rows are grouped by message into (adds, removes) sets, and messages with the same sets
 go out as one `batchModify` (up to 1000 ids, 50 units) instead of one `modify` each
 (5 units): archiving 1000 threads costs a few requests, not a thousand; a lone message
 goes out as `modify`. Neither answer carries a history id Hudson may rely on
 (batchModify answers an empty 204; modify's minimal message promises only `id`,
 `threadId` and `labelIds`, gmail-api.md §2.5), so every row sent in a pass gets its gate
 from one `getProfile` after the last send: the mailbox's history id then is at least the
 change's. A row retires only when the account's cursor passes its gate, never on the
 2xx ("Retirement: on echo").

 Before each request its rows are marked attempted, in a transaction committed with
 `synchronous=FULL`: whatever happens next (a lost answer, a timeout, a 5xx, a 429, a
 getProfile that fails, this process killed) the store knows the change may be at Gmail,
 so an opposite change or an undo overlays it forward instead of cancelling it
 (MutationQueue's collision table).

 Failures: a definite rejection (400, or 404 for a message) is narrowed down to the
 change that caused it — a request per label, then one message alone to tell a label
 Gmail refuses from a message it refuses — and only that change is dropped, with Gmail's
 reason kept for `hd-pending` and the undo history; the rest is sent. A 429, 5xx or
 network failure leaves the rows pending with their attempts and error, retried with
 backoff. Nothing here stops the pass that follows: the history poll runs whatever the
 flush met (SyncRunner).

 Flushers of one account exclude each other with a `FlushLock` (hd-sync and hd-mark may
 run at once). Only the lock's holder claims rows, so a flusher that takes the lock
 takes over every claim it finds: its claimer died (optimistic-mutations.md "Crash
 after send, before markInFlight — the row is still pending, so it is re-sent"), and
 the row must not wait out the claim's lifetime.
 */
import Foundation
import HudsonGmail
import HudsonStore

public struct FlushReport: Sendable, Equatable {
    /// Changes Gmail accepted: label changes of messages, and label operations.
    public var flushed = 0
    public var retired = 0
    /// Changes Gmail refused for good, label operations included.
    public var dropped = 0
    /// Of `dropped`, the label operations (create, rename, delete) Gmail refused.
    public var refusedLabelChanges = 0
    /// The transient failure (the network, the server, a rate limit) that left the rest of
    /// the queue for a later pass, if one did: a caller may say what kept the change queued.
    public var interruptedBy: GmailError?

    public init(flushed: Int = 0, retired: Int = 0, dropped: Int = 0) {
        self.flushed = flushed
        self.retired = retired
        self.dropped = dropped
    }
}

/// The moments between the flusher's steps where a crash leaves a distinct state
/// (optimistic-mutations.md "Crash safety"). The reliability suite stops the process at
/// each of them; nothing else observes them.
public enum FlushCheckpoint: String, Sendable, CaseIterable {
    /// The rows are marked attempted and their request has not gone out yet.
    case afterMarkAttempted = "after-mark-attempted"
    /// Gmail answered a send and nothing more is recorded yet: the rows are still pending.
    case afterSend = "after-send"
    /// The rows are in flight, their retirement gate recorded.
    case afterMarkInFlight = "after-mark-in-flight"
    /// The history echo has landed (the cursor passed a gate) and the rows are not retired yet.
    case beforeRetirement = "before-retirement"
}

/// Keeps the other flushers of an account out while held, across processes.
public protocol FlushLock: Sendable {
    /// Takes the lock if it is free; false when another flusher holds it.
    func tryLock() throws -> Bool
    func unlock()
}

public actor MutationFlusher {
    let api: any GmailAPI
    let database: SharedStore
    let email: String
    /// Rows claimed per pass; more wait for the next pass.
    let claimLimit: Int
    /// Excludes other flushers of the account; nil when this is the only one.
    let lock: (any FlushLock)?
    /// Called at each `FlushCheckpoint`; nil outside the reliability suite.
    let checkpoint: (@Sendable (FlushCheckpoint) -> Void)?
    private var isFlushing = false

    /// Gmail's limit on ids per batchModify ([disc] BatchModifyMessagesRequest.ids).
    static let batchModifyLimit = 1000

    /// - Parameters:
    ///   - api: the client on the interactive quota lane: someone is waiting.
    ///   - lock: shared by every flusher of this account in every process. Without one,
    ///     a claim left by a flusher that died is honoured until it expires.
    ///   - checkpoint: told when the flusher passes each `FlushCheckpoint` (a test seam).
    public init(
        api: any GmailAPI, database: SharedStore, account: String, claimLimit: Int = 5000,
        lock: (any FlushLock)? = nil, checkpoint: (@Sendable (FlushCheckpoint) -> Void)? = nil
    ) {
        self.api = api
        self.database = database
        self.email = account
        self.claimLimit = claimLimit
        self.lock = lock
        self.checkpoint = checkpoint
    }

    /// Sends what is pending and retires what is confirmed. Single-flight: a second call
    /// while one runs returns an empty report rather than sending a row twice.
    public func flushOnce() async throws -> FlushReport {
        guard !isFlushing else { return FlushReport() }
        isFlushing = true
        defer { isFlushing = false }

        let accountID = try accountID()
        var report = FlushReport()
        if let lock {
            // Another flusher is sending this account's queue: it will send these rows too.
            if try lock.tryLock() {
                defer { lock.unlock() }
                try await claimAndSend(accountID: accountID, takingOverClaims: true, report: &report)
            }
        } else {
            try await claimAndSend(accountID: accountID, takingOverClaims: false, report: &report)
        }
        report.retired = try retireConfirmed()
        return report
    }

    private func claimAndSend(accountID: Int64, takingOverClaims: Bool, report: inout FlushReport) async throws {
        // Label operations first: a change that uses a label goes once Gmail has it
        // (LabelFlusher.swift).
        try await flushLabelChanges(accountID: accountID, report: &report)
        let limit = claimLimit
        let claimed = try database.write {
            try $0.claimPendingMutations(accountID: accountID, limit: limit, takingOverClaims: takingOverClaims)
        }
        if !claimed.isEmpty {
            try await send(claimed, accountID: accountID, report: &report)
        }
    }

    /// Retires in-flight rows whose gate the cursor has passed (after a poll).
    @discardableResult
    public func retireConfirmed() throws -> Int {
        let accountID = try accountID()
        if let checkpoint, try database.read({ try $0.mutationsReadyToRetire(accountID: accountID) }) > 0 {
            checkpoint(.beforeRetirement)
        }
        return try database.write { try $0.retireConfirmedMutations(accountID: accountID) }
    }

    /// Runs `flushOnce` every `interval` until the task is cancelled.
    public func start(interval: Duration = .seconds(5)) async {
        while !Task.isCancelled {
            _ = try? await flushOnce()
            try? await Task.sleep(for: interval)
        }
    }

    // MARK: - Sending

    /// One request's worth: messages that share the same (adds, removes).
    struct SendUnit {
        var messageIDs: [String]
        var adds: [String]
        var removes: [String]
        var rows: [QueuedMutation]

        var changeCount: Int { adds.count + removes.count }

        /// One unit per label change, over the same messages.
        func perChange() -> [SendUnit] {
            adds.map { label in
                SendUnit(messageIDs: messageIDs, adds: [label], removes: [], rows: rows.filter { $0.label == label && $0.op == .add })
            } + removes.map { label in
                SendUnit(messageIDs: messageIDs, adds: [], removes: [label],
                         rows: rows.filter { $0.label == label && $0.op == .remove })
            }
        }

        /// The unit without the messages some of whose rows are not in `rows`.
        func keeping(_ rows: Set<Int64>) -> SendUnit {
            let changed = Set(self.rows.filter { !rows.contains($0.id) }.map(\.messageID))
            guard !changed.isEmpty else { return self }
            return SendUnit(messageIDs: messageIDs.filter { !changed.contains($0) }, adds: adds, removes: removes,
                            rows: self.rows.filter { !changed.contains($0.messageID) })
        }

        /// The same change over each half of the messages.
        func halves() -> [SendUnit] {
            let (front, back) = split(at: messageIDs.count / 2)
            return [front, back]
        }

        private func split(at index: Int) -> (SendUnit, SendUnit) {
            let front = Set(messageIDs[..<index])
            return (SendUnit(messageIDs: Array(messageIDs[..<index]), adds: adds, removes: removes,
                             rows: rows.filter { front.contains($0.messageID) }),
                    SendUnit(messageIDs: Array(messageIDs[index...]), adds: adds, removes: removes,
                             rows: rows.filter { !front.contains($0.messageID) }))
        }
    }

    /// Groups claimed rows by message, then messages by their (adds, removes) sets, in
    /// queue order; a group larger than Gmail's batchModify limit is split.
    static func units(for claimed: [QueuedMutation]) -> [SendUnit] {
        var rowsByMessage: [String: [QueuedMutation]] = [:]
        var messageOrder: [String] = []
        for row in claimed {
            if rowsByMessage[row.messageID] == nil { messageOrder.append(row.messageID) }
            rowsByMessage[row.messageID, default: []].append(row)
        }
        var units: [SendUnit] = []
        var unitIndex: [String: Int] = [:]
        for id in messageOrder {
            let rows = rowsByMessage[id]!
            let adds = rows.filter { $0.op == .add }.map(\.label).sorted()
            let removes = rows.filter { $0.op == .remove }.map(\.label).sorted()
            let key = adds.joined(separator: ",") + "|" + removes.joined(separator: ",")
            if let index = unitIndex[key], units[index].messageIDs.count < batchModifyLimit {
                units[index].messageIDs.append(id)
                units[index].rows += rows
            } else {
                unitIndex[key] = units.count
                units.append(SendUnit(messageIDs: [id], adds: adds, removes: removes, rows: rows))
            }
        }
        return units
    }

    /// What a pass has done with its claimed rows so far.
    struct PassProgress {
        /// Sent; the gate comes from one getProfile after the last request.
        var awaitingGate: [QueuedMutation] = []
        /// Gated, refused for good, or recorded as failed: not released as unsettled.
        var settled = Set<Int64>()
        var dropped = 0
        /// The label ids Gmail has, read once a refusal needs them (labels.list, 1 unit).
        var gmailLabels: Set<String>?

        func isDone(_ row: QueuedMutation) -> Bool {
            settled.contains(row.id) || awaitingGate.contains { $0.id == row.id }
        }
    }

    private func send(_ claimed: [QueuedMutation], accountID: Int64, report: inout FlushReport) async throws {
        var progress = PassProgress()
        defer {
            // Whatever was claimed but not settled goes back for the next pass.
            let unsettled = claimed.map(\.id).filter { !progress.settled.contains($0) }
            if !unsettled.isEmpty { try? database.write { try $0.releaseClaims(ids: unsettled) } }
        }
        for unit in Self.units(for: claimed) {
            do {
                try await deliver(unit, labelKnown: false, accountID: accountID, progress: &progress)
            } catch let error as GmailError {
                let unsent = unit.rows.filter { !progress.isDone($0) }
                report.dropped += progress.dropped
                let transient: Bool
                switch error {
                case .rateLimited, .server, .network, .batchFailed: transient = !error.isAccountWide
                default: transient = false
                }
                if transient {
                    // The server or the network is in trouble: the rest waits for a later pass.
                    report.interruptedBy = error
                    try recordFailure(unsent, error: error)
                    unsent.forEach { progress.settled.insert($0.id) }
                    try await settleGates(progress.awaitingGate, report: &report, settled: &progress.settled)
                    return
                }
                // The account's (GmailError.isAccountWide), an unreadable response, cancelled:
                // the rows stay pending (attempted, when their request went out); what was
                // sent before still gets its gate.
                try? await settleGates(progress.awaitingGate, report: &report, settled: &progress.settled)
                try? recordFailure(unsent, error: error)
                unsent.forEach { progress.settled.insert($0.id) }
                throw error
            }
        }
        report.dropped += progress.dropped
        try await settleGates(progress.awaitingGate, report: &report, settled: &progress.settled)
    }

    /// Sends `unit` and, when Gmail refuses it for good (400, or 404), narrows the refusal
    /// down to the change that caused it, so that only that change is dropped: a request
    /// per label change when the unit carries several; for one label over several
    /// messages, Gmail's own list of labels (labels.list, once a pass) tells a label it
    /// no longer has — refused for every message, so all its changes go at once — from a
    /// label it has, and then the messages are halved until the refused ones stand alone.
    /// A deleted label thus costs two requests more, one refused message about two per
    /// halving. `labelKnown`: Gmail is known to have the unit's label. Throws the
    /// transient failures (429, 5xx, network) and the ones that stop the pass; `progress`
    /// has what was sent, settled and dropped.
    private func deliver(_ unit: SendUnit, labelKnown: Bool, accountID: Int64, progress: inout PassProgress) async throws {
        let refusal: GmailError
        do {
            if let sent = try await send(unit) { progress.awaitingGate += sent.rows }
            return
        } catch let error as GmailError {
            guard error.isRefusal else { throw error }
            refusal = error
        }
        if unit.messageIDs.count == 1 && refusal == .notFound {
            // modify answers 404 for a message that is gone at Gmail: all its changes go.
            try await reject(unit.rows, reason: "the message is no longer at Gmail", accountID: accountID, refetch: true,
                             progress: &progress)
            return
        }
        if unit.changeCount > 1 {
            for part in unit.perChange() {
                try await deliver(part, labelKnown: false, accountID: accountID, progress: &progress)
            }
            return
        }
        if unit.messageIDs.count == 1 {
            try await reject(unit.rows, reason: refusal.description, accountID: accountID, refetch: false, progress: &progress)
            return
        }
        if !labelKnown {
            let label = unit.adds.first ?? unit.removes[0]
            if progress.gmailLabels == nil { progress.gmailLabels = Set(try await api.listLabels().map(\.id)) }
            if progress.gmailLabels?.contains(label) == false {
                try await reject(unit.rows, reason: "\(refusal.description) (Gmail no longer has the label)", accountID: accountID,
                                 refetch: false, progress: &progress)
                return
            }
        }
        for half in unit.halves() {
            try await deliver(half, labelKnown: true, accountID: accountID, progress: &progress)
        }
    }

    /// Marks the unit's rows attempted (durably), then sends what is still to be sent:
    /// `modify` for one message, `batchModify` for more. A row changed since it was
    /// claimed (flipped, or cancelled and gone) is not marked, and its message is left
    /// out of the request: its claim goes back and the next pass sends its new intent.
    /// Returns what was sent; nil when nothing was left to send.
    private func send(_ unit: SendUnit) async throws -> SendUnit? {
        let rows = unit.rows.map { (id: $0.id, op: $0.op) }
        let marked = try database.write { try $0.markMutationsAttempted(rows) }
        checkpoint?(.afterMarkAttempted)
        let sendable = unit.keeping(marked)
        guard !sendable.messageIDs.isEmpty else { return nil }
        if sendable.messageIDs.count == 1 {
            try await api.modify(id: sendable.messageIDs[0], addLabelIDs: sendable.adds, removeLabelIDs: sendable.removes)
        } else {
            try await api.batchModify(ids: sendable.messageIDs, addLabelIDs: sendable.adds, removeLabelIDs: sendable.removes)
        }
        checkpoint?(.afterSend)
        return sendable
    }

    /// Gives every row sent in this pass its gate: the mailbox history id right after.
    /// If that cannot be read (the answer lost, or without a usable `historyId`), the rows
    /// stay pending — attempted, so never cancelled — with the error, and go out again
    /// after a backoff (harmless: label changes are idempotent). Only a failure that holds
    /// for the whole account (`GmailError.isAccountWide`) stops the pass.
    private func settleGates(_ rows: [QueuedMutation], report: inout FlushReport, settled: inout Set<Int64>) async throws {
        guard !rows.isEmpty else { return }
        do {
            let gate = try parseHistoryID(try await api.getProfile().historyId)
            try markInFlight(rows, gate: gate)
            report.flushed += rows.count
        } catch let error as GmailError {
            try recordFailure(rows, error: error, sent: true)
            if error.isAccountWide { throw error }
        } catch let error as SyncError {
            try recordFailure(rows, message: "sent; \(error)", delay: backoff(rows))
        }
        rows.forEach { settled.insert($0.id) }
    }

    private func markInFlight(_ rows: [QueuedMutation], gate: Int64) throws {
        let sent = rows.map { (id: $0.id, op: $0.op) }
        try database.write { _ = try $0.markInFlight(sent, gate: gate) }
        checkpoint?(.afterMarkInFlight)
    }

    /// Records a transient failure. A server that answered 429 or 5xx is given room: the
    /// rows wait with exponential backoff (and at least its Retry-After). A network that is
    /// down gets no delay: the pass already stopped at the first failure, so nothing is
    /// hammered, and the next pass — `hd-sync` once the network is back — sends at once.
    /// `sent`: Gmail accepted the change and only its gate could not be read.
    private func recordFailure(_ rows: [QueuedMutation], error: GmailError, sent: Bool = false) throws {
        var delay = 0.0
        switch error {
        case .network, .cancelled:
            // Down, or a short attempt (hd-mark's push) out of time: the next pass may go at once.
            delay = 0
        case .rateLimited(let retryAfter):
            delay = max(backoff(rows), retryAfter ?? 0)
        default:
            delay = backoff(rows)
        }
        try recordFailure(rows, message: sent ? "sent; getProfile: \(error)" : error.description, delay: delay)
    }

    private func recordFailure(_ rows: [QueuedMutation], message: String, delay: Double) throws {
        let ids = rows.map(\.id)
        try database.write { try $0.recordMutationFailure(ids: ids, error: message, retryAfterMilliseconds: Int64(delay * 1000)) }
    }

    /// 5 s, 10 s, 20 s … up to 15 min, with jitter so many rows do not retry in lockstep.
    private func backoff(_ rows: [QueuedMutation]) -> Double {
        let attempts = rows.map(\.attempts).max() ?? 0
        return min(900.0, 5.0 * pow(2.0, Double(min(attempts, 20)))) * Double.random(in: 0.5...1.0)
    }

    /// A definite rejection: drop the rows, keeping Gmail's reason; for a message that is
    /// gone, re-derive its truth from Gmail (a 404 tombstones it). A row flipped meanwhile
    /// is not dropped: its claim goes back, and the next pass sends its new intent.
    private func reject(_ rows: [QueuedMutation], reason: String, accountID: Int64, refetch: Bool,
                        progress: inout PassProgress) async throws {
        let failed = rows.map { (id: $0.id, op: $0.op) }
        let dropped = try database.write { try $0.dropMutations(failed, reason: reason) }
        dropped.rowIDs.forEach { progress.settled.insert($0) }
        progress.dropped += dropped.rowIDs.count
        guard refetch else { return }
        for id in dropped.messages {
            do {
                let message = try await api.getMessage(id: id, format: "metadata")
                let snapshot = try SnapshotMapping.mapped(message)
                _ = try database.write { try $0.applySnapshots([snapshot], accountID: accountID) }
            } catch GmailError.notFound {
                _ = try database.write { try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }
            } catch {
                // Truth is re-derived by the next history poll anyway.
            }
        }
    }

    private func accountID() throws -> Int64 {
        let email = self.email
        guard let account = try database.read({ try $0.account(email: email) }) else {
            throw SyncError.unknownAccount(email)
        }
        return account.id
    }
}
