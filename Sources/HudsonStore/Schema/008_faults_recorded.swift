/*!
 Migration 008_faults_recorded:
 What the store must remember of faults so that no single one can lose the user's
 intent or stall an account (issue 17):

 - `mutation_queue.attempted_at`: set, durably, before the first request that carries
   the row goes out, and never cleared while the row lives. Such a row may be at
   Gmail whatever happened to the request's answer, so an opposite change or an undo
   overlays it forward instead of cancelling it ("in_flight, opposite → overlay
   forward"; "Crash safety": a pending row may already have been sent). NULL means
   no request ever carried it, the one case a cancel is safe.
 - `sync_parked`: a message Gmail will not serve (a 5xx every time, a 4xx other than
   404, an answer that cannot be read or stored), or a body that fails to hydrate, is
   parked here with its error and retried with growing back-off, so the pass goes on
   and the cursor advances ("the batch catches per-message errors so one bad id
   cannot stall the other 24"). A 'message' row names mail the store does not have
   yet, so it is keyed by Gmail id, not by `messages.id`.
 - `rejected_changes`: label changes Gmail refused for good (a 400 narrowed down to
   the change that caused it), with Gmail's reason, for `hd-pending` and the undo
   history; kept a week.
 - `outbox.attempt_history_id`: the account's cursor when the first attempt to send
   an entry began, so the probe can read history from there, not only search.
 */
extension Schema {
    static let faultsRecorded = """
    ALTER TABLE mutation_queue ADD COLUMN attempted_at INTEGER; -- epoch ms; a request carrying the row went out

    CREATE TABLE sync_parked (
        account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        stage           TEXT NOT NULL CHECK (stage IN ('message', 'body')),
        gmail_id        TEXT NOT NULL CHECK (gmail_id <> ''),
        error           TEXT NOT NULL,
        attempts        INTEGER NOT NULL CHECK (attempts > 0),
        first_failed_at INTEGER NOT NULL,              -- epoch ms, like every *_at below
        last_failed_at  INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        reported        INTEGER NOT NULL DEFAULT 0 CHECK (reported IN (0, 1)),
        PRIMARY KEY (account_id, stage, gmail_id)
    ) WITHOUT ROWID;
    CREATE INDEX sync_parked_due ON sync_parked (account_id, stage, next_attempt_at);

    CREATE TABLE rejected_changes (
        id          INTEGER PRIMARY KEY,
        account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        gmail_id    TEXT NOT NULL,
        thread_id   TEXT NOT NULL,
        label       TEXT NOT NULL,
        op          TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        action_id   INTEGER REFERENCES actions(id) ON DELETE SET NULL,
        reason      TEXT NOT NULL,
        rejected_at INTEGER NOT NULL
    );
    CREATE INDEX rejected_changes_by_action ON rejected_changes (action_id) WHERE action_id IS NOT NULL;
    CREATE INDEX rejected_changes_by_time ON rejected_changes (rejected_at);

    ALTER TABLE outbox ADD COLUMN attempt_history_id INTEGER; -- the cursor when the first attempt began
    """
}
