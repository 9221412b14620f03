/*!
 Migration 039_snooze_moves (issue 41): snoozing a thread that is already snoozed moves
 its wake time, a change no label records (the thread is archived and labelled already),
 so the action kept nothing for `hd-undo`, and an undo took back an older action instead.
 `snooze_moves` keeps, per action and thread, the `snoozes` row as it was before the
 action (no row: `kind` NULL) and the wake time the action left (`wake_after`, NULL when
 it left no row); undoing the action puts the earlier row back while the thread still has
 what the action left (Queue/Snoozes.swift, `restoreSnoozes`). Rare and small, so plain
 foreign keys delete its rows with their action or account.
 */
extension Schema {
    static let snoozeMoves = """
    CREATE TABLE snooze_moves (
        action_id      INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
        account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        thread_id      TEXT NOT NULL CHECK (thread_id <> ''),
        kind           TEXT CHECK (kind IN ('snooze', 'remind')),  -- the row before; NULL: none
        wake_at        INTEGER,
        newest_message INTEGER,
        set_by         INTEGER,                    -- its action_id
        created_at     INTEGER,
        wake_after     INTEGER,                    -- the wake time the action left; NULL: no row
        PRIMARY KEY (action_id, account_id, thread_id),
        CHECK ((kind IS NULL) = (wake_at IS NULL) AND (kind IS NULL) = (newest_message IS NULL)
               AND (kind IS NULL) = (created_at IS NULL))
    ) WITHOUT ROWID;
    """
}
