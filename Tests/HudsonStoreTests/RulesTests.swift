// The rules file's parser (line and column of every error, names, comments, quoting) and
// rules applied to the store: one action for every rule, new mail once and only once.
import HudsonQuery
import HudsonStore
import Testing

@Suite("Rules: the rules file, and rules applied as one action")
struct RulesTests {
    @Test("rules parse with names, comments, quoted phrases and labels")
    func parses() throws {
        let rules = try RulesFile.parse("""
            # a comment
              # an indented comment

            [Boss mail] from:boss@example.org => star +Work
            subject:"a => b" OR list:x => archive read +"Travel 2026" -Inbox\r
            """)
        #expect(rules.map(\.name) == ["Boss mail", "line 5"])
        #expect(rules.map(\.line) == [4, 5])
        #expect(rules[0].queryText == "from:boss@example.org")
        #expect(rules[0].actions == [.star, .addLabel("Work")])
        #expect(rules[0].actionColumns == [38, 43])
        #expect(rules[1].queryText == "subject:\"a => b\" OR list:x")
        #expect(rules[1].actions == [.archive, .read, .addLabel("Travel 2026"), .removeLabel("Inbox")])
        let expected = try Query.parse("subject:\"a => b\" OR list:x")
        #expect(rules[1].query == expected)
    }

