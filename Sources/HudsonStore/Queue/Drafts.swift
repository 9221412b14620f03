/*!
 Gmail drafts in the store (migration 012_drafts). A draft's message is an ordinary stored
 message labelled DRAFT, so lists and search show it offline; `drafts` maps each draft id
 to its current message. The map comes from `drafts.list` (sync refreshes it when the
 DRAFT messages and the map disagree: a draft made, edited or sent elsewhere), and from the
 outbox when Hudson saves a draft itself (Outbox.swift, markOutboxSent).
 */
import SQLite

/// A draft as the store knows it.
public struct DraftSummary: Equatable, Sendable {
    public var draftID: String
    /// The draft's current message.
    public var gmailID: String
    /// Nil until sync has brought the message.
    public var threadID: String?
    public var subject: String?
    public var to: String?
    public var messageIDHeader: String?
    public var internalDate: Int64?
    /// Saved by this store as a new draft because `keptBesideDraftID`, the draft it was
    /// meant to update, changed (or went) elsewhere: both are kept (issue 37 §5).
    public var keptBesideDraftID: String?
    /// Why ("changed on another device", …).
    public var keptBecause: String?

    /// The note `hd-drafts list` shows for a draft kept beside another.
    public var keptNote: String? {
        keptBesideDraftID.map { "your version of draft:\($0), which was \(keptBecause ?? "changed elsewhere") meanwhile" }
    }

    /// `draft:ID`, the draft's reference on the command line.
    public var reference: String { "draft:\(draftID)" }
}

extension Store {
    /// Replaces the account's draft map with what `drafts.list` gave.
    public func replaceDrafts(accountID: Int64, with drafts: [(draftID: String, gmailID: String)]) throws {
        try db.write {
            try db.execute("DELETE FROM drafts WHERE account_id = ?", accountID)
            for draft in drafts where !draft.draftID.isEmpty && !draft.gmailID.isEmpty {
                try db.execute("""
                    INSERT INTO drafts (account_id, draft_id, gmail_id) VALUES (?, ?, ?)
                    ON CONFLICT (account_id, draft_id) DO UPDATE SET gmail_id = excluded.gmail_id
                    """, accountID, draft.draftID, draft.gmailID)
            }
        }
    }

    /// Whether the map and the stored DRAFT messages disagree: a DRAFT message no draft
    /// names, or a draft whose message the store does not have as a draft.
    public func draftsNeedRefresh(accountID: Int64) throws -> Bool {
        try db.read {
            try db.scalarInt("""
                SELECT EXISTS (SELECT 1 FROM messages AS m JOIN message_labels AS l ON l.message_id = m.id AND l.label = 'DRAFT'
                                WHERE m.account_id = ?1
                                  AND NOT EXISTS (SELECT 1 FROM drafts AS d WHERE d.account_id = ?1 AND d.gmail_id = m.gmail_id))
                    OR EXISTS (SELECT 1 FROM drafts AS d WHERE d.account_id = ?1
                                  AND NOT EXISTS (SELECT 1 FROM messages AS m JOIN message_labels AS l
                                                     ON l.message_id = m.id AND l.label = 'DRAFT'
                                                   WHERE m.account_id = ?1 AND m.gmail_id = d.gmail_id))
                """, accountID) == 1
        }
    }

    /// The account's drafts, newest first (drafts whose message is not synced yet last).
    public func drafts(accountID: Int64) throws -> [DraftSummary] {
        try db.read {
            try db.map("""
                SELECT d.draft_id, d.gmail_id, m.thread_id, coalesce(m.subject, o.subject), coalesce(m.to_header, o.recipients),
                       coalesce(m.message_id_header, o.message_id), m.internal_date, o.kept_beside_draft_id, o.note
                  FROM drafts AS d LEFT JOIN messages AS m ON m.account_id = d.account_id AND m.gmail_id = d.gmail_id
                  -- Saved by this store (not synced back yet: what the outbox knows of it; kept
                  -- beside a draft changed elsewhere: which, and why).
                  LEFT JOIN outbox AS o ON o.id = (SELECT max(id) FROM outbox AS x WHERE x.account_id = d.account_id
                                                      AND x.draft_id = d.draft_id AND x.kind = 'draft' AND x.state = 'sent')
                 WHERE d.account_id = ?
                 ORDER BY m.internal_date IS NULL, m.internal_date DESC, d.draft_id
                """, accountID) { row in
                DraftSummary(draftID: row.string(0), gmailID: row.string(1), threadID: row.optionalString(2),
                             subject: row.optionalString(3), to: row.optionalString(4), messageIDHeader: row.optionalString(5),
                             internalDate: row.optionalInt64(6), keptBesideDraftID: row.optionalString(7),
                             keptBecause: row.optionalString(8))
            }
        }
    }

    /// One draft by its id.
    public func draft(id: String, accountID: Int64) throws -> DraftSummary? {
        try drafts(accountID: accountID).first { $0.draftID == id }
    }

    /// Forgets a draft deleted or sent by this process (sync would learn it later).
    public func forgetDraft(id: String, accountID: Int64) throws {
        try db.write { try db.execute("DELETE FROM drafts WHERE account_id = ? AND draft_id = ?", accountID, id) }
    }

    /// The Gmail id of the stored message with this Message-ID, if any.
    public func gmailID(messageIDHeader: String, accountID: Int64) throws -> String? {
        try db.read {
            try db.first("SELECT gmail_id FROM messages WHERE message_id_header = ? AND account_id = ? ORDER BY id LIMIT 1",
                         messageIDHeader, accountID, transform: { $0.string(0) })
        }
    }
}
