/*!
 Migration 007_queue_checks_inbox_only:
 Two guards and two indexes that cost every triage more than they had to: archiving
 the 1,000 newest threads of 100,000 messages ran 205 M instructions, 20 M of them
 here (docs/performance.md, "hd-mark").

 - `mutation_queue`'s op and state are guarded by CHECK constraints. 001 could not
   add one without rebuilding the table and wrote the guard as a BEFORE INSERT and a
   BEFORE UPDATE trigger, as the spec does for the same reason (optimistic-mutations.md:
   "a real CHECK constraint would have caught" what the insert trigger alone missed).
   A CHECK guards inserts and updates alike; a trigger ran a subprogram per row, about
   7,000 instructions per queued change. The table is rebuilt; a queue is small.
 - The inbox indexes hold the inbox's threads only (partial, `WHERE in_inbox = 1`)
   instead of every thread under its inbox flag: archiving a thread deletes its two
   entries and inserts none, and an inbox page reads a smaller index. The inbox page
   writes `r.in_inbox = 1` out, which is what lets the planner use them
   (Reads.inboxPageSQL).
 */
extension Schema {
    static let queueChecksInboxOnly = """
    DROP INDEX thread_rollup_inbox;
    DROP INDEX thread_rollup_inbox_all;
    CREATE INDEX thread_rollup_inbox ON thread_rollup (account_id, last_message_at DESC, thread_id DESC)
        WHERE in_inbox = 1;
    CREATE INDEX thread_rollup_inbox_all ON thread_rollup (last_message_at DESC, thread_id DESC)
        WHERE in_inbox = 1;

    DROP VIEW effective_labels;
    CREATE TABLE mutation_queue_v3 (
        id                  INTEGER PRIMARY KEY,
        account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        message_id          INTEGER NOT NULL,           -- messages.id (History.tombstone deletes its rows)
        label               TEXT NOT NULL CHECK (label <> ''),
        op                  TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        state               TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'in_flight')),
        expected_history_id INTEGER,                    -- the retirement gate, set with in_flight
        action_id           INTEGER REFERENCES actions(id) ON DELETE SET NULL,
        attempts            INTEGER NOT NULL DEFAULT 0,
        last_error          TEXT,
        next_attempt_at     INTEGER,                    -- epoch ms; backoff after a transient failure
        claimed_at          INTEGER,                    -- epoch ms; a flusher is sending this row
        created_at          INTEGER NOT NULL,
        updated_at          INTEGER NOT NULL,
        UNIQUE (message_id, label),
        CHECK (state <> 'in_flight' OR expected_history_id IS NOT NULL)
    );
    INSERT INTO mutation_queue_v3 (id, account_id, message_id, label, op, state, expected_history_id, action_id,
                                   attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at)
        SELECT id, account_id, message_id, label, op, state, expected_history_id, action_id,
               attempts, last_error, next_attempt_at, claimed_at, created_at, updated_at
          FROM mutation_queue;
    -- Takes its index and both triggers with it.
    DROP TABLE mutation_queue;
    ALTER TABLE mutation_queue_v3 RENAME TO mutation_queue;
    CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);

    -- As 001 wrote it (see 006).
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
