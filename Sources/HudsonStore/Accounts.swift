/*!
 Accounts and their sync state: the history cursor, the consent anchor and lookback
 that fix the backfill window, and backfill progress (local-first-sync.md: "Progress
 is stored in the accounts row, so a quit mid-backfill resumes where it left off").
 */
import SQLite

public enum BackfillState: String, Sendable {
    case pending, running, complete
}

public struct Account: Equatable, Sendable {
    public var id: Int64
    public var email: String
    /// The history cursor: every change up to it has been applied. Nil before the first sync.
    public var historyID: Int64?
    /// When the user consented, in epoch seconds: the fixed anchor of the backfill window.
    public var consentedAt: Int64
    public var lookbackDays: Int
    public var backfillState: BackfillState
    public var backfillPageToken: String?
    /// Lower bound (epoch seconds) of the backfill listing; nil lists the whole mailbox.
    public var backfillAfter: Int64?
    /// Upper bound (epoch seconds) while an older range is backfilled after widening.
    public var backfillBefore: Int64?
    public var backfillListed: Int
    public var backfillEstimate: Int?
    public var createdAt: Int64
    public var lastSyncAt: Int64?
    public var lastHistoryAt: Int64?
    public var lastBackfillAt: Int64?
    public var labelsSyncedAt: Int64?
    /// Whether hydration keeps each message's RFC 822 source (migration 018, `hd-auth set`).
    public var keepRaw: Bool = false

    /// The Gmail `q` of the backfill listing. It is built from stored epoch seconds only,
    /// so every page, including one resumed days later, has the same filter
    /// (sync-engine-reference.md, "The anchor is consentedAt, not now()").
    public var backfillQuery: String? {
        var terms: [String] = []
        if let backfillAfter { terms.append("after:\(backfillAfter)") }
        if let backfillBefore { terms.append("before:\(backfillBefore)") }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }
}

/// The system labels every Gmail mailbox has. Seeded when an account is added, so label
/// names resolve before the first labels.list (gmail-api.md, "IDs").
let systemLabelIDs = [
    "INBOX", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "SENT", "DRAFT", "CHAT",
    "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS",
]

extension Store {
    static let accountColumns = """
        id, email, history_id, consented_at, lookback_days, backfill_state, backfill_page_token,
        backfill_after, backfill_before, backfill_listed, backfill_estimate, created_at,
        last_sync_at, last_history_at, last_backfill_at, labels_synced_at, keep_raw
        """

    static func account(from row: Row) -> Account {
        Account(
            id: row.int64(0), email: row.string(1), historyID: row.optionalInt64(2),
            consentedAt: row.int64(3), lookbackDays: row.int(4),
            backfillState: BackfillState(rawValue: row.string(5)) ?? .pending,
            backfillPageToken: row.optionalString(6), backfillAfter: row.optionalInt64(7),
            backfillBefore: row.optionalInt64(8), backfillListed: row.int(9),
            backfillEstimate: row.optionalInt(10), createdAt: row.int64(11),
            lastSyncAt: row.optionalInt64(12), lastHistoryAt: row.optionalInt64(13),
            lastBackfillAt: row.optionalInt64(14), labelsSyncedAt: row.optionalInt64(15),
            keepRaw: row.bool(16))
    }

    /// Adds an account. `consentedAt` (epoch seconds) and `lookbackDays` fix the backfill
    /// window for good: `after:<consentedAt - lookbackDays days>`, none when lookback is 0.
    @discardableResult
    public func addAccount(email: String, consentedAt: Int64, lookbackDays: Int = 90) throws -> Account {
        guard !email.isEmpty, email.contains("@") else {
            throw StoreError.invalidArgument("\(email): not an email address")
        }
        guard lookbackDays >= 0 else {
            throw StoreError.invalidArgument("lookback days must be 0 or more")
        }
        return try db.write {
            if try account(email: email) != nil { throw StoreError.accountExists(email) }
            let after: Int64? = lookbackDays == 0 ? nil : consentedAt - Int64(lookbackDays) * 86_400
            try db.execute(
                "INSERT INTO accounts (email, consented_at, lookback_days, backfill_after, created_at) VALUES (?, ?, ?, ?, ?)",
                email, consentedAt, lookbackDays, after, now)
            let id = db.lastInsertRowID
            for label in systemLabelIDs {
                try db.execute(
                    "INSERT OR IGNORE INTO labels (account_id, id, name, type) VALUES (?, ?, ?, 'system')",
                    id, label, label)
            }
            guard let account = try account(id: id) else { throw StoreError.unknownAccount(email) }
            return account
        }
    }

