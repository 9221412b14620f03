-- The schema of a Hudson store after every migration (Sources/HudsonStore/Schema/),
-- as SQLite keeps it: each table, index, view and trigger, by kind then name.
-- Checked by Tests/CLITests/SchemaDocumentTests.swift; a new migration updates it.
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
, keep_raw INTEGER NOT NULL DEFAULT 0 CHECK (keep_raw IN (0, 1)), agent_policy TEXT NOT NULL DEFAULT 'hold'
    CHECK (agent_policy IN ('read-only', 'drafts', 'hold', 'direct')));

CREATE TABLE "action_items" (
    action_id  INTEGER NOT NULL,                    -- actions.id (actions_forgotten deletes its items)
    message_id INTEGER NOT NULL,                    -- messages.id when queued
    gmail_id   TEXT NOT NULL,                       -- ... and the message it named then
    label      TEXT NOT NULL,
    op         TEXT NOT NULL CHECK (op IN ('add', 'remove')),
    PRIMARY KEY (action_id, message_id, label)
) WITHOUT ROWID;

CREATE TABLE actions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    description TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    undoes      INTEGER REFERENCES actions(id) ON DELETE SET NULL,
    undone_by   INTEGER REFERENCES actions(id) ON DELETE SET NULL
, origin TEXT CHECK (origin IS NULL OR origin = 'agent'), held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1)));

CREATE TABLE address_book (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    address    TEXT NOT NULL COLLATE NOCASE,
    name       TEXT,
    sent       INTEGER NOT NULL DEFAULT 0 CHECK (sent >= 0),
    received   INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0),
    seen       INTEGER NOT NULL DEFAULT 0 CHECK (seen >= 0),
    last_at    INTEGER NOT NULL,                   -- epoch ms: the newest message it is on
    PRIMARY KEY (account_id, address)
) WITHOUT ROWID;

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

CREATE TABLE drafts (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    draft_id   TEXT NOT NULL CHECK (draft_id <> ''),
    gmail_id   TEXT NOT NULL CHECK (gmail_id <> ''),           -- the draft's current message
    PRIMARY KEY (account_id, draft_id)
) WITHOUT ROWID;

CREATE TABLE export_intakes (
    export_id  TEXT PRIMARY KEY CHECK (length(export_id) = 32),
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    intake     INTEGER NOT NULL CHECK (intake > 0),
    action_id  INTEGER,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE VIRTUAL TABLE fts_messages USING fts5 (
    subject, sender, recipients, body,
    content = 'fts_content', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4'
);

CREATE TABLE 'fts_messages_config'(k PRIMARY KEY, v) WITHOUT ROWID;

CREATE TABLE 'fts_messages_data'(id INTEGER PRIMARY KEY, block BLOB);

CREATE TABLE 'fts_messages_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

CREATE TABLE 'fts_messages_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

CREATE TABLE hudson_migrations (id TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL DEFAULT (unixepoch()));

CREATE TABLE "imports" (
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

CREATE TABLE label_counts (
    account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label          TEXT NOT NULL,
    messages       INTEGER NOT NULL DEFAULT 0,
    threads        INTEGER NOT NULL DEFAULT 0,
    unread_threads INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, label)
) WITHOUT ROWID;

CREATE TABLE label_overlay (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,   -- order of sending; Hudson+seq names a created label
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label_id        TEXT NOT NULL CHECK (label_id <> ''),
    op              TEXT NOT NULL CHECK (op IN ('create', 'rename', 'delete')),
    name            TEXT COLLATE NOCASE,                 -- the name wanted; NULL for delete
    previous_name   TEXT,                                -- the name before (rename, delete), for reports
    text_color      TEXT,
    background_color TEXT,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent')),
    attempted_at    INTEGER,                             -- epoch ms; a request carrying it went out
    attempted_name  TEXT,                                -- the name that request carried (create)
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    next_attempt_at INTEGER,
    sent_at         INTEGER,                             -- epoch ms; Gmail answered
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (account_id, label_id),
    CHECK ((op = 'delete') = (name IS NULL)),
    CHECK (state <> 'sent' OR sent_at IS NOT NULL)
);

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

CREATE TABLE message_addresses (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('from', 'to', 'cc', 'bcc')),
    address    TEXT NOT NULL COLLATE NOCASE,
    name       TEXT,
    PRIMARY KEY (message_id, role, address)
) WITHOUT ROWID;

