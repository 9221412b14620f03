/*!
 Applying message snapshots from sync: one transaction per page, a SAVEPOINT per
 message so one bad message is skipped and the page still commits, and the version
 guard — a snapshot never overwrites a row with a newer history id, and re-applying a
 stale one is a no-op (local-first-sync.md, "The version guard").
 */
import HudsonMail
import SQLite

/// What Gmail said about one message at one history id (SnapshotMapping's output).
public struct MessageSnapshot: Equatable, Sendable {
    public var id: String
    public var threadID: String
    public var historyID: Int64
    /// Epoch milliseconds.
    public var internalDate: Int64
    public var labelIDs: [String]
    public var snippet: String
    public var sizeEstimate: Int64
    public var headers: MessageHeaders

    public init(
        id: String, threadID: String, historyID: Int64, internalDate: Int64, labelIDs: [String],
        snippet: String = "", sizeEstimate: Int64 = 0, headers: MessageHeaders = MessageHeaders()
    ) {
        self.id = id
        self.threadID = threadID
        self.historyID = historyID
        self.internalDate = internalDate
        self.labelIDs = labelIDs
        self.snippet = snippet
        self.sizeEstimate = sizeEstimate
        self.headers = headers
    }
}

public struct SnapshotFailure: Equatable, Sendable {
    public var messageID: String
    public var reason: String
}

/// What one `format=full` fetch brought: the message's snapshot (when it could be
/// mapped) and its body.
public struct Hydration: Sendable {
    public var gmailID: String
    public var snapshot: MessageSnapshot?
    public var body: MessageBody
    /// The RFC 822 source, for an account that keeps sources (migration 018).
    public var source: [UInt8]?

    public init(gmailID: String, snapshot: MessageSnapshot?, body: MessageBody, source: [UInt8]? = nil) {
        self.gmailID = gmailID
        self.snapshot = snapshot
        self.body = body
        self.source = source
    }
}

public struct HydrationReport: Equatable, Sendable {
    /// Bodies stored.
    public var saved: [String] = []
    /// Messages no longer in the store (they vanished meanwhile): nothing stored.
    public var vanished: [String] = []
    /// Messages whose write failed; rolled back alone.
    public var failures: [SnapshotFailure] = []

    public init() {}
}

public struct SnapshotApplyReport: Equatable, Sendable {
    /// Snapshots written (new messages and newer versions of known ones).
    public var applied = 0
    /// Snapshots refused by the version guard (older than or as old as what is stored).
    public var stale = 0
    /// Snapshots that failed and were skipped; the rest of the page was committed.
    public var failures: [SnapshotFailure] = []

    public init() {}
}

extension Store {
    /// Applies a page of snapshots in one transaction, and parks (Parked.swift), in the
    /// same transaction, the messages whose fetch failed (`parking`) and those that could
    /// not be stored: none is dropped unseen, and none can stall the page.
    public func applySnapshots(_ snapshots: [MessageSnapshot], accountID: Int64,
                               parking failures: [ParkingFailure] = []) throws -> SnapshotApplyReport {
        try writeTracked { touched in
            let report = try applyEach(snapshots, accountID: accountID, touched: &touched)
            try park(failures + Self.parkingFailures(report.failures, stage: .message), accountID: accountID)
            return report
        }
    }

    static func parkingFailures(_ failures: [SnapshotFailure], stage: ParkedStage) -> [ParkingFailure] {
        failures.map { ParkingFailure(gmailID: $0.messageID, stage: stage, error: "cannot be stored: \($0.reason)") }
    }

    /// Applies one listed backfill page and records the listing's progress in the same
    /// transaction, so a crash either keeps both or neither and the page is re-listed.
    /// Every message of the page, stale or not, is confirmed for a re-list in progress.
    /// Messages of the page whose fetch failed are parked in the same transaction, so the
    /// listing moves on without losing them.
    public func applyBackfillPage(
        _ snapshots: [MessageSnapshot], accountID: Int64, nextPageToken: String?, listed: Int, estimate: Int?,
        parking failures: [ParkingFailure] = []
    ) throws -> SnapshotApplyReport {
        try writeTracked { touched in
            let report = try applyEach(snapshots, accountID: accountID, touched: &touched)
            try park(failures + Self.parkingFailures(report.failures, stage: .message), accountID: accountID)
            // Only what is stored replaces what the message's queued changes stand for.
            let unstored = Set(report.failures.map(\.messageID))
            try confirmListed(snapshots.map(\.id).filter { !unstored.contains($0) }, accountID: accountID)
            try recordBackfillPage(accountID: accountID, nextPageToken: nextPageToken, listed: listed, estimate: estimate)
            return report
        }
    }

