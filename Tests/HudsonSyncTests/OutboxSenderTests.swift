// The outbox sender over the scripted Gmail: each test is a rule of the probe protocol
// (docs/architecture.md, "The outbox and the probe protocol"), with "sent twice" counted as
// copies of one Message-ID in the mailbox.
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

@Suite("OutboxSender: send once, probe when the outcome is unknown")
struct OutboxSenderTests {
    /// A store whose clock the test moves, a synced mailbox with one thread, and its account.
    final class Setup: Sendable {
        final class Clock: Sendable {
            let milliseconds = Mutex<Int64>(ScriptedGmail.now)
        }
        let clock = Clock()
        let f: SyncFixture
        let accountID: Int64

        init() async throws {
            let clock = self.clock
            f = try SyncFixture(storeClock: { clock.milliseconds.withLock { $0 } })
            f.gmail.seed("m0", daysAgo: 1, subject: "Plans")
            try await f.syncUntilComplete(f.engine())
            accountID = try f.account().id
        }

        func advance(milliseconds: Int64) { clock.milliseconds.withLock { $0 += milliseconds } }

        /// Queues a message; returns its entry.
        @discardableResult
        func enqueue(_ n: Int = 1, thread: String? = nil, delay: Int64 = 0) throws -> OutboxEntry {
            let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: Re: Plans\r\nMessage-ID: <out\(n)@example.com>\r\n\r\nYes.\r\n".utf8)
            let accountID = self.accountID
            return try f.database.write {
                try $0.enqueueOutbox(NewOutboxMessage(accountID: accountID, raw: raw, messageID: "<out\(n)@example.com>",
                                                      threadID: thread, recipients: ["bob@example.org"], subject: "Re: Plans",
                                                      delayMilliseconds: delay))
            }
        }

        func entry(_ id: Int64) throws -> OutboxEntry {
            try #require(try f.database.read { try $0.outboxEntry(id: id) })
        }

        func sender(exclusive: Bool = true, settle: Duration = .zero) -> OutboxSender {
            OutboxSender(api: f.gmail, database: f.database, account: f.email, exclusive: exclusive, settle: settle)
        }

        /// A sender that claimed the entry, committed "sending", and died: with or without
        /// its request having reached Gmail.
        func crashMidSend(_ entry: OutboxEntry, requestReachedGmail: Bool) async throws {
            let accountID = self.accountID
            let claim = try #require(try f.database.write { try $0.claimDueOutbox(accountID: accountID) }.first)
            #expect(try f.database.write { try $0.markOutboxSending(id: claim.entry.id, token: claim.token) })
            if requestReachedGmail { _ = try await f.gmail.send(raw: claim.raw, threadID: claim.entry.threadID) }
            f.gmail.resetCalls()
        }

        var probes: Int {
            f.gmail.calls.filter { if case .listMessages(_, let query) = $0 { return query?.hasPrefix("rfc822msgid:") == true }; return false }.count
        }
    }

