/*!
 Migration 023_triage_rows_cascade_by_trigger:
 The three tables a triage writes a row in for every change (`mutation_queue`,
 `action_items`, `message_seq`) lose their foreign keys; triggers on the parents
 do what the keys' ON DELETE actions did. With foreign keys on, SQLite looks each
 new row's parent up (the account, the action): archiving 1,000 threads of
 1,000,000 messages spent 11 M of its 205 M instructions on those lookups (issue 19,
 docs/performance.md). Every one of these rows is written by a transaction that has
 just read or made its parent (Triage, MutationQueue.enqueue, ChangeSequence), so the
 check found nothing; what the keys still did, at a parent's deletion, the triggers do:

 - an account removed (Store.removeAccount): its queue and change-sequence rows go;
 - an action forgotten (Triage.forgetOldActions, or a no-op action deleted): its undo
   items go, and queue rows it made keep no action.

 Each table is rebuilt under a new name and renamed (sqlite.org/lang_altertable.html,
 "Making Other Kinds Of Table Schema Changes"); `legacy_alter_table` lets the rename
 leave alone the view and triggers that name the queue, which it would otherwise
 reparse while the queue is gone. Rows, sequence numbers and the queue's triggers
 and index are as they were.
 */
extension Schema {
    static let triageRowsCascadeByTrigger = """
    PRAGMA legacy_alter_table = ON;

    CREATE TABLE mutation_queue_v4 (
        id                  INTEGER PRIMARY KEY,
        account_id          INTEGER NOT NULL,           -- accounts.id (accounts_removed deletes its rows)
        message_id          INTEGER NOT NULL,           -- messages.id (History.tombstone deletes its rows)
        label               TEXT NOT NULL CHECK (label <> ''),
        op                  TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        state               TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'in_flight')),
        expected_history_id INTEGER,                    -- the retirement gate, set with in_flight
        action_id           INTEGER,                    -- actions.id (actions_forgotten clears it)
        attempts            INTEGER NOT NULL DEFAULT 0,
        last_error          TEXT,
        next_attempt_at     INTEGER,                    -- epoch ms; backoff after a transient failure
        claimed_at          INTEGER,                    -- epoch ms; a flusher is sending this row
        created_at          INTEGER NOT NULL,
        updated_at          INTEGER NOT NULL,
        attempted_at        INTEGER,                    -- epoch ms; a request carrying the row went out
        UNIQUE (message_id, label),
        CHECK (state <> 'in_flight' OR expected_history_id IS NOT NULL)
    );
    INSERT INTO mutation_queue_v4 (id, account_id, message_id, label, op, state, expected_history_id, action_id,
                                   attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at,
                                   attempted_at)
        SELECT id, account_id, message_id, label, op, state, expected_history_id, action_id,
               attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at, attempted_at
          FROM mutation_queue;
    -- Takes its index and both triggers with it; they come back below as 007 and 016 wrote them.
    DROP TABLE mutation_queue;
    ALTER TABLE mutation_queue_v4 RENAME TO mutation_queue;
    CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);

    CREATE TRIGGER label_counts_queue_delete AFTER DELETE ON mutation_queue
    WHEN EXISTS (SELECT 1 FROM messages AS m WHERE m.id = OLD.message_id)
     AND (OLD.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                        WHERE ml.message_id = OLD.message_id AND ml.label = OLD.label)
    BEGIN
        UPDATE label_counts SET messages = messages - CASE OLD.op WHEN 'add' THEN 1 ELSE -1 END
         WHERE account_id = OLD.account_id AND label = OLD.label;
    END;

    CREATE TRIGGER label_counts_queue_update AFTER UPDATE OF op, label, message_id ON mutation_queue
    WHEN OLD.op IS NOT NEW.op OR OLD.label IS NOT NEW.label OR OLD.message_id IS NOT NEW.message_id
    BEGIN
        UPDATE label_counts SET messages = messages - CASE OLD.op WHEN 'add' THEN 1 ELSE -1 END
         WHERE account_id = OLD.account_id AND label = OLD.label
           AND EXISTS (SELECT 1 FROM messages AS m WHERE m.id = OLD.message_id)
           AND (OLD.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                              WHERE ml.message_id = OLD.message_id AND ml.label = OLD.label);
        INSERT INTO label_counts (account_id, label, messages)
            SELECT NEW.account_id, NEW.label, CASE NEW.op WHEN 'add' THEN 1 ELSE -1 END
             WHERE EXISTS (SELECT 1 FROM messages AS m WHERE m.id = NEW.message_id)
               AND (NEW.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                                  WHERE ml.message_id = NEW.message_id AND ml.label = NEW.label)
            ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + excluded.messages;
    END;

    CREATE TABLE action_items_v3 (
        action_id  INTEGER NOT NULL,                    -- actions.id (actions_forgotten deletes its items)
        message_id INTEGER NOT NULL,                    -- messages.id when queued
        gmail_id   TEXT NOT NULL,                       -- ... and the message it named then
        label      TEXT NOT NULL,
        op         TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        PRIMARY KEY (action_id, message_id, label)
    ) WITHOUT ROWID;
    INSERT INTO action_items_v3 (action_id, message_id, gmail_id, label, op)
        SELECT action_id, message_id, gmail_id, label, op FROM action_items ORDER BY action_id, message_id, label;
    DROP TABLE action_items;
    ALTER TABLE action_items_v3 RENAME TO action_items;

    CREATE TABLE message_seq_v3 (
        seq                INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id         INTEGER NOT NULL,            -- accounts.id (accounts_removed deletes its rows)
        gmail_id           TEXT NOT NULL,
        thread_id          TEXT NOT NULL,
        message_id         INTEGER UNIQUE,              -- messages.id while stored; NULL once deleted
        deleted            INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
        deleted_history_id INTEGER
    );
    INSERT INTO message_seq_v3 (seq, account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id)
        SELECT seq, account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id
          FROM message_seq ORDER BY seq;
    -- AUTOINCREMENT never hands out a number twice, even one whose row is gone.
    UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'message_seq'))
     WHERE name = 'message_seq_v3';
    DROP TABLE message_seq;
    ALTER TABLE message_seq_v3 RENAME TO message_seq;
    CREATE UNIQUE INDEX message_seq_deleted ON message_seq (account_id, gmail_id) WHERE deleted = 1;

    CREATE TRIGGER accounts_removed AFTER DELETE ON accounts BEGIN
        DELETE FROM mutation_queue WHERE account_id = OLD.id;
        DELETE FROM message_seq WHERE account_id = OLD.id;
    END;

    CREATE TRIGGER actions_forgotten AFTER DELETE ON actions BEGIN
        DELETE FROM action_items WHERE action_id = OLD.id;
        UPDATE mutation_queue SET action_id = NULL WHERE action_id = OLD.id;
    END;

    PRAGMA legacy_alter_table = OFF;
    """
}
