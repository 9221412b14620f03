/*!
 Migration 033_snoozes (issue 41): threads snoozed until a time, and the label that
 shows it on every Gmail client.

 - `snooze_labels`: per account, the id of the `Snoozed` label (made on first use),
   held by id so a rename elsewhere keeps it; a provisional id is followed to Gmail's
   when the label is created there (`snooze_label_follows_creation`, fired by the
   overlay's mapping in LabelOverlaySync.swift).
 - `snoozes`: one row per snoozed thread, with its wake time, the newest message it
   had when snoozed (a newer one from someone else wakes it early) and whether it is a
   reminder (`remind`: the reply cancels it instead). Written with the queue rows of
   the snooze or wake in one transaction (Queue/Snoozes.swift).
 */
extension Schema {
    static let snoozes = """
    CREATE TABLE snooze_labels (
        account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        label_id   TEXT NOT NULL CHECK (label_id <> '')
    );
    CREATE TABLE snoozes (
        account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        thread_id      TEXT NOT NULL CHECK (thread_id <> ''),
        kind           TEXT NOT NULL CHECK (kind IN ('snooze', 'remind')),
        wake_at        INTEGER NOT NULL,           -- epoch ms
        newest_message INTEGER NOT NULL,           -- messages.id of the thread's newest member when snoozed
        action_id      INTEGER,                    -- the action that snoozed it
        created_at     INTEGER NOT NULL,
        PRIMARY KEY (account_id, thread_id)
    ) WITHOUT ROWID;
    CREATE INDEX snoozes_by_wake ON snoozes (account_id, wake_at);
    CREATE TRIGGER snooze_label_follows_creation AFTER UPDATE OF label_id ON label_overlay
    BEGIN
        UPDATE snooze_labels SET label_id = NEW.label_id
         WHERE account_id = NEW.account_id AND label_id = OLD.label_id;
    END;
    """
}
