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

    /// What a thread's rollup row says of its labels: what its thread_labels rows mirror.
    private struct RollupLabels: Equatable {
        var lastMessageAt: Int64
        var unreadCount: Int
        var labels: String

        func has(_ label: String) -> Bool { Store.labelList(labels).contains(label) }
    }

    private func storedRollupLabels(_ key: ThreadKey) throws -> RollupLabels? {
        try db.first("""
            SELECT last_message_at, unread_count, labels FROM thread_rollup WHERE thread_id = ? AND account_id = ?
            """, key.threadID, key.accountID) {
            RollupLabels(lastMessageAt: $0.int64(0), unreadCount: $0.int(1), labels: $0.string(2))
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
        let stored = try storedRollupLabels(key)
        guard let newest = members.first else {
            if let stored {
                try updateThreadLabels(key, from: stored, to: nil)
                try db.execute("DELETE FROM thread_rollup WHERE thread_id = ? AND account_id = ?", key.threadID, key.accountID)
            }
            return
        }
        let effective = try effectiveRollupLabels(key, lastMessageAt: newest.internalDate)
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
                members.count, effective.unreadCount, effective.has("INBOX"), effective.unreadCount > 0,
                effective.has("STARRED"), members.contains(where: \.hasAttachment), effective.labels,
            ])
        try updateThreadLabels(key, from: stored, to: effective)
    }

    /// The label-derived part of a thread's rollup (unread count, inbox, unread and
    /// starred flags, label list) and its thread_labels rows, for a change that touched
    /// only labels. Archiving a thousand threads recomputed each one whole (members,
    /// senders, a REPLACE of the row and of both its indexes) for a change of one flag;
    /// and a thread whose labels come out as they were is not written at all.
    /// A thread without a rollup row yet gets the whole recomputation.
    func recomputeRollupLabels(_ key: ThreadKey) throws {
        guard let stored = try storedRollupLabels(key) else {
            try recomputeRollup(key)
            return
        }
        let effective = try effectiveRollupLabels(key, lastMessageAt: stored.lastMessageAt)
        guard effective != stored else { return }
        try db.execute("""
            UPDATE thread_rollup SET unread_count = ?, in_inbox = ?, unread = ?, starred = ?, labels = ?
             WHERE thread_id = ? AND account_id = ?
            """, effective.unreadCount, effective.has("INBOX"), effective.unreadCount > 0, effective.has("STARRED"),
            effective.labels, key.threadID, key.accountID)
        try updateThreadLabels(key, from: stored, to: effective)
    }

    /// The union of the members' effective labels (sorted, space-separated, as the rollup
    /// stores them) and how many members are unread, in one statement.
    private func effectiveRollupLabels(_ key: ThreadKey, lastMessageAt: Int64) throws -> RollupLabels {
        var threadLabels = Set<String>()
        var unreadCount = 0
        try forEachEffectiveLabel(accountID: key.accountID, threadID: key.threadID) { _, label in
            if label == "UNREAD" { unreadCount += 1 }
            threadLabels.insert(label)
        }
        return RollupLabels(lastMessageAt: lastMessageAt, unreadCount: unreadCount,
                            labels: threadLabels.sorted().joined(separator: " "))
    }

    /// thread_labels from what the rollup row said to what it says now: only the rows
    /// that changed (archiving a thread deletes one). A row is addressed by its whole key,
    /// found from the rollup row, never searched for by thread.
    private func updateThreadLabels(_ key: ThreadKey, from old: RollupLabels?, to new: RollupLabels?) throws {
        let oldLabels = old.map { Set(Self.labelList($0.labels)) } ?? []
        let newLabels = new.map { Set(Self.labelList($0.labels)) } ?? []
        let moved = old?.lastMessageAt != new?.lastMessageAt
        if let old {
            for label in oldLabels where moved || !newLabels.contains(label) {
                try db.execute("""
                    DELETE FROM thread_labels WHERE account_id = ? AND label = ? AND last_message_at = ? AND thread_id = ?
                    """, key.accountID, label, old.lastMessageAt, key.threadID)
            }
        }
        if let new {
            for label in newLabels.sorted() where moved || !oldLabels.contains(label) {
                try db.execute(
                    "INSERT OR REPLACE INTO thread_labels (account_id, label, last_message_at, thread_id) VALUES (?, ?, ?, ?)",
                    key.accountID, label, new.lastMessageAt, key.threadID)
            }
        }
    }

    /// The label ids of a rollup row's `labels` column.
    static func labelList(_ labels: String) -> [String] {
        labels.split(separator: " ").map(String.init)
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
