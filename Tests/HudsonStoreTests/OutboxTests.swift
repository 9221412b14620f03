import HudsonStore
import SQLite
import Testing

@Suite("Outbox: the send state machine, its claims and its guards")
struct OutboxTests {
    let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nMessage-ID: <m1@example.com>\r\n\r\nHi\r\n".utf8)

    func queued(delay: Int64 = 0, messageID: String = "<m1@example.com>") throws -> (StoreFixture, OutboxEntry) {
        let f = try StoreFixture()
        let entry = try f.store.enqueueOutbox(NewOutboxMessage(
            accountID: f.account.id, raw: raw, messageID: messageID, recipients: ["bob@example.org"], subject: "Hi",
            delayMilliseconds: delay))
        return (f, entry)
    }

    func claim(_ f: StoreFixture, takeOver: Bool = false) throws -> [OutboxClaim] {
        try f.store.claimDueOutbox(accountID: f.account.id, takeOverClaims: takeOver)
    }

    /// Runs `sql` and expects SQLite to refuse it.
    func expectRefused(_ f: StoreFixture, _ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: SQLiteError.self, sourceLocation: sourceLocation) { try f.db.execute(sql) }
    }

    @Test("enqueue stores the message durably with its Message-ID, queued, and hd-pending sees it")
    func enqueue() throws {
        let (f, entry) = try queued()
        #expect(entry.reference == "outbox:\(entry.id)" && entry.state == .queued && entry.attempts == 0)
        #expect(entry.messageID == "<m1@example.com>" && entry.recipients == ["bob@example.org"] && entry.size == raw.count)
        #expect(try f.store.pendingOutbox().map(\.id) == [entry.id])
        #expect(try f.db.first("SELECT raw FROM outbox") { $0.blob(0) } == raw)
    }

    @Test("the undo window: an entry is not claimed before --delay has passed")
    func delayHoldsTheEntry() throws {
        let (f, _) = try queued(delay: 10_000)
        #expect(try claim(f).isEmpty)
        f.clock.advance(by: 10_000)
        #expect(try claim(f).count == 1)
    }

    @Test("a live claim keeps every other sender off the entry until it expires")
    func claimsExclude() throws {
        let (f, entry) = try queued()
        let first = try claim(f)
        #expect(first.map(\.entry.id) == [entry.id] && first[0].raw == raw)
        #expect(try claim(f).isEmpty)
        f.clock.advance(by: Store.outboxClaimLifetimeMilliseconds)
        let second = try claim(f)
        #expect(second.count == 1 && second[0].token != first[0].token)
        // The first sender lost its claim: it may no longer send.
        #expect(try !f.store.markOutboxSending(id: entry.id, token: first[0].token))
        #expect(try f.store.markOutboxSending(id: entry.id, token: second[0].token))
    }

    @Test("the first attempt records the account's cursor, where the probe reads history from; later ones keep it")
    func attemptRecordsCursor() throws {
        let (f, entry) = try queued()
        try f.store.recordInitialCursor(accountID: f.account.id, historyID: 700)
        let first = try claim(f)
        #expect(try f.store.markOutboxSending(id: entry.id, token: first[0].token))
        #expect(try f.store.outboxEntry(id: entry.id)?.attemptHistoryID == 700)
        try f.store.advanceCursor(accountID: f.account.id, to: 900)
        try f.store.recordOutboxUncertainty(id: entry.id, token: first[0].token, error: "network", retryAfterMilliseconds: 0)
        let again = try claim(f)
        #expect(try f.store.markOutboxSending(id: entry.id, token: again[0].token))
        #expect(try f.store.outboxEntry(id: entry.id)?.attemptHistoryID == 700)
        // The mark is committed durably whatever the connection's setting, which it restores.
        #expect(try f.db.scalarInt("PRAGMA synchronous") == 1)  // NORMAL
    }

    @Test("a sender holding the send lock takes over a dead sender's claim at once")
    func takeOverDeadClaims() throws {
        let (f, entry) = try queued()
        let dead = try claim(f)
        #expect(try f.store.markOutboxSending(id: entry.id, token: dead[0].token))
        #expect(try claim(f).isEmpty)
        let taken = try claim(f, takeOver: true)
        #expect(taken.count == 1 && taken[0].entry.state == .sending)
    }

    @Test("with the moment the lock file came to be, only claims made since are taken over; an older live one waits for its expiry")
    func takeOverOnlyClaimsUnderTheLockFileHeld() throws {
        let (f, entry) = try queued()
        let other = try claim(f)
        #expect(try f.store.markOutboxSending(id: entry.id, token: other[0].token))
        // The lock file was made again after that claim (removed under a live sender).
        let lockFileMade = f.store.now + 1
        f.clock.advance(by: 10)
        #expect(try f.store.claimDueOutbox(accountID: f.account.id, takeOverClaims: true, takeOverClaimsSince: lockFileMade).isEmpty)
        // A lock file as old as the claim, or older: its sender held this very file, and is dead.
        let taken = try f.store.claimDueOutbox(accountID: f.account.id, takeOverClaims: true, takeOverClaimsSince: lockFileMade - 1)
        #expect(taken.count == 1)
        // Past its lifetime any claim is free again.
        f.clock.advance(by: Store.outboxClaimLifetimeMilliseconds + 1)
        #expect(try f.store.claimDueOutbox(accountID: f.account.id, takeOverClaims: true, takeOverClaimsSince: Int64.max).count == 1)
    }

    @Test("marked sending before the request; once the sender is gone the outcome is unknown")
    func sendingIsOutcomeUnknown() throws {
        let (f, entry) = try queued()
        let claimed = try claim(f)[0]
        #expect(try f.store.markOutboxSending(id: entry.id, token: claimed.token))
        var row = try #require(try f.store.outboxEntry(id: entry.id))
        #expect(row.state == .sending && row.attempts == 1 && row.attemptStartedAt != nil && !row.outcomeUnknown)
        try f.store.recordOutboxUncertainty(id: entry.id, token: claimed.token, error: "network error: lost", retryAfterMilliseconds: 0)
        row = try #require(try f.store.outboxEntry(id: entry.id))
        #expect(row.state == .sending && row.outcomeUnknown && row.lastError == "network error: lost")
        #expect(try claim(f).first?.entry.state == .sending)  // claimed again, for the probe
    }

    @Test("sent: the Gmail id is recorded, the bytes let go, and the entry leaves hd-pending when the echo is stored")
    func sentRetiresOnEcho() throws {
        let (f, entry) = try queued()
        let claimed = try claim(f)[0]
        #expect(try f.store.markOutboxSending(id: entry.id, token: claimed.token))
        try f.store.markOutboxSent(id: entry.id, gmailID: "g1", threadID: "t1")
        let row = try #require(try f.store.outboxEntry(id: entry.id))
        #expect(row.state == .sent && row.gmailID == "g1" && row.gmailThreadID == "t1" && !row.isClaimed)
        #expect(try f.db.first("SELECT length(raw) FROM outbox") { $0.int(0) } == 0)
        #expect(try f.store.pendingOutbox().map(\.state) == [.sent])
        try f.apply(f.snapshot("g1", thread: "t1", labels: ["SENT"]))
        #expect(try f.store.pendingOutbox().isEmpty)
        #expect(try claim(f).isEmpty)
    }

    @Test("a definite rejection fails the entry with its reason, and it is never claimed again")
    func rejectionFails() throws {
        let (f, entry) = try queued()
        let claimed = try claim(f)[0]
        #expect(try f.store.markOutboxSending(id: entry.id, token: claimed.token))
        try f.store.markOutboxFailed(id: entry.id, reason: "Invalid To header")
        let row = try #require(try f.store.pendingOutbox().first)
        #expect(row.state == .failed && row.lastError == "Invalid To header")
        f.clock.advance(by: 86_400_000)
        #expect(try claim(f).isEmpty)
        #expect(try f.store.cancelOutbox(id: entry.id) == .cancelled)  // dismissed
        #expect(try f.store.pendingOutbox().isEmpty)
    }

    @Test("a rate limit queues the entry again and it waits out the backoff")
    func rateLimitDefers() throws {
        let (f, entry) = try queued()
        let claimed = try claim(f)[0]
        #expect(try f.store.markOutboxSending(id: entry.id, token: claimed.token))
        try f.store.deferOutbox(id: entry.id, token: claimed.token, error: "rate limited", retryAfterMilliseconds: 30_000)
        #expect(try f.store.outboxEntry(id: entry.id)?.state == .queued)
        #expect(try claim(f).isEmpty)
        f.clock.advance(by: 30_000)
        #expect(try claim(f).first?.entry.attempts == 1)
    }

    @Test("undo cancels a queued entry; a sent one, or one being sent, cannot be undone")
    func cancellation() throws {
        let (f, entry) = try queued(delay: 60_000)
        #expect(try f.store.cancelOutbox(id: entry.id) == .cancelled)
        #expect(try f.store.cancelOutbox(id: entry.id) == .alreadyCancelled)
        f.clock.advance(by: 60_000)
        #expect(try claim(f).isEmpty)
        #expect(try f.store.pendingOutbox().isEmpty)
        #expect(throws: OutboxError.noSuchEntry(999)) { try f.store.cancelOutbox(id: 999) }

        let second = try f.store.enqueueOutbox(NewOutboxMessage(
            accountID: f.account.id, raw: raw, messageID: "<m2@example.com>", recipients: ["bob@example.org"], subject: ""))
        let claimed = try claim(f)[0]
        #expect(throws: OutboxError.beingSent(second.id)) { try f.store.cancelOutbox(id: second.id) }
        #expect(try f.store.markOutboxSending(id: second.id, token: claimed.token))
        #expect(throws: OutboxError.beingSent(second.id)) { try f.store.cancelOutbox(id: second.id) }
        try f.store.markOutboxSent(id: second.id, gmailID: "g2", threadID: "t2")
        #expect(throws: OutboxError.alreadySent(second.id)) { try f.store.cancelOutbox(id: second.id) }
    }

    @Test("a Message-ID is queued once; a cancelled entry frees it; one already in the mailbox is refused")
    func uniqueMessageIDs() throws {
        let (f, entry) = try queued()
        let again = NewOutboxMessage(accountID: f.account.id, raw: raw, messageID: "<m1@example.com>", recipients: ["x@example.org"], subject: "")
        #expect(throws: OutboxError.duplicateMessageID(existing: entry.id)) { try f.store.enqueueOutbox(again) }
        try f.store.cancelOutbox(id: entry.id)
        #expect(try f.store.enqueueOutbox(again).id > entry.id)
        try f.apply(f.snapshot("in"))  // its Message-ID is <in@example.org>
        #expect(throws: OutboxError.messageIDInMailbox) {
            try f.store.enqueueOutbox(NewOutboxMessage(accountID: f.account.id, raw: raw, messageID: "<in@example.org>",
                                                       recipients: ["x@example.org"], subject: ""))
        }
    }

    @Test("the schema refuses illegal states and transitions, whoever writes them")
    func guards() throws {
        let (f, entry) = try queued()
        let id = entry.id
        expectRefused(f, "UPDATE outbox SET state = 'sent', gmail_id = 'g' WHERE id = \(id)")  // queued → sent skips sending
        expectRefused(f, "UPDATE outbox SET state = 'bogus' WHERE id = \(id)")
        expectRefused(f, "UPDATE outbox SET state = 'sending' WHERE id = \(id)")  // no attempt time
        expectRefused(f, "UPDATE outbox SET raw = x'00' WHERE id = \(id)")  // the message never changes
        expectRefused(f, "UPDATE outbox SET message_id = '<other@example.com>' WHERE id = \(id)")
        expectRefused(f, "UPDATE outbox SET claimed_at = 1 WHERE id = \(id)")  // a claim needs its token
        expectRefused(f, """
            INSERT INTO outbox (account_id, raw, message_id, size, not_before, created_at, updated_at)
            VALUES (\(f.account.id), x'41', 'no-brackets', 1, 0, 0, 0)
            """)
        try f.db.execute("UPDATE outbox SET state = 'sending', attempt_started_at = 1 WHERE id = \(id)")
        expectRefused(f, "UPDATE outbox SET state = 'failed' WHERE id = \(id)")  // failed needs its reason
        expectRefused(f, "UPDATE outbox SET state = 'cancelled' WHERE id = \(id)")  // may have been sent
        try f.db.execute("UPDATE outbox SET state = 'sent', gmail_id = 'g', raw = x'' WHERE id = \(id)")
        expectRefused(f, "UPDATE outbox SET state = 'queued' WHERE id = \(id)")  // sent is final
        expectRefused(f, "UPDATE outbox SET gmail_id = NULL WHERE id = \(id)")
    }

    // MARK: - Drafts checked before writing (migration 025, issue 37 §5)

    func draftUpdate(_ f: StoreFixture, _ n: Int, base: String?, replacing: Int64? = nil) throws -> OutboxEntry {
        let raw = Array("From: ann@example.com\r\nMessage-ID: <d\(n)@example.com>\r\n\r\nv\(n)\r\n".utf8)
        return try f.store.enqueueOutbox(NewOutboxMessage(
            accountID: f.account.id, raw: raw, messageID: "<d\(n)@example.com>", recipients: [], subject: "v\(n)", kind: .draft,
            draftID: "r-1", draftBaseGmailID: base), replacing: replacing)
    }

    @Test("an update records the draft message it was based on; a queued version replaced keeps its base")
    func draftBaseRecorded() throws {
        let f = try StoreFixture()
        let first = try draftUpdate(f, 1, base: "msg-1")
        #expect(first.draftBaseGmailID == "msg-1" && first.keptNote == nil)
        let second = try draftUpdate(f, 2, base: nil, replacing: first.id)
        #expect(second.draftBaseGmailID == "msg-1")
        #expect(try f.store.outboxEntry(id: first.id)?.state == .cancelled)
    }

    @Test("kept beside: the update becomes a new draft, durably, only under its claim; a 404 puts it back in the queue")
    func keptBeside() throws {
        let f = try StoreFixture()
        let entry = try draftUpdate(f, 1, base: "msg-1")
        let claimed = try #require(try claim(f).first)
        #expect(try !f.store.keepDraftEditBeside(id: entry.id, token: claimed.token + 1, why: "changed on another device"))
        #expect(try f.store.keepDraftEditBeside(id: entry.id, token: claimed.token, why: "changed on another device"))
        let kept = try #require(try f.store.outboxEntry(id: entry.id))
        #expect(kept.draftID == nil && kept.keptBesideDraftID == "r-1" && kept.note == "changed on another device")
        #expect(kept.keptNote == "outbox:\(entry.id): draft:r-1 was changed on another device after this version was based on it; "
                + "both are kept: the next hd-sync saves it as a new draft")
        // Only once: it no longer updates a draft.
        #expect(try !f.store.keepDraftEditBeside(id: entry.id, token: claimed.token, why: "again"))
        // Sent (created): the note names the new draft, and so does the draft list.
        #expect(try f.store.markOutboxSending(id: entry.id, token: claimed.token))
        try f.store.markOutboxSent(id: entry.id, gmailID: "msg-9", threadID: "t", draftID: "r-9")
        #expect(try f.store.outboxEntry(id: entry.id)?.keptNote?.hasSuffix("saved as a new draft, draft:r-9") == true)
        #expect(try f.store.drafts(accountID: f.account.id).first { $0.draftID == "r-9" }?.keptBesideDraftID == "r-1")
        #expect(try f.store.outboxWroteDraftMessage(gmailID: "msg-9", accountID: f.account.id))
        #expect(try !f.store.outboxWroteDraftMessage(gmailID: "msg-1", accountID: f.account.id))

        let other = try draftUpdate(f, 2, base: "msg-1")
        let second = try #require(try claim(f).first)
        #expect(try f.store.markOutboxSending(id: other.id, token: second.token))
        #expect(try f.store.keepDraftEditBeside(id: other.id, token: second.token, why: "deleted or sent on another device", requeue: true))
        #expect(try f.store.outboxEntry(id: other.id)?.state == .queued)
    }

    @Test("a send refused before any request: queued -> failed is legal now, with its reason; sent entries stay sent")
    func refusedUnsent() throws {
        let (f, entry) = try queued()
        let claimed = try #require(try claim(f).first)
        try f.store.refuseOutboxUnsent(id: entry.id, token: claimed.token, reason: "draft:r-1 was changed on another device")
        let refused = try #require(try f.store.outboxEntry(id: entry.id))
        #expect(refused.state == .failed && refused.lastError == "draft:r-1 was changed on another device" && refused.attempts == 0)
        expectRefused(f, "UPDATE outbox SET state = 'queued' WHERE id = \(entry.id)")
    }
}
