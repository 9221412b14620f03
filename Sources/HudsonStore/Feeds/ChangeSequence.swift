/*!
 The change sequence (`message_seq`): every write to a message gives it a new, higher
 sequence number, so a script can ask what changed since the last point it saw
 (`hd-ls --changed-since`). Deleted messages keep a row marked deleted.
 */
import SQLite

public struct MessageChange: Equatable, Sendable {
    public var seq: Int64
    public var accountID: Int64
    public var messageID: String
    public var threadID: String
    public var deleted: Bool
}

extension Store {
    /// Moves a stored message to a new sequence number. REPLACE deletes its old row (found
    /// by the message's key) and inserts a new one, and AUTOINCREMENT never reuses a number.
    func bumpSequence(messageKey: Int64, accountID: Int64, gmailID: String, threadID: String) throws {
        let message = SQLiteRows(columns: 4)
        message.append(.integer(accountID), .text(gmailID), .text(threadID), .integer(messageKey))
        try bumpSequence(message)
    }

    /// The same for many messages in one statement: rows of (account, Gmail id, thread,
    /// message key), moved in that order.
    func bumpSequence(_ messages: SQLiteRows) throws {
        try db.execute("""
            REPLACE INTO message_seq (account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id)
            SELECT c0, c1, c2, c3, 0, NULL FROM hudson_rows(?)
            """, messages)
    }

    func bumpSequence(messageKey: Int64) throws {
        try db.execute("""
            REPLACE INTO message_seq (account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id)
            SELECT account_id, gmail_id, thread_id, id, 0, NULL FROM messages WHERE id = ?
            """, messageKey)
    }

    /// Records that a message is gone, and the version it went at: its live row (if the
    /// store had it) becomes the one deleted row for its Gmail id, at a new number.
    func recordDeletion(accountID: Int64, gmailID: String, threadID: String, messageKey: Int64?, historyID: Int64) throws {
        if let messageKey {
            try db.execute("DELETE FROM message_seq WHERE message_id = ?", messageKey)
        }
        try db.execute("""
            REPLACE INTO message_seq (account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id)
            VALUES (?, ?, ?, NULL, 1, ?)
            """, accountID, gmailID, threadID, historyID)
    }

    /// The version a message was deleted at, if the store recorded its deletion.
    func deletedVersion(accountID: Int64, gmailID: String) throws -> Int64? {
        try db.scalarInt(
            "SELECT deleted_history_id FROM message_seq WHERE account_id = ? AND gmail_id = ? AND deleted = 1",
            accountID, gmailID)
    }

    /// The highest sequence number handed out so far (0 for a new store).
    public func currentSequence() throws -> Int64 {
        try db.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'message_seq'") ?? 0
    }

    /// Messages whose latest change is after `seq`, oldest change first.
    public func changes(since seq: Int64, accountID: Int64? = nil, limit: Int = 1000) throws -> [MessageChange] {
        var changes: [MessageChange] = []
        try forEachChange(since: seq, accountID: accountID, limit: limit) { changes.append($0) }
        return changes
    }

    /// `changes`, each handed to `body` as it is read: a reader of the whole feed gets the
    /// first at once, and memory does not grow with the number of changes.
    public func forEachChange(
        since seq: Int64, accountID: Int64? = nil, limit: Int = 1000, _ body: (MessageChange) throws -> Void
    ) throws {
        try db.read {
            try db.forEach("""
                SELECT seq, account_id, gmail_id, thread_id, deleted FROM message_seq
                 WHERE seq > ? AND (?2 IS NULL OR account_id = ?2)
                 ORDER BY seq LIMIT ?
                """, seq, accountID, limit) {
                try body(MessageChange(seq: $0.int64(0), accountID: $0.int64(1), messageID: $0.string(2),
                                       threadID: $0.string(3), deleted: $0.bool(4)))
            }
        }
    }
}
