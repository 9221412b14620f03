/*!
 The outbox: messages the user sent, kept until Gmail has them (docs/architecture.md, "The
 outbox"). Sending twice sends two emails, so unlike the mutation queue nothing here may
 simply be retried (optimistic-mutations.md, "Idempotence is what makes this simpler than
 the send path"). The states:

   queued ──claim──► sending ──2xx──────────► sent
     │                 │ ├── 400/403 ───────► failed ──undo──► cancelled
     └──undo──► cancelled │└── 429 ──────────► queued (nothing was sent: back off)
                       └── timeout, 5xx, lost answer, crash: stays sending (outcome unknown)

 An entry is marked sending in its own transaction *before* its request goes out, so after
 any interruption the store says that a request may have reached Gmail; such an entry is
 probed for by its Message-ID before it may be sent again (the sender's side, in HudsonSync).
 Claims have a token and a lifetime, like the mutation queue's, so two senders never hold
 one entry; a sender that knows it is alone (it holds the account's send lock) may take over
 the claims a dead sender left.
 */
import SQLite

public enum OutboxState: String, Sendable {
    case queued, sending, sent, failed, cancelled
}

/// What an outbox entry asks of Gmail (migration 012_drafts).
public enum OutboxKind: String, Sendable {
    /// `messages.send`: the message goes out.
    case send
    /// Saved as a draft: `drafts.create`, or `drafts.update` of `draftID` when set.
    case draft
    /// `drafts.send` of the draft `draftID`: it goes out, once.
    case draftSend = "draft-send"
}

/// One outbox entry, without its message bytes.
public struct OutboxEntry: Equatable, Sendable {
    public var id: Int64
    public var accountID: Int64
    public var accountEmail: String
    /// The Message-ID header, with angle brackets: the probe's key.
    public var messageID: String
    /// The Gmail thread a reply joins.
    public var threadID: String?
    public var recipients: [String]
    public var subject: String
    public var size: Int
    public var state: OutboxState
    public var attempts: Int
    public var lastError: String?
    /// Epoch ms before which no attempt is made (the undo window of `hd-send --delay`).
    public var notBefore: Int64
    public var nextAttemptAt: Int64?
    public var attemptStartedAt: Int64?
    /// A sender holds the entry now.
    public var isClaimed: Bool
    public var gmailID: String?
    public var gmailThreadID: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The account's history cursor when the first attempt began: every message Gmail
    /// stored since then is in history after it, so the probe can read it there.
    public var attemptHistoryID: Int64?
    public var kind: OutboxKind = .send
    /// The Gmail draft: the one a 'draft' entry updates (once created: the one it made),
    /// or the one a 'draft-send' entry sends.
    public var draftID: String?
    /// The draft's message this update or send was based on: written only if the draft
    /// still has it (migration 025).
    public var draftBaseGmailID: String?
    /// An update saved as a new draft because the draft it was to replace had changed (or
    /// gone) elsewhere: that draft, left as it is.
    public var keptBesideDraftID: String?
    /// Why it was kept beside: "changed on another device", …
    public var note: String?
    /// Held for the user's approval (HeldChanges.swift): never sent until released.
    public var held: Bool = false
    /// Who queued it: "agent" (hd-mcp), nil for the user.
    public var origin: ActionOrigin?

    /// What the user is told of an update kept beside its draft (nil for any other entry):
    /// hd-send, hd-sync, hd-pending and hd-drafts list say it in these words.
    public var keptNote: String? {
        guard let beside = keptBesideDraftID else { return nil }
        let saved = draftID.map { "saved as a new draft, draft:\($0)" } ?? "the next hd-sync saves it as a new draft"
        return "\(reference): draft:\(beside) was \(note ?? "changed elsewhere") after this version was based on it; "
            + "both are kept: \(saved)"
    }

    /// `outbox:N`, the entry's reference on the command line.
    public var reference: String { "outbox:\(id)" }

    /// A request may have reached Gmail and nobody is waiting for its answer: the next
    /// sender probes before anything else.
    public var outcomeUnknown: Bool { state == .sending && !isClaimed }
}

