/*!
 Migration 005_triage_locality:
 What a triage writes, laid out so that archiving a thousand threads writes few pages
 (docs/performance.md, "What does not meet its target yet"). Gmail ids are opaque
 (nothing promises they follow time), so a table keyed by one can take a random page
 per thread or message touched, and every page a transaction dirties is written
 twice (WAL, then checkpoint):

 - `thread_labels` is keyed by what reads ask for, (account, label, newest first),
   as its index already was. A thread's rows are found from its rollup row, whose
   `labels` and `last_message_at` they always mirror (ThreadRollup.swift); new mail
   and triage touch the newest end of each label's range.
 - `action_items` is read only by action: it loses its index by message, which a
   triage grew at a random place per message. Nothing cascades from `messages` any
   more; each item keeps the Gmail id it was queued for, and undo passes over an item
   whose message is gone or whose key now names another message.
 - `message_seq` finds a stored message's row by the message's key, which follows its
   date, instead of by Gmail id: moving a message in the sequence rewrote a random
   page of the (account, Gmail id) index per message. Only a deleted message's row
   (its key gone, `message_id` NULL) is found by Gmail id, in an index of those alone.
 - `messages_by_thread` also holds the Gmail id, so naming a thread's messages reads
   the index alone, not a wide message row per member.
 */
extension Schema {
    static let triageLocality = """
    DROP INDEX messages_by_thread;
    CREATE INDEX messages_by_thread ON messages (thread_id, account_id, internal_date, gmail_id);

    CREATE TABLE thread_labels_by_recency (
        account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        label           TEXT NOT NULL,
        last_message_at INTEGER NOT NULL,
        thread_id       TEXT NOT NULL,
        PRIMARY KEY (account_id, label, last_message_at DESC, thread_id DESC)
    ) WITHOUT ROWID;
    INSERT INTO thread_labels_by_recency (account_id, label, last_message_at, thread_id)
        SELECT account_id, label, last_message_at, thread_id FROM thread_labels;
    DROP TABLE thread_labels;
    ALTER TABLE thread_labels_by_recency RENAME TO thread_labels;

    CREATE TABLE action_items_by_action (
        action_id  INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
        message_id INTEGER NOT NULL,                    -- messages.id when queued
        gmail_id   TEXT NOT NULL,                       -- ... and the message it named then
        label      TEXT NOT NULL,
        op         TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        PRIMARY KEY (action_id, message_id, label)
    ) WITHOUT ROWID;
    INSERT INTO action_items_by_action (action_id, message_id, gmail_id, label, op)
        SELECT i.action_id, i.message_id, m.gmail_id, i.label, i.op
          FROM action_items AS i JOIN messages AS m ON m.id = i.message_id;
    DROP TABLE action_items;
    ALTER TABLE action_items_by_action RENAME TO action_items;

    CREATE TABLE message_seq_by_key (
        seq                INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        gmail_id           TEXT NOT NULL,
        thread_id          TEXT NOT NULL,
        message_id         INTEGER UNIQUE,              -- messages.id while stored; NULL once deleted
        deleted            INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
        deleted_history_id INTEGER
    );
    INSERT INTO message_seq_by_key (seq, account_id, gmail_id, thread_id, message_id, deleted, deleted_history_id)
        SELECT s.seq, s.account_id, s.gmail_id, s.thread_id, CASE WHEN s.deleted = 0 THEN m.id END,
               s.deleted, s.deleted_history_id
          FROM message_seq AS s LEFT JOIN messages AS m ON m.account_id = s.account_id AND m.gmail_id = s.gmail_id
         ORDER BY s.seq;
    -- AUTOINCREMENT never hands out a number twice, even one whose row is gone.
    UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'message_seq'))
     WHERE name = 'message_seq_by_key';
    DROP TABLE message_seq;
    ALTER TABLE message_seq_by_key RENAME TO message_seq;
    CREATE UNIQUE INDEX message_seq_deleted ON message_seq (account_id, gmail_id) WHERE deleted = 1;
    """
}
