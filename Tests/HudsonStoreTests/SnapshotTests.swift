import HudsonStore
import SQLite
import Testing

@Suite("Snapshots: one transaction per page, a savepoint per message, the version guard")
struct SnapshotTests {
    @Test("applying a page stores messages, canonical labels, addresses, rollup, index and sequence")
    func applyPage() throws {
        let f = try StoreFixture()
        let report = try f.apply(
            f.snapshot("m1", thread: "t1", minute: 1, subject: "Quarterly zebra report"),
            f.snapshot("m2", thread: "t1", minute: 2, labels: ["INBOX"], from: "\"Doe, Jane\" <jane@example.net>"),
            f.snapshot("m3", thread: "t2", minute: 3, labels: ["SENT"]))
        #expect(report.applied == 3 && report.stale == 0 && report.failures.isEmpty)
        #expect(try f.canonical("m1") == ["INBOX", "UNREAD"])
        #expect(try f.inbox() == ["t1"])
        let t1 = try #require(try f.rollup("t1"))
        #expect(t1.messageCount == 2 && t1.unreadCount == 1 && t1.unread && t1.inInbox)
        #expect(t1.sender == "Doe, Jane" && t1.newestMessageID == "m2")
        #expect(t1.participants == ["Bob", "Doe, Jane"])
        #expect(try f.ftsHits("zebra") == ["m1"])
        #expect(try f.db.scalarInt(
            "SELECT count(*) FROM message_addresses WHERE address = 'jane@example.net' AND role = 'from'") == 1)
        try f.checkDerivedTables()
    }

    @Test("version guard: a newer snapshot replaces an older one")
    func newerWins() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100, labels: ["INBOX", "UNREAD"]))
        let report = try f.apply(f.snapshot("m1", history: 200, labels: ["INBOX"], subject: "Edited"))
        #expect(report.applied == 1)
        #expect(try f.canonical("m1") == ["INBOX"])
        #expect(try f.ftsHits("edited") == ["m1"])
        try f.checkDerivedTables()
    }

    @Test("version guard: a stale snapshot arriving after a newer one is a no-op")
    func staleAfterNewerIsNoOp() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 200, labels: ["INBOX"]))
        let seqBefore = try f.seq("m1")
        let report = try f.apply(f.snapshot("m1", history: 100, labels: ["INBOX", "UNREAD"], subject: "Old"))
        #expect(report.applied == 0 && report.stale == 1)
        #expect(try f.canonical("m1") == ["INBOX"])
        #expect(try f.ftsHits("old").isEmpty)
        #expect(try f.seq("m1") == seqBefore)
        try f.checkDerivedTables()
    }

    @Test("version guard: re-applying the same version is a no-op")
    func sameVersionIsNoOp() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 150))
        #expect(try f.apply(f.snapshot("m1", history: 150, labels: [])).stale == 1)
        #expect(try f.canonical("m1") == ["INBOX", "UNREAD"])
    }

    @Test("a page with one malformed message commits the rest, and nothing of the bad one")
    func malformedMessageSkipped() throws {
        let f = try StoreFixture()
        var bad = f.snapshot("bad", thread: "t9", minute: 5)
        bad.threadID = ""  // rejected by the schema's CHECK after nothing else was written
        var worse = f.snapshot("worse", thread: "t8", minute: 6)
        worse.historyID = 0
        let report = try f.apply(f.snapshot("m1", minute: 1), bad, f.snapshot("m2", minute: 2), worse)
        #expect(report.applied == 2)
        #expect(report.failures.map(\.messageID) == ["bad", "worse"])
        #expect(try f.store.effectiveLabels(gmailID: "bad", accountID: f.account.id) == nil)
        #expect(try f.db.scalarInt("SELECT count(*) FROM message_seq WHERE gmail_id IN ('bad', 'worse')") == 0)
        #expect(try f.inbox() == ["m2", "m1"])
        try f.checkDerivedTables()
    }

    @Test("a message that moves to another thread leaves the old thread's rollup")
    func threadMove() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "old", history: 100))
        try f.apply(f.snapshot("m1", thread: "new", history: 101))
        #expect(try f.rollup("old") == nil)
        #expect(try f.rollup("new")?.messageCount == 1)
        try f.checkDerivedTables()
    }

    @Test("CATEGORY_* and user labels are kept as canonical labels and get label rows")
    func categoryLabelsPersist() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", labels: ["CATEGORY_PROMOTIONS", "Label_7", "INBOX"]))
        #expect(try f.canonical("m1") == ["CATEGORY_PROMOTIONS", "INBOX", "Label_7"])
        #expect(try f.store.labels(accountID: f.account.id).contains { $0.id == "Label_7" && $0.name == nil })
        try f.checkDerivedTables()
    }

    @Test("message keys follow the date, so the index lists newest first by rowid")
    func keysFollowDate() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("late", minute: 10, subject: "same word"),
                    f.snapshot("early", minute: 1, subject: "same word"),
                    f.snapshot("tie", minute: 10, subject: "same word"))
        #expect(try f.ftsHits("word") == ["tie", "late", "early"])
    }
}
