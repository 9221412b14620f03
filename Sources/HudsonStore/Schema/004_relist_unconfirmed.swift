/*!
 Migration 004_relist_unconfirmed:
 After an expired history cursor the window is listed again ("Cursor expiry"), but
 a listing only adds and updates: a message deleted, or moved to spam or trash,
 while the cursor was expired is not in it and would stay as it was. So the re-list
 starts with every stored message of the account here; the listing takes out what
 it lists, and what is left when it ends is fetched once more (Store+Relist).
 */
extension Schema {
    static let relistUnconfirmed = """
    CREATE TABLE relist_unconfirmed (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        PRIMARY KEY (account_id, message_id)
    ) WITHOUT ROWID;
    CREATE INDEX relist_unconfirmed_by_message ON relist_unconfirmed (message_id);
    """
}