    @Test("a rules file with CRLF line ends reads as one with LF (it was one line holding control characters)")
    func crlf() throws {
        let rules = try RulesFile.parse("# a comment\r\n[a] from:x => star\r\n\r\nsubject:y => archive +\"Travel 2026\"\r\n")
        #expect(rules.map(\.name) == ["a", "line 4"])
        #expect(rules.map(\.actions) == [[.star], [.archive, .addLabel("Travel 2026")]])
        #expect(throws: RulesFileError(line: 2, column: 6, message: "unclosed parenthesis")) {
            try RulesFile.parse("x => star\r\nfrom:(a => star\r\n")
        }
    }

    @Test("every error names its line and column")
    func errors() {
        let cases: [(String, Int, Int, String)] = [
            ("x => star\nfrom:(a => star", 2, 6, "unclosed parenthesis"),
            ("[a from:x => star", 1, 1, "unclosed [ of a rule name"),
            ("[ ] from:x => star", 1, 1, "an empty rule name"),
            ("[a] x => star\n[A] y => star", 2, 2, "a second rule named A"),
            ("from:x star", 1, 12, "no => between the query and the actions"),
            ("   => star", 1, 4, "no query before =>"),
            ("() => star", 1, 1, "empty group ()"),
            ("from:x =>   ", 1, 13, "no action after =>"),
            ("from:x => star sparkle", 1, 16, "not an action (archive, unarchive, read, unread, star, unstar, trash, untrash, spam, unspam, important, unimportant, +LABEL, -LABEL)"),
            ("from:x => +\"Travel", 1, 11, "unclosed quote"),
            ("from:x\u{1B}[2J => star", 1, 7, "a control character or bidirectional mark (\\e)"),
            // The one rule of what a label name may hold (LabelNameRule), at the character.
            ("from:x => +Flip\u{202E}txt", 1, 16, "a control character or bidirectional mark (\\u{202E})"),
            ("from:x => +\"Del\u{7F}\"", 1, 16, "a control character or bidirectional mark (\\u{7F})"),
            ("from:x => -\"Tab\there\"", 1, 11, "Tab\\there: a label name cannot hold a tab or a line break"),
        ]
        for (text, line, column, message) in cases {
            #expect(throws: RulesFileError(line: line, column: column, message: message), "\(text)") {
                try RulesFile.parse(text)
            }
        }
    }

    func rule(_ name: String, _ query: String, _ actions: [TriageAction]) throws -> MailRule {
        MailRule(name: name, queryText: query, query: try Query.parse(query), actions: actions)
    }

    @Test("rules over the store are one action, --dry-run queues nothing, undo takes all back")
    func applyAsOneAction() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("a", minute: 1, from: "Boss <boss@example.org>"),
                    f.snapshot("b", minute: 2, subject: "Weekly report"),
                    f.snapshot("c", minute: 3, labels: ["SPAM"], from: "boss@example.org"))
        let rules = [try rule("boss", "from:boss@example.org", [.star]), try rule("report", "subject:report", [.archive, .read])]
        let options = SearchOptions(accountID: f.account.id, sort: .newest, now: f.clock.now, startOfDay: SearchOptions.utcStartOfDay)
        let dry = try f.store.applyRules(rules, options: options, description: "test", dryRun: true)
        #expect(dry.result.actionID == nil && dry.result.deltas.count == 3)
        #expect(dry.matches == [[.message("a")], [.message("b")]])  // spam is outside, as in Gmail's search
        #expect(try f.queue().isEmpty)
        let run = try f.store.applyRules(rules, options: options, description: "test", dryRun: false)
        #expect(run.result.actionID != nil && run.result.deltas.count == 3)
        #expect(try f.effective("a").contains("STARRED"))
        #expect(try f.effective("b") == [])
        try f.checkDerivedTables()
        // Within a scope only.
        try f.store.undo()
        let scoped = try f.store.applyRules(rules, scope: try Query.parse("subject:weekly"), options: options, description: "t", dryRun: true)
        #expect(scoped.matches == [[], [.message("b")]])
        #expect(try f.effective("a") == ["INBOX", "UNREAD"])
        try f.checkDerivedTables()
    }

    @Test("new mail: the first run only starts the clock; each new message gets the rules once")
    func newMailOnce() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("old", minute: 1, from: "boss@example.org"))
        let rules = [try rule("boss", "from:boss@example.org", [.star])]
        let options = SearchOptions(accountID: nil, sort: .newest, now: f.clock.now, startOfDay: SearchOptions.utcStartOfDay)
        f.clock.advance(by: 10 * 60_000)
        #expect(try f.store.applyRulesToNewMail(rules, accountID: f.account.id, options: options, description: "r") == nil)
        // Mail from before the rules, stored now (a backfill), is not new.
        try f.apply(f.snapshot("backfilled", minute: 5, from: "boss@example.org"))
        #expect(try f.store.applyRulesToNewMail(rules, accountID: f.account.id, options: options, description: "r") == nil)
        try f.apply(f.snapshot("new", minute: 11, from: "boss@example.org"), f.snapshot("other", minute: 12))
        let first = try #require(try f.store.applyRulesToNewMail(rules, accountID: f.account.id, options: options, description: "r"))
        #expect(first.considered == 2 && first.matches == [[.message("new")]] && first.result.actionID != nil)
        #expect(try f.effective("new").contains("STARRED"))
        let old = try f.effective("old"), backfilled = try f.effective("backfilled")
        #expect(!old.contains("STARRED") && !backfilled.contains("STARRED"))
        // Unstarred by the user, stored again (a re-list): the rules do not run again.
        try f.store.perform([.unstar], on: [.message("new")])
        try f.apply(f.snapshot("new", history: 200, minute: 11, labels: ["INBOX", "UNREAD"], from: "boss@example.org"))
        #expect(try f.store.applyRulesToNewMail(rules, accountID: f.account.id, options: options, description: "r") == nil)
        let unstarred = try f.effective("new")
        #expect(!unstarred.contains("STARRED"))
        try f.checkDerivedTables()
    }

    @Test("new mail leaves drafts out; a word rule waits for the body unless the body is parked; rules that stop and come back start again")
    func newMailNeighbours() throws {
        let f = try StoreFixture()
        let options = SearchOptions(accountID: nil, sort: .newest, now: f.clock.now, startOfDay: SearchOptions.utcStartOfDay)
        let rules = [try rule("invoices", "invoice", [.star])]
        func run() throws -> [[Reference]]? {
            try f.store.applyRulesToNewMail(rules, accountID: f.account.id, options: options, description: "r")?.matches
        }
        f.clock.advance(by: 10 * 60_000)
        #expect(try run() == nil)  // starts the clock
        // A draft is not arriving mail, whatever it says.
        try f.apply(f.snapshot("draft", minute: 11, labels: ["DRAFT"], subject: "invoice draft"))
        // The word is in the body only: the rule waits for it.
        try f.apply(f.snapshot("mail", minute: 12, subject: "March"))
        #expect(try run() == nil)
        try f.store.saveBody(MessageBody(text: "Your invoice is attached."), gmailID: "mail", accountID: f.account.id)
        #expect(try run() == [[.message("mail")]])
        // A body Gmail will not serve: judged on what the store has (here: nothing found).
        try f.apply(f.snapshot("broken", minute: 13, subject: "April"))
        #expect(try run() == nil)
        try f.store.park([ParkingFailure(gmailID: "broken", stage: .body, error: "500")], accountID: f.account.id)
        #expect(try run() == [[]])
        #expect(try !f.effective("draft").contains("STARRED"))
        // hd-sync ran without rules: mail that came meanwhile is not judged when they return.
        try f.store.forgetRulesStart(accountID: f.account.id)
        try f.apply(f.snapshot("meanwhile", minute: 14, subject: "invoice"))
        f.clock.advance(by: 10 * 60_000)
        #expect(try run() == nil)  // starts the clock again
        #expect(try run() == nil)
        #expect(try !f.effective("meanwhile").contains("STARRED"))
        try f.checkDerivedTables()
    }
}