    public func accounts() throws -> [Account] {
        try db.map("SELECT \(Self.accountColumns) FROM accounts ORDER BY email", transform: Self.account(from:))
    }

    /// The account with this address, compared case-insensitively.
    public func account(email: String) throws -> Account? {
        try db.first("SELECT \(Self.accountColumns) FROM accounts WHERE email = ?", email, transform: Self.account(from:))
    }

    public func account(id: Int64) throws -> Account? {
        try db.first("SELECT \(Self.accountColumns) FROM accounts WHERE id = ?", id, transform: Self.account(from:))
    }

    /// The account, or `StoreError.unknownAccount`.
    public func requireAccount(email: String) throws -> Account {
        guard let account = try account(email: email) else { throw StoreError.unknownAccount(email) }
        return account
    }

    /// Deletes the account and everything stored for it (messages, labels, queue, rollup,
    /// index entries). Returns false when there was no such account.
    @discardableResult
    public func removeAccount(email: String) throws -> Bool {
        try db.write {
            guard let account = try account(email: email) else { return false }
            // Delete messages first, in one statement, so the index triggers run per row
            // while the account still exists; the cascade then removes the rest.
            try db.execute("DELETE FROM messages WHERE account_id = ?", account.id)
            try db.execute("DELETE FROM accounts WHERE id = ?", account.id)
            return true
        }
    }

    // MARK: - Cursor

    /// Records the cursor before the first list call (sync-engine-reference.md,
    /// ensureCursor). Does nothing when one is already recorded; returns the cursor.
    @discardableResult
    public func recordInitialCursor(accountID: Int64, historyID: Int64) throws -> Int64 {
        guard historyID > 0 else { throw StoreError.invalidArgument("history id must be positive") }
        return try db.write {
            try db.execute("UPDATE accounts SET history_id = ? WHERE id = ? AND history_id IS NULL", historyID, accountID)
            guard let cursor = try db.scalarInt("SELECT history_id FROM accounts WHERE id = ?", accountID) else {
                throw StoreError.unknownAccount("#\(accountID)")
            }
            return cursor
        }
    }

    /// Moves the cursor forward, once per poll, after the last page has been applied
    /// ("The cursor is committed once per poll, not per page"). Never moves it back.
    public func advanceCursor(accountID: Int64, to historyID: Int64) throws {
        try db.write {
            try db.execute(
                "UPDATE accounts SET history_id = max(coalesce(history_id, 0), ?), last_history_at = ? WHERE id = ?",
                historyID, now, accountID)
        }
    }

    /// History expired (a 404 from history.list): take the fresh cursor and reset backfill
    /// to pending over the whole window; the re-list runs on a later pass. Every stored
    /// message is unconfirmed until the re-list lists it (see `relistUnconfirmed`).
    public func resetForExpiredCursor(accountID: Int64, freshHistoryID: Int64) throws {
        guard freshHistoryID > 0 else { throw StoreError.invalidArgument("history id must be positive") }
        try db.write {
            try db.execute("DELETE FROM relist_unconfirmed WHERE account_id = ?", accountID)
            try db.execute("INSERT INTO relist_unconfirmed (account_id, message_id) SELECT account_id, id FROM messages WHERE account_id = ?",
                           accountID)
            try db.execute("""
                UPDATE accounts
                   SET history_id = ?, backfill_state = 'pending', backfill_page_token = NULL,
                       backfill_before = NULL, backfill_listed = 0, backfill_estimate = NULL,
                       backfill_after = CASE WHEN lookback_days = 0 THEN NULL
                                             ELSE consented_at - lookback_days * 86400 END,
                       last_history_at = ?
                 WHERE id = ?
                """, freshHistoryID, now, accountID)
        }
    }

