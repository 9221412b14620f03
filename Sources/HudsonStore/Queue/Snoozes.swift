/*!
 Snooze and follow-up reminders (issue 41). Gmail's API has no snooze (its own is web
 only), so a snooze is what Gmail does show everywhere — the thread archived and carrying
 a `Snoozed` label — plus a row in `snoozes` (migration 033) with the wake time. Both
 are written in one transaction with the queue rows (`perform`), so a kill at any point
 leaves either the whole snooze or none of it.

 A snooze row is live while its thread effectively carries the `Snoozed` label and is
 out of the inbox (`liveCondition`, the one rule, read by search, lists and the wake
 check). So another device removing the label, or moving the thread to the inbox, or an
 `hd-undo` of the snooze, cancels it without a message to anyone; renaming the label does
 not, since the label is held by id (`snooze_labels`).

 The wake check (`wakeSnoozes`) runs in `hd-sync` passes and `hd-snooze wake`: each
 thread that is due, or that got a message from someone else (not SENT, not DRAFT)
 newer than the newest it had when snoozed, comes back — inbox, unread, label removed —
 as ONE recorded action (one `hd-undo`), and its row goes in the same transaction, so a
 wake happens once however late the check runs. A reminder (`remind`) is the same but a
 reply cancels it: the reply already brought the thread back.
 */
import SQLite

/// Why a thread is set aside: a snooze (a reply wakes it early) or a reminder (a reply
/// cancels it).
public enum SnoozeKind: String, Sendable, Equatable {
    case snooze, remind
}

/// One live snooze, as `hd-snooze list` shows it.
public struct SnoozedThread: Equatable, Sendable {
    public var accountID: Int64
    public var threadID: String
    public var kind: SnoozeKind
    /// Epoch milliseconds.
    public var wakeAt: Int64
    public var subject: String?
    public var sender: String
}

/// What one wake check did.
public struct WakeReport: Equatable, Sendable {
    /// The recorded action (for `hd-undo`), nil when nothing was changed.
    public var actionID: Int64?
    /// Threads brought back at their time.
    public var woke: [String] = []
    /// Snoozed threads brought back early by a message from someone else.
    public var wokeEarly: [String] = []
    /// Reminders a reply made needless.
    public var answered: [String] = []
    /// Snoozes another device (or an undo) ended: label removed, or thread in the inbox.
    public var cancelled: [String] = []
    /// The label changes queued.
    public var deltas: [TriageDelta] = []
}

extension Store {
    /// The name of the label a snooze puts on its thread when the account has none yet.
    public static let snoozeLabelName = "Snoozed"

    /// SQL true when the snooze row `z` is live (header): its thread's rollup row `r`
    /// (joined by the caller on the row's account and thread) is out of the inbox and lists
    /// the account's snooze label (`snooze_labels` as `sl`).
    static let snoozeLiveCondition =
        "r.in_inbox = 0 AND instr(' ' || r.labels || ' ', ' ' || sl.label_id || ' ') > 0"

    /// `FROM` part joining a snooze row `z` to its label `sl` and its thread's rollup `r`.
    static let snoozeJoins = """
        snoozes AS z JOIN snooze_labels AS sl ON sl.account_id = z.account_id
        JOIN thread_rollup AS r ON r.thread_id = z.thread_id AND r.account_id = z.account_id
        """

    /// SQL for search (`is:snoozed`, `snoozed:before:`): the message `m`'s thread has a live
    /// snooze (waking before the bound parameter, when `before`).
    static func snoozedSearchCondition(before: Bool) -> String {
        "EXISTS (SELECT 1 FROM \(snoozeJoins) WHERE z.thread_id = m.thread_id AND z.account_id = m.account_id AND "
            + snoozeLiveCondition + (before ? " AND z.wake_at < ?" : "") + ")"
    }

