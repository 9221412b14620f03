/*!
 Migration 010_trash_and_spam_listed_apart:
 A thread lists a member in trash only under TRASH and one in spam only under SPAM
 (EffectiveLabels.listed): a trashed message no longer keeps its thread in the inbox
 or under its labels. Threads with such a member are rolled up again here by the
 same rule, written in SQL as it stood when this shipped (the Swift rule may move on;
 this stays). Every other thread's rollup is the same under both rules.
 */
extension Schema {
    static let trashAndSpamListedApart = """
    CREATE TEMP TABLE listed_010 AS
        WITH located (account_id, thread_id) AS (
            SELECT DISTINCT m.account_id, m.thread_id
              FROM effective_labels AS el JOIN messages AS m ON m.id = el.message_id
             WHERE el.label IN ('TRASH', 'SPAM'))
        SELECT m.account_id, m.thread_id, m.id AS message_id, el.label
          FROM located AS t
          JOIN messages AS m ON m.account_id = t.account_id AND m.thread_id = t.thread_id
          JOIN effective_labels AS el ON el.message_id = m.id
         WHERE el.label = 'TRASH'
            OR (el.label = 'SPAM' AND NOT EXISTS (SELECT 1 FROM effective_labels AS x
                                                   WHERE x.message_id = m.id AND x.label = 'TRASH'))
            OR NOT EXISTS (SELECT 1 FROM effective_labels AS x
                            WHERE x.message_id = m.id AND x.label IN ('TRASH', 'SPAM'));
    CREATE TEMP TABLE rollup_010 AS
        SELECT account_id, thread_id, group_concat(label, ' ') AS labels
          FROM (SELECT DISTINCT account_id, thread_id, label FROM listed_010 ORDER BY account_id, thread_id, label)
         GROUP BY account_id, thread_id;
    UPDATE thread_rollup
       SET labels = r.labels,
           unread_count = (SELECT count(*) FROM listed_010 AS l
                            WHERE l.account_id = r.account_id AND l.thread_id = r.thread_id AND l.label = 'UNREAD'),
           unread = EXISTS (SELECT 1 FROM listed_010 AS l
                             WHERE l.account_id = r.account_id AND l.thread_id = r.thread_id AND l.label = 'UNREAD'),
           in_inbox = instr(' ' || r.labels || ' ', ' INBOX ') > 0,
           starred = instr(' ' || r.labels || ' ', ' STARRED ') > 0
      FROM rollup_010 AS r
     WHERE thread_rollup.account_id = r.account_id AND thread_rollup.thread_id = r.thread_id;
    -- A thread wholly in trash or spam shows its members' unread and starred flags there.
    UPDATE thread_rollup
       SET unread_count = (SELECT count(*) FROM messages AS m JOIN effective_labels AS el ON el.message_id = m.id
                            WHERE m.account_id = thread_rollup.account_id AND m.thread_id = thread_rollup.thread_id
                              AND el.label = 'UNREAD'),
           unread = EXISTS (SELECT 1 FROM messages AS m JOIN effective_labels AS el ON el.message_id = m.id
                             WHERE m.account_id = thread_rollup.account_id AND m.thread_id = thread_rollup.thread_id
                               AND el.label = 'UNREAD'),
           starred = EXISTS (SELECT 1 FROM messages AS m JOIN effective_labels AS el ON el.message_id = m.id
                              WHERE m.account_id = thread_rollup.account_id AND m.thread_id = thread_rollup.thread_id
                                AND el.label = 'STARRED')
     WHERE (account_id, thread_id) IN (SELECT account_id, thread_id FROM rollup_010)
       AND NOT EXISTS (SELECT 1 FROM messages AS m
                        WHERE m.account_id = thread_rollup.account_id AND m.thread_id = thread_rollup.thread_id
                          AND NOT EXISTS (SELECT 1 FROM effective_labels AS x
                                           WHERE x.message_id = m.id AND x.label IN ('TRASH', 'SPAM')));
    DELETE FROM thread_labels
     WHERE (account_id, thread_id) IN (SELECT account_id, thread_id FROM rollup_010);
    INSERT INTO thread_labels (account_id, label, last_message_at, thread_id)
        SELECT DISTINCT l.account_id, l.label, r.last_message_at, l.thread_id
          FROM listed_010 AS l
          JOIN thread_rollup AS r ON r.account_id = l.account_id AND r.thread_id = l.thread_id;
    DROP TABLE listed_010;
    DROP TABLE rollup_010;
    """
}
