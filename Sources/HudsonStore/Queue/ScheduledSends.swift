/*!
 Send-later (issue 41; migration 034). Gmail's API has no scheduled send, so a message to
 send at a time is kept two ways at once: in the store (`scheduled_sends`, with its bytes)
 and as a Gmail draft, saved at once by an ordinary 'draft' outbox entry, so every Gmail
 client shows it and may change or delete it before the time.

 At the time (`releaseDueScheduledSends`, run by each `hd-sync` pass before it sends, and
 by `hd-snooze wake`), the schedule becomes a 'draft-send' outbox entry of that draft, and
 the outbox sends it the way it sends every draft: marked sending durably before the
 request, probed in Sent by its Message-ID after a lost answer, never sent on a guess.
 `drafts.send` sends the draft as Gmail has it then (gmail-api.md §2.7: "Sends the
 specified, existing draft"), so an edit made on the phone is what goes out, and a draft
 deleted there cannot be sent: Gmail answers 404 and the entry fails with that reason.
 A draft is sent at most once: Gmail deletes a sent draft, so a repeated `drafts.send`
 after a lost answer meets a 404, never a second message.

 The mechanism is this file's, reusable for any outbox message that should wait as a
 Gmail draft (issue 40's held sends): `enqueueScheduledSend` with the message, then
 `releaseScheduledSend` (or a due time) when it may go.

 Late: a schedule more than `lateAfterMilliseconds` past its time when first checked (the
 machine slept) is sent anyway with `if_late` 'send', or waits as 'held-late' with 'hold'
 until the user sends it (`hd-snooze release outbox:N`) or drops it (`hd-undo outbox:N`).
 */
import SQLite

/// What to do with a message whose time passed while nothing ran.
public enum LateSendRule: String, Sendable, Equatable {
    case send, hold
}

public enum ScheduledSendState: String, Sendable, Equatable {
    case waiting, released, heldLate = "held-late", cancelled
}

/// One scheduled message, for `hd-pending`.
public struct ScheduledSend: Equatable, Sendable {
    /// The outbox entry that saved it as a draft: its `outbox:N`.
    public var draftEntry: Int64
    public var accountID: Int64
    public var accountEmail: String
    /// Epoch ms.
    public var sendAt: Int64
    public var ifLate: LateSendRule
    public var state: ScheduledSendState
    /// The Gmail draft, once saved.
    public var draftID: String?
    /// The 'draft-send' entry it became at the time.
    public var sendEntry: Int64?
    public var recipients: [String]
    public var subject: String
    /// The message's Message-ID (with <>).
    public var messageID: String = ""
    /// Who queued it, when not the user at a command (an agent's held message).
    public var origin: ActionOrigin?

    public var reference: String { "outbox:\(draftEntry)" }

    /// A message held for the user's approval (issue 40): a schedule with no time
    /// (`Store.heldSendAt`), its draft saved like any other, released by
    /// `hd-pending --approve`.
    public var awaitsApproval: Bool { sendAt == Store.heldSendAt && state == .waiting }
}

/// What one release did.
public struct ScheduledRelease: Equatable, Sendable {
    /// The 'draft-send' entries made, now due.
    public var released: [Int64] = []
    /// Schedules over an hour late whose rule is hold (their `outbox:N`).
    public var heldLate: [Int64] = []
    /// Schedules whose draft could not be saved (its entry failed or was cancelled).
    public var dropped: [Int64] = []
}

/// Why a scheduled send could not be changed.
public enum ScheduledSendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Its time came and it is an outbox entry of its own now, being sent or sent.
    case alreadyReleased(draftEntry: Int64, sendEntry: Int64)
    case notHeld(Int64)

    public var description: String {
        switch self {
        case .alreadyReleased(let draft, let send):
            return "outbox:\(draft): its time came; it is outbox:\(send) now"
        case .notHeld(let id):
            return "outbox:\(id): not a scheduled send held for being late"
        }
    }
}

extension Store {
    /// How late a schedule may be when first checked and still count as on time.
    public static let lateAfterMilliseconds: Int64 = 3_600_000