/// A message to queue.
public struct NewOutboxMessage: Sendable {
    public var accountID: Int64
    public var raw: [UInt8]
    public var messageID: String
    public var threadID: String?
    public var recipients: [String]
    public var subject: String
    /// The undo window: no attempt before this many milliseconds from now.
    public var delayMilliseconds: Int64
    public var kind: OutboxKind = .send
    public var draftID: String?
    /// The draft's message the update or send is based on (see OutboxEntry).
    public var draftBaseGmailID: String?
    /// Held for the user's approval, and who queued it (see OutboxEntry).
    public var held = false
    public var origin: ActionOrigin?

    public init(accountID: Int64, raw: [UInt8], messageID: String, threadID: String? = nil,
                recipients: [String], subject: String, delayMilliseconds: Int64 = 0, kind: OutboxKind = .send,
                draftID: String? = nil, draftBaseGmailID: String? = nil) {
        self.kind = kind
        self.draftID = draftID
        self.draftBaseGmailID = draftBaseGmailID
        self.accountID = accountID
        self.raw = raw
        self.messageID = messageID
        self.threadID = threadID
        self.recipients = recipients
        self.subject = subject
        self.delayMilliseconds = delayMilliseconds
    }
}

/// A claimed entry with the message to send and the claim that protects it.
public struct OutboxClaim: Sendable {
    public var entry: OutboxEntry
    public var raw: [UInt8]
    public var token: Int64
}

/// What `cancelOutbox` did.
public enum OutboxCancellation: Equatable, Sendable {
    case cancelled
    case alreadyCancelled
}

/// Why an outbox operation was refused. Descriptions hold no mail content.
public enum OutboxError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSuchEntry(Int64)
    /// Gmail has it: a sent message cannot be called back.
    case alreadySent(Int64)
    /// A request for it is out, or its outcome is not known yet.
    case beingSent(Int64)
    /// A live entry already holds this Message-ID.
    case duplicateMessageID(existing: Int64)
    /// The mailbox already has a message with this Message-ID: the probe could not tell
    /// the two apart.
    case messageIDInMailbox
    case invalidMessage(String)

    public var description: String {
        switch self {
        case .noSuchEntry(let id): return "outbox:\(id): no such outbox entry"
        case .alreadySent(let id): return "outbox:\(id): already sent; a sent message cannot be undone"
        case .beingSent(let id): return "outbox:\(id): being sent, or may already have been sent; it cannot be undone"
        case .duplicateMessageID(let id): return "this Message-ID is already in the outbox as outbox:\(id)"
        case .messageIDInMailbox: return "the mailbox already has a message with this Message-ID"
        case .invalidMessage(let why): return why
        }
    }
}

extension Store {
    /// How long a sender's claim lasts: longer than any one attempt can take (the client
    /// gives up on an exchange after 30 s and retries only rate limits, within 60 s).
    public static let outboxClaimLifetimeMilliseconds: Int64 = 5 * 60 * 1000

    static let outboxColumns = """
        o.id, o.account_id, a.email, o.message_id, o.thread_id, o.recipients, o.subject, o.size, o.state,
        o.attempts, o.last_error, o.not_before, o.next_attempt_at, o.attempt_started_at, o.claimed_at,
        o.gmail_id, o.gmail_thread_id, o.created_at, o.updated_at, o.attempt_history_id, o.kind, o.draft_id,
        o.draft_base_gmail_id, o.kept_beside_draft_id, o.note, o.held, o.origin
        """

    /// The column after `outboxColumns` (claims read the message bytes there).
    static let outboxRawColumn = 27

    func outboxEntry(from row: Row, now: Int64) -> OutboxEntry {
        OutboxEntry(
            id: row.int64(0), accountID: row.int64(1), accountEmail: row.string(2), messageID: row.string(3),
            threadID: row.optionalString(4),
            recipients: row.string(5).split(separator: ",").map { String($0).trimmingWhitespace() },
            subject: row.string(6), size: row.int(7), state: OutboxState(rawValue: row.string(8)) ?? .queued,
            attempts: row.int(9), lastError: row.optionalString(10), notBefore: row.int64(11),
            nextAttemptAt: row.optionalInt64(12), attemptStartedAt: row.optionalInt64(13),
            isClaimed: row.optionalInt64(14).map { now - $0 < Self.outboxClaimLifetimeMilliseconds } ?? false,
            gmailID: row.optionalString(15), gmailThreadID: row.optionalString(16), createdAt: row.int64(17),
            updatedAt: row.int64(18), attemptHistoryID: row.optionalInt64(19),
            kind: OutboxKind(rawValue: row.string(20)) ?? .send, draftID: row.optionalString(21),
            draftBaseGmailID: row.optionalString(22), keptBesideDraftID: row.optionalString(23), note: row.optionalString(24),
            held: row.bool(25), origin: row.optionalString(26).flatMap(ActionOrigin.init(rawValue:)))
    }