    @Test("the probe does not rely on search alone: a message its index does not show yet is found in history, never sent twice")
    func probeReadsHistory() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        // The answer to the send is lost after Gmail stored the message.
        s.f.gmail.setAfterSendHook { throw GmailError.network("connection reset") }
        _ = try await s.sender().sendDue()
        #expect(try s.entry(entry.id).outcomeUnknown)
        #expect(try s.entry(entry.id).attemptHistoryID != nil)
        s.f.gmail.setAfterSendHook(nil)
        s.f.gmail.searchLags.withLock { $0 = true }
        s.advance(milliseconds: 60_000)  // long past the settle time: search alone would say "not sent"
        let report = try await s.sender(settle: .seconds(5)).sendDue()
        #expect(report.confirmed == 1 && report.sent == 0)
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
        let sent = try s.entry(entry.id)
        #expect(sent.state == .sent && sent.gmailID == "sent1")
    }

    @Test("a probe whose history candidates cannot be read (a batch failed as a whole, a 403) does not take them for \"not sent\": nothing is sent twice",
          arguments: [GmailError.invalidResponse("a batch answer left its parts out"), .forbidden(reason: "domainPolicy")])
    func unreadableCandidatesAreNotAbsence(failure: GmailError) async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        s.f.gmail.setAfterSendHook { throw GmailError.network("connection reset") }
        _ = try await s.sender().sendDue()
        #expect(try s.entry(entry.id).outcomeUnknown)
        s.f.gmail.setAfterSendHook(nil)
        // Search does not show it yet, and the messages history names cannot be read.
        s.f.gmail.searchLags.withLock { $0 = true }
        s.f.gmail.batchFailure.withLock { $0 = failure }
        s.advance(milliseconds: 60_000)
        _ = try? await s.sender(settle: .seconds(5)).sendDue()
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
        #expect(try s.entry(entry.id).outcomeUnknown)
        s.f.gmail.batchFailure.withLock { $0 = nil }
        let report = try await s.sender(settle: .seconds(5)).sendDue()
        #expect(report.confirmed == 1 && report.sent == 0)
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
    }

    @Test("a queued reply is sent once, recorded with Gmail's id, and its echo lands in its thread labelled SENT")
    func sendsOnceAndEchoes() async throws {
        let s = try await Setup()
        let entry = try s.enqueue(thread: "m0")
        let report = try await s.sender().sendDue()
        #expect(report.sent == 1 && s.f.gmail.sendCalls == 1 && s.probes == 0)
        let sent = try s.entry(entry.id)
        #expect(sent.state == .sent && sent.gmailID == "sent1" && sent.gmailThreadID == "m0" && sent.attempts == 1)
        _ = try await s.f.engine().syncOnce()
        #expect(try s.f.labels("sent1") == ["SENT"])
        let thread = try s.f.database.read { try $0.messageDetails(.thread("m0")) }
        #expect(thread.map(\.messageID) == ["m0", "sent1"])
        #expect(try s.f.database.read { try $0.pendingOutbox() }.isEmpty)
    }

    @Test("the undo window: an entry is not sent before its delay is over")
    func delayHolds() async throws {
        let s = try await Setup()
        try s.enqueue(delay: 30_000)
        #expect(try await s.sender().sendDue().sent == 0)
        s.advance(milliseconds: 30_000)
        #expect(try await s.sender().sendDue().sent == 1)
    }

    @Test("a lost answer leaves the outcome unknown; the probe finds the message and it is not sent again")
    func lostAnswerIsProbed() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        s.f.gmail.setAfterSendHook { throw GmailError.network("connection lost") }
        let first = try await s.sender().sendDue()
        #expect(first.deferred == 1)
        #expect(try s.entry(entry.id).outcomeUnknown)
        s.f.gmail.setAfterSendHook(nil)
        let second = try await s.sender().sendDue()
        #expect(second.confirmed == 1 && second.sent == 0)
        #expect(s.f.gmail.sendCalls == 1 && s.probes == 1)
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
        #expect(try s.entry(entry.id).gmailID == "sent1")
    }

    @Test("a crash after the request reached Gmail: the probe finds it, marks it sent, and nothing is sent again")
    func crashAfterSendIsProbed() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        try await s.crashMidSend(entry, requestReachedGmail: true)
        // A sender without the send lock respects the dead sender's claim until it expires.
        #expect(try await s.sender(exclusive: false).sendDue() == OutboxReport())
        let report = try await s.sender().sendDue()
        #expect(report.confirmed == 1 && s.f.gmail.sendCalls == 0)
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
        #expect(try s.entry(entry.id).state == .sent)
    }

    @Test("a crash before the request reached Gmail: the probe does not find it, and it is sent once")
    func crashBeforeSendIsSentOnce() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        try await s.crashMidSend(entry, requestReachedGmail: false)
        let report = try await s.sender().sendDue()
        #expect(report.sent == 1 && s.probes == 1 && s.f.gmail.sendCalls == 1)
        #expect(s.f.gmail.copies(of: "<out1@example.com>") == 1)
        #expect(try s.entry(entry.id).attempts == 2)
    }

    @Test("a probe that finds nothing just after the attempt looks again after the settle time before sending")
    func probeWaitsForTheSearchToSettle() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        try await s.crashMidSend(entry, requestReachedGmail: false)
        // Gmail's search catches up only after the first look.
        let looks = Atomic<Int>(0)
        let gmail = s.f.gmail
        let raw = Array("Message-ID: <out1@example.com>\r\nSubject: Re: Plans\r\n\r\nYes.\r\n".utf8)
        gmail.setHook { call in
            guard case .listMessages = call, looks.add(1, ordering: .relaxed).newValue == 2 else { return }
            _ = try await gmail.send(raw: raw, threadID: nil)
        }
        let report = try await s.sender(settle: .milliseconds(200)).sendDue()
        #expect(report.confirmed == 1 && report.sent == 0)
        #expect(s.probes == 2 && gmail.copies(of: "<out1@example.com>") == 1)
    }

    @Test("a definite rejection (400) fails the entry with Gmail's reason and it is never retried")
    func badRequestFails() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        s.f.gmail.setHook { call in if case .send = call { throw GmailError.badRequest(message: "Invalid To header") } }
        #expect(try await s.sender().sendDue().failed == 1)
        let failed = try s.entry(entry.id)
        #expect(failed.state == .failed && failed.lastError == "rejected by Gmail: Invalid To header")
        s.f.gmail.setHook(nil)
        s.f.gmail.resetCalls()
        s.advance(milliseconds: 86_400_000)
        #expect(try await s.sender().sendDue() == OutboxReport())
        #expect(s.f.gmail.calls.isEmpty)
    }

    @Test("a rate limit (429) means nothing was sent: queued again, retried after the backoff without a probe")
    func rateLimitRetriesLater() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        let refusals = Atomic<Int>(0)
        s.f.gmail.setHook { call in
            if case .send = call, refusals.add(1, ordering: .relaxed).oldValue == 0 { throw GmailError.rateLimited(retryAfter: 60) }
        }
        #expect(try await s.sender().sendDue().deferred == 1)
        let deferred = try s.entry(entry.id)
        #expect(deferred.state == .queued && deferred.lastError?.contains("rate limited") == true)
        #expect(try await s.sender().sendDue() == OutboxReport())  // not before the backoff
        s.advance(milliseconds: 16 * 60_000)
        #expect(try await s.sender().sendDue().sent == 1)
        #expect(s.probes == 0 && s.f.gmail.sendCalls == 2 && s.f.gmail.copies(of: "<out1@example.com>") == 1)
    }

    @Test("a 5xx may have sent it: the entry is probed before it is sent again, after a backoff")
    func serverErrorIsProbed() async throws {
        let s = try await Setup()
        let entry = try s.enqueue()
        let failures = Atomic<Int>(0)
        s.f.gmail.setHook { call in
            if case .send = call, failures.add(1, ordering: .relaxed).oldValue == 0 { throw GmailError.server(status: 503) }
        }
        #expect(try await s.sender().sendDue().deferred == 1)
        #expect(try s.entry(entry.id).outcomeUnknown)
        s.advance(milliseconds: 16 * 60_000)
        #expect(try await s.sender().sendDue().sent == 1)
        #expect(s.probes == 1 && s.f.gmail.copies(of: "<out1@example.com>") == 1)
    }

    @Test("two senders at once never send the same entry twice")
    func twoSendersSendEachOnce() async throws {
        let s = try await Setup()
        for n in 1...6 { try s.enqueue(n) }
        s.f.gmail.setHook { call in if case .send = call { try await Task.sleep(for: .milliseconds(20)) } }
        // Each sender takes one entry per pass, so their claims interleave.
        @Sendable func drain(_ sender: OutboxSender) async throws -> Int {
            var total = 0
            while true {
                let sent = try await sender.sendDue(limit: 1).sent
                if sent == 0 { return total }
                total += sent
            }
        }
        async let first = drain(s.sender(exclusive: false))
        async let second = drain(s.sender(exclusive: false))
        let counts = try await [first, second]
        #expect(counts.reduce(0, +) == 6 && counts.allSatisfy { $0 > 0 })
        #expect(s.f.gmail.sendCalls == 6)
        for n in 1...6 { #expect(s.f.gmail.copies(of: "<out\(n)@example.com>") == 1) }
    }
}
