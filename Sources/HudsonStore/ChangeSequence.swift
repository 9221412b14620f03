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
    /// Moves the message to a new sequence number. REPLACE deletes the old row and
    /// inserts a new one, and AUTOINCREMENT never reuses a number.
    func bumpSequence(accountID: Int64, gmailID: String, threadID: String, deletedHistoryID: Int64? = nil) throws {
        try db.execute("""
            REPLACE INTO message_seq (account_id, gmail_id, thread_id, deleted, deleted_history_id)
            VALUES (?, ?, ?, ?, ?)
            """, accountID, gmailID, threadID, deletedHistoryID != nil, deletedHistoryID)
    }

    func bumpSequence(messageKey: Int64) throws {
        try db.execute("""
            REPLACE INTO message_seq (account_id, gmail_id, thread_id, deleted, deleted_history_id)
            SELECT account_id, gmail_id, thread_id, 0, NULL FROM messages WHERE id = ?
            """, messageKey)
    }

    /// The highest sequence number handed out so far (0 for a new store).
    public func currentSequence() throws -> Int64 {
        try db.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'message_seq'") ?? 0
    }

    /// Messages whose latest change is after `seq`, oldest change first.
    public func changes(since seq: Int64, accountID: Int64? = nil, limit: Int = 1000) throws -> [MessageChange] {
        try db.map("""
            SELECT seq, account_id, gmail_id, thread_id, deleted FROM message_seq
             WHERE seq > ? AND (?2 IS NULL OR account_id = ?2)
             ORDER BY seq LIMIT ?
            """, seq, accountID, limit) {
            MessageChange(seq: $0.int64(0), accountID: $0.int64(1), messageID: $0.string(2),
                          threadID: $0.string(3), deleted: $0.bool(4))
        }
    }
}
