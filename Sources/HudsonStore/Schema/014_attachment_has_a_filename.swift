/*!
 Migration 014_attachment_has_a_filename:
 Gmail's attachment is a part with a non-empty filename (the API's `filename` field;
 gmail-api.md §8): `has:attachment` follows it. Hudson had counted every part that is
 not text (an unnamed inline image, a signature, a calendar part) and matched 109
 messages of a corpus where Gmail's definition gives 92. Messages whose body is
 stored are decided again from their parts, and their threads' flags with them.
 (Without a body only the Content-Type is known: multipart/mixed stays the guess.)
 */
extension Schema {
    static let attachmentHasAFilename = """
    UPDATE messages
       SET has_attachment = EXISTS (SELECT 1 FROM attachments AS a WHERE a.message_id = messages.id AND a.filename <> '')
     WHERE body_state = 1;
    UPDATE thread_rollup
       SET has_attachment = EXISTS (SELECT 1 FROM messages AS m
                                     WHERE m.account_id = thread_rollup.account_id AND m.thread_id = thread_rollup.thread_id
                                       AND m.has_attachment = 1);
    """
}
