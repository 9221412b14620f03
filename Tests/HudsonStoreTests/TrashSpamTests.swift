import HudsonQuery
import HudsonStore
import Testing

@Suite("Trash, spam and importance: where a message is, what every list shows, and undo")
struct TrashSpamTests {
    /// Thread t: m1 in the inbox, unread, labelled Work; m2 read and archived; m3 my reply.
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [LabelInfo(id: "Label_1", name: "Work", kind: .user)])
        try f.apply(f.snapshot("m1", thread: "t", minute: 1, labels: ["INBOX", "UNREAD", "Label_1"], subject: "Budget"),
                    f.snapshot("m2", thread: "t", minute: 2, labels: [], subject: "Re: Budget"),
                    f.snapshot("m3", thread: "t", minute: 3, labels: ["SENT"], subject: "Re: Budget"),
                    f.snapshot("o1", thread: "o", minute: 4, labels: ["INBOX"], subject: "Other"))
        return f
    }

    func search(_ f: StoreFixture, _ text: String) throws -> [String] {
        try f.store.searchThreads(Query.parse(text), options: SearchOptions(now: f.clock.now), limit: 50).map(\.threadID)
    }

    func listed(_ f: StoreFixture, _ label: String) throws -> [String] {
        try f.store.threads(labels: [(f.account.id, label)], limit: 50).map(\.threadID)
    }

    /// No message is in two of inbox, spam and trash.
    func expectOneLocation(_ f: StoreFixture, _ ids: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for id in ids {
            let places = Set(try f.effective(id)).intersection(["INBOX", "SPAM", "TRASH"])
            #expect(places.count <= 1, "\(id) is in \(places.sorted())", sourceLocation: sourceLocation)
        }
    }

    @Test("trash moves a whole thread out of the inbox, its labels' lists and search, into in:trash; undo restores every label")
    func trashThenUndo() throws {
        let f = try fixture()
        let before = try ["m1", "m2", "m3"].map { try f.effective($0) }
        let result = try f.store.perform([.trash], on: [.thread("t")])
        #expect(result.deltas.map { "\($0.messageID) \($0.op) \($0.label)" }.sorted()
                == ["m1 add TRASH", "m1 remove INBOX", "m2 add TRASH", "m3 add TRASH"])
        #expect(try f.effective("m1") == ["Label_1", "TRASH", "UNREAD"])  // its other labels stay
        #expect(try f.inbox() == ["o"])
        #expect(try listed(f, "Label_1").isEmpty)
        #expect(try listed(f, "TRASH") == ["t"])
        #expect(try search(f, "budget").isEmpty)
        #expect(try search(f, "label:work").isEmpty)
        #expect(try search(f, "in:trash") == ["t"])
        #expect(try search(f, "in:anywhere budget") == ["t"])
        #expect(try f.rollup("t")?.labels == ["TRASH"])
        // Wholly in trash, it shows there as it was: unread.
        #expect(try f.rollup("t")?.unread == true)
        #expect(try f.rollup("t")?.unreadCount == 1)
        try expectOneLocation(f, ["m1", "m2", "m3"])
        try f.checkDerivedTables()

        try f.store.undo()
        #expect(try ["m1", "m2", "m3"].map { try f.effective($0) } == before)
        #expect(try f.inbox() == ["o", "t"] || f.inbox() == ["t", "o"])
        #expect(try listed(f, "Label_1") == ["t"])
        #expect(try search(f, "in:trash").isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a count of messages agrees with the messages listed, with spam and trash on the server and queued")
    func countsAgreeWithLists() throws {
        let f = try fixture()
        try f.apply(f.snapshot("s1", thread: "s", minute: 5, labels: ["SPAM", "UNREAD"], subject: "Budget offer"),
                    f.snapshot("x1", thread: "x", minute: 6, labels: ["TRASH"], subject: "Old budget"))
        let queries = ["budget", "budget other", "budget OR other", "in:anywhere budget", "in:trash budget",
                       "in:spam", "-in:trash budget", "from:bob@example.org", "from:bob@example.org budget",
                       "is:unread", "label:work budget", "larger:1", "budget after:2025/12/31"]
        func expectAgreement(_ state: String) throws {
            for text in queries {
                let query = try Query.parse(text)
                for account in [nil, f.account.id] {
                    let options = SearchOptions(accountID: account, now: f.clock.now)
                    // A page tests each message; a read of every match and a count list spam and trash.
                    let paged = try f.store.searchMessages(query, options: options, limit: 1_000).map(\.messageID)
                    let every = try f.store.searchMessages(query, options: options, limit: .max).map(\.messageID)
                    let context = "\(state): \(text), account \(account.map(String.init) ?? "all")"
                    #expect(every == paged, "\(context)")
                    #expect(try f.store.countSearch(query, options: options, threads: false) == paged.count, "\(context)")
                }
            }
        }
        try expectAgreement("nothing queued")
        #expect(try f.store.countSearch(Query.parse("budget"), options: SearchOptions(now: f.clock.now), threads: false) == 3)
        try f.store.perform([.trash], on: [.thread("t")])
        try f.store.perform([.untrash], on: [.thread("x")])
        try f.store.perform([.spam], on: [.thread("o")])
        try expectAgreement("trash, untrash and spam queued")
        #expect(try f.store.countSearch(Query.parse("budget"), options: SearchOptions(now: f.clock.now), threads: false) == 1)
    }

    @Test("a message Gmail has in trash with INBOX still on it is in trash, not in the inbox")
    func serverTrashKeepsInbox() throws {
        let f = try fixture()
        try f.apply(f.snapshot("o1", thread: "o", history: 200, minute: 4, labels: ["INBOX", "TRASH"], subject: "Other"))
        #expect(try f.inbox() == ["t"])
        #expect(try search(f, "in:inbox").contains("o") == false)
        #expect(try search(f, "in:trash") == ["o"])
        try f.checkDerivedTables()
        // untrash takes it out of trash; it was in the inbox and stays there.
        let result = try f.store.perform([.untrash], on: [.thread("o")])
        #expect(result.deltas.map { "\($0.messageID) \($0.op) \($0.label)" } == ["o1 remove TRASH"])
        #expect(Set(try f.inbox()) == ["t", "o"])
        try f.checkDerivedTables()
    }

    @Test("a thread partly in trash: its other messages keep it in the inbox; untrash restores the inbox to the trashed ones only")
    func partlyInTrash() throws {
        let f = try fixture()
        try f.store.perform([.trash], on: [.message("m1")])
        try f.store.perform([.unarchive], on: [.message("m2")])
        // m1 in trash, m2 in the inbox, m3 (sent) neither.
        #expect(Set(try f.inbox()) == ["t", "o"])
        #expect(try listed(f, "TRASH") == ["t"])
        #expect(try listed(f, "Label_1").isEmpty)  // only m1 carries Work, and it is in trash
        #expect(try f.rollup("t")?.unreadCount == 0)  // m1 is the unread one
        #expect(try search(f, "in:trash") == ["t"])
        #expect(try search(f, "is:unread").isEmpty)
        try f.checkDerivedTables()

        let result = try f.store.perform([.untrash], on: [.thread("t")])
        #expect(result.deltas.map { "\($0.messageID) \($0.op) \($0.label)" } == ["m1 remove TRASH", "m1 add INBOX"])
        #expect(try f.effective("m1") == ["INBOX", "Label_1", "UNREAD"])
        #expect(try f.effective("m3") == ["SENT"])
        #expect(try listed(f, "Label_1") == ["t"])
        #expect(try f.rollup("t")?.unreadCount == 1)
        try f.checkDerivedTables()

        try f.store.undo()
        #expect(try f.effective("m1") == ["Label_1", "TRASH", "UNREAD"])
        #expect(try listed(f, "TRASH") == ["t"])
        try f.checkDerivedTables()
    }

    @Test("spam takes messages out of inbox and trash; unspam puts in the inbox only those that were in spam")
    func spamAndUnspam() throws {
        let f = try fixture()
        try f.store.perform([.trash], on: [.message("m2")])
        let spam = try f.store.perform([.spam], on: [.thread("t")])
        #expect(spam.deltas.map { "\($0.messageID) \($0.op) \($0.label)" }.sorted()
                == ["m1 add SPAM", "m1 remove INBOX", "m2 add SPAM", "m2 remove TRASH", "m3 add SPAM"])
        try expectOneLocation(f, ["m1", "m2", "m3"])
        #expect(try f.inbox() == ["o"])
        #expect(try search(f, "in:spam") == ["t"])
        #expect(try search(f, "in:trash").isEmpty)
        #expect(try search(f, "budget").isEmpty)
        try f.checkDerivedTables()

        // Gmail's "Not spam" moves the conversation to the inbox.
        let unspam = try f.store.perform([.unspam], on: [.thread("t")])
        #expect(unspam.deltas.filter { $0.op == .add }.map(\.messageID).sorted() == ["m1", "m2", "m3"])
        #expect(try f.inbox().contains("t"))
        #expect(try search(f, "in:spam").isEmpty)
        try expectOneLocation(f, ["m1", "m2", "m3"])
        try f.checkDerivedTables()

        // Undo of both, newest first: back to where each message was.
        try f.store.undo(actionID: unspam.actionID)
        try f.store.undo(actionID: spam.actionID)
        #expect(try f.effective("m2") == ["TRASH"])
        #expect(try f.effective("m1") == ["INBOX", "Label_1", "UNREAD"])
        try f.checkDerivedTables()
    }

    @Test("moving into the inbox, spam or trash takes a message out of the other two: never in two at once")
    func oneLocation() throws {
        let f = try fixture()
        let sequence: [[TriageAction]] = [
            [.spam], [.trash], [.unarchive], [.spam, .trash], [.untrash], [.trash, .spam], [.unspam], [.spam], [.unarchive],
        ]
        for actions in sequence {
            try f.store.perform(actions, on: [.thread("t")])
            try expectOneLocation(f, ["m1", "m2", "m3"])
            try f.checkDerivedTables()
        }
    }

    @Test("unarchive of a thread in trash or spam brings it back to the inbox, as Gmail's Move to Inbox does")
    func unarchiveLeavesTrash() throws {
        let f = try fixture()
        try f.store.perform([.trash], on: [.thread("t")])
        let result = try f.store.perform([.unarchive], on: [.thread("t")])
        #expect(result.deltas.filter { $0.label == "TRASH" }.count == 3)
        #expect(Set(try f.inbox()) == ["t", "o"])
        #expect(try search(f, "in:trash").isEmpty)
        try f.checkDerivedTables()
    }

    @Test("star and unread on a thread act on its newest message outside trash; unarchive leaves a trashed member in the trash")
    func threadActionsPassOverTrash() throws {
        let f = try fixture()
        try f.store.perform([.trash], on: [.message("m3")])  // the newest
        #expect(try f.store.perform([.star], on: [.thread("t")]).deltas.map(\.messageID) == ["m2"])
        #expect(try f.rollup("t")?.starred == true)
        try f.store.perform([.archive], on: [.thread("t")])
        let unarchive = try f.store.perform([.unarchive], on: [.thread("t")])
        #expect(Set(unarchive.deltas.map(\.messageID)) == ["m1", "m2"])
        #expect(try f.effective("m3").contains("TRASH"))
        try f.checkDerivedTables()
        // A thread wholly in trash comes back whole.
        try f.store.perform([.trash], on: [.thread("t")])
        try f.store.perform([.unarchive], on: [.thread("t")])
        #expect(try ["m1", "m2", "m3"].allSatisfy { try !f.effective($0).contains("TRASH") })
        try f.checkDerivedTables()
    }

    @Test("undo restores exactly after an invocation whose actions change one label twice; one that nets out is not recorded")
    func undoNetsEachLabel() throws {
        let f = try fixture()
        let before = try ["m1", "m2", "m3"].map { try f.effective($0) }
        let netted = try f.store.perform([.trash, .untrash], on: [.message("m1")])
        #expect(netted.actionID == nil)
        #expect(try f.effective("m1") == before[0])
        #expect(try f.queue().isEmpty)
        let both = try f.store.perform([.spam, .trash], on: [.thread("t")])
        #expect(try ["m1", "m2", "m3"].allSatisfy { try f.effective($0).contains("TRASH") && !f.effective($0).contains("SPAM") })
        try f.store.undo(actionID: both.actionID)
        #expect(try ["m1", "m2", "m3"].map { try f.effective($0) } == before)
        #expect(try f.queue().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a dry run of several actions plans what the real run does")
    func dryRunOfSeveralActions() throws {
        let f = try fixture()
        let planned = try f.store.perform([.spam, .trash], on: [.thread("t")], dryRun: true)
        #expect(try f.queue().isEmpty)
        let done = try f.store.perform([.spam, .trash], on: [.thread("t")])
        let describe = { (r: TriageResult) in r.deltas.map { "\($0.messageID) \($0.op) \($0.label) \($0.outcome)" } }
        #expect(describe(planned) == describe(done))
        #expect(planned.actionID == nil && done.actionID != nil)
    }

    @Test("important and unimportant change every message of a thread; is:important follows at once")
    func importance() throws {
        let f = try fixture()
        #expect(try f.store.perform([.important], on: [.thread("t")]).deltas.count == 3)
        #expect(try search(f, "is:important") == ["t"])
        #expect(try listed(f, "IMPORTANT") == ["t"])
        try f.checkDerivedTables()
        #expect(try f.store.perform([.unimportant], on: [.message("m1")]).deltas.count == 1)
        #expect(try search(f, "is:important") == ["t"])
        try f.store.perform([.unimportant], on: [.thread("t")])
        #expect(try search(f, "is:important").isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a dry run of trash lists every change and writes nothing")
    func dryRun() throws {
        let f = try fixture()
        let planned = try f.store.perform([.trash, .important], on: [.thread("t")], dryRun: true)
        #expect(planned.actionID == nil)
        #expect(planned.deltas.count == 7)
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox().contains("t"))
    }

    @Test("the actions parse by name, and names lists every one")
    func names() {
        for name in ["trash", "untrash", "spam", "unspam", "important", "unimportant"] {
            #expect(TriageAction(parsing: name)?.description == name)
            #expect(TriageAction.names.contains(name))
        }
        #expect(TriageAction(parsing: "delete") == nil)
        #expect(TriageAction(parsing: "+trash") == .addLabel("trash"))
    }
}