    /// The time of a schedule that has none: a message held for the user's approval
    /// (issue 40: "an agent's message waits in the outbox, visible and editable as a Gmail
    /// draft, until approved"). It is never due; approving it makes it due at once.
    public static let heldSendAt = Int64.max

    /// Queues an agent's message held for approval: saved as a Gmail draft (the phone shows
    /// it and may change or delete it), sent only once approved, by `drafts.send` of the
    /// draft as it is then, through the outbox's never-twice path. Returns the draft's
    /// outbox entry, the `outbox:N` approval and `hd-undo` take.
    public func enqueueHeldSend(_ message: NewOutboxMessage) throws -> OutboxEntry {
        var draft = message
        draft.held = false  // the draft must be saved; the schedule is what waits
        return try enqueueScheduledSend(draft, sendAt: Self.heldSendAt, ifLate: .send)
    }

    /// Approves held messages (see `enqueueHeldSend`): those of `drafts` (their draft
    /// entries), or every one with nil (of `accountID` when given), made due now, to be
    /// sent once their draft is saved. Returns each (draft entry, account). Inside the
    /// caller's transaction.
    func approveHeldSends(drafts: [Int64]?, accountID: Int64?) throws -> [(entry: Int64, accountID: Int64)] {
        let named = SQLiteRows(columns: 1)
        for id in drafts ?? [] { named.append(.integer(id)) }
        var approved: [(entry: Int64, accountID: Int64)] = []
        // Due from the start of this second: the wake check reads the clock in whole
        // seconds, and a pass run at once must find it due.
        let dueAt = now / 1000 * 1000
        try db.forEach("""
            UPDATE scheduled_sends SET send_at = ?1, if_late = 'send', updated_at = ?6
             WHERE state = 'waiting' AND send_at = ?2 AND (?3 IS NULL OR account_id = ?3)
               AND (?4 OR draft_entry IN (SELECT c0 FROM hudson_rows(?5)))
            RETURNING draft_entry, account_id
            """, dueAt, Self.heldSendAt, accountID, drafts == nil, named, now) { approved.append(($0.int64(0), $0.int64(1))) }
        return approved
    }

    /// The schedule (its `outbox:N`) whose Gmail draft `draftID` is, while it waits to be
    /// sent (its time, or the user's approval): a draft an agent must not rewrite, since
    /// what is sent is the draft as it is then.
    public func scheduleHolding(draftID: String, accountID: Int64) throws -> Int64? {
        try db.scalarInt("""
            SELECT s.draft_entry FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry
             WHERE o.draft_id = ?1 AND s.account_id = ?2 AND s.state IN ('waiting', 'held-late')
            """, draftID, accountID)
    }

    /// The entry that sends the message the user knows as `outbox:N`: that entry, or for a
    /// schedule (a later send, a held one) its send entry once released; nil before, or
    /// when there is none.
    public func deliveryEntry(outbox id: Int64) throws -> OutboxEntry? {
        try db.read {
            if let schedule = try db.first("SELECT send_entry FROM scheduled_sends WHERE draft_entry = ?", id, transform: {
                $0.optionalInt64(0)
            }) {
                return try schedule.flatMap { try outboxEntry(id: $0) }
            }
            return try outboxEntry(id: id)
        }
    }

    /// Queues `message` (a new message) to be saved as a Gmail draft at once and sent at
    /// `sendAt` (epoch ms), in one transaction. `remindAt`: `hd-send --remind` for it.
    /// Returns the draft's outbox entry (the user's `outbox:N`).
    public func enqueueScheduledSend(
        _ message: NewOutboxMessage, sendAt: Int64, ifLate: LateSendRule, remindAt: Int64? = nil
    ) throws -> OutboxEntry {
        var draft = message
        draft.kind = .draft
        draft.draftID = nil
        draft.draftBaseGmailID = nil
        draft.delayMilliseconds = 0
        return try db.write {
            let entry = try enqueueOutbox(draft)
            try db.execute("""
                INSERT INTO scheduled_sends (draft_entry, account_id, send_at, if_late, raw, remind_at, created_at, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
                """, entry.id, message.accountID, sendAt, ifLate.rawValue, SQLiteValue.blob(message.raw), remindAt, now)
            return entry
        }
    }

