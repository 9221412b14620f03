/*!
 Migration 034_scheduled_sends (issue 41): send-later and reminders on sent mail.

 - `scheduled_sends`: a message to send at a time. It is saved as a Gmail draft at once
   (its 'draft' outbox entry, `draft_entry`, the one `hd-send --at` prints as outbox:N),
   so the phone shows it and can change or delete it; at `send_at` it becomes a
   'draft-send' entry (`send_entry`) that sends the draft as it is then through the
   outbox's never-twice path (Queue/ScheduledSends.swift). `raw` keeps the message for
   that entry (an outbox entry holds its bytes until sent) and is emptied once released
   or cancelled. A late one (`if_late` = 'hold', over an hour late) waits as 'held-late'
   for the user.
 - `send_reminders`: `hd-send --remind WHEN`: once the outbox entry is sent and its
   thread stored, the thread gets a reminder (a 'remind' row of `snoozes`).
 */
extension Schema {
    static let scheduledSends = """
    CREATE TABLE scheduled_sends (
        draft_entry INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
        account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        send_at     INTEGER NOT NULL,                  -- epoch ms
        if_late     TEXT NOT NULL CHECK (if_late IN ('send', 'hold')),
        state       TEXT NOT NULL DEFAULT 'waiting'
                    CHECK (state IN ('waiting', 'released', 'held-late', 'cancelled')),
        send_entry  INTEGER REFERENCES outbox(id) ON DELETE SET NULL,
        raw         BLOB NOT NULL,
        remind_at   INTEGER,                           -- epoch ms: hd-send --remind, moved to the send entry
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        CHECK (state IN ('released', 'cancelled') OR length(raw) > 0),
        CHECK ((state = 'released') = (send_entry IS NOT NULL))
    );
    CREATE INDEX scheduled_sends_waiting ON scheduled_sends (account_id, send_at) WHERE state = 'waiting';
    CREATE TABLE send_reminders (
        outbox_entry INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
        account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        wake_at      INTEGER NOT NULL                  -- epoch ms
    );
    """
}