    /// Stores what a `format=full` fetch brought: the snapshot (through the version
    /// guard) and the body, in one transaction. Returns false when the message is gone.
    @discardableResult
    public func applyHydration(_ snapshot: MessageSnapshot?, body: MessageBody, gmailID: String, accountID: Int64,
                               source: [UInt8]? = nil) throws -> Bool {
        try writeTracked { touched in
            if let snapshot {
                _ = try applyEach([snapshot], accountID: accountID, touched: &touched)
            }
            return try saveBody(body, gmailID: gmailID, accountID: accountID, source: source, touched: &touched)
        }
    }

    /// Stores a batch of `format=full` fetches in one transaction, each in its own
    /// SAVEPOINT: the same as `applyHydration` per message, but one commit for the batch
    /// ("One commit per page, not per message"), and each touched thread's rollup is
    /// recomputed once. A message that fails is rolled back alone, reported and parked
    /// with the bodies whose fetch failed (`parking`); the rest commit.
    public func applyHydrations(_ items: [Hydration], accountID: Int64,
                                parking failures: [ParkingFailure] = []) throws -> HydrationReport {
        try writeTracked { touched in
            var report = HydrationReport()
            for item in items {
                do {
                    let saved = try db.savepoint {
                        if let snapshot = item.snapshot {
                            _ = try applyEach([snapshot], accountID: accountID, touched: &touched)
                        }
                        return try saveBody(item.body, gmailID: item.gmailID, accountID: accountID, source: item.source,
                                            touched: &touched)
                    }
                    if saved { report.saved.append(item.gmailID) } else { report.vanished.append(item.gmailID) }
                } catch {
                    report.failures.append(SnapshotFailure(messageID: item.gmailID, reason: String(describing: error)))
                }
            }
            try park(failures + Self.parkingFailures(report.failures, stage: .body), accountID: accountID)
            return report
        }
    }

    /// A savepoint per message: one that fails is rolled back and reported, the rest stay.
    private func applyEach(_ snapshots: [MessageSnapshot], accountID: Int64, touched: inout Set<ThreadKey>) throws -> SnapshotApplyReport {
        var report = SnapshotApplyReport()
        for snapshot in snapshots {
            do {
                let applied = try db.savepoint {
                    try applySnapshot(snapshot, accountID: accountID, touched: &touched)
                }
                if applied { report.applied += 1 } else { report.stale += 1 }
                // Stored, or already stored newer: no longer waiting for a retry.
                try unpark(gmailID: snapshot.id, accountID: accountID, stage: .message)
            } catch {
                report.failures.append(SnapshotFailure(messageID: snapshot.id, reason: String(describing: error)))
            }
        }
        return report
    }