    /// Turns each due schedule of the account into a 'draft-send' entry (see the header).
    public func releaseDueScheduledSends(accountID: Int64, now clock: Int64) throws -> ScheduledRelease {
        try db.write {
            var result = ScheduledRelease()
            let due = try db.map("""
                SELECT s.draft_entry, s.send_at, s.if_late, o.state, o.draft_id
                  FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry
                 WHERE s.account_id = ?1 AND s.state = 'waiting' AND s.send_at <= ?2
                 ORDER BY s.send_at
                """, accountID, clock) {
                (entry: $0.int64(0), sendAt: $0.int64(1), ifLate: LateSendRule(rawValue: $0.string(2)) ?? .hold,
                 state: OutboxState(rawValue: $0.string(3)) ?? .queued, draftID: $0.optionalString(4))
            }
            for row in due {
                switch row.state {
                case .failed, .cancelled:
                    try setScheduledState(row.entry, .cancelled)
                    result.dropped.append(row.entry)
                case .queued, .sending:
                    continue  // the draft is not saved yet; sent once it is (late, then, maybe)
                case .sent:
                    guard row.draftID != nil else { continue }
                    if row.ifLate == .hold && clock - row.sendAt > Self.lateAfterMilliseconds {
                        try setScheduledState(row.entry, .heldLate)
                        result.heldLate.append(row.entry)
                    } else {
                        result.released.append(try releaseScheduledSend(draftEntry: row.entry))
                    }
                }
            }
            return result
        }
    }

    /// Makes the schedule's 'draft-send' entry now, whatever its time (a late one the user
    /// sends, or issue 40's approval of a held send). Returns that entry's id.
    @discardableResult
    public func releaseScheduledSend(draftEntry: Int64) throws -> Int64 {
        try db.write {
            struct Row {
                var state: ScheduledSendState, sendEntry: Int64?, raw: [UInt8], remindAt: Int64?, accountID: Int64
                var messageID: String, recipients: String, subject: String, draftID: String?, entryState: String, threadID: String?
            }
            guard let row = try db.first("""
                SELECT s.state, s.send_entry, s.raw, s.remind_at, o.account_id, o.message_id, o.recipients,
                       o.subject, o.draft_id, o.state, coalesce(o.gmail_thread_id, o.thread_id)
                  FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry
                 WHERE s.draft_entry = ?
                """, draftEntry, transform: {
                    Row(state: ScheduledSendState(rawValue: $0.string(0)) ?? .waiting, sendEntry: $0.optionalInt64(1),
                        raw: $0.blob(2), remindAt: $0.optionalInt64(3), accountID: $0.int64(4), messageID: $0.string(5),
                        recipients: $0.string(6), subject: $0.string(7), draftID: $0.optionalString(8),
                        entryState: $0.string(9), threadID: $0.optionalString(10))
                }) else { throw OutboxError.noSuchEntry(draftEntry) }
            if row.state == .released, let sent = row.sendEntry {
                throw ScheduledSendError.alreadyReleased(draftEntry: draftEntry, sendEntry: sent)
            }
            guard row.state != .cancelled, row.entryState == OutboxState.sent.rawValue, let draftID = row.draftID else {
                throw ScheduledSendError.notHeld(draftEntry)
            }
            // No base message: drafts.send sends the draft as it is now, an edit elsewhere included.
            let send = try enqueueOutbox(NewOutboxMessage(
                accountID: row.accountID, raw: row.raw, messageID: row.messageID, threadID: row.threadID,
                recipients: row.recipients.split(separator: ",").map(String.init), subject: row.subject,
                kind: .draftSend, draftID: draftID))
            try db.execute("""
                UPDATE scheduled_sends SET state = 'released', send_entry = ?1, raw = x'', updated_at = ?2 WHERE draft_entry = ?3
                """, send.id, now, draftEntry)
            if let remindAt = row.remindAt {
                try db.execute("INSERT INTO send_reminders (outbox_entry, account_id, wake_at) VALUES (?, ?, ?)",
                               send.id, row.accountID, remindAt)
            }
            return send.id
        }
    }

