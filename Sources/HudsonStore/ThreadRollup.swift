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
            if labelsOnly {
                try recomputeRollupLabels(touched)
            } else {
                for key in touched { try recomputeRollup(key) }
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
        var labelChanges = ThreadLabelChanges()
        guard let newest = members.first else {
            if let stored {
                labelChanges.record(key, from: stored, to: nil)
                try labelChanges.apply(in: db)
                try db.execute("DELETE FROM thread_rollup WHERE thread_id = ? AND account_id = ?", key.threadID, key.accountID)
            }
            return
        }
        let effective = (try effectiveThreadLabels(Self.threadRows([key]))[key] ?? EffectiveThreadLabels())
            .rollup(lastMessageAt: newest.internalDate)
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
        labelChanges.record(key, from: stored, to: effective)
        try labelChanges.apply(in: db)
    }

    /// The label-derived part of each thread's rollup (unread count, inbox, unread and
    /// starred flags, label list) and its thread_labels rows, for a change that touched
    /// only labels: what the stored rows say and what the members' effective labels say
    /// now are each read for every thread in one statement, and the threads whose labels
    /// changed are written by a few statements, not several per thread (archiving a
    /// thousand threads ran four thousand). A thread whose labels come out as they were is
    /// not written; one without a rollup row yet gets the whole recomputation.
    func recomputeRollupLabels(_ keys: Set<ThreadKey>) throws {
        guard !keys.isEmpty else { return }
        let threads = Self.threadRows(keys)

        // Each row is found by its whole key: the newest member's date comes from
        // messages_by_thread, which finding the members reads anyway, not from the rollup's
        // index by thread id (another random page per thread; `+` keeps the planner off it).
        var stored: [ThreadKey: RollupLabels] = [:]
        try db.forEach("""
            WITH t (account_id, thread_id) AS MATERIALIZED (SELECT value ->> 0, value ->> 1 FROM json_each(?))
            SELECT t.account_id, t.thread_id, r.last_message_at, r.unread_count, r.labels
              FROM t
              JOIN thread_rollup AS r
                ON r.account_id = t.account_id AND +r.thread_id = t.thread_id
               AND r.last_message_at = (SELECT max(m.internal_date) FROM messages AS m
                                         WHERE m.thread_id = t.thread_id AND m.account_id = t.account_id)
            """, threads) {
            stored[ThreadKey(accountID: $0.int64(0), threadID: $0.string(1))] =
                RollupLabels(lastMessageAt: $0.int64(2), unreadCount: $0.int(3), labels: $0.string(4))
        }
        for key in keys where stored[key] == nil { try recomputeRollup(key) }

        let effective = try effectiveThreadLabels(threads)

        var rollups = JSONRows()
        var labelChanges = ThreadLabelChanges()
        for (key, old) in stored {
            let now = effective[key] ?? EffectiveThreadLabels()
            let new = now.rollup(lastMessageAt: old.lastMessageAt)
            guard new != old else { continue }
            rollups.append(.integer(key.accountID), .integer(old.lastMessageAt), .text(key.threadID),
                           .integer(Int64(new.unreadCount)), .integer(now.labels.contains("INBOX") ? 1 : 0),
                           .integer(new.unreadCount > 0 ? 1 : 0), .integer(now.labels.contains("STARRED") ? 1 : 0),
                           .text(new.labels))
            labelChanges.record(key, from: old, to: new)
        }
        guard !rollups.isEmpty else { return }
        try db.execute("""
            UPDATE thread_rollup
               SET unread_count = r.value ->> 3, in_inbox = r.value ->> 4, unread = r.value ->> 5,
                   starred = r.value ->> 6, labels = r.value ->> 7
              FROM json_each(?) AS r
             WHERE thread_rollup.account_id = r.value ->> 0 AND thread_rollup.last_message_at = r.value ->> 1
               AND +thread_rollup.thread_id = r.value ->> 2
            """, rollups)
        try labelChanges.apply(in: db)
    }

    /// The union of a thread's members' effective labels, and how many members are unread.
    private struct EffectiveThreadLabels {
        var labels = Set<String>()
        var unreadCount = 0

        /// As the rollup row stores it: sorted, space-separated.
        func rollup(lastMessageAt: Int64) -> RollupLabels {
            RollupLabels(lastMessageAt: lastMessageAt, unreadCount: unreadCount,
                         labels: labels.sorted().joined(separator: " "))
        }
    }

    /// (account, thread) rows, for the statements that take many threads.
    private static func threadRows(_ keys: some Sequence<ThreadKey>) -> JSONRows {
        var rows = JSONRows()
        for key in keys { rows.append(.integer(key.accountID), .text(key.threadID)) }
        return rows
    }

    /// The effective labels of every member of each thread of `threads` (threadRows), in
    /// one statement: per thread, the view's two arms each seek `messages_by_thread`.
    private func effectiveThreadLabels(_ threads: JSONRows) throws -> [ThreadKey: EffectiveThreadLabels] {
        var effective: [ThreadKey: EffectiveThreadLabels] = [:]
        try db.forEach("""
            WITH t (account_id, thread_id) AS MATERIALIZED (SELECT value ->> 0, value ->> 1 FROM json_each(?))
            SELECT t.account_id, t.thread_id, el.label
              FROM t
              JOIN messages AS m ON m.thread_id = t.thread_id AND m.account_id = t.account_id
              JOIN \(EffectiveLabels.view) AS el ON el.message_id = m.id
            """, threads) {
            let label = $0.string(2)
            let key = ThreadKey(accountID: $0.int64(0), threadID: $0.string(1))
            effective[key, default: EffectiveThreadLabels()].labels.insert(label)
            if label == "UNREAD" { effective[key, default: EffectiveThreadLabels()].unreadCount += 1 }
        }
        return effective
    }

    /// thread_labels rows to delete and to insert for many threads, applied in one
    /// statement per (account, label) deleted from and one for every insert. A delete
    /// names the account and label outright: with the whole key as one row value, SQLite
    /// seeks only the account and scans the rest.
    private struct ThreadLabelChanges {
        private struct AccountLabel: Hashable {
            var accountID: Int64
            var label: String
        }
        private var removed: [AccountLabel: JSONRows] = [:]
        private var inserted = JSONRows()

        /// Only the rows that change (archiving a thread deletes one); a row is addressed by
        /// its whole key, from the rollup row, never searched for by thread. Nil is no row.
        mutating func record(_ key: ThreadKey, from old: RollupLabels?, to new: RollupLabels?) {
            let oldLabels = old.map { Store.labelList($0.labels) } ?? []
            let newLabels = new.map { Store.labelList($0.labels) } ?? []
            let moved = old?.lastMessageAt != new?.lastMessageAt
            if let old {
                for label in oldLabels where moved || !newLabels.contains(label) {
                    removed[AccountLabel(accountID: key.accountID, label: label), default: JSONRows()]
                        .append(.integer(old.lastMessageAt), .text(key.threadID))
                }
            }
            if let new {
                for label in newLabels where moved || !oldLabels.contains(label) {
                    inserted.append(.integer(key.accountID), .text(label), .integer(new.lastMessageAt), .text(key.threadID))
                }
            }
        }

        func apply(in db: Connection) throws {
            for (key, rows) in removed {
                try db.execute("""
                    DELETE FROM thread_labels
                     WHERE account_id = ?1 AND label = ?2
                       AND (last_message_at, thread_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?3))
                    """, key.accountID, key.label, rows)
            }
            if !inserted.isEmpty {
                try db.execute("""
                    INSERT OR REPLACE INTO thread_labels (account_id, label, last_message_at, thread_id)
                    SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)
                    """, inserted)
            }
        }
    }

    /// The label ids of a rollup row's `labels` column.
    static func labelList(_ labels: String) -> [String] {
        // Split as bytes: label ids are ASCII-free of spaces, and a Character split (grapheme
        // breaking) was a twentieth of archiving a thousand threads.
        labels.utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
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