    /// Sets aside the threads of `references` until `wakeAt` (epoch ms), with any other
    /// `actions` the user asked for in the same invocation: one transaction, one action
    /// for `hd-undo`. The `Snoozed` label is created on first use (a provisional label,
    /// created at Gmail by the next push, as `hd-mark --create` does). Snoozing a thread
    /// again moves its wake time: a change of its own, recorded with the action (even when
    /// no label changes), which undo takes back (`restoreSnoozes`); the same kind and time
    /// again changes nothing.
    @discardableResult
    public func snooze(
        _ kind: SnoozeKind, until wakeAt: Int64, actions: [TriageAction] = [], on references: [Reference],
        accountID: Int64, description: String, createLabels: Bool = false
    ) throws -> TriageResult {
        try db.write {
            let labelID = try snoozeLabel(accountID: accountID)
            var result = try perform(
                groups: [TriageGroup(actions: actions + [.archive, .addLabel(labelID)], references: references)],
                description: description, accountID: accountID, createLabels: createLabels)
            let threads = SQLiteRows(columns: 1)
            for reference in references {
                switch reference {
                case .thread(let id): threads.append(.text(id))
                case .message(let id):
                    if let thread = try db.scalarString(
                        "SELECT thread_id FROM messages WHERE gmail_id = ? AND account_id = ?", id, accountID) {
                        threads.append(.text(thread))
                    }
                }
            }
            // The rows this snooze writes: a new one, one of another kind or time, and every
            // one when its labels changed (a snooze ended elsewhere, set again from now).
            let changed = SQLiteRows(columns: 1)
            try db.forEach("""
                SELECT r.thread_id
                  FROM (SELECT DISTINCT c0 FROM hudson_rows(?1)) AS t
                  JOIN thread_rollup AS r ON r.thread_id = t.c0 AND r.account_id = ?2
                  LEFT JOIN snoozes AS z ON z.thread_id = r.thread_id AND z.account_id = r.account_id
                 WHERE ?5 OR z.thread_id IS NULL OR z.kind <> ?3 OR z.wake_at <> ?4
                """, threads, accountID, kind.rawValue, wakeAt, result.actionID != nil) { changed.append(.text($0.string(0))) }
            guard !changed.isEmpty else { return result }
            let actionID: Int64
            if let recorded = result.actionID {
                actionID = recorded
            } else {
                // Only wake times moved: still an action, so that undo finds it.
                actionID = try insertAction(description: description)
                try forgetOldActions()
                result.actionID = actionID
            }
            result.snoozesSet = changed.count
            try db.execute("""
                INSERT INTO snooze_moves (action_id, account_id, thread_id, kind, wake_at, newest_message, set_by, created_at, wake_after)
                SELECT ?1, ?2, t.c0, z.kind, z.wake_at, z.newest_message, z.action_id, z.created_at, ?3
                  FROM hudson_rows(?4) AS t
                  LEFT JOIN snoozes AS z ON z.thread_id = t.c0 AND z.account_id = ?2
                """, actionID, accountID, wakeAt, changed)
            try db.execute("""
                INSERT INTO snoozes (account_id, thread_id, kind, wake_at, newest_message, action_id, created_at)
                SELECT r.account_id, r.thread_id, ?2, ?3, r.newest_message_id, ?4, ?5
                  FROM hudson_rows(?6) AS t
                  JOIN thread_rollup AS r ON r.thread_id = t.c0 AND r.account_id = ?1
                ON CONFLICT (account_id, thread_id) DO UPDATE
                   SET kind = excluded.kind, wake_at = excluded.wake_at, newest_message = excluded.newest_message,
                       action_id = excluded.action_id, created_at = excluded.created_at
                """, accountID, kind.rawValue, wakeAt, actionID, now, changed)
            return result
        }
    }

