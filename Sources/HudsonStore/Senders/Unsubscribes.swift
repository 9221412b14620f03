/*!
 The record of unsubscribes (migration 035, `unsubscribes`): who, when, by which method,
 and what came of it. A one-click POST is recorded as `intended` and committed before the
 request goes out (RFC 8058: the POST itself unsubscribes, so a lost answer must not
 become a second POST), then settled as `done` (2xx), `refused` (an answer that is not a success, or a
 request Hudson would not make) or `unknown` (no answer, a redirect, a process that died).
 A sender with a record that may have reached it is never sent another: an `unknown` one
 is for the user to settle on the sender's page, and a `refused` one may be tried again.

 A mailto unsubscribe is recorded `queued` with its outbox entry, and is what that entry
 is: queued or being sent, it may reach the sender; sent, it did (`sent`); cancelled
 (`hd-undo outbox:N`) or failed, it never left, so it is not an unsubscribe and a later
 run may queue a new message (under a new Message-ID: `deadUnsubscribeMails`).
 */
import SQLite

public enum UnsubscribeState: String, Sendable {
    case intended, done, refused, unknown, queued, printed
    /// A `queued` mailto record as its outbox entry now is (read, never stored).
    case sent, failed, cancelled

    /// A state after which the sender may have acted on the unsubscribe.
    public var mayHaveReachedSender: Bool { [.intended, .done, .unknown, .queued, .sent].contains(self) }
}

public struct UnsubscribeRecord: Equatable, Sendable {
    public var id: Int64
    public var accountID: Int64
    public var accountEmail: String
    public var sender: String
    public var method: UnsubscribeMethod
    public var target: String
    public var messageGmailID: String?
    public var state: UnsubscribeState
    public var answer: String?
    public var outboxID: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
}

extension Store {
    /// A record (`u`) that may have reached its sender: a mailto one only while its outbox
    /// entry may still go or went (an entry gone from the outbox was sent long ago).
    static let unsubscribeMayHaveReachedSQL = """
        (u.state IN ('intended', 'done', 'unknown')
         OR (u.state = 'queued' AND NOT EXISTS (SELECT 1 FROM outbox AS ob
                                                 WHERE ob.id = u.outbox_id AND ob.state IN ('cancelled', 'failed'))))
        """

    /// An `intended` row whose process had this long to finish its request and did not
    /// settle it died meanwhile: its POST may have been made (reported as unknown).
    public static let unsubscribeRequestBoundMilliseconds: Int64 = 120_000

    /// The groups (as `hd-senders` makes them) of the referenced messages and threads.
    public func senders(gmailIDs: [String], threadIDs: [String], accountID: Int64?) throws -> [SenderSummary] {
        try db.read {
            let labels = EffectiveLabels.source(queueIsEmpty: try queueIsEmpty())
            let selection = """
                SELECT m.id FROM messages AS m
                 WHERE (?1 IS NULL OR m.account_id = ?1)
                   AND (m.gmail_id IN (SELECT value FROM json_each(?2)) OR m.thread_id IN (SELECT value FROM json_each(?3)))
                """
            let statement = try db.prepare("""
                \(Self.senderGroupsSQL(selection: selection, labels: labels))
                 ORDER BY s.n_messages DESC, s.key
                """)
            let arguments: [any SQLiteBindable] = [accountID, Self.jsonArray(gmailIDs), Self.jsonArray(threadIDs)]
            var summaries = try statement.map(arguments) { senderSummary($0) }
            try vouchOffers(&summaries, selection: selection, arguments: arguments, labels: labels)
            return summaries
        }
    }