    // MARK: - Queueing and undo

    /// Queues a message durably, in one transaction. Refuses a Message-ID that a live entry
    /// or a stored message already has. `replacing`: a queued draft entry nobody is sending
    /// (a draft saved offline), cancelled in the same transaction, so the draft is never
    /// lost and never saved in both versions.
    @discardableResult
    public func enqueueOutbox(_ message: NewOutboxMessage, replacing: Int64? = nil) throws -> OutboxEntry {
        guard !message.raw.isEmpty else { throw OutboxError.invalidMessage("the message is empty") }
        return try db.write {
            let now = self.now
            var base = message.draftBaseGmailID
            if let replacing {
                guard let old = try outboxEntry(id: replacing) else { throw OutboxError.noSuchEntry(replacing) }
                // The version replaced was based on a draft's message: so is this one.
                base = base ?? old.draftBaseGmailID
                guard old.kind == .draft, old.state == .queued, !old.isClaimed, old.accountID == message.accountID else {
                    throw OutboxError.beingSent(replacing)
                }
                try db.execute("""
                    UPDATE outbox SET state = 'cancelled', raw = x'', claimed_at = NULL, claim_token = NULL, updated_at = ?
                     WHERE id = ? AND state = 'queued' AND claimed_at IS NULL
                    """, now, replacing)
                guard db.changes == 1 else { throw OutboxError.beingSent(replacing) }
            }
            if let existing = try db.scalarInt(
                "SELECT id FROM outbox WHERE account_id = ? AND message_id = ? AND kind = ? AND state <> 'cancelled'",
                message.accountID, message.messageID, message.kind.rawValue) {
                throw OutboxError.duplicateMessageID(existing: existing)
            }
            // Sending a draft sends the draft's own message, which is in the mailbox.
            if message.kind != .draftSend, try db.scalarInt(
                "SELECT 1 FROM messages WHERE message_id_header = ? AND account_id = ?", message.messageID, message.accountID) != nil {
                throw OutboxError.messageIDInMailbox
            }
            if message.kind == .draftSend && message.draftID == nil {
                throw OutboxError.invalidMessage("sending a draft needs its draft id")
            }
            try db.execute("""
                INSERT INTO outbox (account_id, raw, message_id, thread_id, recipients, subject, size, not_before,
                                    created_at, updated_at, kind, draft_id, draft_base_gmail_id, held, origin)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, message.accountID, message.raw, message.messageID, message.threadID,
                message.recipients.joined(separator: ", "), message.subject, message.raw.count,
                now + max(0, message.delayMilliseconds), now, now, message.kind.rawValue, message.draftID, base,
                message.held, message.origin?.rawValue)
            let id = db.lastInsertRowID
            guard let entry = try outboxEntry(id: id) else { throw OutboxError.noSuchEntry(id) }
            return entry
        }
    }

    /// Cancels an entry that has not been sent (hd-undo): a queued entry nobody is sending,
    /// or a failed one. Its message bytes are let go.
    @discardableResult
    public func cancelOutbox(id: Int64) throws -> OutboxCancellation {
        try db.write {
            guard let entry = try outboxEntry(id: id) else { throw OutboxError.noSuchEntry(id) }
            switch entry.state {
            case .cancelled: return .alreadyCancelled
            case .sent: throw OutboxError.alreadySent(id)
            case .sending: throw OutboxError.beingSent(id)
            case .queued where entry.isClaimed: throw OutboxError.beingSent(id)
            case .queued, .failed: break
            }
            try db.execute("""
                UPDATE outbox SET state = 'cancelled', raw = x'', claimed_at = NULL, claim_token = NULL, updated_at = ?
                 WHERE id = ?
                """, now, id)
            return .cancelled
        }
    }

    // MARK: - The sender's side

    /// Claims up to `limit` entries that are due (undo window and backoff over, no live
    /// claim), oldest first; with `ids`, only those. `takeOverClaims`: the caller holds the
    /// account's send lock, so no other sender is alive and every claim is a dead one's.
    /// `takeOverClaimsSince` narrows that to the claims made at or after a moment (epoch
    /// ms): those made under the lock file the caller holds (SendLock); an older live claim
    /// waits for its expiry.
    public func claimDueOutbox(accountID: Int64, ids: [Int64]? = nil, limit: Int = 100,
                               takeOverClaims: Bool = false, takeOverClaimsSince: Int64? = nil) throws -> [OutboxClaim] {
        try db.write {
            let now = self.now
            let token = Int64.random(in: 1...Int64.max)
            let since = takeOverClaims ? (takeOverClaimsSince ?? Int64.min) : Int64.max
            let expired = now - Self.outboxClaimLifetimeMilliseconds
            var claims: [OutboxClaim] = []
            try db.forEach("""
                SELECT \(Self.outboxColumns), o.raw FROM outbox AS o JOIN accounts AS a ON a.id = o.account_id
                 WHERE o.account_id = ? AND o.state IN ('queued', 'sending') AND o.not_before <= ? AND o.held = 0
                   AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
                   AND (o.claimed_at IS NULL OR o.claimed_at <= ? OR o.claimed_at >= ?)
                 ORDER BY o.id
                """, accountID, now, now, expired, since) { row in
                let entry = outboxEntry(from: row, now: now)
                guard claims.count < limit, ids.map({ $0.contains(entry.id) }) ?? true else { return }
                claims.append(OutboxClaim(entry: entry, raw: row.blob(Self.outboxRawColumn), token: token))
            }
            for claim in claims {
                try db.execute("UPDATE outbox SET claimed_at = ?, claim_token = ? WHERE id = ?", now, token, claim.entry.id)
            }
            return claims.map { claim in
                var claim = claim
                claim.entry.isClaimed = true
                return claim
            }
        }
    }

    /// Records, before the request goes out, that it may reach Gmail. False when the claim
    /// was lost (another sender took over) or the entry is no longer to be sent: then the
    /// request must not be made. Committed with `synchronous=FULL` whatever the
    /// connection's setting (hd-sync's is NORMAL): a mark an OS crash could lose would let
    /// the next sender send a second copy. The first attempt also records the account's
    /// cursor, where the probe starts reading history.
    public func markOutboxSending(id: Int64, token: Int64) throws -> Bool {
        try db.durableWrite {
            try db.execute("""
                UPDATE outbox SET state = 'sending', attempt_started_at = ?1, attempts = attempts + 1, updated_at = ?1,
                       attempt_history_id = coalesce(attempt_history_id,
                                                     (SELECT history_id FROM accounts WHERE id = outbox.account_id))
                 WHERE id = ?2 AND claim_token = ?3 AND state IN ('queued', 'sending')
                """, now, id, token)
            return db.changes == 1
        }
    }

    /// Gmail has the message (its answer, or the probe found it). A fact, so it is recorded
    /// whoever holds the claim. The message bytes are let go. For a draft, `gmailID` is the
    /// draft's message and `draftID` the draft, which `drafts` records at once (sync keeps
    /// it current); a draft sent is no longer a draft.
    public func markOutboxSent(id: Int64, gmailID: String, threadID: String?, draftID: String? = nil) throws {
        guard !gmailID.isEmpty else { throw StoreError.invalidArgument("a sent message needs its Gmail id") }
        try db.write {
            try db.execute("""
                UPDATE outbox SET state = 'sent', gmail_id = ?, gmail_thread_id = ?, raw = x'', last_error = NULL,
                                  next_attempt_at = NULL, claimed_at = NULL, claim_token = NULL, updated_at = ?,
                                  draft_id = coalesce(?, draft_id)
                 WHERE id = ? AND state = 'sending'
                """, gmailID, threadID, now, draftID, id)
            guard db.changes == 1, let entry = try outboxEntry(id: id), let draft = entry.draftID else { return }
            switch entry.kind {
            case .draft:
                try db.execute("""
                    INSERT INTO drafts (account_id, draft_id, gmail_id) VALUES (?, ?, ?)
                    ON CONFLICT (account_id, draft_id) DO UPDATE SET gmail_id = excluded.gmail_id
                    """, entry.accountID, draft, gmailID)
            case .draftSend:
                try db.execute("DELETE FROM drafts WHERE account_id = ? AND draft_id = ?", entry.accountID, draft)
            case .send:
                break
            }
        }
    }

    /// A draft update whose draft changed (or went) elsewhere since the update was based on
    /// it becomes the creation of a new draft, so neither version is lost (issue 37 §5):
    /// recorded before the request, so a crash after it still creates rather than
    /// overwrites. `requeue`: Gmail answered the update with 404, which proves nothing was
    /// written, so the entry goes back to 'queued'. False when the claim was lost.
    @discardableResult
    public func keepDraftEditBeside(id: Int64, token: Int64, why: String, requeue: Bool = false) throws -> Bool {
        try db.durableWrite {
            try db.execute("""
                UPDATE outbox SET kept_beside_draft_id = draft_id, draft_id = NULL, note = ?, updated_at = ?,
                                  state = CASE WHEN ? THEN 'queued' ELSE state END
                 WHERE id = ? AND claim_token = ? AND kind = 'draft' AND draft_id IS NOT NULL AND state IN ('queued', 'sending')
                """, why, now, requeue, id, token)
            return db.changes == 1
        }
    }

    /// Refuses an entry before any request for it went out (the sending of a draft changed
    /// elsewhere since it was read): failed with `reason`, never retried.
    public func refuseOutboxUnsent(id: Int64, token: Int64, reason: String) throws {
        try db.write {
            try db.execute("""
                UPDATE outbox SET state = 'failed', last_error = ?, next_attempt_at = NULL, claimed_at = NULL,
                                  claim_token = NULL, updated_at = ?
                 WHERE id = ? AND claim_token = ? AND state IN ('queued', 'sending')
                """, reason, now, id, token)
        }
    }

    /// Whether one of the account's draft entries wrote this draft message: a version Hudson
    /// saved itself is not another device's edit.
    public func outboxWroteDraftMessage(gmailID: String, accountID: Int64) throws -> Bool {
        try db.read {
            try db.scalarInt("""
                SELECT 1 FROM outbox WHERE account_id = ? AND kind = 'draft' AND state = 'sent' AND gmail_id = ? LIMIT 1
                """, accountID, gmailID) != nil
        }
    }

    /// Gmail refused the message for good (400, 403): never retried.
    public func markOutboxFailed(id: Int64, reason: String) throws {
        try db.write {
            try db.execute("""
                UPDATE outbox SET state = 'failed', last_error = ?, next_attempt_at = NULL, claimed_at = NULL,
                                  claim_token = NULL, updated_at = ?
                 WHERE id = ? AND state = 'sending'
                """, reason.isEmpty ? "rejected" : reason, now, id)
        }
    }

    /// Gmail refused without acting (a rate limit): the entry is queued again and waits.
    public func deferOutbox(id: Int64, token: Int64, error: String, retryAfterMilliseconds: Int64) throws {
        try db.write {
            try db.execute("""
                UPDATE outbox SET state = 'queued', last_error = ?, next_attempt_at = ?, claimed_at = NULL,
                                  claim_token = NULL, updated_at = ?
                 WHERE id = ? AND claim_token = ? AND state IN ('queued', 'sending')
                """, error, now + max(0, retryAfterMilliseconds), now, id, token)
        }
    }

    /// The request's outcome is unknown (timeout, 5xx, lost answer, a failed probe): the
    /// entry stays as it is — in 'sending' when a request went out — and is looked at again
    /// after the delay.
    public func recordOutboxUncertainty(id: Int64, token: Int64, error: String, retryAfterMilliseconds: Int64) throws {
        try db.write {
            try db.execute("""
                UPDATE outbox SET last_error = ?, next_attempt_at = ?, claimed_at = NULL, claim_token = NULL, updated_at = ?
                 WHERE id = ? AND claim_token = ?
                """, error, now + max(0, retryAfterMilliseconds), now, id, token)
        }
    }

    /// Gives up a claim without recording anything.
    public func releaseOutboxClaim(id: Int64, token: Int64) throws {
        try db.write {
            try db.execute("UPDATE outbox SET claimed_at = NULL, claim_token = NULL WHERE id = ? AND claim_token = ?", id, token)
        }
    }

    // MARK: - Threading a reply

    /// What the parents of a reply say about the Gmail thread it joins.
    public enum ReplyThread: Equatable, Sendable {
        /// The thread of the nearest parent Hudson knows.
        case thread(String)
        /// The nearest parent Hudson knows is still in the outbox, not sent yet: its thread
        /// is known once Gmail has it (outbox:N).
        case pendingParent(Int64)
        /// No parent is known.
        case unknown
    }

    /// The Gmail thread of a reply whose In-Reply-To and References name `parents`, nearest
    /// first: each is looked for in the store (a synced message) and in the account's outbox
    /// (a message sent, or queued, moments ago and not synced back yet), and the first found
    /// decides. gmail-api.md §2.7: Gmail threads a sent message only when it carries the
    /// thread's id, so a reply to a message that is not yet in the store must find it here.
    public func replyThread(accountID: Int64, parents: [String]) throws -> ReplyThread {
        try db.read {
            for parent in parents where !parent.isEmpty {
                if let thread = try db.first("""
                    SELECT thread_id FROM messages WHERE message_id_header = ? AND account_id = ? ORDER BY id LIMIT 1
                    """, parent, accountID, transform: { $0.string(0) }) {
                    return .thread(thread)
                }
                let found = try db.first("""
                    SELECT id, state, coalesce(gmail_thread_id, thread_id) FROM outbox
                     WHERE account_id = ? AND message_id = ? AND state IN ('queued', 'sending', 'sent')
                    """, accountID, parent, transform: { ($0.int64(0), $0.string(1), $0.optionalString(2)) })
                if let (id, state, thread) = found {
                    if let thread { return .thread(thread) }
                    if state != "sent" { return .pendingParent(id) }
                }
            }
            return .unknown
        }
    }

    // MARK: - Reads

    public func outboxEntry(id: Int64) throws -> OutboxEntry? {
        let now = self.now
        return try db.first("""
            SELECT \(Self.outboxColumns) FROM outbox AS o JOIN accounts AS a ON a.id = o.account_id WHERE o.id = ?
            """, id) { outboxEntry(from: $0, now: now) }
    }

    /// The entries `hd-pending` shows, oldest first: not sent yet, failed, or sent and not
    /// yet in the store (the history echo brings it, as it retires a label change; a saved
    /// draft only while it is still the draft's message).
    public func pendingOutbox(accountID: Int64? = nil) throws -> [OutboxEntry] {
        let now = self.now
        return try db.map("""
            SELECT \(Self.outboxColumns) FROM outbox AS o JOIN accounts AS a ON a.id = o.account_id
             WHERE (?1 IS NULL OR o.account_id = ?1)
               AND (o.state IN ('queued', 'sending', 'failed')
                    OR (o.state = 'sent' AND NOT EXISTS
                        (SELECT 1 FROM messages AS m WHERE m.account_id = o.account_id AND m.gmail_id = o.gmail_id)
                        -- A saved draft's message is awaited only while it is still the draft's:
                        -- an edit elsewhere, a later update or its sending replaces it.
                        AND (o.kind <> 'draft' OR EXISTS
                             (SELECT 1 FROM drafts AS d WHERE d.account_id = o.account_id AND d.gmail_id = o.gmail_id))))
             ORDER BY o.id
            """, accountID) { outboxEntry(from: $0, now: now) }
    }

    /// Entries still to be sent whose undo window is over (backoff included): what a
    /// catching-up sync waits for.
    public func unsentOutboxCount(accountID: Int64) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM outbox WHERE account_id = ? AND state IN ('queued', 'sending') AND not_before <= ? AND held = 0
            """, accountID, now) ?? 0)
    }
}