    /// The snooze rows the action `actionID` wrote go back to what they were before it (an
    /// earlier wake time, or none), each only while its thread still has the wake time the
    /// action left (not woken since, not snoozed again). Each row as it was is recorded as
    /// a move of the undo `undoID`, so undoing the undo sets it again. Inside the caller's
    /// transaction; returns how many rows it put back.
    func restoreSnoozes(undoing actionID: Int64, by undoID: Int64) throws -> Int {
        struct Move { var account: Int64, thread: String, kind: String?, wakeAt: Int64?, newest: Int64?, setBy: Int64?, createdAt: Int64?, wakeAfter: Int64? }
        let moves = try db.map("""
            SELECT account_id, thread_id, kind, wake_at, newest_message, set_by, created_at, wake_after
              FROM snooze_moves WHERE action_id = ?
            """, actionID) {
            Move(account: $0.int64(0), thread: $0.string(1), kind: $0.optionalString(2), wakeAt: $0.optionalInt64(3),
                 newest: $0.optionalInt64(4), setBy: $0.optionalInt64(5), createdAt: $0.optionalInt64(6),
                 wakeAfter: $0.optionalInt64(7))
        }
        var restored = 0
        for move in moves {
            let current = try db.first("SELECT wake_at FROM snoozes WHERE account_id = ? AND thread_id = ?",
                                       move.account, move.thread, transform: { $0.int64(0) })
            guard current == move.wakeAfter else { continue }
            try db.execute("""
                INSERT INTO snooze_moves (action_id, account_id, thread_id, kind, wake_at, newest_message, set_by, created_at, wake_after)
                SELECT ?1, ?2, ?3, z.kind, z.wake_at, z.newest_message, z.action_id, z.created_at, ?4
                  FROM (SELECT 1) LEFT JOIN snoozes AS z ON z.account_id = ?2 AND z.thread_id = ?3
                """, undoID, move.account, move.thread, move.wakeAt)
            if let kind = move.kind, let wakeAt = move.wakeAt, let newest = move.newest, let createdAt = move.createdAt {
                try db.execute("""
                    INSERT INTO snoozes (account_id, thread_id, kind, wake_at, newest_message, action_id, created_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT (account_id, thread_id) DO UPDATE
                       SET kind = excluded.kind, wake_at = excluded.wake_at, newest_message = excluded.newest_message,
                           action_id = excluded.action_id, created_at = excluded.created_at
                    """, move.account, move.thread, kind, wakeAt, newest, move.setBy, createdAt)
            } else {
                try db.execute("DELETE FROM snoozes WHERE account_id = ? AND thread_id = ?", move.account, move.thread)
            }
            restored += 1
        }
        return restored
    }

    /// The account's snooze label: the one it recorded (by id, so a rename keeps it), else
    /// a label already named `Snoozed`, else a new one; recorded for next time.
    func snoozeLabel(accountID: Int64) throws -> String {
        if let id = try db.scalarString("""
            SELECT sl.label_id FROM snooze_labels AS sl JOIN \(Self.shownLabels) AS l
                ON l.account_id = sl.account_id AND l.id = sl.label_id
             WHERE sl.account_id = ?
            """, accountID) {
            return id
        }
        let id = try label(named: Self.snoozeLabelName, accountID: accountID)?.id
            ?? insertProvisionalLabel(name: Self.snoozeLabelName, color: nil, accountID: accountID).id
        try db.execute("""
            INSERT INTO snooze_labels (account_id, label_id) VALUES (?1, ?2)
            ON CONFLICT (account_id) DO UPDATE SET label_id = excluded.label_id
            """, accountID, id)
        return id
    }

    /// The live snoozes (of one account when given), soonest first.
    public func snoozedThreads(accountID: Int64? = nil) throws -> [SnoozedThread] {
        try db.read {
            try db.map("""
                SELECT z.account_id, z.thread_id, z.kind, z.wake_at, nm.subject, r.sender
                  FROM \(Self.snoozeJoins)
                  JOIN messages AS nm ON nm.id = r.newest_message_id
                 WHERE (?1 IS NULL OR z.account_id = ?1) AND \(Self.snoozeLiveCondition)
                 ORDER BY z.wake_at, z.account_id, z.thread_id
                """, accountID) {
                SnoozedThread(accountID: $0.int64(0), threadID: $0.string(1),
                              kind: SnoozeKind(rawValue: $0.string(2)) ?? .snooze, wakeAt: $0.int64(3),
                              subject: $0.optionalString(4), sender: $0.string(5))
            }
        }
    }

