/*!
 New mail, as the rules file (Rules.swift) and `hd-sync --watch --exec` mean it: an
 account's messages Gmail received (their internal date) at or after a moment. Whether a
 message was stored by the history poll, a re-list after history expiry or a backfill
 page does not matter; when Gmail received it does, so mail older than the moment is
 never new, however late it is stored. A draft is not mail that arrived (each autosave
 is a new message of the moment): Gmail's filters leave drafts alone, and so does this.
 */
import SQLite

extension Store {
    /// The condition on `messages AS m` selecting new mail of account `?1` received at or
    /// after `?2` (epoch ms). Message keys follow dates (Snapshots.allocateMessageKey), so
    /// the key range is read off the primary key; the listed exceptions are added.
    static let receivedSince = """
        m.account_id = ?1 AND m.internal_date >= ?2
        AND (m.id >= ?2 * 1000 OR m.id IN (SELECT message_id FROM message_key_exceptions))
        AND NOT \(EffectiveLabels.carries(messageColumn: "m.id", label: "'DRAFT'"))
        """

    /// The account's messages received at or after `since` (epoch ms), oldest first.
    public func messagesReceived(accountID: Int64, since: Int64) throws -> [String] {
        try db.read {
            try db.map("SELECT m.gmail_id FROM messages AS m WHERE \(Self.receivedSince) ORDER BY m.id",
                       accountID, since) { $0.string(0) }
        }
    }
}
