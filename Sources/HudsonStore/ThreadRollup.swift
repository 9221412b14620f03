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
    ///
    /// With `labelsOnly`, the body promises it changed only labels (the queue, or
    /// canonical labels), never which messages a thread has or what they say: then only
    /// the label-derived part of each rollup is recomputed (`recomputeRollupLabels`).
    func writeTracked<T>(labelsOnly: Bool = false, _ body: (inout Set<ThreadKey>) throws -> T) throws -> T {
        try db.write {
            var touched = Set<ThreadKey>()
            let result = try body(&touched)
            for key in touched {
                if labelsOnly {
                    try recomputeRollupLabels(key)
                } else {
                    try recomputeRollup(key)
                }
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
        guard let newest = members.first else {
            try db.execute("DELETE FROM thread_labels WHERE account_id = ? AND thread_id = ?", key.accountID, key.threadID)
            try db.execute("DELETE FROM thread_rollup WHERE account_id = ? AND thread_id = ?", key.accountID, key.threadID)
            return
        }
        // Every member's effective labels in one statement (the view's two arms each
        // seek the thread's messages), not one query per member.
        var threadLabels = Set<String>()
        var unreadCount = 0
        try forEachEffectiveLabel(accountID: key.accountID, threadID: key.threadID) { _, label in
            if label == "UNREAD" { unreadCount += 1 }
            threadLabels.insert(label)
        }
        var participants: [String] = []
        for member in members.reversed() {
            let name = displaySenderCached(member.sender)
            if !name.isEmpty && !participants.contains(name) { participants.append(name) }
        }
        try db.execute("""
            INSERT OR REPLACE INTO thread_rollup
                (account_id, thread_id, last_message_at, newest_message_id, subject, snippet, sender, participants,
                 message_count, unread_count, in_inbox, unread, starred, has_attachment, labels)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                key.accountID, key.threadID, newest.internalDate, newest.key, newest.subject, newest.snippet,
                displaySenderCached(newest.sender), participants.joined(separator: Self.participantSeparator),
                members.count, unreadCount, threadLabels.contains("INBOX"), unreadCount > 0,
                threadLabels.contains("STARRED"), members.contains(where: \.hasAttachment),
                threadLabels.sorted().joined(separator: " "),
            ])
        try updateThreadLabels(key, labels: threadLabels, lastMessageAt: newest.internalDate)
    }

    /// The label-derived part of a thread's rollup (unread count, inbox, unread and
    /// starred flags, label list) and its thread_labels rows, for a change that touched
    /// only labels. Archiving a thousand threads recomputed each one whole (members,
    /// senders, a REPLACE of the row and of both its indexes) for a change of one flag.
    /// A thread without a rollup row yet gets the whole recomputation.
    func recomputeRollupLabels(_ key: ThreadKey) throws {
        var threadLabels = Set<String>()
        var unreadCount = 0
        try forEachEffectiveLabel(accountID: key.accountID, threadID: key.threadID) { _, label in
            if label == "UNREAD" { unreadCount += 1 }
            threadLabels.insert(label)
        }
        let lastMessageAt = try db.first("""
            UPDATE thread_rollup SET unread_count = ?, in_inbox = ?, unread = ?, starred = ?, labels = ?
             WHERE account_id = ? AND thread_id = ?
            RETURNING last_message_at
            """, unreadCount, threadLabels.contains("INBOX"), unreadCount > 0, threadLabels.contains("STARRED"),
            threadLabels.sorted().joined(separator: " "), key.accountID, key.threadID) { $0.int64(0) }
        guard let lastMessageAt else {
            try recomputeRollup(key)
            return
        }
        try updateThreadLabels(key, labels: threadLabels, lastMessageAt: lastMessageAt)
    }

    /// thread_labels: only what changed (archiving a thread changes one row, not all).
    private func updateThreadLabels(_ key: ThreadKey, labels threadLabels: Set<String>, lastMessageAt: Int64) throws {
        var existing: [String: Int64] = [:]
        try db.forEach("SELECT label, last_message_at FROM thread_labels WHERE account_id = ? AND thread_id = ?",
                       key.accountID, key.threadID) { existing[$0.string(0)] = $0.int64(1) }
        for (label, _) in existing where !threadLabels.contains(label) {
            try db.execute("DELETE FROM thread_labels WHERE account_id = ? AND thread_id = ? AND label = ?",
                           key.accountID, key.threadID, label)
        }
        for label in threadLabels {
            switch existing[label] {
            case nil:
                try db.execute(
                    "INSERT INTO thread_labels (account_id, thread_id, label, last_message_at) VALUES (?, ?, ?, ?)",
                    key.accountID, key.threadID, label, lastMessageAt)
            case let at? where at != lastMessageAt:
                try db.execute(
                    "UPDATE thread_labels SET last_message_at = ? WHERE account_id = ? AND thread_id = ? AND label = ?",
                    lastMessageAt, key.accountID, key.threadID, label)
            default:
                break
            }
        }
    }

    /// `displaySender`, remembered per header text: a thread's rollup names every
    /// member's sender, and parsing the same From header for each member of each
    /// recomputed thread was a fifth of archiving a thousand threads.
    func displaySenderCached(_ header: String?) -> String {
        guard let header, !header.isEmpty else { return "" }
        if let name = displayNames[header] { return name }
        let name = Self.displaySender(header)
        if displayNames.count >= 10_000 { displayNames.removeAll(keepingCapacity: true) }
        displayNames[header] = name
        return name
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
