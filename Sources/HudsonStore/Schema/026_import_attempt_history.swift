/*!
 Migration 026_import_attempt_history:
 hd-import's probe reads Gmail's history as well as its search (HudsonSync's
 MessageProbe, issue 37 §2): the mailbox's history id taken before an import's first
 attempt went out, from which a message Gmail stored appears as messageAdded.
 */
extension Schema {
    static let importAttemptHistory = """
    ALTER TABLE imports ADD COLUMN attempt_history_id INTEGER; -- getProfile's historyId before the first attempt
    """
}
