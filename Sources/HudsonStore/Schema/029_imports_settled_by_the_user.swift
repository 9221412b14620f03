/*!
 Migration 029_imports_settled_by_the_user:
 An import the user settled (issue 37 §2): a record an attempt may have imported, that
 Gmail cannot be asked about (no Message-ID its search takes, no history back to the
 attempt), left every run at 75. `hd-import --settle-unknown in-gmail` records it as
 `settled` (never sent again; its Gmail id is not known). SQLite cannot change a CHECK
 in place, so the table is made again with the new state allowed.
 */
extension Schema {
    static let importsSettledByTheUser = """
    CREATE TABLE imports_v2 (
        account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        source_key         TEXT NOT NULL CHECK (source_key <> ''),
        message_id         TEXT CHECK (message_id IS NULL OR message_id <> ''),   -- with <>; the probe's key
        state              TEXT NOT NULL CHECK (state IN ('sending', 'imported', 'failed', 'settled')),
        origin             TEXT NOT NULL,                                         -- file, and number in an mbox
        attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        attempt_started_at INTEGER,                                               -- epoch ms of the last attempt
        gmail_id           TEXT CHECK (gmail_id IS NULL OR gmail_id <> ''),
        last_error         TEXT,
        updated_at         INTEGER NOT NULL,
        attempt_history_id INTEGER,                                               -- getProfile's historyId before the first attempt
        CHECK (state <> 'imported' OR gmail_id IS NOT NULL),
        PRIMARY KEY (account_id, source_key)
    ) WITHOUT ROWID;
    INSERT INTO imports_v2 (account_id, source_key, message_id, state, origin, attempts, attempt_started_at, gmail_id,
                            last_error, updated_at, attempt_history_id)
        SELECT account_id, source_key, message_id, state, origin, attempts, attempt_started_at, gmail_id,
               last_error, updated_at, attempt_history_id FROM imports;
    DROP TABLE imports;
    ALTER TABLE imports_v2 RENAME TO imports;
    """
}