CREATE TABLE message_bodies (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text       TEXT,                                -- readable text (text/plain, or HTML made text)
    html       TEXT,                                -- the original HTML part, when there is one
    fetched_at INTEGER NOT NULL
);

CREATE TABLE message_key_exceptions (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
);

CREATE TABLE message_labels (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    label      TEXT NOT NULL CHECK (label <> ''),
    PRIMARY KEY (message_id, label)
) WITHOUT ROWID;

CREATE TABLE "message_seq" (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id         INTEGER NOT NULL,            -- accounts.id (accounts_removed deletes its rows)
    gmail_id           TEXT NOT NULL,
    thread_id          TEXT NOT NULL,
    message_id         INTEGER UNIQUE,              -- messages.id while stored; NULL once deleted
    deleted            INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    deleted_history_id INTEGER
);

CREATE TABLE message_sources (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    source     BLOB NOT NULL,
    fetched_at INTEGER NOT NULL
);

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
    body_state        INTEGER NOT NULL DEFAULT 0 CHECK (body_state IN (0, 1)), attachment_known INTEGER NOT NULL DEFAULT 0 CHECK (attachment_known IN (0, 1)), list_unsubscribe TEXT, list_unsubscribe_post TEXT, authentication_results TEXT, dkim_signatures TEXT, list_headers_known INTEGER NOT NULL DEFAULT 0 CHECK (list_headers_known IN (0, 1)),
    -- gmail_id first: a bare id on the command line is looked up without an account
    UNIQUE (gmail_id, account_id)
);

CREATE TABLE "mutation_queue" (
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
    attempted_at        INTEGER, held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1)),                    -- epoch ms; a request carrying the row went out
    UNIQUE (message_id, label),
    CHECK (state <> 'in_flight' OR expected_history_id IS NOT NULL)
);

CREATE TABLE outbox (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT, -- outbox:N, never reused
    account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    raw                BLOB NOT NULL,                     -- the RFC 822 message, CRLF; emptied once sent or cancelled
    message_id         TEXT NOT NULL CHECK (message_id GLOB '<?*@?*>'), -- what the probe searches for
    thread_id          TEXT CHECK (thread_id IS NULL OR thread_id <> ''), -- Gmail threadId of a reply
    recipients         TEXT NOT NULL DEFAULT '',          -- To, Cc and Bcc addresses, comma-separated (display)
    subject            TEXT NOT NULL DEFAULT '',          -- decoded (display)
    size               INTEGER NOT NULL CHECK (size > 0), -- bytes of the message as queued
    state              TEXT NOT NULL DEFAULT 'queued'
                       CHECK (state IN ('queued', 'sending', 'sent', 'failed', 'cancelled')),
    attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error         TEXT,
    not_before         INTEGER NOT NULL,                  -- epoch ms: the undo window ends; no attempt before
    next_attempt_at    INTEGER,                           -- epoch ms: backoff after a transient failure
    attempt_started_at INTEGER,                           -- epoch ms: the last request went out
    claimed_at         INTEGER,                           -- epoch ms: a sender holds the entry
    claim_token        INTEGER,                           -- which sender
    gmail_id           TEXT,                              -- the sent message, once known
    gmail_thread_id    TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL, attempt_history_id INTEGER, kind TEXT NOT NULL DEFAULT 'send' CHECK (kind IN ('send', 'draft', 'draft-send')), draft_id TEXT CHECK (draft_id IS NULL OR draft_id <> ''), draft_base_gmail_id TEXT, kept_beside_draft_id TEXT, note TEXT, held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1)), origin TEXT CHECK (origin IS NULL OR origin = 'agent'),
    CHECK ((state = 'sent') = (gmail_id IS NOT NULL)),
    CHECK (state <> 'failed' OR last_error IS NOT NULL),
    CHECK (state <> 'sending' OR attempt_started_at IS NOT NULL),
    CHECK (state IN ('sent', 'cancelled') OR length(raw) > 0),
    CHECK ((claimed_at IS NULL) = (claim_token IS NULL))
);

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

