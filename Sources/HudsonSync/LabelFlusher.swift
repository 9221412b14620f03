/*!
 The flusher's first step: label operations (create, rename, delete; LabelObjects.swift)
 go to Gmail before any queued message change, oldest first. A change that uses a label
 still to be created, or one being deleted, is not claimed meanwhile
 (`Store.labelReadyCondition`), so Gmail never sees a provisional id.

 Every request that changes Gmail may have reached it whatever became of its answer, so
 each operation is marked attempted, durably, before it goes out, and a retry starts by
 finding out what Gmail has:

 - create: a create that may have reached Gmail is looked up by the name it carried
   (labels.list) before it is sent again, so a lost answer never makes two labels; a
   refusal (409, or 400: "some reports say 400", gmail-api.md §2.10) is also looked up
   by name, and a label of that name, made elsewhere or by the lost attempt, is the one
   used. Then the provisional id is mapped to Gmail's everywhere, in one transaction.
 - rename: labels.patch sets the same name again harmlessly. A rename refused because
   its name is still held by a label whose deletion was asked later (the rename's row is
   older) waits for that deletion, which the same pass sends first.
 - delete: a 404 means Gmail no longer has the label (a lost answer's retry, or deleted
   elsewhere): done either way. The messages' removes it holds are then in flight, gated
   on the history id read right after.

 A refusal for good (400, 404 for a rename) is recorded with Gmail's reason and undone
 locally (Store.rejectLabelChange); nothing else waits on it. A 429, 5xx or network
 failure leaves the operation pending with back-off, and the step stops: the message
 changes that do not need it still go.
 */
import Foundation
import HudsonGmail
import HudsonStore

extension MutationFlusher {
    /// Sends the account's due label operations. At most a few rounds: an operation that
    /// turns into another (a create renamed while it was out becomes a rename) goes in the
    /// same pass. Throws only what stops the pass (authorisation).
    func flushLabelChanges(accountID: Int64, report: inout FlushReport) async throws {
        var done = Set<Int64>()
        var rounds = 0
        var gmailLabels: [GmailLabel]?
        while rounds < 3 {
            rounds += 1
            let due = try database.read { try $0.dueLabelChanges(accountID: accountID) }.filter { !done.contains($0.seq) }
            guard !due.isEmpty else { return }
            for change in due {
                do {
                    if try await send(change, labels: &gmailLabels, report: &report) { done.insert(change.seq) }
                } catch let error as GmailError {
                    try recordLabelFailure(change, error: error)
                    if error.isAccountWide { throw error }
                    // The server or the network is in trouble: the rest waits for a later pass.
                    report.interruptedBy = error
                    return
                } catch let error as SyncError {
                    // Gmail acted, and its history id could not be read: tried again later.
                    try database.write {
                        try $0.recordLabelChangeFailure(seq: change.seq, error: "sent; \(error)", retryAfterMilliseconds: 5_000)
                    }
                    return
                }
            }
        }
    }

