/*!
 Migration 006_rollup_by_recency:
 `thread_rollup` keyed by (account, newest message, thread), where 005 left it keyed
 by thread id: archiving the 1,000 newest threads of 100,000 messages still wrote 678
 random rollup pages, most of what that triage wrote. Now a triage or new mail
 writes rows at the newest end, and an inbox page reads rows that lie together. A
 thread's row is found by id through `thread_rollup_by_thread`, which a label change
 only reads (neither the thread nor its newest message moves). The inbox page names
 its index (Reads.inboxPageSQL): the key gives the same order, and the planner would
 take it over the inbox index.

 `mutation_queue` loses its foreign key to `messages`: checking it on every insert
 read each message's wide row, the only thing in a triage that still did. A message's
 queue rows now go with it in the one place a message is deleted (History.tombstone;
 an account's go with the account). A message key belongs to one account, so
 (message, label) is unique on its own, and that one index replaces two.
 */
extension Schema {
    static let rollupByRecency = """
    CREATE TABLE thread_rollup_by_recency (
        account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        thread_id         TEXT NOT NULL,
        last_message_at   INTEGER NOT NULL,             -- newest message's internal_date
        newest_message_id INTEGER NOT NULL,             -- messages.id of that message
        subject           TEXT,
        snippet           TEXT NOT NULL DEFAULT '',
        sender            TEXT NOT NULL DEFAULT '',     -- newest message's sender, for display
        participants      TEXT NOT NULL DEFAULT '',     -- distinct senders, oldest first
        message_count     INTEGER NOT NULL,
        unread_count      INTEGER NOT NULL,
        in_inbox          INTEGER NOT NULL CHECK (in_inbox IN (0, 1)),
        unread            INTEGER NOT NULL CHECK (unread IN (0, 1)),
        starred           INTEGER NOT NULL CHECK (starred IN (0, 1)),
        has_attachment    INTEGER NOT NULL CHECK (has_attachment IN (0, 1)),
        labels            TEXT NOT NULL DEFAULT '',     -- effective label ids, space-separated, sorted
        PRIMARY KEY (account_id, last_message_at DESC, thread_id DESC)
    ) WITHOUT ROWID;
    INSERT INTO thread_rollup_by_recency SELECT
        account_id, thread_id, last_message_at, newest_message_id, subject, snippet, sender, participants,
        message_count, unread_count, in_inbox, unread, starred, has_attachment, labels
      FROM thread_rollup;
    DROP TABLE thread_rollup;
    ALTER TABLE thread_rollup_by_recency RENAME TO thread_rollup;
    CREATE UNIQUE INDEX thread_rollup_by_thread ON thread_rollup (thread_id, account_id);
    CREATE INDEX thread_rollup_inbox ON thread_rollup (account_id, in_inbox, last_message_at DESC, thread_id DESC);
    CREATE INDEX thread_rollup_inbox_all ON thread_rollup (in_inbox, last_message_at DESC, thread_id DESC);

    DROP VIEW effective_labels;
    CREATE TABLE mutation_queue_v2 (
        id                  INTEGER PRIMARY KEY,
        account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        message_id          INTEGER NOT NULL,           -- messages.id (History.tombstone deletes its rows)
        label               TEXT NOT NULL CHECK (label <> ''),
        op                  TEXT NOT NULL,              -- 'add' | 'remove' (guarded by triggers)
        state               TEXT NOT NULL DEFAULT 'pending', -- 'pending' | 'in_flight'
        expected_history_id INTEGER,                    -- the retirement gate, set with in_flight
        action_id           INTEGER REFERENCES actions(id) ON DELETE SET NULL,
        attempts            INTEGER NOT NULL DEFAULT 0,
        last_error          TEXT,
        next_attempt_at     INTEGER,                    -- epoch ms; backoff after a transient failure
        claimed_at          INTEGER,                    -- epoch ms; a flusher is sending this row
        created_at          INTEGER NOT NULL,
        updated_at          INTEGER NOT NULL,
        UNIQUE (message_id, label)
    );
    INSERT INTO mutation_queue_v2 (id, account_id, message_id, label, op, state, expected_history_id, action_id,
                                   attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at)
        SELECT id, account_id, message_id, label, op, state, expected_history_id, action_id,
               attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at
          FROM mutation_queue;
    DROP TABLE mutation_queue;
    ALTER TABLE mutation_queue_v2 RENAME TO mutation_queue;
    CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);

    CREATE TRIGGER mutation_queue_legal_insert BEFORE INSERT ON mutation_queue
    WHEN NEW.op NOT IN ('add', 'remove')
      OR NEW.state NOT IN ('pending', 'in_flight')
      OR (NEW.state = 'in_flight' AND NEW.expected_history_id IS NULL)
    BEGIN
        SELECT RAISE(ABORT, 'mutation_queue: illegal op or state');
    END;

    CREATE TRIGGER mutation_queue_legal_update BEFORE UPDATE ON mutation_queue
    WHEN NEW.op NOT IN ('add', 'remove')
      OR NEW.state NOT IN ('pending', 'in_flight')
      OR (NEW.state = 'in_flight' AND NEW.expected_history_id IS NULL)
    BEGIN
        SELECT RAISE(ABORT, 'mutation_queue: illegal op or state');
    END;

    -- As 001 wrote it: a view is dropped with nothing and re-parsed by a rename, so it goes
    -- while its table is rebuilt.
    CREATE VIEW effective_labels (message_id, label) AS
        SELECT ml.message_id, ml.label
          FROM message_labels AS ml
         WHERE NOT EXISTS (SELECT 1 FROM mutation_queue AS q
                            WHERE q.message_id = ml.message_id AND q.label = ml.label AND q.op = 'remove')
        UNION ALL
        SELECT q.message_id, q.label
          FROM mutation_queue AS q
         WHERE q.op = 'add'
           AND NOT EXISTS (SELECT 1 FROM message_labels AS ml
                            WHERE ml.message_id = q.message_id AND ml.label = q.label);
    """
}
