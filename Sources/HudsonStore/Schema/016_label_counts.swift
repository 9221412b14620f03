/*!
 Migration 016_label_counts:
 What `hd-labels` shows, kept by SQL triggers on every table it is made from, so no
 write path can forget it (like the full-text index): per account and label, the
 messages that effectively carry it, and the threads listed under it with how many
 of those are unread. Counting them at each run joined every label row to the
 messages and the rollup: 659 ms at 100,000 messages, for a list that completions
 and scripts ask for at every TAB (issue 19).

 - `messages`: a canonical row counts while no queue row overrides it; a queued add
   counts when the message lacks the label canonically, a queued remove takes one off
   when it has it (EffectiveLabels); a change is queued only for a stored message. A
   message going takes off its effective labels before it goes; the rows that go with
   it then find no message and change nothing.
 - `threads`, `unread_threads`: one per `thread_labels` row, unread as its thread's
   rollup row says. A rollup row whose flag changes moves the count of every label
   its list names (the list mirrors its `thread_labels` rows), also when
   `INSERT OR REPLACE` rewrites the row (read before it is replaced). Since 020 the
   writer of those rows keeps these two instead of these triggers.
 */
extension Schema {
    static let labelCounts = """
    CREATE TABLE label_counts (
        account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        label          TEXT NOT NULL,
        messages       INTEGER NOT NULL DEFAULT 0,
        threads        INTEGER NOT NULL DEFAULT 0,
        unread_threads INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, label)
    ) WITHOUT ROWID;

    INSERT INTO label_counts (account_id, label, messages)
        SELECT m.account_id, el.label, count(*)
          FROM messages AS m JOIN effective_labels AS el ON el.message_id = m.id
         GROUP BY m.account_id, el.label;
    INSERT INTO label_counts (account_id, label, threads, unread_threads)
        SELECT * FROM (
            SELECT tl.account_id, tl.label, count(*), sum(r.unread)
              FROM thread_labels AS tl
              JOIN thread_rollup AS r ON r.account_id = tl.account_id AND r.last_message_at = tl.last_message_at
                                     AND r.thread_id = tl.thread_id
             GROUP BY tl.account_id, tl.label) WHERE 1
        ON CONFLICT (account_id, label) DO UPDATE SET threads = excluded.threads, unread_threads = excluded.unread_threads;

    CREATE TRIGGER label_counts_canonical_insert AFTER INSERT ON message_labels
    WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = NEW.message_id AND q.label = NEW.label)
    BEGIN
        INSERT INTO label_counts (account_id, label, messages)
            SELECT m.account_id, NEW.label, 1 FROM messages AS m WHERE m.id = NEW.message_id
            ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + 1;
    END;

    CREATE TRIGGER label_counts_canonical_delete AFTER DELETE ON message_labels
    WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = OLD.message_id AND q.label = OLD.label)
    BEGIN
        UPDATE label_counts SET messages = messages - 1
         WHERE label = OLD.label AND account_id = (SELECT m.account_id FROM messages AS m WHERE m.id = OLD.message_id);
    END;

    CREATE TRIGGER label_counts_queue_insert AFTER INSERT ON mutation_queue
    WHEN (NEW.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                        WHERE ml.message_id = NEW.message_id AND ml.label = NEW.label)
    BEGIN
        INSERT INTO label_counts (account_id, label, messages)
            SELECT NEW.account_id, NEW.label, CASE NEW.op WHEN 'add' THEN 1 ELSE -1 END WHERE 1
            ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + excluded.messages;
    END;

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

    CREATE TRIGGER label_counts_message_delete BEFORE DELETE ON messages BEGIN
        UPDATE label_counts SET messages = messages - 1
         WHERE account_id = OLD.account_id
           AND label IN (SELECT el.label FROM effective_labels AS el WHERE el.message_id = OLD.id);
    END;

    CREATE TRIGGER label_counts_thread_insert AFTER INSERT ON thread_labels BEGIN
        INSERT INTO label_counts (account_id, label, threads, unread_threads)
            SELECT NEW.account_id, NEW.label, 1,
                   coalesce((SELECT r.unread FROM thread_rollup AS r
                              WHERE r.thread_id = NEW.thread_id AND r.account_id = NEW.account_id), 0)
             WHERE 1
            ON CONFLICT (account_id, label) DO UPDATE
               SET threads = threads + 1, unread_threads = unread_threads + excluded.unread_threads;
    END;

    CREATE TRIGGER label_counts_thread_delete AFTER DELETE ON thread_labels BEGIN
        UPDATE label_counts
           SET threads = threads - 1,
               unread_threads = unread_threads - coalesce((SELECT r.unread FROM thread_rollup AS r
                                                            WHERE r.thread_id = OLD.thread_id AND r.account_id = OLD.account_id), 0)
         WHERE account_id = OLD.account_id AND label = OLD.label;
    END;

    CREATE TRIGGER label_counts_thread_update AFTER UPDATE ON thread_labels BEGIN
        UPDATE label_counts
           SET threads = threads - 1,
               unread_threads = unread_threads - coalesce((SELECT r.unread FROM thread_rollup AS r
                                                            WHERE r.thread_id = OLD.thread_id AND r.account_id = OLD.account_id), 0)
         WHERE account_id = OLD.account_id AND label = OLD.label;
        INSERT INTO label_counts (account_id, label, threads, unread_threads)
            SELECT NEW.account_id, NEW.label, 1,
                   coalesce((SELECT r.unread FROM thread_rollup AS r
                              WHERE r.thread_id = NEW.thread_id AND r.account_id = NEW.account_id), 0)
             WHERE 1
            ON CONFLICT (account_id, label) DO UPDATE
               SET threads = threads + 1, unread_threads = unread_threads + excluded.unread_threads;
    END;

    CREATE TRIGGER label_counts_rollup_unread AFTER UPDATE OF unread ON thread_rollup
    WHEN OLD.unread IS NOT NEW.unread
    BEGIN
        UPDATE label_counts SET unread_threads = unread_threads + NEW.unread - OLD.unread
         WHERE account_id = NEW.account_id AND instr(' ' || OLD.labels || ' ', ' ' || label || ' ') > 0;
    END;

    CREATE TRIGGER label_counts_rollup_replace BEFORE INSERT ON thread_rollup BEGIN
        UPDATE label_counts
           SET unread_threads = unread_threads + NEW.unread
               - (SELECT r.unread FROM thread_rollup AS r WHERE r.thread_id = NEW.thread_id AND r.account_id = NEW.account_id)
         WHERE account_id = NEW.account_id
           AND instr(' ' || (SELECT r.labels FROM thread_rollup AS r
                              WHERE r.thread_id = NEW.thread_id AND r.account_id = NEW.account_id) || ' ',
                     ' ' || label || ' ') > 0;
    END;
    """
}
