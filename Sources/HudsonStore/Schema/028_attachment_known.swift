/*!
 Migration 028_attachment_known:
 Whether `has_attachment` is Gmail's answer or a guess (issue 37 §4). Before a body
 is stored, the flag was a guess from the top-level Content-Type (multipart/mixed),
 wrong for a digest or a mixed message of text parts, and for a lone PDF. It is
 known once the body's parts are stored (a part with a filename, gmail-api.md §8) or
 once Gmail has answered `has:attachment` for the message (HudsonSync's
 AttachmentCensus); search says how many of its matches still rest on a guess. The
 partial index is the census's work-list, newest first.
 */
extension Schema {
    static let attachmentKnown = """
    ALTER TABLE messages ADD COLUMN attachment_known INTEGER NOT NULL DEFAULT 0 CHECK (attachment_known IN (0, 1));
    UPDATE messages SET attachment_known = 1 WHERE body_state = 1;
    CREATE INDEX messages_attachment_guessed ON messages (account_id, internal_date DESC) WHERE attachment_known = 0;
    """
}
