// Store.replyThread: the Gmail thread a reply joins, from the Message-IDs it names, through
// the synced messages and the outbox (issue 22: a reply sent a second after its parent).
import HudsonStore
import Testing

@Suite("Reply threads: found through the store and through the outbox")
struct ReplyThreadTests {
    func queue(_ f: StoreFixture, _ messageID: String, thread: String? = nil) throws -> OutboxEntry {
        try f.store.enqueueOutbox(NewOutboxMessage(
            accountID: f.account.id, raw: Array("From: ann@example.com\r\nTo: bob@example.org\r\n\r\nx\r\n".utf8),
            messageID: messageID, threadID: thread, recipients: ["bob@example.org"], subject: "x"))
    }

    @Test("a synced message's thread, by its Message-ID; the nearest parent Hudson knows decides")
    func fromStore() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t1"), f.snapshot("m2", thread: "t2"))
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<m1@example.org>"]) == .thread("t1"))
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<nope@x>", "<m2@example.org>", "<m1@example.org>"])
                == .thread("t2"))
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<nope@x>"]) == .unknown)
        #expect(try f.store.replyThread(accountID: f.account.id, parents: []) == .unknown)
    }

    @Test("an outbox entry: its Gmail thread once sent, its own thread when queued with one, else a pending parent")
    func fromOutbox() throws {
        let f = try StoreFixture()
        let sent = try queue(f, "<sent@example.com>")
        let claim = try #require(try f.store.claimDueOutbox(accountID: f.account.id).first)
        #expect(try f.store.markOutboxSending(id: sent.id, token: claim.token))
        try f.store.markOutboxSent(id: sent.id, gmailID: "g1", threadID: "gt1")
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<sent@example.com>"]) == .thread("gt1"))

        let reply = try queue(f, "<reply@example.com>", thread: "gt9")
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<reply@example.com>"]) == .thread("gt9"))
        let pending = try queue(f, "<pending@example.com>")
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<pending@example.com>", "<sent@example.com>"])
                == .pendingParent(pending.id))

        // A cancelled entry was never sent: it says nothing.
        #expect(try f.store.cancelOutbox(id: pending.id) == .cancelled)
        #expect(try f.store.replyThread(accountID: f.account.id, parents: ["<pending@example.com>", "<sent@example.com>"])
                == .thread("gt1"))
        _ = reply
    }
}
