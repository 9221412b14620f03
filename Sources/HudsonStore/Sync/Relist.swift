/*!
 What a re-list after an expired history cursor must settle besides what it lists
 (sync-engine-reference.md "Cursor expiry": "fetch a fresh cursor, reset backfill to
 pending, re-list"). A listing only adds and updates, so a message deleted, or moved
 to spam or trash, while history was expired would stay in the store as it was:
 Gmail's truth would never reach it. `resetForExpiredCursor` puts every stored message
 of the account in `relist_unconfirmed`; each listed page takes its messages out; when
 the listing is complete, sync fetches what is left once more — a 404 tombstones it,
 anything else is applied through the version guard — and confirms it.
 */
import SQLite

extension Store {
    /// Takes listed messages out of the re-list's unconfirmed set (inside a write).
    func confirmListed(_ gmailIDs: [String], accountID: Int64) throws {
        guard try db.scalarInt("SELECT 1 FROM relist_unconfirmed WHERE account_id = ? LIMIT 1", accountID) != nil else { return }
        for id in gmailIDs {
            try db.execute("""
                DELETE FROM relist_unconfirmed
                 WHERE account_id = ? AND message_id = (SELECT id FROM messages WHERE account_id = ? AND gmail_id = ?)
                """, accountID, accountID, id)
        }
    }

    /// Confirms messages fetched after the re-list (or that cannot be fetched for good).
    public func confirmRelisted(_ gmailIDs: [String], accountID: Int64) throws {
        try db.write { try confirmListed(gmailIDs, accountID: accountID) }
    }

    /// Stored messages a complete re-list did not list, to be fetched again; empty while
    /// the listing is still running, and outside a re-list.
    public func messagesUnconfirmedByRelist(accountID: Int64, limit: Int) throws -> [String] {
        try db.read {
            let complete = try db.scalarString("SELECT backfill_state FROM accounts WHERE id = ?", accountID) == BackfillState.complete.rawValue
            guard complete else { return [] }
            return try db.map("""
                SELECT m.gmail_id FROM relist_unconfirmed AS r JOIN messages AS m ON m.id = r.message_id
                 WHERE r.account_id = ? ORDER BY m.internal_date DESC, m.id DESC LIMIT ?
                """, accountID, limit) { $0.string(0) }
        }
    }
}
