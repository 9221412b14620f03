// A top-level label drives a search from the label's index (SearchCompiler, "a top-level
// label drives the query"): the results are those of testing each message, with nothing
// queued (the index) and with changes queued (the view, tested per message).
import HudsonQuery
@testable import HudsonStore
import SQLite
import Testing

@Suite("Search: a label drives the query from its index, with the results of testing each message")
struct SearchLabelDriverTests {
    /// 60 messages in 20 threads, a minute apart from 2026-01-01, labelled by pattern; one
    /// of the Work messages is in the trash.
    func fixture() throws -> (StoreFixture, [String: Set<String>]) {
        let f = try StoreFixture()
        var labels: [String: Set<String>] = [:]
        var snapshots: [MessageSnapshot] = []
        for i in 0..<60 {
            var set = Set<String>()
            if i % 2 == 1 { set.insert("INBOX") }
            if i % 3 == 0 { set.insert("UNREAD") }
            if i % 4 == 0 { set.insert("Label_9") }
            if i % 5 == 0 { set.insert("STARRED") }
            if i == 44 { set = ["TRASH", "Label_9"] }
            labels["m\(i)"] = set
            snapshots.append(f.snapshot("m\(i)", thread: "t\(i % 20)", minute: Int64(i) * 1440, labels: set.sorted()))
        }
        _ = try f.store.applySnapshots(snapshots, accountID: f.account.id)
        try f.db.execute("UPDATE labels SET name = 'Work', type = 'user' WHERE id = 'Label_9'")
        return (f, labels)
    }

    /// Each query, and the test of one message's labels and day that it stands for.
    static let queries: [(String, @Sendable (Set<String>, Int) -> Bool)] = [
        ("label:Work", { l, _ in l.contains("Label_9") }),
        ("in:inbox", { l, _ in l.contains("INBOX") }),
        ("is:unread in:inbox", { l, _ in l.contains("UNREAD") && l.contains("INBOX") }),
        ("label:Work is:starred", { l, _ in l.contains("Label_9") && l.contains("STARRED") }),
        ("in:inbox -label:Work", { l, _ in l.contains("INBOX") && !l.contains("Label_9") }),
        ("label:Work after:2026/01/11 before:2026/02/10", { l, day in l.contains("Label_9") && (10..<40).contains(day) }),
        ("is:starred in:inbox before:2026/02/01", { l, day in l.contains("STARRED") && l.contains("INBOX") && day < 31 }),
        ("label:Work in:anywhere", { l, _ in l.contains("Label_9") }),
        ("label:Work OR is:starred", { l, _ in l.contains("Label_9") || l.contains("STARRED") }),
    ]

    /// What each query must find: the messages that pass its test, out of the trash unless
    /// asked, newest first; and their threads, each placed by its newest match.
    func expected(_ labels: [String: Set<String>], _ query: String, _ test: (Set<String>, Int) -> Bool) -> (messages: [String], threads: [String]) {
        let anywhere = query.contains("in:anywhere")
        let messages = (0..<60).reversed().map { "m\($0)" }.filter { id in
            let set = labels[id]!
            return (anywhere || !set.contains("TRASH")) && test(set, Int(id.dropFirst())!)
        }
        var threads: [String] = []
        for id in messages where !threads.contains("t\(Int(id.dropFirst())! % 20)") { threads.append("t\(Int(id.dropFirst())! % 20)") }
        return (messages, threads)
    }

    /// Every page `page` gives, each asked after the last id of the one before, until one is empty.
    func pages(_ page: (String?) throws -> [String]) throws -> [String] {
        var all: [String] = []
        while case let next = try page(all.last), !next.isEmpty { all += next }
        return all
    }

