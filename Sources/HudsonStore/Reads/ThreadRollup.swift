/*!
 The thread rollup: one row per thread with what the list view shows and the
 overlay-aware flags, plus `thread_labels` (a thread carries a label when any of its
 messages effectively does). Every write path collects the threads it touched and
 `writeTracked` recomputes them before commit, so the inbox moves in the same
 transaction as the change (optimistic-mutations.md, "Making it instant"). This file is
 the only writer of both tables, so it also keeps the thread columns of `label_counts`
 (`ThreadLabelChanges`; Schema: 020_thread_counts_kept_by_their_writer).
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
    /// goes through here or through `writeTrackingLabels`.
    func writeTracked<T>(_ body: (inout Set<ThreadKey>) throws -> T) throws -> T {
        try db.write {
            var touched = Set<ThreadKey>()
            let result = try body(&touched)
            for key in touched { try recomputeRollup(key) }
            return result
        }
    }

    /// `writeTracked` for a body that changes only labels (the queue), never which
    /// messages a thread has or what they say, and names every (thread, label) whose
    /// members' effective labels it may have changed: only those labels of those threads
    /// are recomputed (`recomputeRollupLabels`).
    func writeTrackingLabels<T>(_ body: (inout LabelTouches) throws -> T) throws -> T {
        try db.write {
            var touched = LabelTouches()
            let result = try body(&touched)
            try recomputeRollupLabels(touched)
            return result
        }
    }

    /// The labels a label-only write may have changed, per thread, and how many members
    /// carry each one now where the writer knows it (a whole-thread triage does).
    struct LabelTouches {
        /// Each touched thread's labels, each with how many members carry it when known.
        /// A thread's few labels are a list, searched in place: one hash of the thread per
        /// touch, not three (a set of labels and a map of known counts, each keyed by
        /// thread, were a third of the Swift in archiving a thousand threads).
        fileprivate private(set) var threads: [ThreadKey: [(label: String, carriers: Int?)]] = [:]

        /// `carriers`: how many members of the thread carry `label` after this write, when
        /// known; nil has it counted. A later touch of the same label replaces what an
        /// earlier one knew.
        mutating func insert(_ thread: ThreadKey, label: String, carriers: Int? = nil) {
            threads[thread, default: []].setCarriers(of: label, to: carriers)
        }
    }

    /// What a thread's rollup row says of its labels: what its thread_labels rows mirror.
    private struct RollupLabels: Equatable {
        var lastMessageAt: Int64
        var unreadCount: Int
        var labels: String
        var starred: Bool
    }

    private func storedRollupLabels(_ key: ThreadKey) throws -> RollupLabels? {
        try db.first("""
            SELECT last_message_at, unread_count, labels, starred FROM thread_rollup WHERE thread_id = ? AND account_id = ?
            """, key.threadID, key.accountID) {
            RollupLabels(lastMessageAt: $0.int64(0), unreadCount: $0.int(1), labels: $0.string(2), starred: $0.bool(3))
        }
    }

    /// Rebuilds one thread's rollup row and its thread_labels rows from the messages and
    /// their effective labels. A thread with no messages left loses both.
    func recomputeRollup(_ key: ThreadKey) throws {
        struct Member {
            var key: Int64
            var internalDate: Int64
            var sender: String?
            var hasAttachment: Bool
        }
        let members = try db.map("""
            SELECT id, internal_date, sender, has_attachment
              FROM messages WHERE account_id = ? AND thread_id = ?
             ORDER BY internal_date DESC, id DESC
            """, key.accountID, key.threadID) {
            Member(key: $0.int64(0), internalDate: $0.int64(1), sender: $0.optionalString(2), hasAttachment: $0.bool(3))
        }
        let stored = try storedRollupLabels(key)
        var labelChanges = ThreadLabelChanges()
        guard let newest = members.first else {
            if let stored {
                labelChanges.record(key, from: ThreadLabelState(stored), to: nil)
                try labelChanges.apply(in: db)
                try db.execute("DELETE FROM thread_rollup WHERE thread_id = ? AND account_id = ?", key.threadID, key.accountID)
            }
            return
        }
        let current = try effectiveThreadLabels(Self.threadRows([key]))[key] ?? EffectiveThreadLabels()
        let effective = current.rollup(lastMessageAt: newest.internalDate)
        var participants: [String] = []
        for member in members.reversed() {
            let name = displaySenderCached(member.sender)
            if !name.isEmpty && !participants.contains(name) { participants.append(name) }
        }
        try db.execute("""
            INSERT OR REPLACE INTO thread_rollup
                (account_id, thread_id, last_message_at, newest_message_id, sender, participants,
                 message_count, unread_count, in_inbox, unread, starred, has_attachment, labels)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                key.accountID, key.threadID, newest.internalDate, newest.key,
                displaySenderCached(newest.sender), participants.joined(separator: Self.participantSeparator),
                members.count, effective.unreadCount, current.labels.contains("INBOX"), effective.unreadCount > 0,
                current.starred, members.contains(where: \.hasAttachment), effective.labels,
            ])
        labelChanges.record(key, from: stored.map(ThreadLabelState.init), to: ThreadLabelState(effective))
        try labelChanges.apply(in: db)
    }

    /// The label-derived part of each touched thread's rollup (unread count, inbox,
    /// unread and starred flags, label list) and its thread_labels rows, after a change
    /// that touched only labels. Each stored row is read, and for each touched label only
    /// how many members carry it now (its other labels are as they were: no member's
    /// changed), for every thread in one statement each; the threads whose labels changed
    /// are written by a few statements, not several per thread (archiving a thousand
    /// threads ran four thousand). A thread whose labels come out as they were is not
    /// written; one without a rollup row yet gets the whole recomputation.
    func recomputeRollupLabels(_ touches: LabelTouches) throws {
        guard !touches.threads.isEmpty else { return }
        let keys = touches.threads.keys
        let threads = Self.threadRows(keys)

        // Each stored row, with its label list split once.
        var stored: [ThreadKey: (row: RollupLabels, labels: [String])] = [:]
        try db.forEach("""
            SELECT t.c0, t.c1, r.last_message_at, r.unread_count, r.labels, r.starred
              FROM hudson_rows(?) AS t
              JOIN thread_rollup AS r ON r.thread_id = t.c1 AND r.account_id = t.c0
            """, threads) {
            let key = ThreadKey(accountID: $0.int64(0), threadID: $0.string(1)), labels = $0.string(4)
            stored[key] = (RollupLabels(lastMessageAt: $0.int64(2), unreadCount: $0.int(3), labels: labels, starred: $0.bool(5)),
                           Self.labelList(labels))
        }
        // A member moving into or out of trash or spam changes what the thread lists under
        // every label, and so does any change while a member is there (EffectiveLabels.listed):
        // those threads' labels are all listed again, in one statement for all of them.
        // Elsewhere only the touched labels are counted.
        var whole = Set<ThreadKey>()
        for key in keys {
            guard let old = stored[key] else {
                try recomputeRollup(key)
                continue
            }
            if touches.threads[key, default: []].contains(where: { EffectiveLabels.locations.contains($0.label) })
                || old.labels.contains(where: EffectiveLabels.locations.contains) {
                whole.insert(key)
            }
        }
        let relisted = whole.isEmpty ? [:] : try effectiveThreadLabels(Self.threadRows(whole))

        // Each touched label of each thread with a rollup row, and how many members carry
        // it now: as the writer knew it, else counted, one row per member that does.
        var touched: [(key: ThreadKey, old: (row: RollupLabels, labels: [String]), labels: [(label: String, carriers: Int)])] = []
        let unknown = SQLiteRows(columns: 5)
        for (key, labels) in touches.threads {
            guard let old = stored[key], !whole.contains(key) || relisted[key] == nil else { continue }
            var counted: [(label: String, carriers: Int)] = []
            for (label, known) in labels {
                if known == nil {
                    unknown.append(.integer(Int64(touched.count)), .integer(Int64(counted.count)),
                                   .integer(key.accountID), .text(key.threadID), .text(label))
                }
                counted.append((label, known ?? 0))
            }
            touched.append((key, old, counted))
        }
        if !unknown.isEmpty {
            try db.forEach("""
                SELECT t.c0, t.c1 FROM hudson_rows(?) AS t
                  JOIN messages AS m ON m.thread_id = t.c3 AND m.account_id = t.c2
                 WHERE \(EffectiveLabels.carries(messageColumn: "m.id", label: "t.c4"))
                """, unknown) { touched[$0.int(0)].labels[$0.int(1)].carriers += 1 }
        }

        let rollups = SQLiteRows(columns: 8)
        var labelChanges = ThreadLabelChanges()
        // One changed thread: its rollup row's label part (`labels` sorted), the
        // thread_labels rows that come and go, and the label counts that move with them.
        func write(_ key: ThreadKey, _ old: RollupLabels, oldLabels: [String], labels: [String], unreadCount: Int,
                   starred: Bool) {
            rollups.append(.integer(key.accountID), .integer(old.lastMessageAt), .text(key.threadID),
                           .integer(Int64(unreadCount)), .integer(labels.contains("INBOX") ? 1 : 0),
                           .integer(unreadCount > 0 ? 1 : 0), .integer(starred ? 1 : 0),
                           .text(labels.joined(separator: " ")))
            labelChanges.record(
                key, from: ThreadLabelState(lastMessageAt: old.lastMessageAt, labels: oldLabels, unread: old.unreadCount > 0),
                to: ThreadLabelState(lastMessageAt: old.lastMessageAt, labels: labels, unread: unreadCount > 0))
        }
        for key in whole {
            guard let old = stored[key], let new = relisted[key] else { continue }
            let labels = new.labels.sorted()
            guard labels != old.labels || new.unreadCount != old.row.unreadCount || new.starred != old.row.starred
            else { continue }
            write(key, old.row, oldLabels: old.labels, labels: labels, unreadCount: new.unreadCount, starred: new.starred)
        }
        for (key, old, counted) in touched {
            // The stored list is changed in place: it is sorted, and stays so.
            var labels = old.labels
            var unreadCount = old.row.unreadCount
            for touch in counted {
                if touch.label == "UNREAD" { unreadCount = touch.carriers }
                if let index = labels.firstIndex(of: touch.label) {
                    if touch.carriers == 0 { labels.remove(at: index) }
                } else if touch.carriers > 0 {
                    labels.insert(touch.label, at: labels.firstIndex { $0 > touch.label } ?? labels.endIndex)
                }
            }
            guard labels != old.labels || unreadCount != old.row.unreadCount else { continue }
            write(key, old.row, oldLabels: old.labels, labels: labels, unreadCount: unreadCount,
                  starred: labels.contains("STARRED"))
        }
        guard !rollups.isEmpty else { return }
        try db.execute("""
            UPDATE thread_rollup
               SET unread_count = r.c3, in_inbox = r.c4, unread = r.c5, starred = r.c6, labels = r.c7
              FROM hudson_rows(?) AS r
             WHERE thread_rollup.account_id = r.c0 AND thread_rollup.last_message_at = r.c1
               AND thread_rollup.thread_id = r.c2
            """, rollups)
        try labelChanges.apply(in: db)
    }

    /// The union of a thread's members' listed labels, how many members are unread and
    /// whether one is starred.
    private struct EffectiveThreadLabels {
        var labels = Set<String>()
        var unreadCount = 0
        var starred = false

        /// As the rollup row stores it: sorted, space-separated.
        func rollup(lastMessageAt: Int64) -> RollupLabels {
            RollupLabels(lastMessageAt: lastMessageAt, unreadCount: unreadCount,
                         labels: labels.sorted().joined(separator: " "), starred: starred)
        }
    }

    /// (account, thread) rows, for the statements that take many threads.
    private static func threadRows(_ keys: some Sequence<ThreadKey>) -> SQLiteRows {
        let rows = SQLiteRows(columns: 2)
        for key in keys { rows.append(.integer(key.accountID), .text(key.threadID)) }
        return rows
    }

    /// What each thread of `threads` (threadRows) lists: the union of its members'
    /// listed labels (EffectiveLabels.listed), and how many of them are unread and whether
    /// one is starred, counting the members outside trash and spam, or, when every member
    /// is in one of them, every member (a thread wholly in spam shows unread in spam, as in
    /// Gmail).
    private func effectiveThreadLabels(_ threads: SQLiteRows) throws -> [ThreadKey: EffectiveThreadLabels] {
        var members: [ThreadKey: [Int64: Set<String>]] = [:]
        try forEachEffectiveLabel(ofThreads: threads) { key, message, label in
            members[key, default: [:]][message, default: []].insert(label)
        }
        // Members without any label are outside trash and spam too: count every member.
        var memberCounts: [ThreadKey: Int] = [:]
        try db.forEach("""
            SELECT t.c0, t.c1, count(*) FROM hudson_rows(?) AS t
              JOIN messages AS m ON m.thread_id = t.c1 AND m.account_id = t.c0
             GROUP BY t.c0, t.c1
            """, threads) { memberCounts[ThreadKey(accountID: $0.int64(0), threadID: $0.string(1))] = $0.int(2) }
        var result: [ThreadKey: EffectiveThreadLabels] = [:]
        for (key, labelsByMember) in members {
            var thread = EffectiveThreadLabels()
            let elsewhere = labelsByMember.values.filter { !$0.isDisjoint(with: EffectiveLabels.locations) }
            let allElsewhere = elsewhere.count == memberCounts[key, default: 0]
            for labels in labelsByMember.values {
                let listed = EffectiveLabels.listed(labels)
                thread.labels.formUnion(listed)
                let flags = allElsewhere ? labels : listed
                if flags.contains("UNREAD") { thread.unreadCount += 1 }
                if flags.contains("STARRED") { thread.starred = true }
            }
            result[key] = thread
        }
        return result
    }

    /// What a thread's rows in `thread_labels` mirror: their date (the rollup's
    /// `last_message_at`), its sorted label list, and whether it is unread.
    private struct ThreadLabelState {
        var lastMessageAt: Int64
        var labels: [String]
        var unread: Bool

        init(lastMessageAt: Int64, labels: [String], unread: Bool) {
            self.lastMessageAt = lastMessageAt
            self.labels = labels
            self.unread = unread
        }

        init(_ rollup: RollupLabels) {
            self.init(lastMessageAt: rollup.lastMessageAt, labels: Store.labelList(rollup.labels),
                      unread: rollup.unreadCount > 0)
        }
    }

    /// thread_labels rows to delete and to insert for many threads, and what that does to
    /// the thread columns of label_counts. The inserts are one statement, and so are the
    /// counts; each delete is one run of one prepared statement that seeks the row's whole
    /// key. (Given as a list, the keys were matched on their date only, and every thread
    /// of that date was walked: the benchmark's largest mailbox has 173 at one date.)
    private struct ThreadLabelChanges {
        private var removed: [(accountID: Int64, label: String, lastMessageAt: Int64, threadID: String)] = []
        private let inserted = SQLiteRows(columns: 4)
        /// Per (account, label): threads listed under it, and unread ones, gained (or lost).
        private var counted: [LabelCountKey: LabelCountChange] = [:]

        /// A thread's rows go from `old` to `new` (nil: it has none). Only the rows that
        /// change are written (archiving a thread deletes one); a row is addressed by its
        /// whole key, never searched for by thread. Each label the thread leaves or joins
        /// counts one thread less or more under it, and every label it has counts its
        /// unread flag (migration 020: kept here, where both are written, not by a trigger
        /// per row).
        mutating func record(_ key: ThreadKey, from old: ThreadLabelState?, to new: ThreadLabelState?) {
            let oldLabels = old?.labels ?? [], newLabels = new?.labels ?? []
            let moved = old?.lastMessageAt != new?.lastMessageAt
            if let old {
                remove(key, lastMessageAt: old.lastMessageAt, labels: oldLabels.filter { moved || !newLabels.contains($0) })
            }
            if let new {
                add(key, lastMessageAt: new.lastMessageAt, labels: newLabels.filter { moved || !oldLabels.contains($0) })
            }
            let wasUnread = old?.unread ?? false, isUnread = new?.unread ?? false
            for label in oldLabels where wasUnread != isUnread || !newLabels.contains(label) {
                count(key.accountID, label, threads: -1, unread: wasUnread ? -1 : 0)
            }
            for label in newLabels where wasUnread != isUnread || !oldLabels.contains(label) {
                count(key.accountID, label, threads: 1, unread: isUnread ? 1 : 0)
            }
        }

        private mutating func count(_ accountID: Int64, _ label: String, threads: Int, unread: Int) {
            let key = LabelCountKey(accountID: accountID, label: label)
            counted[key, default: .init()].threads += threads
            counted[key, default: .init()].unreadThreads += unread
        }

        /// The thread's rows of `labels` at `lastMessageAt` go.
        private mutating func remove(_ key: ThreadKey, lastMessageAt: Int64, labels: [String]) {
            for label in labels {
                removed.append((key.accountID, label, lastMessageAt, key.threadID))
            }
        }

        /// The thread gets rows of `labels` at `lastMessageAt`.
        private func add(_ key: ThreadKey, lastMessageAt: Int64, labels: [String]) {
            for label in labels {
                inserted.append(.integer(key.accountID), .text(label), .integer(lastMessageAt), .text(key.threadID))
            }
        }

        func apply(in db: Connection) throws {
            if !removed.isEmpty {
                let delete = try db.cached("""
                    DELETE FROM thread_labels WHERE account_id = ? AND label = ? AND last_message_at = ? AND thread_id = ?
                    """)
                for row in removed {
                    try delete.execute([row.accountID, row.label, row.lastMessageAt, row.threadID])
                }
            }
            if !inserted.isEmpty {
                try db.execute("""
                    INSERT INTO thread_labels (account_id, label, last_message_at, thread_id)
                    SELECT c0, c1, c2, c3 FROM hudson_rows(?) WHERE 1
                    ON CONFLICT DO NOTHING
                    """, inserted)
            }
            try Store.addToLabelCounts(counted, in: db)
        }
    }

    /// The label ids of a rollup row's `labels` column.
    static func labelList(_ labels: String) -> [String] {
        splitOnByte(labels, UInt8(ascii: " "))
    }

    /// `displaySender`, remembered per header text: a thread's rollup names every
    /// member's sender, and parsing the same From header for each member of each
    /// recomputed thread was a fifth of archiving a thousand threads.
    func displaySenderCached(_ header: String?) -> String {
        guard let header, !header.isEmpty else { return "" }
        return displayNames.value(for: header) { Self.displaySender(header) }
    }

    /// Separates names in `thread_rollup.participants`: a name may contain a comma
    /// ("Doe, Jane") but never a control character.
    static let participantSeparator = "\u{1F}"
    /// The same, as the byte readers split on.
    static let participantSeparatorByte: UInt8 = 0x1F

    /// The display name of a From header: the name when there is one, else the address.
    public static func displaySender(_ header: String?) -> String {
        guard let header, !header.isEmpty else { return "" }
        return MailAddress.firstDisplayName(header) ?? header
    }
}

private extension Array where Element == (label: String, carriers: Int?) {
    /// Records `label` with `carriers` (nil: to be counted), replacing what an earlier
    /// touch of it knew.
    mutating func setCarriers(of label: String, to carriers: Int?) {
        if let index = firstIndex(where: { $0.label == label }) {
            self[index].carriers = carriers
        } else {
            append((label, carriers))
        }
    }
}
