import HudsonStore
import SQLite
import Testing

@Suite("Reads: inbox paging, plans, bodies, change sequence, accounts and labels")
struct ReadsTests {
    @Test("an inbox or label page reads the thread_labels key in order: no scan, no temporary B-tree")
    func labelPagePlan() throws {
        let f = try StoreFixture()
        for paged in [false, true] {
            let plan = try queryPlan(f.db, Store.labelPageSQL(paged: paged), [1, "INBOX", 0, "", 50])
            // One range of the key per (account, label), in the page's order; each
            // thread's rollup row and newest message found by their keys.
            #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
            #expect(plan.contains { $0.hasPrefix("SEARCH tl USING PRIMARY KEY (account_id=? AND label=?") }, "\(plan)")
            #expect(plan.contains { $0.hasPrefix("SEARCH r USING PRIMARY KEY") }, "\(plan)")
        }
    }

    @Test("a newest-first full-text search walks the index: no scan of messages, no temporary B-tree")
    func searchPlan() throws {
        let f = try StoreFixture()
        let plan = try queryPlan(f.db, """
            SELECT m.gmail_id FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid
             WHERE fts_messages MATCH ? ORDER BY fts_messages.rowid DESC LIMIT 50
            """, ["\"meeting\""])
        #expect(!plan.contains { $0.hasPrefix("SCAN m") || $0.contains("TEMP B-TREE") }, "\(plan)")
        #expect(plan.contains { $0.contains("VIRTUAL TABLE") })
        let effective = try queryPlan(f.db, "SELECT label FROM effective_labels WHERE message_id = ?", [1])
        #expect(!effective.contains { $0.hasPrefix("SCAN") }, "\(effective)")
    }

    @Test("keyset paging: pages do not overlap or skip, newest first")
    func paging() throws {
        let f = try StoreFixture()
        for minute in 0..<7 {
            try f.apply(f.snapshot("m\(minute)", minute: Int64(minute / 2)))  // pairs share a timestamp
        }
        var seen: [String] = []
        var cursor: ThreadPageCursor?
        repeat {
            let page = try f.store.inboxThreads(accountID: f.account.id, limit: 3, after: cursor)
            seen += page.map(\.threadID)
            cursor = page.last.map { ThreadPageCursor(lastMessageAt: $0.lastMessageAt, threadID: $0.threadID) }
            if page.count < 3 { break }
        } while true
        #expect(seen == ["m6", "m5", "m4", "m3", "m2", "m1", "m0"])
        #expect(try f.store.inboxThreads(accountID: nil, limit: 100).count == 7)
    }