    /// Returns false when the version guard refuses the snapshot.
    func applySnapshot(_ snapshot: MessageSnapshot, accountID: Int64, touched: inout Set<ThreadKey>) throws -> Bool {
        guard snapshot.historyID > 0 else { throw StoreError.invalidArgument("history id must be positive") }
        let existing = try db.first(
            "SELECT id, history_id, thread_id, body_state FROM messages WHERE account_id = ? AND gmail_id = ?",
            accountID, snapshot.id
        ) { (key: $0.int64(0), historyID: $0.int64(1), threadID: $0.string(2), bodyState: $0.int(3)) }

        let headers = snapshot.headers
        // A guess until the body's parts or Gmail's own has:attachment decide it
        // (`attachment_known`, migration 028); search counts the matches that rest on it.
        let multipartMixed = headers.contentType.map { $0.lowercased().hasPrefix("multipart/mixed") } ?? false
        let key: Int64
        if let existing {
            guard snapshot.historyID > existing.historyID else { return false }
            key = existing.key
            try db.execute("""
                UPDATE messages SET thread_id = ?, history_id = ?, internal_date = ?, size_estimate = ?, snippet = ?,
                       subject = ?, sender = ?, to_header = ?, cc_header = ?, bcc_header = ?, reply_to = ?,
                       date_header = ?, message_id_header = ?, in_reply_to = ?, references_header = ?, list_id = ?,
                       content_type = ?, has_attachment = CASE WHEN attachment_known = 1 THEN has_attachment ELSE ? END
                 WHERE id = ?
                """, arguments: [
                    snapshot.threadID, snapshot.historyID, snapshot.internalDate, snapshot.sizeEstimate, snapshot.snippet,
                    headers.subject, headers.from, headers.to, headers.cc, headers.bcc, headers.replyTo,
                    headers.date, headers.messageID, headers.inReplyTo, headers.references, headers.listID,
                    headers.contentType, multipartMixed, key,
                ])
            if existing.threadID != snapshot.threadID {
                touched.insert(ThreadKey(accountID: accountID, threadID: existing.threadID))
            }
        } else {
            if let deletedAt = try deletedVersion(accountID: accountID, gmailID: snapshot.id) {
                guard snapshot.historyID > deletedAt else {
                    return false  // deleted at or after this version: a stale snapshot must not resurrect it
                }
                // Back after its deletion: the live row below takes over from the deleted one.
                try db.execute("DELETE FROM message_seq WHERE account_id = ? AND gmail_id = ? AND deleted = 1",
                               accountID, snapshot.id)
            }
            key = try allocateMessageKey(internalDate: snapshot.internalDate)
            try db.execute("""
                INSERT INTO messages (id, account_id, gmail_id, thread_id, history_id, internal_date, size_estimate, snippet,
                       subject, sender, to_header, cc_header, bcc_header, reply_to, date_header, message_id_header,
                       in_reply_to, references_header, list_id, content_type, has_attachment)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    key, accountID, snapshot.id, snapshot.threadID, snapshot.historyID, snapshot.internalDate,
                    snapshot.sizeEstimate, snapshot.snippet, headers.subject, headers.from, headers.to, headers.cc,
                    headers.bcc, headers.replyTo, headers.date, headers.messageID, headers.inReplyTo,
                    headers.references, headers.listID, headers.contentType, multipartMixed,
                ])
        }
        try replaceCanonicalLabels(messageKey: key, accountID: accountID, with: snapshot.labelIDs)
        try replaceAddresses(messageKey: key, headers: headers)
        try keepListHeaders(headers.list, messageKey: key)
        try bumpSequence(messageKey: key, accountID: accountID, gmailID: snapshot.id, threadID: snapshot.threadID)
        touched.insert(ThreadKey(accountID: accountID, threadID: snapshot.threadID))
        return true
    }

    /// Canonical labels become exactly `labels`; only the difference is written.
    func replaceCanonicalLabels(messageKey: Int64, accountID: Int64, with labels: [String]) throws {
        let wanted = Set(labels.filter { !$0.isEmpty })
        let current = Set(try db.map("SELECT label FROM message_labels WHERE message_id = ?", messageKey) { $0.string(0) })
        for label in current.subtracting(wanted) {
            try db.execute("DELETE FROM message_labels WHERE message_id = ? AND label = ?", messageKey, label)
        }
        let added = wanted.subtracting(current)
        for label in added {
            try db.execute("INSERT INTO message_labels (message_id, label) VALUES (?, ?)", messageKey, label)
        }
        try ensureLabelRows(accountID: accountID, ids: added.sorted())
    }

    private func replaceAddresses(messageKey: Int64, headers: MessageHeaders) throws {
        try db.execute("DELETE FROM message_addresses WHERE message_id = ?", messageKey)
        let roles: [(String, String?)] = [("from", headers.from), ("to", headers.to), ("cc", headers.cc), ("bcc", headers.bcc)]
        for (role, value) in roles {
            guard let value, !value.isEmpty else { continue }
            for address in MailAddress.parseList(value) {
                try db.execute(
                    "INSERT OR IGNORE INTO message_addresses (message_id, role, address, name) VALUES (?, ?, ?, ?)",
                    messageKey, role, address.address, address.name.isEmpty ? nil : address.name)
            }
        }
    }

    /// A new message key that sorts by date: internal_date in ms times 1000, plus the
    /// first free tie-breaker. The full-text index's rowid is this key, so newest-first
    /// search is a backwards walk of the doclist (sqlite-notes.md, FTS5 measurements).
    func allocateMessageKey(internalDate: Int64) throws -> Int64 {
        let base = SearchCompiler.key(milliseconds: internalDate)
        let candidate = (try db.scalarInt("SELECT max(id) + 1 FROM messages WHERE id BETWEEN ? AND ?", base, base + 999)) ?? base
        if try db.scalarInt("SELECT 1 FROM messages WHERE id = ?", candidate) == nil {
            return candidate
        }
        // A thousand messages in one millisecond: give up exact order, never uniqueness.
        return (try db.scalarInt("SELECT max(id) + 1 FROM messages")) ?? candidate
    }
}