    /// `hd-snooze release outbox:N`: a schedule held for being late is sent now.
    public func sendHeldLate(draftEntry: Int64) throws -> Int64 {
        try db.write {
            guard try db.scalarString("SELECT state FROM scheduled_sends WHERE draft_entry = ?", draftEntry)
                    == ScheduledSendState.heldLate.rawValue
            else { throw ScheduledSendError.notHeld(draftEntry) }
            return try releaseScheduledSend(draftEntry: draftEntry)
        }
    }

    /// `hd-undo outbox:N` of a schedule: nil when `id` is no schedule's draft entry; else
    /// the Gmail draft to delete (nil when none was saved), the schedule cancelled (and its
    /// draft entry, when still queued) in one transaction. Refused once released.
    public func cancelScheduledSend(draftEntry id: Int64) throws -> (cancelled: Bool, draftID: String?)? {
        try db.write {
            guard let row = try db.first("""
                SELECT s.state, s.send_entry, o.draft_id, o.state FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry
                 WHERE s.draft_entry = ?
                """, id, transform: { (state: $0.string(0), sendEntry: $0.optionalInt64(1), draftID: $0.optionalString(2),
                                       entryState: $0.string(3)) })
            else { return nil }
            switch ScheduledSendState(rawValue: row.state) {
            case .released?: throw ScheduledSendError.alreadyReleased(draftEntry: id, sendEntry: row.sendEntry ?? 0)
            // Its draft again: an undo killed before it deleted the draft leaves that to this one.
            case .cancelled?: return (false, row.draftID)
            default: break
            }
            try setScheduledState(id, .cancelled)
            if row.entryState == OutboxState.queued.rawValue || row.entryState == OutboxState.failed.rawValue {
                _ = try cancelOutbox(id: id)  // not saved as a draft yet: it never will be
            }
            return (true, row.draftID)
        }
    }

    /// The Gmail drafts of cancelled schedules that the store's draft map still holds: an
    /// `hd-undo outbox:N` that could not reach Gmail, or a draft saved after its schedule
    /// was cancelled. Each `hd-sync` pass deletes them (`forgetCancelledDraft` after);
    /// sync's refresh of the map drops one deleted elsewhere, so none is asked for twice.
    public func cancelledScheduledDrafts(accountID: Int64) throws -> [String] {
        try db.read {
            try db.map("""
                SELECT DISTINCT o.draft_id
                  FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry
                  JOIN drafts AS d ON d.account_id = s.account_id AND d.draft_id = o.draft_id
                 WHERE s.account_id = ? AND s.state = 'cancelled'
                 ORDER BY o.draft_id
                """, accountID) { $0.string(0) }
        }
    }

    /// A cancelled schedule's draft deleted at Gmail (or found gone): its message and its
    /// place in the draft map go, as `hd-drafts delete` leaves them. One transaction.
    public func forgetCancelledDraft(id: String, accountID: Int64) throws {
        try db.write {
            if let gmailID = try db.scalarString("SELECT gmail_id FROM drafts WHERE account_id = ? AND draft_id = ?", accountID, id) {
                _ = try deleteVanishedMessage(gmailID: gmailID, accountID: accountID)
            }
            try forgetDraft(id: id, accountID: accountID)
        }
    }

    private func setScheduledState(_ draftEntry: Int64, _ state: ScheduledSendState) throws {
        try db.execute("""
            UPDATE scheduled_sends SET state = ?1, raw = CASE WHEN ?1 = 'cancelled' THEN x'' ELSE raw END, updated_at = ?2
             WHERE draft_entry = ?3
            """, state.rawValue, now, draftEntry)
    }

