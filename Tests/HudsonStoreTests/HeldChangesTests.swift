import HudsonStore
import Testing

@Suite("Held changes: in the local view at once, never claimed until approved; collisions as for pending")
struct HeldChangesTests {
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t1", minute: 1, labels: ["INBOX", "UNREAD"]),
                    f.snapshot("m2", thread: "t2", minute: 2, labels: ["INBOX"]))
        return f
    }

    @Test("a held archive shows at once, is never claimed, and is claimed once approved")
    func heldThenApproved() throws {
        let f = try fixture()
        let result = try f.store.perform([.archive], on: [.thread("t1")], held: true, origin: .agent)
        let action = try #require(result.actionID)
        #expect(try f.inbox() == ["t2"])
        #expect(try f.queue().map(\.held) == [true])
        #expect(try f.queue().map(\.origin) == [.agent])
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).isEmpty)
        // Held rows never keep a sync from being caught up.
        #expect(try f.store.queuedMutationCount(accountID: f.account.id) == 0)
        #expect(try f.store.heldMutations(accountID: f.account.id).count == 1)
        let summary = try #require(f.store.recentActions().first)
        #expect(summary.origin == .agent && summary.held == 1)

        let approval = try f.store.approveHeld(actions: [action, 999])
        #expect(approval.changes == 1 && approval.notHeldActions == [999])
        #expect(try f.queue().map(\.held) == [false])
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).map(\.messageID) == ["m1"])
        #expect(try f.inbox() == ["t2"])
        try f.checkDerivedTables()
    }

    @Test("undo of a held action that never left discards it: nothing queued, the view as before")
    func undoDiscards() throws {
        let f = try fixture()
        let action = try #require(try f.store.perform([.archive, .read], on: [.thread("t1")], held: true).actionID)
        try f.store.undo(actionID: action)
        #expect(try f.queue().isEmpty)
        #expect(try f.effective("m1") == ["INBOX", "UNREAD"])
        #expect(try f.store.approveHeld(actions: [action]).changes == 0)
        try f.checkDerivedTables()
    }

    @Test("the user's opposite change cancels a held row that never left")
    func oppositeCancels() throws {
        let f = try fixture()
        try f.store.perform([.archive], on: [.thread("t1")], held: true, origin: .agent)
        try f.store.perform([.unarchive], on: [.thread("t1")])
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox() == ["t2", "t1"] || f.inbox() == ["t1", "t2"])
        try f.checkDerivedTables()
    }

    @Test("a held change over a row that may be at Gmail flips it and holds it; the user's change releases it")
    func flipHoldsAndReleases() throws {
        let f = try fixture()
        try f.store.perform([.archive], on: [.thread("t1")])
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 100)
        #expect(try f.store.markMutationsAttempted(claimed.map { ($0.id, $0.op) }).count == 1)
        try f.store.releaseClaims(ids: claimed.map(\.id))
        // The agent puts it back in the inbox, held: the row flips and waits.
        try f.store.perform([.unarchive], on: [.thread("t1")], held: true, origin: .agent)
        #expect(try f.queue().map { "\($0.op) \($0.held)" } == ["add true"])
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).isEmpty)
        // The user archives again: the row flips forward and is the user's, so it goes.
        try f.store.perform([.archive], on: [.thread("t1")])
        #expect(try f.queue().map { "\($0.op) \($0.held)" } == ["remove false"])
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).count == 1)
        try f.checkDerivedTables()
    }

    @Test("approve --all releases every held row of the account, and only held ones")
    func approveAll() throws {
        let f = try fixture()
        try f.store.perform([.star], on: [.thread("t2")])
        try f.store.perform([.archive], on: [.thread("t1")], held: true)
        try f.store.perform([.read], on: [.message("m1")], held: true)
        let approval = try f.store.approveHeld(accountID: f.account.id)
        #expect(approval.changes == 2 && approval.accountIDs == [f.account.id])
        #expect(try f.store.heldMutations().isEmpty)
        #expect(try f.store.queuedMutationCount(accountID: f.account.id) == 3)
    }

    @Test("a held outbox entry is listed but never claimed until approved")
    func heldOutbox() throws {
        let f = try fixture()
        var message = NewOutboxMessage(accountID: f.account.id, raw: Array("Subject: x\r\n\r\nhi\r\n".utf8),
                                       messageID: "<held-1@example.com>", recipients: ["a@example.com"], subject: "x")
        message.held = true
        message.origin = .agent
        let entry = try f.store.enqueueOutbox(message)
        #expect(try f.store.claimDueOutbox(accountID: f.account.id).isEmpty)
        #expect(try f.store.unsentOutboxCount(accountID: f.account.id) == 0)
        #expect(try f.store.heldOutbox().map(\.id) == [entry.id])
        #expect(try f.store.approveHeld(outbox: [entry.id]).outbox == [entry.id])
        #expect(try f.store.claimDueOutbox(accountID: f.account.id).map(\.entry.id) == [entry.id])
    }

    @Test("an agent's message held as a Gmail draft: its draft entry is claimed (to be saved), the schedule never comes due until approved; approved, it is due at once")
    func heldAsDraft() throws {
        let f = try fixture()
        var message = NewOutboxMessage(accountID: f.account.id, raw: Array("Subject: x\r\n\r\nhi\r\n".utf8),
                                       messageID: "<held-3@example.com>", recipients: ["a@example.com"], subject: "x")
        message.origin = .agent
        let entry = try f.store.enqueueHeldSend(message)
        #expect(entry.kind == .draft && !entry.held)
        let listed = try f.store.scheduledSends()
        #expect(listed.map(\.draftEntry) == [entry.id] && listed.first?.awaitsApproval == true && listed.first?.origin == .agent)
        // Far in the future, nothing is due.
        #expect(try f.store.releaseDueScheduledSends(accountID: f.account.id, now: Int64.max - 1).released.isEmpty)
        let approval = try f.store.approveHeld(outbox: [entry.id])
        #expect(approval.outbox == [entry.id] && approval.notHeldOutbox.isEmpty, "\(approval)")
        #expect(try f.store.scheduledSends().first?.awaitsApproval == false)
        // Approving again: nothing held any more.
        #expect(try f.store.approveHeld(outbox: [entry.id]).notHeldOutbox == [entry.id])
    }

    @Test("a held send discarded (cancelled) is never claimed, and approving it then releases nothing")
    func heldOutboxCancelled() throws {
        let f = try fixture()
        var message = NewOutboxMessage(accountID: f.account.id, raw: Array("Subject: x\r\n\r\nhi\r\n".utf8),
                                       messageID: "<held-2@example.com>", recipients: ["a@example.com"], subject: "x")
        message.held = true
        let entry = try f.store.enqueueOutbox(message)
        #expect(try f.store.cancelOutbox(id: entry.id) == .cancelled)
        let approval = try f.store.approveHeld(outbox: [entry.id])
        #expect(approval.outbox.isEmpty && approval.notHeldOutbox == [entry.id])
        #expect(try f.store.claimDueOutbox(accountID: f.account.id).isEmpty)
        #expect(try f.store.heldOutbox().isEmpty)
    }

    @Test("the agent policy defaults to hold and is kept per account; policies are ordered")
    func policy() throws {
        let f = try fixture()
        #expect(try f.store.agentPolicy(accountID: f.account.id) == .hold)
        try f.store.setAgentPolicy(.readOnly, accountID: f.account.id)
        #expect(try f.store.agentPolicy(accountID: f.account.id) == .readOnly)
        #expect(AgentPolicy.readOnly < .drafts && AgentPolicy.drafts < .hold && AgentPolicy.hold < .direct)
    }
}
