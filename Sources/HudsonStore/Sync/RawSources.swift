/*!
 RFC 822 sources kept in the store (issue 24 §1, migration 018): an account that keeps
 them (`accounts.keep_raw`, `hd-auth set EMAIL keep-raw on`) has each message's source
 stored with its body, so `hd-show --raw` and `hd-export` need no network for it.
 */
import SQLite

extension Store {
    /// Turns keeping sources on or off for an account. Sources already stored stay.
    public func setKeepRaw(_ on: Bool, accountID: Int64) throws {
        try db.write { try db.execute("UPDATE accounts SET keep_raw = ? WHERE id = ?", on, accountID) }
    }

    /// Stores a message's source, inside the caller's write.
    func saveSource(_ source: [UInt8], messageKey: Int64) throws {
        try db.execute("""
            INSERT INTO message_sources (message_id, source, fetched_at) VALUES (?, ?, ?)
            ON CONFLICT (message_id) DO UPDATE SET source = excluded.source, fetched_at = excluded.fetched_at
            """, messageKey, SQLiteValue.blob(source), now)
    }

    /// Stores sources fetched outside hydration (`hd-export` for messages hydrated before
    /// the account kept sources), in one transaction. Messages no longer stored are skipped.
    public func saveSources(_ sources: [(gmailID: String, source: [UInt8])], accountID: Int64) throws {
        guard !sources.isEmpty else { return }
        try db.write {
            for item in sources {
                guard let key = try messageKey(gmailID: item.gmailID, accountID: accountID) else { continue }
                try saveSource(item.source, messageKey: key)
            }
        }
    }

    /// The stored source of a message, or nil.
    public func source(gmailID: String, accountID: Int64) throws -> [UInt8]? {
        guard let key = try messageKey(gmailID: gmailID, accountID: accountID) else { return nil }
        return try db.first("SELECT source FROM message_sources WHERE message_id = ?", key, transform: { $0.blob(0) })
    }

    /// How many of an account's messages have a stored source, and how many bytes they take.
    public func sourceTotals(accountID: Int64) throws -> (count: Int, bytes: Int64) {
        try db.first("""
            SELECT count(*), coalesce(sum(length(s.source)), 0)
              FROM message_sources AS s JOIN messages AS m ON m.id = s.message_id WHERE m.account_id = ?
            """, accountID, transform: { (count: $0.int(0), bytes: $0.int64(1)) }) ?? (0, 0)
    }
}