    func check(_ f: StoreFixture, _ labels: [String: Set<String>]) throws {
        let options = SearchOptions(accountID: f.account.id, now: f.clock.now)
        for (text, test) in Self.queries {
            let query = try Query.parse(text)
            let want = expected(labels, text, test)
            #expect(try f.store.searchMessages(query, options: options, limit: 100).map(\.messageID) == want.messages, "\(text)")
            // Page by page, three messages and two threads a page.
            let paged = try pages { before in
                try f.store.searchMessages(query, options: options, limit: 3, before: before.map(Reference.message)).map(\.messageID)
            }
            #expect(paged == want.messages, "\(text), paged")
            let threads = try pages { after in
                try f.store.searchThreads(query, options: options, limit: 2, after: after.map(Reference.thread)).map(\.threadID)
            }
            #expect(threads == want.threads, "\(text), threads")
            #expect(try f.store.countSearch(query, options: options, threads: false) == want.messages.count, "\(text), count")
            #expect(try f.store.countSearch(query, options: options, threads: true) == want.threads.count, "\(text), threads counted")
            let oldest = SearchOptions(accountID: f.account.id, sort: .oldest, now: f.clock.now)
            #expect(try f.store.searchMessages(query, options: oldest, limit: 100).map(\.messageID) == want.messages.reversed(),
                    "\(text), oldest first")
        }
    }

    @Test("with nothing queued, a label's index is walked from its newest end: no list of its members, no sort")
    func drivenByTheIndex() throws {
        let (f, labels) = try fixture()
        try check(f, labels)
        for text in ["label:Work", "label:Work after:2026/01/11 before:2026/02/10", "in:inbox", "is:unread in:inbox",
                     "is:awaiting-reply", "awaiting-reply:3d"] {
            let plan = try f.store.searchPlan(try Query.parse(text), options: SearchOptions(now: f.clock.now))
            #expect(plan.first?.contains("message_labels_by_label") == true, "\(text): \(plan)")
            #expect(!plan.contains { $0.contains("LIST SUBQUERY") || $0.contains("TEMP B-TREE") }, "\(text): \(plan)")
        }
        // Spam and trash, left out of a page, are sought in their few pages of the label
        // index, not in each message's page of the primary key; also under full text.
        for text in ["label:Work", "subject", "is:starred OR label:Work"] {
            let plan = try f.store.searchPlan(try Query.parse(text), options: SearchOptions(now: f.clock.now))
            #expect(plan.filter { $0.contains("SEARCH el USING COVERING INDEX message_labels_by_label (label=? AND message_id=?)") }
                .count == 2, "\(text): \(plan)")
            // (An OR of labels tests each by its message, as before.)
            #expect(text.contains(" OR ") || !plan.contains { $0.contains("SEARCH el USING PRIMARY KEY") }, "\(text): \(plan)")
        }
        // Of two labels, the one with fewer members drives (Work: 15, the inbox: 30).
        let compiled = try f.store.compileSearch(try Query.parse("in:inbox label:Work"), options: SearchOptions(now: f.clock.now))
        #expect(compiled.arguments.first == .text("Label_9"), "\(compiled)")
    }

    @Test("with changes queued, the view is tested per message and gives the queued view")
    func queuedChangesTested() throws {
        var (f, labels) = try fixture()
        // m3 archived and starred, m8 taken out of Work, m1 given Work: queue rows, as hd-mark writes them.
        let queued: [(String, String, String)] = [
            ("m3", "INBOX", "remove"), ("m3", "STARRED", "add"), ("m8", "Label_9", "remove"), ("m1", "Label_9", "add"),
        ]
        for (message, label, op) in queued {
            try f.db.execute("""
                INSERT INTO mutation_queue (account_id, message_id, label, op, created_at, updated_at)
                SELECT account_id, id, ?, ?, 0, 0 FROM messages WHERE gmail_id = ?
                """, label, op, message)
            if op == "add" { labels[message]!.insert(label) } else { labels[message]!.remove(label) }
        }
        try check(f, labels)
        let compiled = try f.store.compileSearch(try Query.parse("label:Work"), options: SearchOptions(now: f.clock.now))
        #expect(!compiled.fromAndWhere.contains(" AS ld "), "\(compiled)")
    }
}
