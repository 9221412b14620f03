/*!
 What `hd-show` shows: a message's headers, effective labels, stored body and
 attachment list, for a message reference or every message of a thread (oldest first,
 the order a thread is read in).
 */
import SQLite

public struct MessageDetail: Equatable, Sendable {
    public var accountID: Int64
    public var messageID: String
    public var threadID: String
    public var internalDate: Int64
    public var headers: MessageHeaders
    public var snippet: String
    public var sizeEstimate: Int64
    /// Effective label ids, sorted.
    public var labels: [String]
    /// The stored body, or nil when it has not been fetched yet.
    public var body: MessageBody?
    /// A change to it is held for the user's approval (issue 40).
    public var held: Bool = false
}

extension Store {
    /// The messages a reference names: one message, or a thread's messages oldest first.
    /// Empty when the store does not have it.
    public func messageDetails(_ reference: Reference, accountID: Int64? = nil) throws -> [MessageDetail] {
        try db.read {
            let keys: [Int64]
            switch reference {
            case .message(let id):
                keys = try db.map("""
                    SELECT id FROM messages WHERE gmail_id = ? AND (?2 IS NULL OR account_id = ?2)
                    """, id, accountID) { $0.int64(0) }
            case .thread(let id):
                keys = try db.map("""
                    SELECT id FROM messages WHERE thread_id = ? AND (?2 IS NULL OR account_id = ?2)
                     ORDER BY internal_date, id
                    """, id, accountID) { $0.int64(0) }
            }
            return try keys.compactMap { try messageDetail(key: $0) }
        }
    }

    func messageDetail(key: Int64) throws -> MessageDetail? {
        guard var detail = try db.first("""
            SELECT account_id, gmail_id, thread_id, internal_date, subject, sender, to_header, cc_header, bcc_header,
                   reply_to, date_header, message_id_header, in_reply_to, references_header, list_id, content_type,
                   snippet, size_estimate
              FROM messages WHERE id = ?
            """, key, transform: { row in
                MessageDetail(
                    accountID: row.int64(0), messageID: row.string(1), threadID: row.string(2), internalDate: row.int64(3),
                    headers: MessageHeaders(
                        subject: row.optionalString(4), from: row.optionalString(5), to: row.optionalString(6),
                        cc: row.optionalString(7), bcc: row.optionalString(8), replyTo: row.optionalString(9),
                        date: row.optionalString(10), messageID: row.optionalString(11), inReplyTo: row.optionalString(12),
                        references: row.optionalString(13), listID: row.optionalString(14), contentType: row.optionalString(15)),
                    snippet: row.string(16), sizeEstimate: row.int64(17), labels: [], body: nil)
            })
        else { return nil }
        detail.labels = try effectiveLabels(messageKey: key)
        if try !queueIsEmpty() {
            detail.held = try db.cached("SELECT \(HeldChanges.isHeld(messageColumn: "?"))").first([key]) { $0.int(0) == 1 } ?? false
        }
        detail.body = try body(gmailID: detail.messageID, accountID: detail.accountID)
        return detail
    }
}
