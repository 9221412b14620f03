/*!
 Migration 011_label_objects:
 Labels as objects (issue 21 §2), local-first like triage. `labels` stays canonical
 (written only by sync, from labels.list); what the user asked for and Gmail has not
 confirmed yet lives in `label_overlay`, one row per label:

 - `create`: a label made here. Its id is provisional (`Hudson+N`, which no Gmail id
   looks like) until the flusher creates it at Gmail and maps every use of the
   provisional id to Gmail's in one transaction; then it waits, `sent`, for a
   labels.list that lists it.
 - `rename`: a new name for a label Gmail has, sent with labels.patch.
 - `delete`: a label hidden at once; its messages lose it through queued removes
   (mutation_queue), which the flusher never sends itself: labels.delete removes the
   label from every message, and they retire on its history echo.

 `state`: `pending` (to send), `sent` (Gmail answered; waiting for labels.list to
 agree, so a listing can never bring an old name back). `attempted_at` and
 `attempted_name` are set, durably, before a create goes out: a create whose answer
 was lost is looked up by that name before it is sent again, never sent twice.

 `shown_labels` is the one definition of the labels every command shows: canonical,
 with renames applied, deletions hidden, and provisional labels added.
 */
extension Schema {
    static let labelObjects = """
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
    CREATE INDEX rejected_label_changes_by_time ON rejected_label_changes (rejected_at);

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
    """
}
