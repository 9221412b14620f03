/*!
 Migration 024_rollup_without_message_text:
 `thread_rollup` no longer copies the newest message's subject and snippet: a list
 reads them from that message, which it joins already for its Gmail id
 (Reads.rollupColumns), so what a list shows is unchanged. They were two thirds of a
 row (348 bytes on average at 100,000 messages, the snippet alone 196), and a triage
 rewrites the row of every thread it touches: archiving 1,000 threads of 100,000
 messages wrote 118 rollup pages of the 229 its WAL held; the WAL now holds 139
 (issue 19, docs/performance.md). The table is rebuilt in key order, so its pages
 are full.
 */
extension Schema {
    static let rollupWithoutMessageText = """
    CREATE TABLE thread_rollup_v3 (
        account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        thread_id         TEXT NOT NULL,
        last_message_at   INTEGER NOT NULL,             -- newest message's internal_date
        newest_message_id INTEGER NOT NULL,             -- messages.id of that message (its subject and snippet)
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
    INSERT INTO thread_rollup_v3 (account_id, thread_id, last_message_at, newest_message_id, sender, participants,
                                  message_count, unread_count, in_inbox, unread, starred, has_attachment, labels)
        SELECT account_id, thread_id, last_message_at, newest_message_id, sender, participants,
               message_count, unread_count, in_inbox, unread, starred, has_attachment, labels
          FROM thread_rollup ORDER BY account_id, last_message_at DESC, thread_id DESC;
    DROP TABLE thread_rollup;
    ALTER TABLE thread_rollup_v3 RENAME TO thread_rollup;
    CREATE UNIQUE INDEX thread_rollup_by_thread ON thread_rollup (thread_id, account_id);
    """
}
