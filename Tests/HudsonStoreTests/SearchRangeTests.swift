import HudsonQuery
import HudsonStore
import SQLite
import Testing

/// Date ranges searched as key ranges (Schema 003_message_key_exceptions, SearchCompiler): the results must be
/// what comparing dates gives, also for a message whose key no longer follows its date.
@Suite("Search: date ranges as key ranges, labels listed, and the exceptions that turn it off")
struct SearchRangeTests {
    func messages(_ f: StoreFixture, _ text: String) throws -> [String] {
        let options = SearchOptions(accountID: f.account.id, now: f.clock.now)
        return try f.store.searchMessages(try Query.parse(text), options: options, limit: 100).map(\.messageID)
    }

    func exceptions(_ f: StoreFixture) throws -> [Int64] {
        try f.db.map("SELECT message_id FROM message_key_exceptions ORDER BY 1") { $0.int64(0) }
    }

    @Test("after:/before: with labels, words and addresses give the same results as comparing dates")
    func rangesAgreeWithDates() throws {
        let f = try StoreFixture()
        // One message a day for 40 days from 2026-01-01, every third one labelled Work.
        for day in 0..<40 {
            try f.apply(f.snapshot("d\(day)", minute: Int64(day) * 1440, labels: day % 3 == 0 ? ["INBOX", "Label_9"] : ["INBOX"],
                                   subject: "walrus \(day)", from: day % 2 == 0 ? "Ann <ann@example.org>" : "Bob <bob@example.org>"))
        }
        try f.db.execute("UPDATE labels SET name = 'Work', type = 'user' WHERE id = 'Label_9'")
        #expect(try exceptions(f).isEmpty)
        let inRange = (10..<20).reversed().map { "d\($0)" }  // newest first
        #expect(try messages(f, "after:2026/01/11 before:2026/01/21") == inRange)
        #expect(try messages(f, "label:Work after:2026/01/11 before:2026/01/21") == inRange.filter { Int($0.dropFirst())! % 3 == 0 })
        #expect(try messages(f, "walrus after:2026/01/11 before:2026/01/21") == inRange)
        #expect(try messages(f, "from:ann@example.org after:2026/01/11 before:2026/01/21")
                == inRange.filter { Int($0.dropFirst())! % 2 == 0 })
        #expect(try messages(f, "in:inbox before:2026/01/03") == ["d1", "d0"])
        #expect(try messages(f, "label:Work").count == 14)
        #expect(try messages(f, "after:2026/03/01").isEmpty)
    }

    @Test("a message whose date changes under its key is listed as an exception, and ranges then compare dates")
    func exceptionsTurnRangesOff() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("early", minute: 0), f.snapshot("late", minute: 30 * 1440))
        // A newer snapshot moves "early" a month later: its key still says January 1st.
        try f.apply(f.snapshot("early", history: 200, minute: 45 * 1440))
        #expect(try exceptions(f).count == 1)
        #expect(try messages(f, "after:2026/02/10") == ["early"])
        #expect(try messages(f, "before:2026/01/05").isEmpty)
        // Moved back, it follows its key again; deleted, it leaves the list.
        try f.apply(f.snapshot("early", history: 300, minute: 0))
        #expect(try exceptions(f).isEmpty)
        try f.apply(f.snapshot("early", history: 400, minute: 45 * 1440))
        try f.store.deleteVanishedMessage(gmailID: "early", accountID: f.account.id)
        #expect(try exceptions(f).isEmpty)
        try f.checkDerivedTables()
    }
}
