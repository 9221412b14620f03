// hd-senders' statement (SenderReport.senderGroupsSQL) computes each message's row once:
// flattened into the grouping, SQLite evaluated the group key (a seek of the From
// address) three times and the unread test twice for every message.
@testable import HudsonStore
import SQLite
import Testing

@Suite("hd-senders: each message's row is computed once")
struct SenderGroupsPlanTests {
    @Test("the plan seeks each message's From address once for its key, and tests each label once")
    func perMessageRowOnce() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1"), f.snapshot("m2", thread: "m1", minute: 1, labels: ["SENT"], from: "Ann <ann@example.com>"))
        let sql = Store.senderGroupsSQL(selection: "SELECT id FROM messages", labels: "message_labels")
        let plan = try f.db.map("EXPLAIN QUERY PLAN " + sql) { $0.string(3) }
        // The key's seek, the newest message's name and the offering message's From.
        #expect(plan.filter { $0.contains("SEARCH a USING PRIMARY KEY") }.count == 3, "\(plan)")
        // UNREAD, INBOX, STARRED, SENT of the message; SENT of each later message of its thread.
        #expect(plan.filter { $0.contains("USING PRIMARY KEY (message_id=? AND label=?)") }.count == 5, "\(plan)")
        #expect(try f.db.map(sql) { $0.string(0) } == ["bob@example.org"])
    }
}
