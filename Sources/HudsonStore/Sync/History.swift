/*!
 Applying history changes (users.history.list records, decoded by sync's
 HistoryMapping) and tombstoning vanished messages. The cursor is not touched here: it
 is advanced once per poll, after the last page ("The cursor is committed once per
 poll, not per page"). Each change carries its history record id and goes through the
 same version guard as snapshots, which is what makes re-polling after a crash safe.
 */
import SQLite

public enum HistoryChange: Equatable, Sendable {
    case messageAdded(messageID: String, threadID: String, historyID: Int64)
    case messageDeleted(messageID: String, historyID: Int64)
    case labelsAdded(messageID: String, threadID: String, labelIDs: [String], historyID: Int64)
    case labelsRemoved(messageID: String, threadID: String, labelIDs: [String], historyID: Int64)

    public var messageID: String {
        switch self {
        case .messageAdded(let id, _, _), .messageDeleted(let id, _),
             .labelsAdded(let id, _, _, _), .labelsRemoved(let id, _, _, _):
            return id
        }
    }

    public var historyID: Int64 {
        switch self {
        case .messageAdded(_, _, let h), .messageDeleted(_, let h),
             .labelsAdded(_, _, _, let h), .labelsRemoved(_, _, _, let h):
            return h
        }
    }
}

public struct HistoryApplyReport: Equatable, Sendable {
    /// Changes written to the store.
    public var applied = 0
    /// Changes already reflected (the stored row is as new or newer) or about deleted messages.
    public var skipped = 0
    /// Messages the changes mention that the store does not have: sync fetches them
    /// (format=metadata) and applies the snapshots before advancing the cursor.
    public var unknownMessageIDs: [String] = []

    public init() {}
}

extension Store {
    /// Applies one page of history changes, in order, in one transaction.
    @discardableResult
    public func applyHistoryChanges(_ changes: [HistoryChange], accountID: Int64) throws -> HistoryApplyReport {
        try writeTracked { touched in
            var report = HistoryApplyReport()
            var unknown: [String] = []
            var unknownSet = Set<String>()
            // One history record can carry labelsAdded and labelsRemoved for the same
            // message (one modify that archives and stars), every change with the
            // record's id. Once the first is applied the row's history id equals the
            // record's, and the rest of the record must still apply; an equal version
            // this page did not write is a snapshot taken at that version, which already
            // shows the whole record and is skipped (the version guard).
            var versionWrittenHere: [Int64: Int64] = [:]
            func needsFetch(_ id: String) {
                if unknownSet.insert(id).inserted { unknown.append(id) }
            }
            for change in changes {
                let existing = try db.first(
                    "SELECT id, history_id, thread_id FROM messages WHERE account_id = ? AND gmail_id = ?",
                    accountID, change.messageID
                ) { (key: $0.int64(0), historyID: $0.int64(1), threadID: $0.string(2)) }
                let deletedAt = existing == nil ? try deletedVersion(accountID: accountID, gmailID: change.messageID) : nil

                switch change {
                case .messageDeleted(let id, let historyID):
                    try tombstone(accountID: accountID, gmailID: id, historyID: historyID, touched: &touched)
                    report.applied += 1
                case .messageAdded:
                    if existing == nil && deletedAt == nil {
                        needsFetch(change.messageID)
                    } else {
                        report.skipped += 1
                    }
                case .labelsAdded(_, _, let labels, let historyID), .labelsRemoved(_, _, let labels, let historyID):
                    guard let existing else {
                        if deletedAt == nil { needsFetch(change.messageID) } else { report.skipped += 1 }
                        continue
                    }
                    guard historyID > existing.historyID || versionWrittenHere[existing.key] == historyID else {
                        report.skipped += 1  // the stored snapshot already reflects this change
                        continue
                    }
                    let isAdd: Bool
                    if case .labelsAdded = change { isAdd = true } else { isAdd = false }
                    for label in labels where !label.isEmpty {
                        if isAdd {
                            try db.execute("INSERT OR IGNORE INTO message_labels (message_id, label) VALUES (?, ?)", existing.key, label)
                        } else {
                            try db.execute("DELETE FROM message_labels WHERE message_id = ? AND label = ?", existing.key, label)
                        }
                    }
                    if isAdd { try ensureLabelRows(accountID: accountID, ids: labels) }
                    try db.execute("UPDATE messages SET history_id = ? WHERE id = ?", historyID, existing.key)
                    versionWrittenHere[existing.key] = historyID
                    try bumpSequence(messageKey: existing.key)
                    touched.insert(ThreadKey(accountID: accountID, threadID: existing.threadID))
                    report.applied += 1
                }
            }
            report.unknownMessageIDs = unknown
            return report
        }
    }

    /// Removes a message Gmail no longer has (a 404, or a messagesDeleted record).
    /// Its change-sequence row stays, marked deleted, and remembers the version it was
    /// deleted at so a stale snapshot cannot bring it back. Returns false when the store
    /// did not have it.
    @discardableResult
    public func deleteVanishedMessage(gmailID: String, accountID: Int64, historyID: Int64? = nil) throws -> Bool {
        try writeTracked { touched in
            try tombstone(accountID: accountID, gmailID: gmailID, historyID: historyID, touched: &touched)
        }
    }

    @discardableResult
    func tombstone(accountID: Int64, gmailID: String, historyID: Int64?, touched: inout Set<ThreadKey>) throws -> Bool {
        let existing = try db.first(
            "SELECT id, history_id, thread_id FROM messages WHERE account_id = ? AND gmail_id = ?", accountID, gmailID
        ) { (key: $0.int64(0), historyID: $0.int64(1), threadID: $0.string(2)) }
        let version = max(existing?.historyID ?? 0, historyID ?? 0, 1)
        if let existing {
            // Its queued changes go with it (Schema: 006_rollup_by_recency); the index
            // trigger removes the row's terms; the cascade removes labels, addresses, body
            // and attachments. Undo items stay, and undo passes over them (005).
            try db.execute("DELETE FROM mutation_queue WHERE message_id = ?", existing.key)
            try db.execute("DELETE FROM messages WHERE id = ?", existing.key)
            touched.insert(ThreadKey(accountID: accountID, threadID: existing.threadID))
        }
        let threadID = try existing?.threadID
            ?? db.scalarString("SELECT thread_id FROM message_seq WHERE account_id = ? AND gmail_id = ? AND deleted = 1",
                               accountID, gmailID)
            ?? gmailID
        // Gone: nothing left to retry (Parked.swift).
        try unpark(gmailID: gmailID, accountID: accountID)
        let previous = try deletedVersion(accountID: accountID, gmailID: gmailID)
        // Record the deletion unless an as-new one is already recorded.
        if existing != nil || version > (previous ?? 0) {
            try recordDeletion(accountID: accountID, gmailID: gmailID, threadID: threadID, messageKey: existing?.key,
                               historyID: max(version, previous ?? 0))
        }
        return existing != nil
    }
}