    /// The schedules not yet released or cancelled (one account's when given), soonest first.
    public func scheduledSends(accountID: Int64? = nil) throws -> [ScheduledSend] {
        try db.read {
            try db.map("""
                SELECT s.draft_entry, s.account_id, a.email, s.send_at, s.if_late, s.state, o.draft_id, s.send_entry,
                       o.recipients, o.subject, o.message_id, o.origin
                  FROM scheduled_sends AS s JOIN outbox AS o ON o.id = s.draft_entry JOIN accounts AS a ON a.id = s.account_id
                 WHERE (?1 IS NULL OR s.account_id = ?1) AND s.state IN ('waiting', 'held-late')
                 ORDER BY s.send_at, s.draft_entry
                """, accountID) {
                ScheduledSend(draftEntry: $0.int64(0), accountID: $0.int64(1), accountEmail: $0.string(2), sendAt: $0.int64(3),
                              ifLate: LateSendRule(rawValue: $0.string(4)) ?? .hold,
                              state: ScheduledSendState(rawValue: $0.string(5)) ?? .waiting, draftID: $0.optionalString(6),
                              sendEntry: $0.optionalInt64(7),
                              recipients: $0.string(8).split(separator: ",").map(String.init), subject: $0.string(9),
                              messageID: $0.string(10), origin: $0.optionalString(11).flatMap(ActionOrigin.init(rawValue:)))
            }
        }
    }

    /// `hd-send --remind WHEN` without `--at`: `enqueueOutbox`, and in the same transaction
    /// a reminder (epoch ms) for the message's thread once it is sent and stored.
    public func enqueueOutbox(_ message: NewOutboxMessage, replacing: Int64? = nil, remindAt: Int64) throws -> OutboxEntry {
        try db.write {
            let entry = try enqueueOutbox(message, replacing: replacing)
            try db.execute("""
                INSERT INTO send_reminders (outbox_entry, account_id, wake_at) VALUES (?, ?, ?)
                ON CONFLICT (outbox_entry) DO UPDATE SET wake_at = excluded.wake_at
                """, entry.id, message.accountID, remindAt)
            return entry
        }
    }

    /// The reminders whose message Gmail has and whose thread the store has now become
    /// reminders on that thread (`snooze(.remind…)`, one action each); those whose message
    /// will never go (failed, cancelled), or whose thread already has a reply, are dropped.
    /// Run before the wake check.
    public func settleSendReminders(accountID: Int64, describe: (Int64) -> String) throws {
        try db.write {
            let rows = try db.map("""
                SELECT r.outbox_entry, r.wake_at, o.state, o.gmail_thread_id,
                       EXISTS (SELECT 1 FROM thread_rollup AS t WHERE t.thread_id = o.gmail_thread_id AND t.account_id = r.account_id),
                       -- Answered already: a message from someone else after the sent one.
                       EXISTS (SELECT 1 FROM messages AS s JOIN messages AS n ON n.account_id = s.account_id AND n.thread_id = s.thread_id
                                WHERE s.account_id = r.account_id AND s.gmail_id = o.gmail_id AND n.internal_date > s.internal_date
                                  AND NOT EXISTS (SELECT 1 FROM message_labels AS nl
                                                   WHERE nl.message_id = n.id AND nl.label IN ('SENT', 'DRAFT')))
                  FROM send_reminders AS r JOIN outbox AS o ON o.id = r.outbox_entry
                 WHERE r.account_id = ?
                """, accountID) {
                (entry: $0.int64(0), wakeAt: $0.int64(1), state: $0.string(2), thread: $0.optionalString(3), stored: $0.bool(4),
                 answered: $0.bool(5))
            }
            for row in rows {
                if row.state == OutboxState.failed.rawValue || row.state == OutboxState.cancelled.rawValue {
                    try db.execute("DELETE FROM send_reminders WHERE outbox_entry = ?", row.entry)
                } else if row.state == OutboxState.sent.rawValue, let thread = row.thread, row.stored {
                    // A reply that came before the thread was stored cancels the reminder as
                    // one after would: the thread is not archived, the reply stays in the inbox.
                    if !row.answered {
                        try snooze(.remind, until: row.wakeAt, on: [.thread(thread)], accountID: accountID,
                                   description: "remind until \(describe(row.wakeAt))")
                    }
                    try db.execute("DELETE FROM send_reminders WHERE outbox_entry = ?", row.entry)
                }
            }
        }
    }
}
