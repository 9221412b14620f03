/*!
 Reads the list views are built on. The inbox is one range of the
 `thread_rollup_inbox` index, newest first, with keyset paging on
 (last_message_at, thread_id): no joins, no aggregation, no queue lookups, and the same
 cost on page 100 as on page 1 (local-first-sync.md, thread_rollup).
 */
import SQLite

public struct ThreadSummary: Equatable, Sendable {
    public var accountID: Int64
    public var threadID: String
    public var lastMessageAt: Int64
    public var newestMessageID: String
    public var subject: String?
    public var snippet: String
    public var sender: String
    public var participants: String
    public var messageCount: Int
    public var unreadCount: Int
    public var inInbox: Bool
    public var unread: Bool
    public var starred: Bool
    public var hasAttachment: Bool
    /// Effective label ids of the thread, sorted.
    public var labels: [String]
}

/// Where the previous page ended: its last row's (last_message_at, thread_id).
public struct ThreadPageCursor: Equatable, Sendable {
    public var lastMessageAt: Int64
    public var threadID: String

    public init(lastMessageAt: Int64, threadID: String) {
        self.lastMessageAt = lastMessageAt
        self.threadID = threadID
    }
}

extension Store {
    static let rollupColumns = """
        r.account_id, r.thread_id, r.last_message_at, m.gmail_id, r.subject, r.snippet, r.sender, r.participants,
        r.message_count, r.unread_count, r.in_inbox, r.unread, r.starred, r.has_attachment, r.labels
        """

    static func threadSummary(from row: Row) -> ThreadSummary {
        ThreadSummary(
            accountID: row.int64(0), threadID: row.string(1), lastMessageAt: row.int64(2),
            newestMessageID: row.string(3), subject: row.optionalString(4), snippet: row.string(5),
            sender: row.string(6), participants: row.string(7), messageCount: row.int(8), unreadCount: row.int(9),
            inInbox: row.bool(10), unread: row.bool(11), starred: row.bool(12), hasAttachment: row.bool(13),
            labels: row.string(14).split(separator: " ").map(String.init))
    }

    /// The SQL of an inbox page: one account's (`?1`) or every account's, the first page
    /// or the one after (`?2`, `?3`), `?4` rows. The keyset condition is a row-value range
    /// on the index, so a deep page is a seek, not a walk. Exposed so tests and
    /// `--explain` can show its plan.
    public static func inboxPageSQL(allAccounts: Bool, paged: Bool) -> String {
        var conditions = allAccounts ? ["r.in_inbox = 1"] : ["r.account_id = ?1", "r.in_inbox = 1"]
        if paged { conditions.append("(r.last_message_at, r.thread_id) < (?2, ?3)") }
        return """
            SELECT \(rollupColumns)
              FROM thread_rollup AS r JOIN messages AS m ON m.id = r.newest_message_id
             WHERE \(conditions.joined(separator: " AND "))
             ORDER BY r.last_message_at DESC, r.thread_id DESC
             LIMIT ?4
            """
    }

    /// One page of the inbox, newest first, after `cursor` when given.
    public func inboxThreads(accountID: Int64?, limit: Int, after cursor: ThreadPageCursor? = nil) throws -> [ThreadSummary] {
        try db.map(
            Self.inboxPageSQL(allAccounts: accountID == nil, paged: cursor != nil),
            arguments: [accountID ?? 0, cursor?.lastMessageAt ?? 0, cursor?.threadID ?? "", limit],
            transform: Self.threadSummary(from:))
    }

    /// The rollup row of one thread.
    public func threadSummary(threadID: String, accountID: Int64) throws -> ThreadSummary? {
        try db.first("""
            SELECT \(Self.rollupColumns)
              FROM thread_rollup AS r JOIN messages AS m ON m.id = r.newest_message_id
             WHERE r.thread_id = ? AND r.account_id = ?
            """, threadID, accountID, transform: Self.threadSummary(from:))
    }
}
