/*!
 Migration 002_outbox:
 Messages on their way to Gmail (docs/architecture.md, "The outbox"). Sending is the
 one write that is not idempotent (optimistic-mutations.md), so the state machine
 records *before* each request that a request may be out: an entry left in 'sending'
 by a sender that is gone is one whose outcome is unknown, and it is looked for
 (`rfc822msgid:`) before it may be sent again. A new table, so plain CHECKs guard its
 values; a trigger guards the transitions, and another the message itself.
 */
extension Schema {
    static let outbox = """
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
        updated_at         INTEGER NOT NULL,
        CHECK ((state = 'sent') = (gmail_id IS NOT NULL)),
        CHECK (state <> 'failed' OR last_error IS NOT NULL),
        CHECK (state <> 'sending' OR attempt_started_at IS NOT NULL),
        CHECK (state IN ('sent', 'cancelled') OR length(raw) > 0),
        CHECK ((claimed_at IS NULL) = (claim_token IS NULL))
    );
    -- One live entry per message: a Message-ID queued twice would be sent twice, or found
    -- by the probe of the other and never sent.
    CREATE UNIQUE INDEX outbox_by_message_id ON outbox (account_id, message_id) WHERE state <> 'cancelled';
    CREATE INDEX outbox_unfinished ON outbox (account_id, not_before) WHERE state IN ('queued', 'sending');

    -- queued -> sending -> sent, or failed; sending -> queued only after a refusal that
    -- proves nothing was sent (a rate limit); queued or failed -> cancelled (hd-undo).
    CREATE TRIGGER outbox_legal_transition BEFORE UPDATE OF state ON outbox
    WHEN OLD.state <> NEW.state AND NOT (
           (OLD.state = 'queued'  AND NEW.state IN ('sending', 'cancelled'))
        OR (OLD.state = 'sending' AND NEW.state IN ('queued', 'sent', 'failed'))
        OR (OLD.state = 'failed'  AND NEW.state = 'cancelled'))
    BEGIN
        SELECT RAISE(ABORT, 'outbox: illegal state change');
    END;

    -- The message never changes once queued: the probe relies on its Message-ID, and what
    -- was confirmed must be what was sent. Its bytes may only be let go when it is done.
    CREATE TRIGGER outbox_message_fixed BEFORE UPDATE OF account_id, message_id, thread_id, raw ON outbox
    WHEN OLD.account_id <> NEW.account_id OR OLD.message_id <> NEW.message_id OR OLD.thread_id IS NOT NEW.thread_id
      OR (OLD.raw <> NEW.raw AND NOT (length(NEW.raw) = 0 AND NEW.state IN ('sent', 'cancelled')))
    BEGIN
        SELECT RAISE(ABORT, 'outbox: a queued message cannot change');
    END;
    """
}
