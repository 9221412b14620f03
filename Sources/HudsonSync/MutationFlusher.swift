/*!
 The write-path actor: drains the mutation queue to Gmail (optimistic-mutations.md;
 sync-engine-reference.md, MutationFlusher). Per pass:

   claim pending rows → send → mark in flight with the retirement gate → retire what
   the history echo has confirmed

 Rows are grouped by message into (adds, removes) sets, and messages with the same sets
 go out as one `batchModify` (up to 1000 ids, 50 units) instead of one `modify` each
 (5 units): archiving 1000 threads costs a few requests, not a thousand. batchModify
 returns no history id, so the gate comes from a `getProfile` right after it — the
 mailbox's history id then is at least the change's. A row retires only when the
 account's cursor passes its gate, never on the 2xx ("Retirement: on echo").
 Terminal failures drop the rows and re-derive truth by refetching the message;
 transient ones leave them pending with their attempts and error, retried with backoff.

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
    public var flushed = 0
    public var retired = 0
    public var dropped = 0

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
    /// Gmail answered a send and nothing is recorded yet: the rows are still pending.
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
    let database: HudsonDatabase
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
        api: any GmailAPI, database: HudsonDatabase, account: String, claimLimit: Int = 5000,
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

    private func send(_ claimed: [QueuedMutation], accountID: Int64, report: inout FlushReport) async throws {
        var settled = Set<Int64>()
        var awaitingGate: [QueuedMutation] = []
        defer {
            // Whatever was claimed but not settled goes back for the next pass.
            let unsettled = claimed.map(\.id).filter { !settled.contains($0) }
            if !unsettled.isEmpty { try? database.write { try $0.releaseClaims(ids: unsettled) } }
        }
        sending: for unit in Self.units(for: claimed) {
            do {
                if unit.messageIDs.count == 1 {
                    let response = try await api.modify(id: unit.messageIDs[0], addLabelIDs: unit.adds, removeLabelIDs: unit.removes)
                    checkpoint?(.afterSend)
                    try markInFlight(unit.rows, gate: try parseHistoryID(response.historyId))
                    report.flushed += unit.rows.count
                } else {
                    try await api.batchModify(ids: unit.messageIDs, addLabelIDs: unit.adds, removeLabelIDs: unit.removes)
                    checkpoint?(.afterSend)
                    awaitingGate += unit.rows
                    continue
                }
            } catch let error as GmailError {
                switch error {
                case .notFound, .badRequest:
                    report.dropped += try await drop(unit.rows, accountID: accountID)
                case .rateLimited, .server, .network:
                    try recordFailure(unit.rows, error: error)
                    unit.rows.forEach { settled.insert($0.id) }
                    break sending  // the server or the network is in trouble: keep the rest pending
                default:
                    // Not authorised, forbidden, an unreadable response: the rows stay pending.
                    try? await settleGates(awaitingGate, report: &report, settled: &settled)
                    throw error
                }
            }
            unit.rows.forEach { settled.insert($0.id) }
        }
        try await settleGates(awaitingGate, report: &report, settled: &settled)
    }

    /// Gives every row sent by batchModify its gate: the mailbox history id right after.
    /// If that cannot be read, the rows stay pending and go out again (harmless: label
    /// changes are idempotent).
    private func settleGates(_ rows: [QueuedMutation], report: inout FlushReport, settled: inout Set<Int64>) async throws {
        guard !rows.isEmpty else { return }
        let gate = try parseHistoryID(try await api.getProfile().historyId)
        try markInFlight(rows, gate: gate)
        report.flushed += rows.count
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
    private func recordFailure(_ rows: [QueuedMutation], error: GmailError) throws {
        var delay = 0.0
        switch error {
        case .network:
            delay = 0
        case .rateLimited(let retryAfter):
            delay = max(backoff(rows), retryAfter ?? 0)
        default:
            delay = backoff(rows)
        }
        let ids = rows.map(\.id)
        let text = error.description
        try database.write { try $0.recordMutationFailure(ids: ids, error: text, retryAfterMilliseconds: Int64(delay * 1000)) }
    }

    /// 5 s, 10 s, 20 s … up to 15 min, with jitter so many rows do not retry in lockstep.
    private func backoff(_ rows: [QueuedMutation]) -> Double {
        let attempts = rows.map(\.attempts).max() ?? 0
        return min(900.0, 5.0 * pow(2.0, Double(min(attempts, 20)))) * Double.random(in: 0.5...1.0)
    }

    /// A terminal failure: drop the rows, then re-derive the message's truth from Gmail
    /// (a message that is gone is tombstoned).
    private func drop(_ rows: [QueuedMutation], accountID: Int64) async throws -> Int {
        let failed = rows.map { (id: $0.id, op: $0.op) }
        let messages = try database.write { try $0.dropMutations(failed) }
        for id in messages {
            do {
                let message = try await api.getMessage(id: id, format: "metadata")
                if let snapshot = SnapshotMapping.snapshot(from: message) {
                    _ = try database.write { try $0.applySnapshots([snapshot], accountID: accountID) }
                }
            } catch GmailError.notFound {
                _ = try database.write { try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }
            } catch {
                // Truth is re-derived by the next history poll anyway.
            }
        }
        return rows.count
    }

    private func accountID() throws -> Int64 {
        let email = self.email
        guard let account = try database.read({ try $0.account(email: email) }) else {
            throw SyncError.unknownAccount(email)
        }
        return account.id
    }
}
