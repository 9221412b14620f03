import HudsonStore
import Testing

@Suite("Triage: actions on threads and messages, idempotence, undo")
struct TriageTests {
    /// Thread t: an older message still in the inbox and unread, a newer one archived and read.
    func threadFixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.apply(f.snapshot("old", thread: "t", minute: 1, labels: ["INBOX", "UNREAD"]),
                    f.snapshot("new", thread: "t", minute: 2, labels: ["UNREAD"]))
        return f
    }

    @Test("archive of a thread whose older message still carries INBOX leaves the inbox")
    func archiveTouchesEveryMessage() throws {
        let f = try threadFixture()
        #expect(try f.inbox() == ["t"])
        let result = try f.store.perform([.archive], on: [.thread("t")])
        #expect(result.deltas.map(\.messageID) == ["old"])  // only the message that carries INBOX
        #expect(try f.inbox().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("archiving only the newest message of a thread leaves it in the inbox")
    func archivingNewestOnlyIsNotEnough() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("old", thread: "t", minute: 1), f.snapshot("new", thread: "t", minute: 2))
        try f.store.perform([.archive], on: [.message("new")])
        #expect(try f.inbox() == ["t"])
    }

    @Test("read on a thread touches every unread message")
    func readWholeThread() throws {
        let f = try threadFixture()
        #expect(try f.store.perform([.read], on: [.thread("t")]).deltas.count == 2)
        #expect(try f.rollup("t")?.unread == false)
        try f.checkDerivedTables()
        // ... and unread again (the newest message only): counted, not known.
        try f.store.perform([.unread], on: [.thread("t")])
        #expect(try f.rollup("t")?.unreadCount == 1)
        try f.checkDerivedTables()
    }

    @Test("star, unstar and unread on a thread touch the newest message only")
    func newestOnly() throws {
        let f = try threadFixture()
        try f.store.perform([.read], on: [.thread("t")])
        #expect(try f.store.perform([.star, .unread], on: [.thread("t")]).deltas.map(\.messageID) == ["new", "new"])
        #expect(try f.effective("new") == ["STARRED", "UNREAD"])
        #expect(try f.effective("old") == ["INBOX"])
        #expect(try f.store.perform([.unstar], on: [.thread("t")]).deltas.map(\.messageID) == ["new"])
    }

    @Test("hd-mark twice queues nothing the second time")
    func idempotent() throws {
        let f = try threadFixture()
        let first = try f.store.perform([.archive, .read], on: [.thread("t")])
        #expect(first.actionID != nil && first.deltas.count == 3)
        let second = try f.store.perform([.archive, .read], on: [.thread("t")])
        #expect(second.actionID == nil && second.deltas.isEmpty)
        #expect(try f.queue().count == 3)
    }

    @Test("one invocation over many threads resolves each change against its own queue row: insert, cancel, flip")
    func batchOfCollisions() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("a1", thread: "a", minute: 1, labels: ["INBOX"]),
                    f.snapshot("b1", thread: "b", minute: 2, labels: []),
                    f.snapshot("c1", thread: "c", minute: 3, labels: []),
                    f.snapshot("c2", thread: "c", minute: 4, labels: ["INBOX"]))
        // b1: a pending unarchive; c1: an unarchive already in flight.
        try f.store.perform([.unarchive], on: [.message("c1")])
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 300)
        try f.store.perform([.unarchive], on: [.message("b1")])
        #expect(Set(try f.inbox()) == ["a", "b", "c"])

        let result = try f.store.perform([.archive], on: [.thread("a"), .thread("b"), .thread("c")])
        let outcomes = Dictionary(uniqueKeysWithValues: result.deltas.map { ($0.messageID, $0.outcome) })
        #expect(outcomes == ["a1": .inserted, "b1": .cancelled, "c1": .flipped, "c2": .inserted])
        #expect(try f.inbox().isEmpty)
        let queued = try f.queue().map { "\($0.messageID) \($0.op) \($0.state)" }.sorted()
        #expect(queued == ["a1 remove pending", "c1 remove pending", "c2 remove pending"])
        try f.checkDerivedTables()

        // Its undo restores what the inbox showed before, each change from the row the
        // archive left: b1's unarchive, which the archive cancelled, is queued again.
        let undo = try f.store.undo()
        let undone = Dictionary(uniqueKeysWithValues: undo.deltas.map { ($0.messageID, $0.outcome) })
        #expect(undone == ["a1": .cancelled, "b1": .inserted, "c1": .inserted, "c2": .cancelled])
        #expect(Set(try f.inbox()) == ["a", "b", "c"])
        try f.checkDerivedTables()
    }

    @Test("actions apply in the order given: +L -L in one invocation queues nothing")
    func actionsInOrder() throws {
        let f = try threadFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [LabelInfo(id: "Label_1", name: "Later", kind: .user)])
        let result = try f.store.perform([.addLabel("Later"), .removeLabel("Later")], on: [.thread("t")])
        #expect(result.deltas.map(\.outcome) == [.inserted, .inserted, .cancelled, .cancelled])
        #expect(try f.queue().isEmpty)
        #expect(try f.effective("old") == ["INBOX", "UNREAD"])
        try f.checkDerivedTables()
    }

    @Test("a thread and one of its messages named in one invocation change that message once")
    func overlappingReferences() throws {
        let f = try threadFixture()
        let result = try f.store.perform([.archive], on: [.message("old"), .thread("t"), .message("old")])
        #expect(result.deltas.map(\.messageID) == ["old"])
        #expect(try f.queue().count == 1)
        #expect(try f.inbox().isEmpty)
        try f.checkDerivedTables()
        // A label added to a whole thread and then removed from one message: the thread
        // keeps it through the other.
        try f.store.replaceLabels(accountID: f.account.id, with: [LabelInfo(id: "Label_1", name: "Later", kind: .user)])
        try f.store.perform([.addLabel("Later")], on: [.thread("t")])
        try f.store.perform([.removeLabel("Later")], on: [.message("new")])
        #expect(try f.rollup("t")?.labels.contains("Label_1") == true)
        try f.checkDerivedTables()
    }

    @Test("a thread keeps a label while any member carries it; its unread count follows each member")
    func rollupFollowsEachMember() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t", minute: 1, labels: ["INBOX", "UNREAD", "STARRED"]),
                    f.snapshot("m2", thread: "t", minute: 2, labels: ["INBOX", "UNREAD"]),
                    f.snapshot("m3", thread: "t", minute: 3, labels: ["UNREAD"]))
        #expect(try f.rollup("t")?.unreadCount == 3)
        try f.store.perform([.read, .unstar, .archive], on: [.message("m1")])
        #expect(try f.rollup("t")?.unreadCount == 2)
        #expect(try f.rollup("t")?.starred == false)
        #expect(try f.inbox() == ["t"])  // m2 still carries INBOX
        try f.checkDerivedTables()
        try f.store.perform([.read, .archive], on: [.message("m2")])
        #expect(try f.rollup("t")?.unreadCount == 1)
        #expect(try f.inbox().isEmpty)
        try f.checkDerivedTables()
        try f.store.undo()
        #expect(try f.rollup("t")?.unreadCount == 2)
        #expect(try f.inbox() == ["t"])
        try f.checkDerivedTables()
    }

    @Test("labels are named by name (case-insensitive) or id; an unknown name queues nothing at all")
    func labelsByName() throws {
        let f = try threadFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system),
            LabelInfo(id: "Label_12", name: "Receipts/2026", kind: .user),
        ])
        let result = try f.store.perform([.addLabel("receipts/2026")], on: [.thread("t")])
        #expect(result.deltas.map(\.label) == ["Label_12", "Label_12"])
        #expect(throws: StoreError.unknownLabel("Nope")) {
            try f.store.perform([.archive, .addLabel("Nope")], on: [.thread("t")])
        }
        #expect(try f.queue().map(\.label) == ["Label_12", "Label_12"])  // the archive was rolled back too
        #expect(try f.inbox() == ["t"])
    }

    @Test("unknown references are reported and the rest are done")
    func unknownReferences() throws {
        let f = try threadFixture()
        let result = try f.store.perform([.archive], on: [.message("nope"), .thread("t"), .thread("gone")])
        #expect(result.unknownReferences == [.message("nope"), .thread("gone")])
        #expect(try f.inbox().isEmpty)
    }

    @Test("a dry run reports the deltas and writes nothing")
    func dryRun() throws {
        let f = try threadFixture()
        let result = try f.store.perform([.archive], on: [.thread("t")], dryRun: true)
        #expect(result.deltas.map(\.messageID) == ["old"] && result.actionID == nil)
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox() == ["t"])
        #expect(try f.store.recentActions().isEmpty)
    }

    @Test("undo of a pending action cancels it: nothing is left to send")
    func undoPending() throws {
        let f = try threadFixture()
        let action = try f.store.perform([.archive], on: [.thread("t")])
        let undo = try f.store.undo()
        #expect(undo.actionID == action.actionID && !undo.alreadyUndone)
        #expect(undo.deltas.map(\.outcome) == [.cancelled])
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox() == ["t"])
        try f.checkDerivedTables()
    }

    @Test("undo of an action already in flight overlays the inverse forward")
    func undoInFlight() throws {
        let f = try threadFixture()
        let action = try #require(try f.store.perform([.archive], on: [.thread("t")]).actionID)
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 300)
        let undo = try f.store.undo(actionID: action)
        #expect(undo.deltas.map(\.outcome) == [.flipped])
        #expect(try f.queue().map(\.op) == [.add])
        #expect(try f.inbox() == ["t"])
    }

    @Test("undoing twice is a no-op the second time")
    func undoTwice() throws {
        let f = try threadFixture()
        let action = try #require(try f.store.perform([.archive], on: [.thread("t")]).actionID)
        try f.store.undo()
        let again = try f.store.undo()
        #expect(again.alreadyUndone && again.actionID == action && again.undoActionID == nil)
        #expect(try f.store.undo(actionID: action).alreadyUndone)
        #expect(throws: StoreError.noSuchAction(999)) { try f.store.undo(actionID: 999) }
    }

    @Test("undo passes over a message deleted since, and a key that now names another message")
    func undoAfterDeletionAndKeyReuse() throws {
        let f = try threadFixture()
        let action = try #require(try f.store.perform([.archive], on: [.thread("t")]).actionID)
        let oldKey = try #require(try f.db.scalarInt("SELECT id FROM messages WHERE gmail_id = 'old'"))
        try f.store.deleteVanishedMessage(gmailID: "old", accountID: f.account.id, historyID: 200)
        // Same millisecond, so it is given the key "old" had (Snapshots.allocateMessageKey).
        try f.apply(f.snapshot("stranger", thread: "s", history: 201, minute: 1, labels: ["UNREAD"]))
        #expect(try f.db.scalarInt("SELECT id FROM messages WHERE gmail_id = 'stranger'") == oldKey)
        let undo = try f.store.undo(actionID: action)
        #expect(undo.deltas.isEmpty && !undo.alreadyUndone)
        #expect(try f.effective("stranger") == ["UNREAD"])  // not put in the inbox in "old"'s place
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("undo remembers at least the newest 1,000 actions; older ones go with their items, but not one a remembered undo undid")
    func undoHistoryIsBounded() throws {
        let f = try threadFixture()
        let kept = Int(Store.actionsKept)
        func toggle(_ n: Int) throws -> Int64 {
            try #require(try f.store.perform([n % 2 == 0 ? .star : .unstar], on: [.message("new")]).actionID)
        }
        var ids: [Int64] = []
        for n in 0..<(kept + Int(Store.actionsSlack) + 1) { ids.append(try toggle(n)) }
        #expect(try f.store.recentActions(limit: 5_000).count == kept)
        #expect(throws: StoreError.noSuchAction(ids[0])) { try f.store.undo(actionID: ids[0]) }
        #expect(try f.db.scalarInt("SELECT count(*) FROM action_items WHERE action_id = ?", ids[0]) == 0)
        // An invocation with nothing to do records nothing, so it forgets nothing either.
        for _ in 0..<200 { #expect(try f.store.perform([.archive], on: [.message("new")]).actionID == nil) }
        #expect(try f.store.recentActions(limit: 5_000).count == kept)

        // Undo the oldest action remembered, then record enough to forget it: the undo
        // stays an undo, so it is neither picked by a bare undo nor taken for new work.
        let oldest = ids[ids.count - kept]
        let undo = try #require(try f.store.undo(actionID: oldest).undoActionID)
        for n in 0..<Int(Store.actionsSlack) { _ = try toggle(n + 1) }  // the last one forgets
        let remembered = try f.store.recentActions(limit: 5_000)
        #expect(remembered.count == kept + 1)  // the undone action stays while its undo does
        #expect(remembered.contains { $0.id == undo && $0.undoes == oldest })
        #expect(try f.store.undo(actionID: oldest).alreadyUndone)
        #expect(try f.store.undo().actionID != oldest)
        try f.checkDerivedTables()
    }

    @Test("references parse as thread:, message: or a bare message id")
    func referenceParsing() {
        #expect(Reference(parsing: "thread:18c9a4f0") == .thread("18c9a4f0"))
        #expect(Reference(parsing: "message:18c9a4f0") == .message("18c9a4f0"))
        #expect(Reference(parsing: "18c9a4f0") == .message("18c9a4f0"))
        #expect(Reference(parsing: "thread:") == nil)
        #expect(Reference(parsing: "../etc") == nil)
        #expect(TriageAction(parsing: "+Work") == .addLabel("Work"))
        #expect(TriageAction(parsing: "-Work") == .removeLabel("Work"))
        #expect(TriageAction(parsing: "+") == nil)
        #expect(TriageAction(parsing: "archive") == .archive)
        #expect(TriageAction(parsing: "arkive") == nil)
    }
}