    /// Sends one operation; false when it waits for a later one (a rename onto the name
    /// of a label whose deletion is queued after it), which the next round sends first.
    private func send(_ change: PendingLabelChange, labels: inout [GmailLabel]?, report: inout FlushReport) async throws -> Bool {
        switch change.op {
        case .create:
            guard change.isProvisional, let name = change.name else { return true }
            if change.attemptedAt != nil, let found = try await findLabel(named: change.attemptedName ?? name, labels: &labels) {
                // An earlier create may have reached Gmail: use what it made.
                try database.write { try $0.labelCreated(change, gmailID: found.id, sentName: found.name ?? name) }
                report.flushed += 1
                return true
            }
            guard try database.write({ try $0.markLabelChangeAttempted(change) }) else { return true }
            checkpoint?(.afterMarkAttempted)
            let created: GmailLabel
            do {
                created = try await api.createLabel(name: name, color: change.color.map(Self.wire))
            } catch let error as GmailError where error.isRefusal {
                labels = nil
                if let found = try await findLabel(named: name, labels: &labels) {
                    // 409 (or 400) for a name Gmail has: that label is this one.
                    try database.write { try $0.labelCreated(change, gmailID: found.id, sentName: found.name ?? name) }
                    report.flushed += 1
                } else {
                    try reject(change, error: error, report: &report)
                }
                return true
            }
            checkpoint?(.afterSend)
            try database.write { try $0.labelCreated(change, gmailID: created.id, sentName: name) }
            report.flushed += 1
        case .rename:
            guard !change.isProvisional else { return true }
            guard try database.write({ try $0.markLabelChangeAttempted(change) }) else { return true }
            checkpoint?(.afterMarkAttempted)
            do {
                _ = try await api.patchLabel(id: change.labelID, name: change.name, color: nil)
            } catch let error as GmailError where error.isRefusal {
                // The name is still another label's whose deletion was asked for later (the
                // rename's row is older, from an earlier rename): that deletion goes first.
                let wanted = change.name?.lowercased()
                let freedLater = try database.read { try $0.dueLabelChanges(accountID: change.accountID) }.contains {
                    $0.op == .delete && $0.seq > change.seq && $0.previousName?.lowercased() == wanted
                }
                if freedLater && error != .notFound { return false }
                try reject(change, error: error, report: &report)
                return true
            }
            checkpoint?(.afterSend)
            try database.write { try $0.labelRenamed(change) }
            report.flushed += 1
        case .delete:
            var gmailID: String? = change.isProvisional ? nil : change.labelID
            if change.isProvisional {
                // Created here, deleted before its create's answer came: find what it made.
                let name = change.attemptedName ?? change.previousName ?? ""
                guard let found = try await findLabel(named: name, labels: &labels) else {
                    try database.write { try $0.forgetLabelChange(seq: change.seq) }
                    return true
                }
                gmailID = found.id
            }
            guard let id = gmailID, try database.write({ try $0.markLabelChangeAttempted(change) }) else { return true }
            checkpoint?(.afterMarkAttempted)
            do {
                try await api.deleteLabel(id: id)
            } catch GmailError.notFound {
                // Gone already: the lost answer of an earlier attempt, or deleted elsewhere.
            } catch let error as GmailError where error.isRefusal {
                try reject(change, error: error, report: &report)
                return true
            }
            checkpoint?(.afterSend)
            let gate = try parseHistoryID(try await api.getProfile().historyId)
            try database.write { try $0.labelDeleted(change, gmailID: id, gate: gate) }
            report.flushed += 1
        }
        return true
    }

    /// The user label Gmail has with this name (ignoring case), from one labels.list per pass.
    private func findLabel(named name: String, labels: inout [GmailLabel]?) async throws -> GmailLabel? {
        if labels == nil { labels = try await api.listLabels() }
        return labels?.first { $0.type != "system" && $0.name?.lowercased() == name.lowercased() }
    }

    private func reject(_ change: PendingLabelChange, error: GmailError, report: inout FlushReport) throws {
        let reason = error == .notFound ? "the label is no longer at Gmail" : error.description
        try database.write { try $0.rejectLabelChange(change, reason: reason) }
        report.dropped += 1
        report.refusedLabelChanges += 1
    }

    private func recordLabelFailure(_ change: PendingLabelChange, error: GmailError) throws {
        var delay = 0.0
        switch error {
        case .network, .cancelled: delay = 0
        case .rateLimited(let retryAfter):
            delay = max(min(900.0, 5.0 * pow(2.0, Double(min(change.attempts, 20)))), retryAfter ?? 0)
        default: delay = min(900.0, 5.0 * pow(2.0, Double(min(change.attempts, 20))))
        }
        try database.write {
            try $0.recordLabelChangeFailure(seq: change.seq, error: error.description,
                                            retryAfterMilliseconds: Int64(delay * 1000))
        }
    }

    static func wire(_ color: LabelColorChoice) -> LabelColor {
        LabelColor(textColor: color.text, backgroundColor: color.background)
    }
}
