/*!
 Migration 035_list_headers (issue 42): each message's unsubscribe offer and what vouches
 for it (Senders/ListHeaders.swift), and whether they are known: sync's metadata asks for
 them from now on (`list_headers_known = 1`); a message stored before is filled here from
 its stored RFC 822 source, when the account kept one, and stays unknown otherwise
 (`Store.listHeaderCoverage` counts them; `hd-senders` says how many).

 The hudson_list_*_v1 functions read a source's header block (ListHeaders(source:)); they
 are defined on every connection that can migrate (Store.open) and must never change
 their answers, like hudson_shown_v1.

 `unsubscribes` records every unsubscribe `hd-unsubscribe` made or began (Senders/
 Unsubscribes.swift): a one-click POST is recorded as `intended` and committed before
 its request goes out, so a process killed mid-request leaves a row that says the POST
 may have been made, and no run ever makes it a second time without being asked.
 */
extension Schema {
    static let listHeaders = """
    ALTER TABLE messages ADD COLUMN list_unsubscribe TEXT;
    ALTER TABLE messages ADD COLUMN list_unsubscribe_post TEXT;
    ALTER TABLE messages ADD COLUMN authentication_results TEXT;
    ALTER TABLE messages ADD COLUMN dkim_signatures TEXT;      -- d=; s=; h= of each DKIM-Signature, one a line
    ALTER TABLE messages ADD COLUMN list_headers_known INTEGER NOT NULL DEFAULT 0 CHECK (list_headers_known IN (0, 1));

    UPDATE messages SET
           list_unsubscribe = nullif(hudson_list_unsubscribe_v1(s.source), ''),
           list_unsubscribe_post = nullif(hudson_list_unsubscribe_post_v1(s.source), ''),
           authentication_results = nullif(hudson_authentication_results_v1(s.source), ''),
           dkim_signatures = nullif(hudson_dkim_signatures_v1(s.source), ''),
           list_headers_known = 1
      FROM message_sources AS s
     WHERE s.message_id = messages.id;

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
    CREATE INDEX unsubscribes_by_sender ON unsubscribes (account_id, sender);
    """
}
