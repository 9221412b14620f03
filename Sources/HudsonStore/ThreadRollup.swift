/*!
 The thread rollup: one row per thread with what the list view shows and the
 overlay-aware flags, plus `thread_labels` (a thread carries a label when any of its
 messages effectively does). Every write path collects the threads it touched and
 `writeTracked` recomputes them before commit, so the inbox moves in the same
 transaction as the change (optimistic-mutations.md, "Making it instant").
 */
import HudsonMail
import SQLite

struct ThreadKey: Hashable {
    var accountID: Int64
    var threadID: String
}

extension Store {
    /// Runs `body` in a write transaction and recomputes every thread it touched
    /// before committing. Every write path that changes messages, labels or the queue
    /// goes through here.
    func writeTracked<T>(_ body: (inout Set<ThreadKey>) throws -> T) throws -> T {
        try db.write {
            var touched = Set<ThreadKey>()
            let result = try body(&touched)
            for key in touched {
                try recomputeRollup(key)
            }
            return result
        }
    }

    /// Rebuilds one thread's rollup row and its thread_labels rows from the messages and
    /// their effective labels. A thread with no messages left loses both.
    func recomputeRollup(_ key: ThreadKey) throws {
        struct Member {
            var key: Int64
            var internalDate: Int64
            var subject: String?
            var snippet: String
            var sender: String?
            var hasAttachment: Bool
        }
        let members = try db.map("""
            SELECT id, internal_date, subject, snippet, sender, has_attachment
              FROM messages WHERE account_id = ? AND thread_id = ?
             ORDER BY internal_date DESC, id DESC
            """, key.accountID, key.threadID) {
            Member(key: $0.int64(0), internalDate: $0.int64(1), subject: $0.optionalString(2),
                   snippet: $0.string(3), sender: $0.optionalString(4), hasAttachment: $0.bool(5))
        }
        try db.execute("DELETE FROM thread_labels WHERE account_id = ? AND thread_id = ?", key.accountID, key.threadID)
        guard let newest = members.first else {
            try db.execute("DELETE FROM thread_rollup WHERE account_id = ? AND thread_id = ?", key.accountID, key.threadID)
            return
        }
        var threadLabels = Set<String>()
        var unreadCount = 0
        for member in members {
            let labels = try effectiveLabels(messageKey: member.key)
            if labels.contains("UNREAD") { unreadCount += 1 }
            threadLabels.formUnion(labels)
        }
        var participants: [String] = []
        for member in members.reversed() {
            let name = Self.displaySender(member.sender)
            if !name.isEmpty && !participants.contains(name) { participants.append(name) }
        }
        try db.execute("""
            INSERT OR REPLACE INTO thread_rollup
                (account_id, thread_id, last_message_at, newest_message_id, subject, snippet, sender, participants,
                 message_count, unread_count, in_inbox, unread, starred, has_attachment, labels)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                key.accountID, key.threadID, newest.internalDate, newest.key, newest.subject, newest.snippet,
                Self.displaySender(newest.sender), participants.joined(separator: Self.participantSeparator),
                members.count, unreadCount, threadLabels.contains("INBOX"), unreadCount > 0,
                threadLabels.contains("STARRED"), members.contains(where: \.hasAttachment),
                threadLabels.sorted().joined(separator: " "),
            ])
        for label in threadLabels {
            try db.execute(
                "INSERT INTO thread_labels (account_id, thread_id, label, last_message_at) VALUES (?, ?, ?, ?)",
                key.accountID, key.threadID, label, newest.internalDate)
        }
    }

    /// Separates names in `thread_rollup.participants`: a name may contain a comma
    /// ("Doe, Jane") but never a control character.
    static let participantSeparator = "\u{1F}"
    /// The same, as the byte readers split on.
    static let participantSeparatorByte: UInt8 = 0x1F

    /// The display name of a From header: the name when there is one, else the address.
    public static func displaySender(_ header: String?) -> String {
        guard let header, !header.isEmpty else { return "" }
        return MailAddress.parseList(header).first?.displayName ?? header
    }
}