    /// The wake check of one account at `now` (epoch ms): see the header. One transaction.
    public func wakeSnoozes(accountID: Int64, now wakeNow: Int64, description: String = "wake snoozed threads") throws -> WakeReport {
        try db.write {
            var report = WakeReport()
            guard let labelID = try db.scalarString("SELECT label_id FROM snooze_labels WHERE account_id = ?", accountID)
            else { return report }
            struct Row { var thread: String, kind: SnoozeKind, wakeAt: Int64, inRollup: Bool, inInbox: Bool, labelled: Bool, replied: Bool }
            let rows = try db.map("""
                SELECT z.thread_id, z.kind, z.wake_at, r.thread_id IS NOT NULL, coalesce(r.in_inbox, 0),
                       coalesce(instr(' ' || r.labels || ' ', ' ' || ?2 || ' ') > 0, 0),
                       EXISTS (SELECT 1 FROM messages AS n
                                WHERE n.thread_id = z.thread_id AND n.account_id = z.account_id AND n.id > z.newest_message
                                  AND NOT EXISTS (SELECT 1 FROM message_labels AS nl
                                                   WHERE nl.message_id = n.id AND nl.label IN ('SENT', 'DRAFT')))
                  FROM snoozes AS z
                  LEFT JOIN thread_rollup AS r ON r.thread_id = z.thread_id AND r.account_id = z.account_id
                 WHERE z.account_id = ?1
                """, accountID, labelID) {
                Row(thread: $0.string(0), kind: SnoozeKind(rawValue: $0.string(1)) ?? .snooze, wakeAt: $0.int64(2),
                    inRollup: $0.bool(3), inInbox: $0.bool(4), labelled: $0.bool(5), replied: $0.bool(6))
            }
            var wake: [Reference] = [], unlabel: [Reference] = [], done: [String] = []
            for row in rows {
                if !row.inRollup || !row.labelled {
                    // Gone, or the label was taken off (elsewhere, or by an undo): nothing to bring back.
                    report.cancelled.append(row.thread)
                    done.append(row.thread)
                } else if row.replied {
                    if row.kind == .remind {
                        report.answered.append(row.thread)
                        unlabel.append(.thread(row.thread))
                    } else {
                        report.wokeEarly.append(row.thread)
                        wake.append(.thread(row.thread))
                    }
                    done.append(row.thread)
                } else if row.inInbox {
                    // Moved to the inbox elsewhere: the snooze is over; its label goes too.
                    report.cancelled.append(row.thread)
                    unlabel.append(.thread(row.thread))
                    done.append(row.thread)
                } else if row.wakeAt <= wakeNow {
                    report.woke.append(row.thread)
                    wake.append(.thread(row.thread))
                    done.append(row.thread)
                }
            }
            if !wake.isEmpty || !unlabel.isEmpty {
                let result = try perform(
                    groups: [TriageGroup(actions: [.unarchive, .unread, .removeLabel(labelID)], references: wake),
                             TriageGroup(actions: [.removeLabel(labelID)], references: unlabel)],
                    description: description, accountID: accountID)
                report.actionID = result.actionID
                report.deltas = result.deltas
            }
            if !done.isEmpty {
                let threads = SQLiteRows(columns: 1)
                for thread in done { threads.append(.text(thread)) }
                try db.execute("DELETE FROM snoozes WHERE account_id = ?1 AND thread_id IN (SELECT c0 FROM hudson_rows(?2))",
                               accountID, threads)
            }
            return report
        }
    }
}

extension Store {
    /// Whether the timers of an account have work at `now` (epoch ms), read without taking
    /// the write lock, so a pass with nothing due writes nothing for them (and a busy store
    /// meets the pass where it met it before): `sends`, a scheduled send is due; `wake`, a
    /// snooze is due, woken early, or ended, or a send's reminder can be settled.
    public func timerWork(accountID: Int64, now clock: Int64) throws -> (sends: Bool, wake: Bool) {
        try db.read {
            let sends = try db.scalarInt("""
                SELECT EXISTS (SELECT 1 FROM scheduled_sends WHERE account_id = ?1 AND state = 'waiting' AND send_at <= ?2)
                """, accountID, clock) == 1
            let wake = try db.scalarInt("""
                SELECT EXISTS (SELECT 1 FROM send_reminders AS sr JOIN outbox AS o ON o.id = sr.outbox_entry
                                WHERE sr.account_id = ?1 AND o.state IN ('sent', 'failed', 'cancelled'))
                    OR EXISTS (SELECT 1 FROM snoozes AS z
                                 LEFT JOIN snooze_labels AS sl ON sl.account_id = z.account_id
                                 LEFT JOIN thread_rollup AS r ON r.thread_id = z.thread_id AND r.account_id = z.account_id
                                WHERE z.account_id = ?1
                                  AND (z.wake_at <= ?2 OR r.thread_id IS NULL OR sl.label_id IS NULL OR NOT (\(Self.snoozeLiveCondition))
                                       OR EXISTS (SELECT 1 FROM messages AS n
                                                   WHERE n.thread_id = z.thread_id AND n.account_id = z.account_id
                                                     AND n.id > z.newest_message
                                                     AND NOT EXISTS (SELECT 1 FROM message_labels AS nl
                                                                      WHERE nl.message_id = n.id AND nl.label IN ('SENT', 'DRAFT')))))
                """, accountID, clock) == 1
            return (sends, wake)
        }
    }
}
