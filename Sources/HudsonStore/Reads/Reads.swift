/*!
 Reads the list views are built on. The inbox, like any label, is one range of the
 `thread_labels` key per account (label `INBOX`), newest first, with keyset paging on
 (last_message_at, thread_id), then each thread's rollup row by its key and its newest
 message by its key (for the Gmail id, subject and snippet, migration 024): no
 aggregation, no queue lookups, and the same cost on page 100 as on page 1
 (local-first-sync.md, thread_rollup; migration 022).
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
    /// Distinct senders, oldest first.
    public var participants: [String]
    public var messageCount: Int
    public var unreadCount: Int
    public var inInbox: Bool
    public var unread: Bool
    public var starred: Bool
    public var hasAttachment: Bool
    /// Effective label ids of the thread, sorted.
    public var labels: [String]
    /// A change to one of its messages is held for the user's approval (issue 40: shown by
    /// every command, marked as held, not sent until approved).
    public var held: Bool = false
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
    /// A thread's rollup row (`r`) and its newest message (`m`, joined by
    /// `r.newest_message_id`), which gives its Gmail id, subject and snippet (migration 024).
    static let rollupColumns = """
        r.account_id, r.thread_id, r.last_message_at, m.gmail_id, m.subject, m.snippet, r.sender, r.participants,
        r.message_count, r.unread_count, r.in_inbox, r.unread, r.starred, r.has_attachment, r.labels
        """

    static func threadSummary(from row: Row) -> ThreadSummary {
        ThreadSummary(
            accountID: row.int64(0), threadID: row.string(1), lastMessageAt: row.int64(2),
            newestMessageID: row.string(3), subject: row.optionalString(4), snippet: row.string(5),
            sender: row.string(6),
            participants: splitOnByte(row.string(7), Store.participantSeparatorByte),
            messageCount: row.int(8), unreadCount: row.int(9),
            inInbox: row.bool(10), unread: row.bool(11), starred: row.bool(12), hasAttachment: row.bool(13),
            labels: splitOnByte(row.string(14), UInt8(ascii: " ")))
    }

    /// Splits on one ASCII byte, dropping empty pieces: a scan of the UTF-8 bytes, by
    /// hand. Splitting on a Character or String compares graphemes, and with 50 rows a page
    /// that was a tenth of `hd-ls`; the generic `split` of the UTF-8 view still cost 5,500
    /// instructions for a rollup row's label list, which triage splits for every thread.
    static func splitOnByte(_ text: String, _ separator: UInt8) -> [String] {
        var text = text
        return text.withUTF8 { bytes in
            var pieces: [String] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == separator {
                if index > start { pieces.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)) }
                start = index + 1
            }
            return pieces
        }
    }

    /// The SQL of a page of the threads one account (`?1`) lists under one label (`?2`),
    /// the first page or the one after (`?3`, `?4`), `?5` rows: a range of the
    /// `thread_labels` key, newest first, each thread's rollup row found by its key. The
    /// keyset condition is a row-value range on the key, so a deep page is a seek, not a
    /// walk. Exposed so tests can show its plan.
    public static func labelPageSQL(paged: Bool) -> String {
        let keyset = paged ? " AND (tl.last_message_at, tl.thread_id) < (?3, ?4)" : ""
        return """
            SELECT \(rollupColumns)
              FROM thread_labels AS tl
              JOIN thread_rollup AS r ON r.account_id = tl.account_id AND r.last_message_at = tl.last_message_at
                                     AND r.thread_id = tl.thread_id
              JOIN messages AS m ON m.id = r.newest_message_id
             WHERE tl.account_id = ?1 AND tl.label = ?2\(keyset)
             ORDER BY tl.last_message_at DESC, tl.thread_id DESC
             LIMIT ?5
            """
    }

    /// One page of the inbox (one account's, or every account's merged), newest first,
    /// after `cursor` when given: the page of the `INBOX` label. A thread is listed there
    /// when `thread_labels` lists it under INBOX, which is what the rollup's `in_inbox`
    /// says (both are written together, from the same labels); the partial inbox indexes
    /// that listed it apart cost every archive a delete in each (migration 022).
    public func inboxThreads(accountID: Int64?, limit: Int, after cursor: ThreadPageCursor? = nil) throws -> [ThreadSummary] {
        try db.read {
            let accounts = try accountID.map { [$0] } ?? accounts().map(\.id)
            return try threads(labels: accounts.map { (accountID: $0, id: "INBOX") }, limit: limit, after: cursor)
        }
    }

    /// The rollup row of one thread.
    public func threadSummary(threadID: String, accountID: Int64) throws -> ThreadSummary? {
        var thread = try db.first("""
            SELECT \(Self.rollupColumns)
              FROM thread_rollup AS r JOIN messages AS m ON m.id = r.newest_message_id
             WHERE r.thread_id = ? AND r.account_id = ?
            """, threadID, accountID, transform: Self.threadSummary(from:))
        if thread != nil, try !queueIsEmpty() { thread?.held = try hasHeldChange(threadID: threadID, accountID: accountID) }
        return thread
    }

    /// Whether a change to a message of the thread is held for the user's approval: the
    /// thread's few messages by the thread index, each looked up in the queue by its key.
    func hasHeldChange(threadID: String, accountID: Int64) throws -> Bool {
        try db.cached("""
            SELECT EXISTS (SELECT 1 FROM messages AS hm INDEXED BY messages_by_thread
                            WHERE hm.thread_id = ?1 AND hm.account_id = ?2 AND \(HeldChanges.isHeld(messageColumn: "hm.id")))
            """).first([threadID, accountID]) { $0.int(0) == 1 } ?? false
    }
}

/// A label with what `hd-labels` shows, from effective labels.
public struct LabelCount: Equatable, Sendable {
    public var accountID: Int64
    public var label: LabelInfo
    public var messages: Int
    public var threads: Int
    public var unreadThreads: Int
}

extension Store {
    /// The label ids that a user-typed name stands for in an account: the label with that
    /// name (case-insensitive) or that id.
    public func labelIDs(named name: String, accountID: Int64?) throws -> [(accountID: Int64, id: String)] {
        try accounts().filter { accountID == nil || $0.id == accountID }.compactMap { account in
            try label(named: name, accountID: account.id).map { (accountID: account.id, id: $0.id) }
        }
    }

    /// One page of the threads carrying a label, newest first: a range of the
    /// `thread_labels` key per (account, label id), merged, then the rollup
    /// row of each.
    public func threads(
        labels: [(accountID: Int64, id: String)], limit: Int, after cursor: ThreadPageCursor? = nil
    ) throws -> [ThreadSummary] {
        let sql = Self.labelPageSQL(paged: cursor != nil)
        return try db.read {
            var merged: [ThreadSummary] = []
            for label in labels {
                merged += try db.map(sql, arguments: [label.accountID, label.id, cursor?.lastMessageAt ?? 0,
                                                      cursor?.threadID ?? "", limit],
                                     transform: Self.threadSummary(from:))
            }
            if labels.count > 1 {
                merged.sort { ($0.lastMessageAt, $0.threadID) > ($1.lastMessageAt, $1.threadID) }
            }
            var page = Array(merged.prefix(limit))
            if try !queueIsEmpty() {
                for index in page.indices {
                    page[index].held = try hasHeldChange(threadID: page[index].threadID, accountID: page[index].accountID)
                }
            }
            return page
        }
    }

    /// The keyset cursor of a thread: where a page that ended with it stops.
    public func pageCursor(threadID: String, accountID: Int64?) throws -> ThreadPageCursor? {
        try db.first("""
            SELECT last_message_at, thread_id FROM thread_rollup
             WHERE thread_id = ? AND (?2 IS NULL OR account_id = ?2) LIMIT 1
            """, threadID, accountID) { ThreadPageCursor(lastMessageAt: $0.int64(0), threadID: $0.string(1)) }
    }

    /// Every label of every (or one) account with effective message and thread counts,
    /// read from the counts the store keeps (migration 016): one small table, whatever
    /// the size of the mailbox.
    public func labelCounts(accountID: Int64?) throws -> [LabelCount] {
        try db.read {
            var result: [LabelCount] = []
            for account in try accounts() where accountID == nil || account.id == accountID {
                var counts: [String: (messages: Int, threads: Int, unread: Int)] = [:]
                try db.forEach("""
                    SELECT label, messages, threads, unread_threads FROM label_counts WHERE account_id = ?
                    """, account.id) { counts[$0.string(0)] = ($0.int(1), $0.int(2), $0.int(3)) }
                for label in try labels(accountID: account.id) {
                    let count = counts[label.id] ?? (0, 0, 0)
                    result.append(LabelCount(accountID: account.id, label: label, messages: count.messages,
                                             threads: count.threads, unreadThreads: count.unread))
                }
            }
            return result
        }
    }
}