CREATE TABLE rejected_label_changes (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label_id    TEXT NOT NULL,
    op          TEXT NOT NULL CHECK (op IN ('create', 'rename', 'delete')),
    name        TEXT,                                    -- the name asked for (create, rename)
    previous_name TEXT,
    reason      TEXT NOT NULL,
    rejected_at INTEGER NOT NULL
);

CREATE TABLE relist_unconfirmed (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, message_id)
) WITHOUT ROWID;

CREATE TABLE rules_accounts (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    since      INTEGER NOT NULL                 -- epoch ms: new mail is internal_date >= since
);

CREATE TABLE rules_applied (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    gmail_id   TEXT NOT NULL,
    action_id  INTEGER,                         -- NULL when no rule changed it
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, gmail_id)
) WITHOUT ROWID;

CREATE TABLE scheduled_sends (
    draft_entry INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    send_at     INTEGER NOT NULL,                  -- epoch ms
    if_late     TEXT NOT NULL CHECK (if_late IN ('send', 'hold')),
    state       TEXT NOT NULL DEFAULT 'waiting'
                CHECK (state IN ('waiting', 'released', 'held-late', 'cancelled')),
    send_entry  INTEGER REFERENCES outbox(id) ON DELETE SET NULL,
    raw         BLOB NOT NULL,
    remind_at   INTEGER,                           -- epoch ms: hd-send --remind, moved to the send entry
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    CHECK (state IN ('released', 'cancelled') OR length(raw) > 0),
    CHECK ((state = 'released') = (send_entry IS NOT NULL))
);

CREATE TABLE send_reminders (
    outbox_entry INTEGER PRIMARY KEY REFERENCES outbox(id) ON DELETE CASCADE,
    account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    wake_at      INTEGER NOT NULL                  -- epoch ms
);

CREATE TABLE snooze_labels (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    label_id   TEXT NOT NULL CHECK (label_id <> '')
);

CREATE TABLE snooze_moves (
    action_id      INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
    account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id      TEXT NOT NULL CHECK (thread_id <> ''),
    kind           TEXT CHECK (kind IN ('snooze', 'remind')),  -- the row before; NULL: none
    wake_at        INTEGER,
    newest_message INTEGER,
    set_by         INTEGER,                    -- its action_id
    created_at     INTEGER,
    wake_after     INTEGER,                    -- the wake time the action left; NULL: no row
    PRIMARY KEY (action_id, account_id, thread_id),
    CHECK ((kind IS NULL) = (wake_at IS NULL) AND (kind IS NULL) = (newest_message IS NULL)
           AND (kind IS NULL) = (created_at IS NULL))
) WITHOUT ROWID;

CREATE TABLE snoozes (
    account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id      TEXT NOT NULL CHECK (thread_id <> ''),
    kind           TEXT NOT NULL CHECK (kind IN ('snooze', 'remind')),
    wake_at        INTEGER NOT NULL,           -- epoch ms
    newest_message INTEGER NOT NULL,           -- messages.id of the thread's newest member when snoozed
    action_id      INTEGER,                    -- the action that snoozed it
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (account_id, thread_id)
) WITHOUT ROWID;

CREATE TABLE sqlite_sequence(name,seq);

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

CREATE TABLE "thread_labels" (
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label           TEXT NOT NULL,
    last_message_at INTEGER NOT NULL,
    thread_id       TEXT NOT NULL,
    PRIMARY KEY (account_id, label, last_message_at DESC, thread_id DESC)
) WITHOUT ROWID;

