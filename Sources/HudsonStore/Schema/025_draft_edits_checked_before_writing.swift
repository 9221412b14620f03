/*!
 Migration 025: what the outbox needs to write a draft without overwriting an edit made on
 another device (issue 37 §5). Gmail's `drafts.update` and `drafts.send` are blind (no
 precondition, gmail-api.md §2.12), so the sender reads the draft first and compares its
 message id with the one the local version was based on:

 - `draft_base_gmail_id`: the draft's message an update (kind 'draft' with a draft id) or
   a send of a draft ('draft-send') was based on, as the store or Gmail had it then;
 - `kept_beside_draft_id`: an update whose draft had changed (or gone) elsewhere is saved
   as a new draft instead; this is the draft it was meant to replace, kept as it is;
 - `note`: why (the draft "changed on another device", or was "deleted or sent on another
   device"), for hd-send, hd-sync, hd-pending and hd-drafts list to say so;
 - queued -> failed becomes a legal change: the sending of a draft changed elsewhere since
   it was read is refused before any request goes out.
 */
extension Schema {
    static let draftEditsCheckedBeforeWriting = """
    ALTER TABLE outbox ADD COLUMN draft_base_gmail_id TEXT;
    ALTER TABLE outbox ADD COLUMN kept_beside_draft_id TEXT;
    ALTER TABLE outbox ADD COLUMN note TEXT;
    DROP TRIGGER outbox_legal_transition;
    CREATE TRIGGER outbox_legal_transition BEFORE UPDATE OF state ON outbox
    WHEN OLD.state <> NEW.state AND NOT (
           (OLD.state = 'queued'  AND NEW.state IN ('sending', 'cancelled', 'failed'))
        OR (OLD.state = 'sending' AND NEW.state IN ('queued', 'sent', 'failed'))
        OR (OLD.state = 'failed'  AND NEW.state = 'cancelled'))
    BEGIN
        SELECT RAISE(ABORT, 'outbox: illegal state change');
    END;
    """
}
