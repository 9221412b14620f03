/*!
 Migration 012_drafts:
 Gmail drafts (gmail-api.md §2.12). A draft is an id naming one message labelled
 DRAFT; the message is stored like any other (sync brings it, and a draft edited on
 another device arrives as its old message deleted and a new one added), and `drafts`
 maps each draft id to its current message, from `drafts.list`. The outbox carries
 drafts on their way too: `kind` 'draft' saves a message as a draft (`draft_id` NULL:
 create; set: update that draft), 'draft-send' sends the draft `draft_id` once. The
 one-live-entry rule becomes one per Message-ID and kind: a draft and the sending of
 that draft share its Message-ID.
 */
extension Schema {
    static let drafts = """
    CREATE TABLE drafts (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        draft_id   TEXT NOT NULL CHECK (draft_id <> ''),
        gmail_id   TEXT NOT NULL CHECK (gmail_id <> ''),           -- the draft's current message
        PRIMARY KEY (account_id, draft_id)
    ) WITHOUT ROWID;
    CREATE INDEX drafts_by_message ON drafts (account_id, gmail_id);
    ALTER TABLE outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'send' CHECK (kind IN ('send', 'draft', 'draft-send'));
    ALTER TABLE outbox ADD COLUMN draft_id TEXT CHECK (draft_id IS NULL OR draft_id <> '');
    DROP INDEX outbox_by_message_id;
    CREATE UNIQUE INDEX outbox_by_message_id ON outbox (account_id, message_id, kind) WHERE state <> 'cancelled';
    """
}