CREATE TABLE "thread_rollup" (
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

CREATE TABLE unsubscribes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id       INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sender           TEXT NOT NULL CHECK (sender <> ''),  -- an address, or list:ID (as hd-senders groups)
    method           TEXT NOT NULL CHECK (method IN ('one-click', 'mailto', 'https')),
    target           TEXT NOT NULL,                       -- the URI, or the mailto address
    message_gmail_id TEXT,                                -- the message whose headers offered it
    -- intended: a POST may be under way (or was, when its process died: its answer is unknown)
    state            TEXT NOT NULL CHECK (state IN ('intended', 'done', 'refused', 'unknown', 'queued', 'printed')),
    answer           TEXT,                                -- the HTTP status, or why it did not succeed
    outbox_id        INTEGER,                             -- the mailto's message (outbox:N)
    created_at       INTEGER NOT NULL,                    -- epoch ms
    updated_at       INTEGER NOT NULL,
    CHECK ((method = 'mailto') = (outbox_id IS NOT NULL))
);

CREATE INDEX drafts_by_message ON drafts (account_id, gmail_id);

CREATE INDEX labels_by_name ON labels (account_id, name);

CREATE INDEX message_addresses_by_address ON message_addresses (address, role, message_id);

CREATE INDEX message_labels_by_label ON message_labels (label, message_id);

CREATE UNIQUE INDEX message_seq_deleted ON message_seq (account_id, gmail_id) WHERE deleted = 1;

CREATE INDEX messages_attachment_guessed ON messages (account_id, internal_date DESC) WHERE attachment_known = 0;

CREATE INDEX messages_by_rfc822_id ON messages (message_id_header) WHERE message_id_header IS NOT NULL;

CREATE INDEX messages_by_size ON messages (size_estimate);

CREATE INDEX messages_by_thread ON messages (thread_id, account_id, internal_date, gmail_id);

CREATE INDEX messages_needing_body ON messages (account_id, internal_date DESC) WHERE body_state = 0;

CREATE INDEX messages_thread_by_key ON messages (id, thread_id, account_id);

CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);

CREATE UNIQUE INDEX outbox_by_message_id ON outbox (account_id, message_id, kind) WHERE state <> 'cancelled';

CREATE INDEX outbox_unfinished ON outbox (account_id, not_before) WHERE state IN ('queued', 'sending');

CREATE INDEX rejected_changes_by_action ON rejected_changes (action_id) WHERE action_id IS NOT NULL;

CREATE INDEX rejected_changes_by_time ON rejected_changes (rejected_at);

CREATE INDEX rejected_label_changes_by_time ON rejected_label_changes (rejected_at);

CREATE INDEX relist_unconfirmed_by_message ON relist_unconfirmed (message_id);

CREATE INDEX scheduled_sends_waiting ON scheduled_sends (account_id, send_at) WHERE state = 'waiting';

CREATE INDEX snoozes_by_wake ON snoozes (account_id, wake_at);

CREATE INDEX sync_parked_due ON sync_parked (account_id, stage, next_attempt_at);

CREATE UNIQUE INDEX thread_rollup_by_thread ON thread_rollup (thread_id, account_id);

CREATE INDEX unsubscribes_by_sender ON unsubscribes (account_id, sender);

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

CREATE VIEW fts_content (rowid, subject, sender, recipients, body) AS
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(b.text, m.snippet))
      FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id;

CREATE VIEW shown_labels (account_id, id, name, type, message_list_visibility, label_list_visibility,
                          text_color, background_color, local_op, local_state) AS
    SELECT l.account_id, l.id, coalesce(o.name, l.name), coalesce(l.type, CASE WHEN o.op IS NOT NULL THEN 'user' END),
           l.message_list_visibility, l.label_list_visibility,
           coalesce(o.text_color, l.text_color), coalesce(o.background_color, l.background_color), o.op, o.state
      FROM labels AS l
      LEFT JOIN label_overlay AS o ON o.account_id = l.account_id AND o.label_id = l.id
     WHERE o.op IS NULL OR o.op <> 'delete'
    UNION ALL
    SELECT o.account_id, o.label_id, o.name, 'user', 'show', 'labelShow', o.text_color, o.background_color, o.op, o.state
      FROM label_overlay AS o
     WHERE o.op IN ('create', 'rename')   -- a rename: of a label created here, not listed yet
       AND NOT EXISTS (SELECT 1 FROM labels AS l WHERE l.account_id = o.account_id AND l.id = o.label_id);

