// A message's effective labels as one list (EffectiveLabels.list): the view's rows, read
// per message by seeks, whatever is queued.
import HudsonQuery
@testable import HudsonStore
import SQLite
import Testing

@Suite("Effective label lists: the view's rows for one message, by seeks, while changes are queued")
struct EffectiveLabelListTests {
    /// Four messages, and a queue row for each case of the rule: an add of a label the
    /// message lacks and of one it has, a remove of one it has and of one it lacks.
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t1", minute: 1, labels: ["INBOX", "UNREAD"]),
                    f.snapshot("m2", thread: "t2", minute: 2, labels: ["INBOX"]),
                    f.snapshot("m3", thread: "t3", minute: 3, labels: ["STARRED", "Label_1"]),
                    f.snapshot("m4", thread: "t4", minute: 4, labels: []))
        let queued: [(String, String, String)] = [
            ("m1", "STARRED", "add"), ("m1", "UNREAD", "remove"), ("m2", "INBOX", "add"),
            ("m2", "Label_9", "remove"), ("m3", "Label_1", "remove"), ("m3", "Label_2", "add"), ("m4", "INBOX", "add"),
        ]
        for (message, label, op) in queued {
            try f.db.execute("""
                INSERT INTO mutation_queue (account_id, message_id, label, op, created_at, updated_at)
                SELECT account_id, id, ?, ?, 0, 0 FROM messages WHERE gmail_id = ?
                """, label, op, message)
        }
        return f
    }

    func listed(_ f: StoreFixture, _ gmailID: String) throws -> [String] {
        let text = try f.db.first("""
            SELECT \(EffectiveLabels.list(messageColumn: "m.id", separator: "' '")) FROM messages AS m WHERE m.gmail_id = ?
            """, gmailID) { $0.optionalString(0) } ?? nil
        return (text ?? "").split(separator: " ").map(String.init).sorted()
    }

    @Test("the list equals the view row for row, for every case of the overlay")
    func listEqualsView() throws {
        let f = try fixture()
        for message in ["m1", "m2", "m3", "m4"] {
            let view = try f.db.map("""
                SELECT el.label FROM effective_labels AS el JOIN messages AS m ON m.id = el.message_id
                 WHERE m.gmail_id = ? ORDER BY el.label
                """, message) { $0.string(0) }
            #expect(try listed(f, message) == view, "\(message)")
        }
        #expect(try listed(f, "m1") == ["INBOX", "STARRED"])
        #expect(try listed(f, "m3") == ["Label_2", "STARRED"])
        #expect(try listed(f, "m4") == ["INBOX"])
    }

    @Test("listing many messages seeks each one's labels: no scan of message_labels per message")
    func listPlanSeeks() throws {
        let f = try fixture()
        let plan = try f.db.prepare("""
            EXPLAIN QUERY PLAN SELECT \(EffectiveLabels.list(messageColumn: "m.id")) FROM messages AS m
            """).map([]) { $0.string(3) }
        // The outer loop reads messages; the labels and the queue are only sought by key
        // (what is scanned inside is the one message's rows, `el`).
        #expect(!plan.contains { $0.hasPrefix("SCAN ml") || $0.hasPrefix("SCAN q") }, "\(plan)")
        #expect(plan.contains { $0.hasPrefix("SEARCH ml USING PRIMARY KEY (message_id=?)") }, "\(plan)")
        #expect(plan.contains { $0.hasPrefix("SEARCH q USING INDEX sqlite_autoindex_mutation_queue_1 (message_id=?)") }, "\(plan)")
    }

    @Test("a search's message rows list the queued labels (the summary reads the same list)")
    func searchRowsShowQueued() throws {
        let f = try fixture()
        let rows = try f.store.searchMessages(try Query.parse("in:inbox"), options: SearchOptions(accountID: f.account.id, now: f.clock.now), limit: 10)
        #expect(rows.map(\.messageID).sorted() == ["m1", "m2", "m4"])
        #expect(rows.first { $0.messageID == "m1" }?.labels == ["INBOX", "STARRED"])
    }
}
