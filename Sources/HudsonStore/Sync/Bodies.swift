/*!
 Message bodies and attachment metadata, written by hydration (format=full), and the
 work-list hydration walks: messages without a body, newest first, inside the prefetch
 window (local-first-sync.md, "Hydration walks newest-first within a 90-day prefetch
 window").
 */
import HudsonMail
import SQLite

/// A stored body is what HudsonMail extracts from a message: the same type under the
/// store's names, not a copy kept in step field by field.
public typealias MessageBody = ExtractedContent
public typealias AttachmentInfo = ExtractedAttachment

extension Store {
    /// Stores a hydrated body. Returns false when the message is not in the store
    /// (it vanished meanwhile).
    @discardableResult
    public func saveBody(_ body: MessageBody, gmailID: String, accountID: Int64) throws -> Bool {
        try writeTracked { touched in
            try saveBody(body, gmailID: gmailID, accountID: accountID, touched: &touched)
        }
    }

    /// `saveBody` inside a tracked write that the caller opened.
    func saveBody(_ body: MessageBody, gmailID: String, accountID: Int64, source: [UInt8]? = nil,
                  touched: inout Set<ThreadKey>) throws -> Bool {
        guard let row = try db.first(
            "SELECT id, thread_id, has_attachment FROM messages WHERE account_id = ? AND gmail_id = ?",
            accountID, gmailID, transform: { (key: $0.int64(0), threadID: $0.string(1), hasAttachment: $0.bool(2)) })
        else { return false }
        try db.execute("""
            INSERT INTO message_bodies (message_id, text, html, fetched_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (message_id) DO UPDATE SET text = excluded.text, html = excluded.html, fetched_at = excluded.fetched_at
            """, row.key, body.text, body.html, now)
        try db.execute("DELETE FROM attachments WHERE message_id = ?", row.key)
        for attachment in body.attachments {
            try db.execute("""
                INSERT OR REPLACE INTO attachments (message_id, part_id, filename, mime_type, size, attachment_id, content_id, is_inline)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [row.key, attachment.partID, attachment.filename, attachment.mimeType, attachment.size,
                                 attachment.attachmentID, attachment.contentID, attachment.isInline])
        }
        // Gmail's attachment: a part with a non-empty filename (gmail-api.md §8; migration 014).
        let hasAttachment = body.attachments.contains { !$0.filename.isEmpty }
        try db.execute("UPDATE messages SET body_state = 1, has_attachment = ?, attachment_known = 1 WHERE id = ?", hasAttachment, row.key)
        if let source { try saveSource(source, messageKey: row.key) }
        try unpark(gmailID: gmailID, accountID: accountID, stage: .body)
        try bumpSequence(messageKey: row.key)
        // Of what the rollup shows, a body changes only has_attachment; a thread whose
        // flag stays is not recomputed (hydrating a 20-message thread recomputed it 20 times).
        if hasAttachment != row.hasAttachment {
            touched.insert(ThreadKey(accountID: accountID, threadID: row.threadID))
        }
        return true
    }

    /// Messages still without a body, newest first, received at or after `since`
    /// (epoch ms; nil for no window). A body parked after a failure is left out until its
    /// retry is due (Parked.swift), so it cannot hold the head of the work-list, unless
    /// `includingParked` asks for every missing body (it is not done either).
    public func messagesNeedingBodies(accountID: Int64, since: Int64?, limit: Int, includingParked: Bool = false) throws -> [String] {
        try db.map("""
            SELECT m.gmail_id FROM messages AS m
             WHERE m.account_id = ?1 AND m.body_state = 0 AND m.internal_date >= ?2
               AND (?5 OR NOT EXISTS (SELECT 1 FROM sync_parked AS p
                                       WHERE p.account_id = ?1 AND p.stage = 'body' AND p.gmail_id = m.gmail_id
                                         AND p.next_attempt_at > ?4))
             ORDER BY m.internal_date DESC LIMIT ?3
            """, accountID, since ?? Int64.min, limit, now, includingParked) { $0.string(0) }
    }

    /// Forgets the parked bodies of messages received before `since`: outside the window
    /// hydration fetches, they are missing like any older body (`hd-show` fetches one on
    /// demand) and must not keep an account from being caught up.
    /// Driven from the parked rows (a seek each), not from the messages; no write at all
    /// when no body is parked, since it runs every pass.
    public func unparkBodies(accountID: Int64, before since: Int64) throws {
        guard try db.scalarInt("SELECT 1 FROM sync_parked WHERE account_id = ? AND stage = 'body' LIMIT 1", accountID) != nil
        else { return }
        try db.write {
            try db.execute("""
                DELETE FROM sync_parked
                 WHERE account_id = ?1 AND stage = 'body'
                   AND EXISTS (SELECT 1 FROM messages AS m
                                WHERE m.account_id = ?1 AND m.gmail_id = sync_parked.gmail_id AND m.internal_date < ?2)
                """, accountID, since)
        }
    }

    /// How many messages in the window still need a body, parked ones included: a body
    /// waiting for its retry is not done.
    public func countMessagesNeedingBodies(accountID: Int64, since: Int64?) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM messages WHERE account_id = ? AND body_state = 0 AND internal_date >= ?
            """, accountID, since ?? Int64.min) ?? 0)
    }

    /// The stored body of a message, or nil when it has not been hydrated.
    public func body(gmailID: String, accountID: Int64) throws -> MessageBody? {
        guard let key = try messageKey(gmailID: gmailID, accountID: accountID) else { return nil }
        guard let content = try db.first(
            "SELECT text, html FROM message_bodies WHERE message_id = ?", key,
            transform: { (text: $0.optionalString(0), html: $0.optionalString(1)) })
        else { return nil }
        let attachments = try db.map("""
            SELECT part_id, filename, mime_type, size, attachment_id, content_id, is_inline
              FROM attachments WHERE message_id = ? ORDER BY part_id
            """, key) {
            AttachmentInfo(partID: $0.string(0), filename: $0.string(1), mimeType: $0.string(2), size: Int($0.int64(3)),
                           attachmentID: $0.optionalString(4), contentID: $0.optionalString(5), isInline: $0.bool(6))
        }
        return MessageBody(text: content.text, html: content.html, attachments: attachments)
    }
}