CREATE TRIGGER accounts_removed AFTER DELETE ON accounts BEGIN
    DELETE FROM mutation_queue WHERE account_id = OLD.id;
    DELETE FROM message_seq WHERE account_id = OLD.id;
END;

CREATE TRIGGER actions_forgotten AFTER DELETE ON actions BEGIN
    DELETE FROM action_items WHERE action_id = OLD.id;
    UPDATE mutation_queue SET action_id = NULL WHERE action_id = OLD.id;
END;

CREATE TRIGGER address_book_delete AFTER DELETE ON message_addresses BEGIN
    UPDATE address_book SET
           sent = max(0, address_book.sent - (OLD.role <> 'from' AND s.is_sent)),
           received = max(0, address_book.received - (OLD.role = 'from' AND NOT s.is_sent)),
           seen = max(0, address_book.seen - 1)
      FROM messages AS m,
           (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = OLD.message_id AND label = 'SENT') AS is_sent) AS s
     WHERE m.id = OLD.message_id AND address_book.account_id = m.account_id AND address_book.address = OLD.address;
    DELETE FROM address_book
     WHERE address = OLD.address AND seen = 0
       AND account_id = (SELECT account_id FROM messages WHERE id = OLD.message_id);
END;

CREATE TRIGGER address_book_insert AFTER INSERT ON message_addresses BEGIN
    INSERT INTO address_book (account_id, address, name, sent, received, seen, last_at)
    SELECT m.account_id, NEW.address, NEW.name,
           NEW.role <> 'from' AND s.is_sent, NEW.role = 'from' AND NOT s.is_sent, 1, m.internal_date
      FROM messages AS m,
           (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = NEW.message_id AND label = 'SENT') AS is_sent) AS s
     WHERE m.id = NEW.message_id
    ON CONFLICT (account_id, address) DO UPDATE SET
       sent = sent + excluded.sent, received = received + excluded.received, seen = seen + 1,
       name = CASE WHEN excluded.name IS NOT NULL AND (name IS NULL OR excluded.last_at >= last_at)
                   THEN excluded.name ELSE name END,
       last_at = max(last_at, excluded.last_at);
END;

CREATE TRIGGER address_book_message_delete BEFORE DELETE ON messages BEGIN
    UPDATE address_book
       SET sent = max(0, address_book.sent - d.sent), received = max(0, address_book.received - d.received),
           seen = max(0, address_book.seen - d.seen)
      FROM (SELECT a.address,
                   sum(a.role <> 'from' AND s.is_sent) AS sent, sum(a.role = 'from' AND NOT s.is_sent) AS received,
                   count(*) AS seen
              FROM message_addresses AS a,
                   (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = OLD.id AND label = 'SENT') AS is_sent) AS s
             WHERE a.message_id = OLD.id GROUP BY a.address) AS d
     WHERE address_book.account_id = OLD.account_id AND address_book.address = d.address;
    DELETE FROM address_book
     WHERE account_id = OLD.account_id AND seen = 0
       AND address IN (SELECT address FROM message_addresses WHERE message_id = OLD.id);
END;

CREATE TRIGGER label_counts_canonical_delete AFTER DELETE ON message_labels
WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = OLD.message_id AND q.label = OLD.label)
BEGIN
    UPDATE label_counts SET messages = messages - 1
     WHERE label = OLD.label AND account_id = (SELECT m.account_id FROM messages AS m WHERE m.id = OLD.message_id);
END;

CREATE TRIGGER label_counts_canonical_insert AFTER INSERT ON message_labels
WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = NEW.message_id AND q.label = NEW.label)
BEGIN
    INSERT INTO label_counts (account_id, label, messages)
        SELECT m.account_id, NEW.label, 1 FROM messages AS m WHERE m.id = NEW.message_id
        ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + 1;
END;

CREATE TRIGGER label_counts_message_delete BEFORE DELETE ON messages BEGIN
    UPDATE label_counts SET messages = messages - 1
     WHERE account_id = OLD.account_id
       AND label IN (SELECT el.label FROM effective_labels AS el WHERE el.message_id = OLD.id);
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

CREATE TRIGGER message_bodies_fts_delete AFTER DELETE ON message_bodies BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(OLD.text, m.snippet))
      FROM messages AS m WHERE m.id = OLD.message_id;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
      FROM messages AS m WHERE m.id = OLD.message_id;
