/*!
 Migration 001_initial.
 */
extension Schema {
    static let initial = """
    PRAGMA application_id = 1212437326;

    -- One row per Gmail account. The sync cursor and backfill progress live here, so a
    -- quit at any moment resumes from what the database says (sync-engine-reference.md).
    CREATE TABLE accounts (
        id                  INTEGER PRIMARY KEY,
        email               TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (email <> ''),
        -- history cursor: NULL until ensureCursor records it, before the first list call
        history_id          INTEGER CHECK (history_id IS NULL OR history_id > 0),
        consented_at        INTEGER NOT NULL,           -- epoch seconds; anchors the window
        lookback_days       INTEGER NOT NULL DEFAULT 90 CHECK (lookback_days >= 0),
        backfill_state      TEXT NOT NULL DEFAULT 'pending'
                            CHECK (backfill_state IN ('pending', 'running', 'complete')),
        backfill_page_token TEXT,
        -- the backfill window, fixed once chosen: after:<backfill_after> before:<backfill_before>
        backfill_after      INTEGER,                    -- epoch seconds; NULL = no lower bound
        backfill_before     INTEGER,                    -- epoch seconds; NULL = no upper bound
        backfill_listed     INTEGER NOT NULL DEFAULT 0, -- messages listed so far in this window
        backfill_estimate   INTEGER,                    -- resultSizeEstimate of the first page
        created_at          INTEGER NOT NULL,           -- epoch ms, like every *_at below
        last_sync_at        INTEGER,
        last_history_at     INTEGER,
        last_backfill_at    INTEGER,
        labels_synced_at    INTEGER
    );

    -- Labels as Gmail lists them. A label id seen on a message before labels.list has
    -- run gets a row with a NULL name, filled in later.
    CREATE TABLE labels (
        account_id              INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        id                      TEXT NOT NULL CHECK (id <> ''),
        name                    TEXT COLLATE NOCASE,
        type                    TEXT CHECK (type IS NULL OR type IN ('system', 'user')),
        message_list_visibility TEXT,
        label_list_visibility   TEXT,
        text_color              TEXT,
        background_color        TEXT,
        PRIMARY KEY (account_id, id)
    ) WITHOUT ROWID;
    CREATE INDEX labels_by_name ON labels (account_id, name);

    -- Messages. The integer key follows internal_date (ms * 1000 + a tie-breaker), so the
    -- full-text index, whose rowid is this key, lists hits newest first by walking its
    -- doclist backwards and stopping after a page (sqlite-notes.md, FTS5 table).
    CREATE TABLE messages (
        id                INTEGER PRIMARY KEY,
        account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        gmail_id          TEXT NOT NULL CHECK (gmail_id <> ''),
        thread_id         TEXT NOT NULL CHECK (thread_id <> ''),
        -- the history id this row came from: the version guard refuses older snapshots
        history_id        INTEGER NOT NULL CHECK (history_id > 0),
        internal_date     INTEGER NOT NULL,             -- epoch ms, Gmail's ordering key
        size_estimate     INTEGER NOT NULL DEFAULT 0,
        snippet           TEXT NOT NULL DEFAULT '',
        subject           TEXT,
        sender            TEXT,                         -- From, decoded
        to_header         TEXT,
        cc_header         TEXT,
        bcc_header        TEXT,
        reply_to          TEXT,
        date_header       TEXT,
        message_id_header TEXT,                         -- RFC 5322 Message-ID, with <>
        in_reply_to       TEXT,
        references_header TEXT,
        list_id           TEXT,
        content_type      TEXT,                         -- top-level MIME type
        has_attachment    INTEGER NOT NULL DEFAULT 0 CHECK (has_attachment IN (0, 1)),
        -- 0: metadata only; 1: body hydrated (message_bodies has the row)
        body_state        INTEGER NOT NULL DEFAULT 0 CHECK (body_state IN (0, 1)),
        -- gmail_id first: a bare id on the command line is looked up without an account
        UNIQUE (gmail_id, account_id)
    );
    CREATE INDEX messages_by_thread ON messages (thread_id, account_id, internal_date);
    CREATE INDEX messages_by_rfc822_id ON messages (message_id_header) WHERE message_id_header IS NOT NULL;
    CREATE INDEX messages_needing_body ON messages (account_id, internal_date DESC) WHERE body_state = 0;

    -- Canonical labels: exactly what Gmail last said. Written only by sync; triage
    -- never touches this table (optimistic-mutations.md, "The design").
    CREATE TABLE message_labels (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        label      TEXT NOT NULL CHECK (label <> ''),
        PRIMARY KEY (message_id, label)
    ) WITHOUT ROWID;
    CREATE INDEX message_labels_by_label ON message_labels (label, message_id);

    -- Addresses parsed from From/To/Cc/Bcc, so from:/to: lookups are index seeks, not
    -- full-text scans (read-commands issue, "Performance design").
    CREATE TABLE message_addresses (
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        role       TEXT NOT NULL CHECK (role IN ('from', 'to', 'cc', 'bcc')),
        address    TEXT NOT NULL COLLATE NOCASE,
        name       TEXT,
        PRIMARY KEY (message_id, role, address)
    ) WITHOUT ROWID;
    CREATE INDEX message_addresses_by_address ON message_addresses (address, role, message_id);

    CREATE TABLE message_bodies (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        text       TEXT,                                -- readable text (text/plain, or HTML made text)
        html       TEXT,                                -- the original HTML part, when there is one
        fetched_at INTEGER NOT NULL
    );

    CREATE TABLE attachments (
        message_id    INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        part_id       TEXT NOT NULL,                    -- keyed by part, not attachmentId (gmail-api.md 2.4)
        filename      TEXT NOT NULL DEFAULT '',
        mime_type     TEXT NOT NULL DEFAULT 'application/octet-stream',
        size          INTEGER NOT NULL DEFAULT 0,
        attachment_id TEXT,
        content_id    TEXT,
        is_inline     INTEGER NOT NULL DEFAULT 0 CHECK (is_inline IN (0, 1)),
        PRIMARY KEY (message_id, part_id)
    ) WITHOUT ROWID;

    -- Undo: one row per hd-mark invocation, and the deltas it actually queued.
    CREATE TABLE actions (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        description TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        undoes      INTEGER REFERENCES actions(id) ON DELETE SET NULL,
        undone_by   INTEGER REFERENCES actions(id) ON DELETE SET NULL
    );

    CREATE TABLE action_items (
        action_id  INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        label      TEXT NOT NULL,
        op         TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        PRIMARY KEY (action_id, message_id, label)
    ) WITHOUT ROWID;
    CREATE INDEX action_items_by_message ON action_items (message_id);

    -- The overlay: one row per live, unconfirmed local delta (optimistic-mutations.md).
    -- At most one per (account, message, label); collisions are resolved by the store.
    CREATE TABLE mutation_queue (
        id                  INTEGER PRIMARY KEY,
        account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        message_id          INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
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
        UNIQUE (account_id, message_id, label)
    );
    CREATE INDEX mutation_queue_by_message ON mutation_queue (message_id, label);
    CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);

    -- Illegal op/state values are rejected on INSERT and on UPDATE: a table-level CHECK
    -- cannot be added to an existing table without a rebuild, so the schema uses the
    -- same pair of triggers the spec does (optimistic-mutations.md, "Crash safety").
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

    -- Effective labels, the one place the overlay rule is written:
    -- canonical, minus queued removes, plus queued adds, counting queue rows in every
    -- state (an in-flight delta is still unconfirmed). Queried with a message_id
    -- constraint, SQLite pushes it into both arms (index seeks, no scan).
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

    -- One row per thread: what the list view shows, with overlay-aware flags, so the
    -- inbox is one index range with no joins (local-first-sync.md, thread_rollup).
    CREATE TABLE thread_rollup (
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
        PRIMARY KEY (thread_id, account_id)
    ) WITHOUT ROWID;
    CREATE INDEX thread_rollup_inbox ON thread_rollup (account_id, in_inbox, last_message_at DESC, thread_id DESC);
    CREATE INDEX thread_rollup_inbox_all ON thread_rollup (in_inbox, last_message_at DESC, thread_id DESC);

    -- Effective labels per thread (any message carries it), for `hd-ls --label`.
    CREATE TABLE thread_labels (
        account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        thread_id       TEXT NOT NULL,
        label           TEXT NOT NULL,
        last_message_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, thread_id, label)
    ) WITHOUT ROWID;
    CREATE INDEX thread_labels_by_label ON thread_labels (account_id, label, last_message_at DESC, thread_id DESC);
    CREATE INDEX thread_labels_by_label_all ON thread_labels (label, last_message_at DESC, thread_id DESC);

    -- The change sequence: every write to a message moves its row to a new, higher seq
    -- (AUTOINCREMENT never reuses one), so `seq > N` is "what changed since N". A
    -- deleted message keeps its row with deleted = 1, which also guards against a stale
    -- snapshot bringing it back (deleted_history_id is its version).
    CREATE TABLE message_seq (
        seq                INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        gmail_id           TEXT NOT NULL,
        thread_id          TEXT NOT NULL,
        deleted            INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
        deleted_history_id INTEGER,
        UNIQUE (account_id, gmail_id)
    );

    -- Full text over subject, sender, recipients and body. External content (one copy of
    -- the text), read from a view over messages and bodies; its rowid is messages.id.
    CREATE VIEW fts_content (rowid, subject, sender, recipients, body) AS
        SELECT m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               b.text
          FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id;

    CREATE VIRTUAL TABLE fts_messages USING fts5 (
        subject, sender, recipients, body,
        content = 'fts_content', content_rowid = 'rowid',
        tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4'
    );

    -- The index is kept in step by triggers, so no write path can forget it. An external
    -- content index must be told the exact old values to delete, so each trigger
    -- removes the row as it was indexed and adds it as it is now.
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, NEW.subject, NEW.sender,
                coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, ''),
                (SELECT text FROM message_bodies WHERE message_id = NEW.id));
    END;

    CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, OLD.subject, OLD.sender,
                coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, ''),
                (SELECT text FROM message_bodies WHERE message_id = OLD.id));
    END;

    CREATE TRIGGER messages_fts_update AFTER UPDATE OF subject, sender, to_header, cc_header, bcc_header ON messages
    WHEN OLD.subject IS NOT NEW.subject OR OLD.sender IS NOT NEW.sender
      OR OLD.to_header IS NOT NEW.to_header OR OLD.cc_header IS NOT NEW.cc_header
      OR OLD.bcc_header IS NOT NEW.bcc_header
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, OLD.subject, OLD.sender,
                coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, ''),
                (SELECT text FROM message_bodies WHERE message_id = OLD.id));
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, NEW.subject, NEW.sender,
                coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, ''),
                (SELECT text FROM message_bodies WHERE message_id = NEW.id));
    END;

    -- A message's row leaves the index BEFORE it is deleted, while its body still exists
    -- (the cascade deletes the body first otherwise). Body triggers then act only while
    -- the message row exists, so a cascaded body delete is a no-op.
    CREATE TRIGGER message_bodies_fts_insert AFTER INSERT ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               NULL
          FROM messages AS m WHERE m.id = NEW.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               NEW.text
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    CREATE TRIGGER message_bodies_fts_update AFTER UPDATE OF text ON message_bodies
    WHEN OLD.text IS NOT NEW.text
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               OLD.text
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               NEW.text
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    CREATE TRIGGER message_bodies_fts_delete AFTER DELETE ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               OLD.text
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, m.subject, m.sender,
               coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''),
               NULL
          FROM messages AS m WHERE m.id = OLD.message_id;
    END;
    """
}