    @Test("bodies: saved text is searchable, attachments flag the thread, and hydration walks newest first in the window")
    func bodies() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("old", minute: -200 * 24 * 60), f.snapshot("a", minute: 1), f.snapshot("b", minute: 2))
        let window = f.clock.now - 90 * 86_400_000
        #expect(try f.store.messagesNeedingBodies(accountID: f.account.id, since: window, limit: 25) == ["b", "a"])
        #expect(try f.store.messagesNeedingBodies(accountID: f.account.id, since: nil, limit: 25) == ["b", "a", "old"])
        let body = MessageBody(text: "the giraffe is here", html: "<p>the giraffe is here</p>", attachments: [
            AttachmentInfo(partID: "1", filename: "report.pdf", mimeType: "application/pdf", size: 4021, attachmentID: "ANGj"),
        ])
        #expect(try f.store.saveBody(body, gmailID: "b", accountID: f.account.id))
        #expect(try f.store.body(gmailID: "b", accountID: f.account.id) == body)
        #expect(try f.ftsHits("giraffe") == ["b"])
        #expect(try f.rollup("b")?.hasAttachment == true)
        #expect(try f.store.messagesNeedingBodies(accountID: f.account.id, since: window, limit: 25) == ["a"])
        #expect(try !f.store.saveBody(body, gmailID: "gone", accountID: f.account.id))
        // A newer snapshot keeps the body and its index entry.
        try f.apply(f.snapshot("b", history: 200, minute: 2, subject: "renamed"))
        #expect(try f.ftsHits("giraffe AND renamed") == ["b"])
        try f.checkDerivedTables()
    }

    @Test("a hydration batch is one transaction: bodies of known messages are stored, a vanished one is reported")
    func hydrationBatch() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("a", thread: "t", minute: 1), f.snapshot("b", thread: "t", minute: 2), f.snapshot("c", minute: 3))
        let attachment = AttachmentInfo(partID: "1", filename: "report.pdf", mimeType: "application/pdf", size: 10, attachmentID: "X")
        let report = try f.store.applyHydrations([
            Hydration(gmailID: "a", snapshot: nil, body: MessageBody(text: "an okapi in the garden")),
            Hydration(gmailID: "gone", snapshot: nil, body: MessageBody(text: "never stored")),
            Hydration(gmailID: "b", snapshot: f.snapshot("b", thread: "t", history: 300, minute: 2, subject: "newer"),
                      body: MessageBody(text: "with a report", attachments: [attachment])),
        ], accountID: f.account.id)
        #expect(report.saved == ["a", "b"])
        #expect(report.vanished == ["gone"])
        #expect(report.failures.isEmpty)
        #expect(try f.ftsHits("okapi") == ["a"])
        #expect(try f.ftsHits("report AND newer") == ["b"])
        #expect(try f.rollup("t")?.hasAttachment == true)
        #expect(try f.store.messagesNeedingBodies(accountID: f.account.id, since: nil, limit: 25) == ["c"])
        try f.checkDerivedTables()
    }

    @Test("bulk indexing defers merges; merging in steps ends in one segment and an index that checks out")
    func fullTextMaintenance() throws {
        let f = try StoreFixture()
        try f.store.setBulkIndexing(true)
        #expect(try f.db.scalarInt("SELECT v FROM fts_messages_config WHERE k = 'automerge'") == 16)
        for i in 0..<30 {  // one transaction (one segment) each
            try f.apply(f.snapshot("m\(i)", minute: Int64(i), subject: "walrus number \(i)"))
        }
        try f.store.setBulkIndexing(false)
        #expect(try f.db.scalarInt("SELECT v FROM fts_messages_config WHERE k = 'automerge'") == 4)
        var steps = 0
        while try f.store.mergeFullTextStep(pages: 1) { steps += 1 }
        #expect(steps > 0)
        #expect(try !f.store.mergeFullTextStep())
        #expect(try f.ftsHits("walrus").count == 30)
        #expect(try f.store.messageCount() == 30)
        try f.checkDerivedTables()
    }

    @Test("the change sequence moves on every write to a message and reports deletions")
    func changeSequence() throws {
        let f = try StoreFixture()
        #expect(try f.store.currentSequence() == 0)
        try f.apply(f.snapshot("m1"), f.snapshot("m2"))
        let afterSync = try f.store.currentSequence()
        try f.store.perform([.star], on: [.message("m1")])
        #expect(try f.store.changes(since: afterSync).map(\.messageID) == ["m1"])
        let afterStar = try f.store.currentSequence()
        try f.store.saveBody(MessageBody(text: "x"), gmailID: "m2", accountID: f.account.id)
        try f.store.deleteVanishedMessage(gmailID: "m1", accountID: f.account.id)
        let changes = try f.store.changes(since: afterStar)
        #expect(changes.map(\.messageID) == ["m2", "m1"])
        #expect(changes.map(\.deleted) == [false, true])
        #expect(try f.store.currentSequence() > afterStar)
    }

    @Test("accounts: the backfill window is fixed at consent; removing an account removes its mail")
    func accounts() throws {
        let f = try StoreFixture()
        #expect(f.account.backfillQuery == "after:\(1_767_225_600 - 90 * 86_400)")
        let whole = try f.store.addAccount(email: "whole@example.com", consentedAt: 1_767_225_600, lookbackDays: 0)
        #expect(whole.backfillQuery == nil)
        #expect(throws: StoreError.accountExists("ANN@example.com")) {
            try f.store.addAccount(email: "ANN@example.com", consentedAt: 0)
        }
        try f.apply(f.snapshot("m1", subject: "platypus"))
        try f.store.perform([.archive], on: [.message("m1")])
        #expect(try f.store.removeAccount(email: "Ann@Example.com"))
        #expect(try f.store.accounts().map(\.email) == ["whole@example.com"])
        for table in ["messages", "mutation_queue", "thread_rollup", "thread_labels", "message_seq", "labels"] {
            #expect(try f.db.scalarInt("SELECT count(*) FROM \(table) WHERE account_id = ?", f.account.id) == 0, "\(table)")
        }
        #expect(try f.db.scalarInt("SELECT count(*) FROM message_labels") == 0)
        #expect(try f.ftsHits("platypus").isEmpty)
        try f.checkDerivedTables()
    }

    @Test("labels.list replaces the label table; names resolve case-insensitively")
    func labels() throws {
        let f = try StoreFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system),
            LabelInfo(id: "Label_1", name: "Work", kind: .user, textColor: "#000000", backgroundColor: "#16a766"),
        ])
        #expect(try f.store.labels(accountID: f.account.id).map(\.id) == ["INBOX", "Label_1"])
        #expect(try f.store.label(named: "work", accountID: f.account.id)?.id == "Label_1")
        #expect(try f.store.label(named: "Label_1", accountID: f.account.id)?.name == "Work")
        #expect(try f.store.label(named: "Play", accountID: f.account.id) == nil)
    }

    private func queryPlan(_ db: Connection, _ sql: String, _ arguments: [any SQLiteBindable]) throws -> [String] {
        try db.prepare("EXPLAIN QUERY PLAN " + sql).map(arguments) { $0.string(3) }
    }
}