    /// A JSON array of strings, for `json_each`: one bound value however many ids.
    static func jsonArray(_ values: [String]) -> String {
        "[" + values.map { value in
            var out = "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default:
                    if scalar.value < 0x20 {
                        out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                            + String(scalar.value, radix: 16)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }.joined(separator: ",") + "]"
    }

    /// The newest record for this sender that may have reached it, if any; an `intended`
    /// one older than the request bound is settled as `unknown` first.
    public func unsubscribeThatMayHaveReached(sender: String, accountID: Int64) throws -> UnsubscribeRecord? {
        // A read-only run (--dry-run) cannot settle; an intended row then reads as it is.
        try? settleInterruptedUnsubscribes()
        return try db.read {
            try db.first("""
                SELECT \(Self.unsubscribeColumns) WHERE u.account_id = ? AND u.sender = ?
                   AND \(Self.unsubscribeMayHaveReachedSQL)
                 ORDER BY u.id DESC LIMIT 1
                """, accountID, sender, transform: unsubscribeRecord)
        }
    }

    /// `intended` rows past the request bound: their process died; the POST may have been made.
    public func settleInterruptedUnsubscribes() throws {
        let limit = now - Self.unsubscribeRequestBoundMilliseconds
        guard try db.read({ try db.scalarInt("SELECT 1 FROM unsubscribes WHERE state = 'intended' AND updated_at < ? LIMIT 1", limit) }) != nil
        else { return }
        try db.write {
            try db.execute("""
                UPDATE unsubscribes SET state = 'unknown', answer = 'interrupted: the request may have been made', updated_at = ?
                 WHERE state = 'intended' AND updated_at < ?
                """, now, limit)
        }
    }

    /// Records an unsubscribe before it is made (one-click: `intended`) or as it is
    /// (`printed`, `refused`); returns its id. An `intended` one is recorded only when no
    /// record that may have reached the sender exists, checked in the same IMMEDIATE
    /// transaction: of two processes unsubscribing from one sender at once, one records
    /// and posts; the other gets nil and posts nothing.
    public func recordUnsubscribe(accountID: Int64, sender: String, method: UnsubscribeMethod, target: String,
                                  messageGmailID: String?, state: UnsubscribeState, answer: String? = nil) throws -> Int64? {
        precondition(method != .mailto, "a mailto unsubscribe is recorded with its outbox entry")
        return try db.write {
            if state == .intended, try db.scalarInt("""
                SELECT 1 FROM unsubscribes AS u WHERE u.account_id = ? AND u.sender = ? AND \(Self.unsubscribeMayHaveReachedSQL)
                """, accountID, sender) != nil {
                return nil
            }
            try db.execute("""
                INSERT INTO unsubscribes (account_id, sender, method, target, message_gmail_id, state, answer, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, accountID, sender, method.rawValue, target, messageGmailID, state.rawValue, answer, now, now)
            return db.lastInsertRowID
        }
    }

    /// Settles a one-click unsubscribe with what came of its request.
    public func settleUnsubscribe(id: Int64, state: UnsubscribeState, answer: String) throws {
        try db.write {
            try db.execute("UPDATE unsubscribes SET state = ?, answer = ?, updated_at = ? WHERE id = ?",
                           state.rawValue, answer, now, id)
        }
    }

    /// Queues a mailto unsubscribe's message in the outbox and records it, in one
    /// transaction. The message's Message-ID is the caller's, fixed per sender and target
    /// (so a run that died after queueing finds its entry instead of queueing another: the
    /// outbox refuses a second entry with one Message-ID). Returns the outbox entry's id.
    public func queueUnsubscribeMail(_ message: NewOutboxMessage, sender: String, target: String,
                                     messageGmailID: String?) throws -> Int64 {
        let outboxID: Int64
        do {
            outboxID = try enqueueOutbox(message).id
        } catch OutboxError.duplicateMessageID(let existing) {
            outboxID = existing
        } catch OutboxError.messageIDInMailbox {
            outboxID = 0  // sent long ago and its outbox entry gone: recorded, not sent again
        }
        try db.write {
            if try db.scalarInt("SELECT 1 FROM unsubscribes WHERE outbox_id = ? AND outbox_id <> 0", outboxID) == nil || outboxID == 0 {
                try db.execute("""
                    INSERT INTO unsubscribes (account_id, sender, method, target, message_gmail_id, state, outbox_id, created_at, updated_at)
                    VALUES (?, ?, 'mailto', ?, ?, 'queued', ?, ?, ?)
                    """, message.accountID, sender, target, messageGmailID, outboxID, now, now)
            }
        }
        return outboxID
    }

    /// How many mailto unsubscribes to this sender and address never left (their outbox
    /// entry cancelled or failed): a new attempt's message takes a Message-ID of its own.
    public func deadUnsubscribeMails(sender: String, target: String, accountID: Int64) throws -> Int {
        let count: Int64? = try db.read {
            try db.scalarInt("""
                SELECT count(*) FROM unsubscribes AS u
                 WHERE u.account_id = ? AND u.sender = ? AND u.method = 'mailto' AND u.target = ?
                   AND NOT \(Self.unsubscribeMayHaveReachedSQL)
                """, accountID, sender, target)
        }
        return Int(count ?? 0)
    }

    /// Every record, newest first, at most `limit`.
    public func unsubscribes(accountID: Int64?, limit: Int) throws -> [UnsubscribeRecord] {
        try? settleInterruptedUnsubscribes()
        return try db.read {
            try db.map("SELECT \(Self.unsubscribeColumns) WHERE (?1 IS NULL OR u.account_id = ?1) ORDER BY u.id DESC LIMIT ?2",
                       accountID, Int64(min(limit, Int(Int64.max))), transform: unsubscribeRecord)
        }
    }

    static let unsubscribeColumns = """
        u.id, u.account_id, a.email, u.sender, u.method, u.target, u.message_gmail_id, u.state, u.answer, u.outbox_id,
        u.created_at, u.updated_at, (SELECT ob.state FROM outbox AS ob WHERE ob.id = u.outbox_id)
          FROM unsubscribes AS u JOIN accounts AS a ON a.id = u.account_id
        """

    func unsubscribeRecord(_ row: Row) -> UnsubscribeRecord {
        var state = UnsubscribeState(rawValue: row.string(7)) ?? .unknown
        // A mailto record says what its outbox entry says now.
        if state == .queued, let outbox = row.optionalString(12) {
            switch OutboxState(rawValue: outbox) {
            case .sent: state = .sent
            case .failed: state = .failed
            case .cancelled: state = .cancelled
            default: break
            }
        }
        return UnsubscribeRecord(
            id: row.int64(0), accountID: row.int64(1), accountEmail: row.string(2), sender: row.string(3),
            method: UnsubscribeMethod(rawValue: row.string(4)) ?? .https, target: row.string(5),
            messageGmailID: row.optionalString(6), state: state,
            answer: row.optionalString(8), outboxID: row.optionalInt64(9), createdAt: row.int64(10), updatedAt: row.int64(11))
    }
}