    // MARK: - Backfill progress

    /// Records one listed page: the token to resume from (nil when the listing is done).
    /// When a listing finishes and the account's lookback reaches further back than the
    /// range just listed (the window was widened meanwhile), the older range is started:
    /// see `widenBackfillWindow`.
    public func recordBackfillPage(accountID: Int64, nextPageToken: String?, listed: Int, estimate: Int?) throws {
        try db.write {
            try db.execute("""
                UPDATE accounts
                   SET backfill_page_token = ?,
                       backfill_state = CASE WHEN ? IS NULL THEN 'complete' ELSE 'running' END,
                       backfill_listed = backfill_listed + ?,
                       backfill_estimate = coalesce(backfill_estimate, ?),
                       last_backfill_at = ?
                 WHERE id = ?
                """, nextPageToken, nextPageToken, listed, estimate, now, accountID)
            if nextPageToken == nil { try startOlderRangeIfWidened(accountID: accountID) }
        }
    }

    /// Gmail refused the page token the listing stored (a 400 or 404 for a token it gave
    /// itself: expired, or garbled): the listing of the same window starts again from its
    /// first page. Nothing stored is lost, and the version guard makes listing a message
    /// again harmless; keeping the token would fail every pass for good.
    public func restartBackfillListing(accountID: Int64) throws {
        try db.write {
            try db.execute("""
                UPDATE accounts SET backfill_page_token = NULL, backfill_listed = 0
                 WHERE id = ? AND backfill_state <> 'complete'
                """, accountID)
        }
    }

    /// Widens the backfill window to `lookbackDays` (0 = the whole mailbox). Only the
    /// older range is listed — `after:<new bound> before:<old bound>`, both fixed once
    /// chosen — so nothing already stored is fetched again. A listing in progress
    /// finishes first (a page token continues the listing that created it, so its query
    /// must not change under it); the older range follows. Narrowing is refused: it
    /// would not remove mail, and a smaller window is not what the user has.
    public func widenBackfillWindow(accountID: Int64, lookbackDays: Int) throws {
        guard lookbackDays >= 0 else { throw StoreError.invalidArgument("lookback days must be 0 or more") }
        try db.write {
            guard let account = try account(id: accountID) else { throw StoreError.unknownAccount("#\(accountID)") }
            if lookbackDays == account.lookbackDays { return }
            if account.lookbackDays == 0 || (lookbackDays != 0 && lookbackDays < account.lookbackDays) {
                throw StoreError.invalidArgument(
                    "\(account.email): the window already reaches \(account.lookbackDays == 0 ? "the whole mailbox" : "\(account.lookbackDays) days back"); it can only be widened")
            }
            try db.execute("UPDATE accounts SET lookback_days = ? WHERE id = ?", lookbackDays, accountID)
            if account.backfillState == .complete { try startOlderRangeIfWidened(accountID: accountID) }
        }
    }

    /// After a complete listing: if the lookback now reaches before `backfill_after`, list
    /// the range between the new bound and the old one.
    private func startOlderRangeIfWidened(accountID: Int64) throws {
        try db.execute("""
            UPDATE accounts
               SET backfill_before = backfill_after,
                   backfill_after = CASE WHEN lookback_days = 0 THEN NULL ELSE consented_at - lookback_days * 86400 END,
                   backfill_state = 'pending', backfill_page_token = NULL, backfill_listed = 0, backfill_estimate = NULL
             WHERE id = ? AND backfill_state = 'complete' AND backfill_after IS NOT NULL
               AND (lookback_days = 0 OR consented_at - lookback_days * 86400 < backfill_after)
            """, accountID)
    }

    /// Stamps the end of a sync pass.
    public func recordSyncPass(accountID: Int64) throws {
        try db.write {
            try db.execute("UPDATE accounts SET last_sync_at = ? WHERE id = ?", now, accountID)
        }
    }
}