END;

CREATE TRIGGER message_bodies_fts_insert AFTER INSERT ON message_bodies BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
      FROM messages AS m WHERE m.id = NEW.message_id;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(NEW.text, m.snippet))
      FROM messages AS m WHERE m.id = NEW.message_id;
END;

CREATE TRIGGER message_bodies_fts_update AFTER UPDATE OF text ON message_bodies
WHEN OLD.text IS NOT NEW.text
BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(OLD.text, m.snippet))
      FROM messages AS m WHERE m.id = OLD.message_id;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(NEW.text, m.snippet))
      FROM messages AS m WHERE m.id = NEW.message_id;
END;

CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    VALUES ('delete', OLD.id, hudson_indexed_v1(OLD.subject), hudson_indexed_v1(OLD.sender), hudson_indexed_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = OLD.id), OLD.snippet)));
END;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    VALUES (NEW.id, hudson_indexed_v1(NEW.subject), hudson_indexed_v1(NEW.sender), hudson_indexed_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = NEW.id), NEW.snippet)));
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF subject, sender, to_header, cc_header, bcc_header, snippet ON messages
WHEN OLD.subject IS NOT NEW.subject OR OLD.sender IS NOT NEW.sender
  OR OLD.to_header IS NOT NEW.to_header OR OLD.cc_header IS NOT NEW.cc_header
  OR OLD.bcc_header IS NOT NEW.bcc_header OR OLD.snippet IS NOT NEW.snippet
BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    VALUES ('delete', OLD.id, hudson_indexed_v1(OLD.subject), hudson_indexed_v1(OLD.sender), hudson_indexed_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = OLD.id), OLD.snippet)));
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    VALUES (NEW.id, hudson_indexed_v1(NEW.subject), hudson_indexed_v1(NEW.sender), hudson_indexed_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = NEW.id), NEW.snippet)));
END;

CREATE TRIGGER messages_key_exception_insert AFTER INSERT ON messages
WHEN NEW.id NOT BETWEEN NEW.internal_date * 1000 AND NEW.internal_date * 1000 + 999
BEGIN
    INSERT OR IGNORE INTO message_key_exceptions (message_id) VALUES (NEW.id);
END;

CREATE TRIGGER messages_key_exception_update AFTER UPDATE OF internal_date ON messages
WHEN OLD.internal_date IS NOT NEW.internal_date
BEGIN
    DELETE FROM message_key_exceptions WHERE message_id = NEW.id;
    INSERT INTO message_key_exceptions (message_id)
        SELECT NEW.id WHERE NEW.id NOT BETWEEN NEW.internal_date * 1000 AND NEW.internal_date * 1000 + 999;
END;

CREATE TRIGGER outbox_legal_transition BEFORE UPDATE OF state ON outbox
WHEN OLD.state <> NEW.state AND NOT (
       (OLD.state = 'queued'  AND NEW.state IN ('sending', 'cancelled', 'failed'))
    OR (OLD.state = 'sending' AND NEW.state IN ('queued', 'sent', 'failed'))
    OR (OLD.state = 'failed'  AND NEW.state = 'cancelled'))
BEGIN
    SELECT RAISE(ABORT, 'outbox: illegal state change');
END;

CREATE TRIGGER outbox_message_fixed BEFORE UPDATE OF account_id, message_id, thread_id, raw ON outbox
WHEN OLD.account_id <> NEW.account_id OR OLD.message_id <> NEW.message_id OR OLD.thread_id IS NOT NEW.thread_id
  OR (OLD.raw <> NEW.raw AND NOT (length(NEW.raw) = 0 AND NEW.state IN ('sent', 'cancelled')))
BEGIN
    SELECT RAISE(ABORT, 'outbox: a queued message cannot change');
END;

CREATE TRIGGER snooze_label_follows_creation AFTER UPDATE OF label_id ON label_overlay
BEGIN
    UPDATE snooze_labels SET label_id = NEW.label_id
     WHERE account_id = NEW.account_id AND label_id = OLD.label_id;
END;

