/*!
 hd-import's record of what it imported (migration 019_imports), so a message is never
 imported twice and an interrupted import resumes where it stopped. messages.import is not
 idempotent (gmail-api.md §2.13: every call stores a message), so it follows the outbox's rule
 (docs/architecture.md, "The outbox"): the row is marked `sending` in its own durable
 transaction before the request leaves; only Gmail's answer makes it `imported`, only a refusal
 (400, 404, a 413 read as 400: Gmail did not store it; a 403 is the account's and stops the run) makes it `failed`; anything else — a lost answer,
 a timeout, a 5xx, a kill — leaves it `sending`, which means "may be in Gmail", and the caller
 must find it there (or make sure it is not) before sending it again. The row keeps what the
 caller needs to look: the Message-ID the request carried (`message_id`: the message's own,
 or the one hd-import added to a message without one) and Gmail's history id from before the
 first attempt (`attempt_history_id`, migration 026), from which history shows the message
 added.

   (none) ──begin──► sending ──answer──► imported
                        │ ▲──begin (after a probe found nothing)
                        ├──── refused ──► failed ──begin──► sending
                        └──── the user says Gmail has it ──► settled (migration 029)

 A `sending` row that cannot be looked for (no Message-ID Gmail's search takes, and no
 history back to the attempt) is never sent again on Hudson's own judgement; the user
 settles it (`hd-import --settle-unknown`): `settled` (Gmail has it: never sent again) or
 `failed` (it does not: imported again).
 */
import SQLite

public enum ImportState: String, Sendable {
    case sending, imported, failed
    /// The user said Gmail has it (its Gmail id is not known): never sent again.
    case settled
}

/// One imported (or attempted) message.
public struct ImportRecord: Equatable, Sendable {
    public var sourceKey: String
    public var messageID: String?
    public var state: ImportState
    public var origin: String
    public var attempts: Int
    public var attemptStartedAt: Int64?
    public var gmailID: String?
    public var lastError: String?
    /// Gmail's history id before the first attempt went out (migration 026): the probe reads
    /// history from there. Nil for a record an older hd-import wrote.
    public var attemptHistoryID: Int64?
}

extension Store {
    public func importRecord(accountID: Int64, sourceKey: String) throws -> ImportRecord? {
        try db.first("""
            SELECT source_key, message_id, state, origin, attempts, attempt_started_at, gmail_id, last_error, attempt_history_id
              FROM imports WHERE account_id = ? AND source_key = ?
            """, accountID, sourceKey) { row in
            ImportRecord(sourceKey: row.string(0), messageID: row.optionalString(1),
                         state: ImportState(rawValue: row.string(2)) ?? .sending, origin: row.string(3),
                         attempts: row.int(4), attemptStartedAt: row.optionalInt64(5), gmailID: row.optionalString(6),
                         lastError: row.optionalString(7), attemptHistoryID: row.optionalInt64(8))
        }
    }

    /// The Gmail ids of the account's imported messages: none of them is a message a probe
    /// is looking for.
    public func importedGmailIDs(accountID: Int64) throws -> Set<String> {
        var ids = Set<String>()
        try db.forEach("SELECT gmail_id FROM imports WHERE account_id = ? AND state = 'imported'", accountID) {
            ids.insert($0.string(0))
        }
        return ids
    }

    /// Whether the store holds a message with this Message-ID (with its angle brackets):
    /// it is in Gmail already.
    public func holdsMessage(messageID: String, accountID: Int64) throws -> Bool {
        try db.scalarInt("SELECT 1 FROM messages WHERE message_id_header = ? AND account_id = ? LIMIT 1",
                         messageID, accountID) != nil
    }

    /// Marks the message `sending` before its request leaves, committed with `synchronous=FULL`
    /// whatever the connection's setting: after this, a crash leaves a row that says the
    /// message may be in Gmail. Refused (`false`) for a message already imported.
    /// `messageID`: the Message-ID the request carries (the one Hudson added, for a message
    /// that had none). `historyID`: Gmail's history id taken before this attempt; the
    /// first attempt's is kept, so the probe reads history from before every attempt.
    public func beginImport(accountID: Int64, sourceKey: String, messageID: String?, origin: String,
                            historyID: Int64? = nil) throws -> Bool {
        try db.durableWrite {
            try db.execute("""
                INSERT INTO imports (account_id, source_key, message_id, state, origin, attempts, attempt_started_at, updated_at,
                                     attempt_history_id)
                VALUES (?1, ?2, ?3, 'sending', ?4, 1, ?5, ?5, ?6)
                ON CONFLICT (account_id, source_key) DO UPDATE
                   SET state = 'sending', attempts = attempts + 1, attempt_started_at = ?5, updated_at = ?5,
                       origin = ?4, last_error = NULL, message_id = coalesce(?3, imports.message_id),
                       attempt_history_id = CASE WHEN imports.state = 'failed' THEN ?6
                                                 ELSE coalesce(imports.attempt_history_id, ?6) END
                 WHERE imports.state NOT IN ('imported', 'settled')
                """, accountID, sourceKey, messageID, origin, now, historyID)
            return db.changes == 1
        }
    }

    /// Gmail has the message: its answer, or the probe found it. A fact, whatever the state.
    public func markImported(accountID: Int64, sourceKey: String, gmailID: String) throws {
        guard !gmailID.isEmpty else { throw StoreError.invalidArgument("an imported message needs its Gmail id") }
        try db.write {
            try db.execute("""
                UPDATE imports SET state = 'imported', gmail_id = ?, last_error = NULL, updated_at = ?
                 WHERE account_id = ? AND source_key = ?
                """, gmailID, now, accountID, sourceKey)
        }
    }

    /// Gmail refused the message (it did not store it); `reason` is its word for why.
    public func markImportFailed(accountID: Int64, sourceKey: String, reason: String) throws {
        try db.write {
            try db.execute("""
                UPDATE imports SET state = 'failed', last_error = ?, updated_at = ?
                 WHERE account_id = ? AND source_key = ? AND state = 'sending'
                """, reason, now, accountID, sourceKey)
        }
    }

    /// The user's word on a `sending` record that cannot be looked for: Gmail has it
    /// (`settled`, never sent again) or does not (`failed`, so it is imported again).
    public func settleImport(accountID: Int64, sourceKey: String, inGmail: Bool) throws {
        try db.write {
            try db.execute("""
                UPDATE imports SET state = ?, last_error = ?, updated_at = ?
                 WHERE account_id = ? AND source_key = ? AND state = 'sending'
                """, inGmail ? "settled" : "failed",
                inGmail ? "settled by the user: in Gmail" : "settled by the user: not in Gmail", now, accountID, sourceKey)
        }
    }

    /// Keeps the last error of an attempt whose outcome is unknown (the row stays `sending`).
    public func noteImportUncertain(accountID: Int64, sourceKey: String, reason: String) throws {
        try db.write {
            try db.execute("""
                UPDATE imports SET last_error = ?, updated_at = ? WHERE account_id = ? AND source_key = ? AND state = 'sending'
                """, reason, now, accountID, sourceKey)
        }
    }
}
