import HudsonQuery
import HudsonStore
import HudsonTestSupport
import SQLite
import Testing

/// Date ranges searched as key ranges (Schema 003_message_key_exceptions, SearchCompiler): the results must be
/// what comparing dates gives, also for a message whose key no longer follows its date.
@Suite("Search: date ranges as key ranges, labels listed, and the exceptions that widen it")
struct SearchRangeTests {
    func messages(_ f: StoreFixture, _ text: String, limit: Int = 100) throws -> [String] {
        let options = SearchOptions(accountID: f.account.id, now: f.clock.now)
        return try f.store.searchMessages(try Query.parse(text), options: options, limit: limit).map(\.messageID)
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
    func exceptionsListed() throws {
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

    /// The fixture's first minute, 2026-01-01 00:00 UTC, in epoch seconds.
    static let start: Int64 = 1_767_225_600

    @Test("with dates moved under their keys, every range still gives what comparing dates gives, and still seeks keys")
    func movedDatesWidenRanges() throws {
        let f = try StoreFixture()
        var random = SeededRandom(state: 43)
        // One message an hour for two days, then a dozen moved by up to a day either way.
        var minute: [String: Int64] = [:]
        for hour in 0..<48 {
            minute["h\(hour)"] = Int64(hour) * 60
            try f.apply(f.snapshot("h\(hour)", minute: Int64(hour) * 60, labels: ["INBOX", "Label_9"]))
        }
        for move in 0..<12 {
            let id = "h\(random.next() % 48)"
            let moved = max(0, minute[id]! + Int64(random.next() % 2881) - 1440)
            minute[id] = moved
            try f.apply(f.snapshot(id, history: 200 + Int64(move), minute: moved, labels: ["INBOX", "Label_9"]))
        }
        try f.db.execute("UPDATE labels SET name = 'Work', type = 'user' WHERE id = 'Label_9'")
        #expect(try !exceptions(f).isEmpty)
        for _ in 0..<60 {
            let a = Int64(random.next() % 3000), b = a + Int64(random.next() % 1500)
            let expected = minute.filter { $0.value >= a && $0.value < b }.sorted { ($0.value, $0.key) > ($1.value, $1.key) }
            for text in ["after:\(Self.start + a * 60) before:\(Self.start + b * 60)",
                         "label:Work after:\(Self.start + a * 60) before:\(Self.start + b * 60)"] {
                #expect(try Set(messages(f, text)) == Set(expected.map(\.key)), "\(text)")
            }
        }
        let plan = try f.store.searchPlan(try Query.parse("after:\(Self.start + 600) before:\(Self.start + 1200)"),
                                          options: SearchOptions(accountID: f.account.id, now: f.clock.now))
        #expect(plan.joined(separator: "\n").contains("rowid>? AND rowid<?"), "\(plan)")
    }

    @Test("a crowded millisecond spills a key far past its slot, and ranges on either side still find each message once")
    func crowdedMillisecond() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("later", minute: 600))
        // A thousand messages in one millisecond and one in the next: the next crowded
        // message's key goes past every key in the store (Snapshots.allocateMessageKey).
        try f.store.applySnapshots((0..<1000).map { f.snapshot("c\($0)", minute: 60) }, accountID: f.account.id)
        var next = f.snapshot("next", minute: 60)
        next.internalDate += 1
        try f.apply(next)
        try f.apply(f.snapshot("c1000", minute: 60))
        #expect(try exceptions(f).count == 1)
        let crowded = Set((0...1000).map { "c\($0)" }).union(["next"])
        #expect(try Set(messages(f, "before:\(Self.start + 61 * 60)", limit: 2000)) == crowded)
        #expect(try Set(messages(f, "after:\(Self.start + 60 * 60) before:\(Self.start + 61 * 60)", limit: 2000)) == crowded)
        #expect(try messages(f, "after:\(Self.start + 61 * 60)") == ["later"])
        #expect(try messages(f, "after:\(Self.start + 599 * 60) before:\(Self.start + 601 * 60)") == ["later"])
        try f.checkDerivedTables()
    }
}
