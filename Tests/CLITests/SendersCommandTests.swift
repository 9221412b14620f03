// hd-senders (issue 42): the mail a query selects grouped by list or sender, with what was
// done with it and the unsubscribe methods offered; --after-unsubscribe.
import Foundation
import HudsonStore
import HudsonTestSupport
import SQLite
import Testing

/// A signed one-click offer as Gmail's metadata gives it (RFC 8058 §3, §4).
let signedOneClick = ListHeaders(
    unsubscribe: "<mailto:leave@news.example.org?subject=unsubscribe>, <https://news.example.org/u/1>",
    unsubscribePost: "List-Unsubscribe=One-Click",
    authenticationResults: "mx.google.com; dkim=pass header.i=@news.example.org header.s=s1 header.b=x",
    dkimSignatures: "d=news.example.org; s=s1; h=from:to:subject:list-unsubscribe:list-unsubscribe-post")

extension CLIFixture {
    /// Mail of the last weeks (dates relative to now, for the default newer_than:90d).
    @discardableResult
    func sendersMailbox(now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) throws -> Store {
        let store = try openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        let day: Int64 = 86_400_000
        func message(_ id: String, thread: String? = nil, daysAgo: Int64, labels: [String], from: String,
                     listID: String? = nil, list: ListHeaders = ListHeaders()) -> MessageSnapshot {
            var headers = MessageHeaders(subject: "s", from: from, to: "Ann <ann@example.com>", messageID: "<\(id)@example.org>",
                                         listID: listID)
            headers.list = list
            return MessageSnapshot(id: id, threadID: thread ?? id, historyID: 1000, internalDate: now - daysAgo * day,
                                   labelIDs: labels, headers: headers)
        }
        let news = "Example News <news.example.org>"
        _ = try store.applySnapshots([
            // The list: three messages, one read, one archived unread, one unread in the inbox.
            message("n1", daysAgo: 3, labels: ["INBOX", "UNREAD"], from: "News <news@example.org>", listID: news, list: signedOneClick),
            message("n2", daysAgo: 4, labels: ["UNREAD"], from: "News <news@example.org>", listID: news, list: signedOneClick),
            message("n3", daysAgo: 5, labels: ["INBOX"], from: "News <news@example.org>", listID: news, list: signedOneClick),
            // Bob: two messages in one thread, one replied to, one starred.
            message("b1", thread: "tb", daysAgo: 10, labels: ["INBOX"], from: "Bob <bob@example.org>"),
            message("b2", thread: "tb", daysAgo: 8, labels: ["INBOX", "STARRED"], from: "Bob <bob@example.org>"),
            message("r1", thread: "tb", daysAgo: 7, labels: ["SENT"], from: "Ann <ann@example.com>"),
            // Shop: mailto only, never read.
            message("s1", daysAgo: 1, labels: ["UNREAD"], from: "Shop <deals@shop.example>",
                    list: ListHeaders(unsubscribe: "<mailto:stop@shop.example>",
                                      authenticationResults: "mx.google.com; dkim=pass header.i=@shop.example header.s=k1")),
            // Older than 90 days: outside the default.
            message("o1", daysAgo: 200, labels: ["INBOX"], from: "Old <old@example.org>"),
            // A hostile List-Id and name.
            message("h1", daysAgo: 2, labels: ["INBOX"], from: "\u{1B}[2JEvil <evil@example.com>",
                    listID: "\u{1B}]52;c;eA==\u{07}x <evil list\u{1B}[31m>"),
        ], accountID: account.id)
        return store
    }
}

@Suite("hd-senders: who fills the mailbox")
struct SendersCommandTests {
    func records(_ result: CommandResult) throws -> [[String: Any]] {
        try result.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test("lists and senders of the last 90 days, by volume, with shares and methods; sent mail is not counted")
    func defaultReport() throws {
        let f = CLIFixture()
        try f.sendersMailbox()
        let result = try f.run("hd-senders", "--json")
        #expect(result.status == 0, "\(result)")
        let all = try records(result)
        #expect(all.count == 4)
        #expect(all.prefix(3).map { $0["id"] as? String } == ["list:news.example.org", "from:bob@example.org", "from:deals@shop.example"])
        let news = try #require(all.first)
        #expect(news["id"] as? String == "list:news.example.org")
        #expect(news["kind"] as? String == "list" && news["name"] as? String == "Example News")
        #expect(news["messages"] as? Int == 3 && news["threads"] as? Int == 3)
        #expect(news["read_share"] as? Double == 0.333 && news["archived_unread_share"] as? Double == 0.333)
        #expect(news["unsubscribe"] as? [String] == ["one-click", "https", "mailto"])
        let bob = try #require(all.first { $0["id"] as? String == "from:bob@example.org" })
        #expect(bob["messages"] as? Int == 2 && bob["threads"] as? Int == 1)
        #expect(bob["starred_or_replied_share"] as? Double == 1 && bob["read_share"] as? Double == 1)
        #expect(bob["unsubscribe"] as? [String] == ["none"])
        let shop = try #require(all.first { $0["id"] as? String == "from:deals@shop.example" })
        #expect(shop["unsubscribe"] as? [String] == ["mailto"] && shop["read_share"] as? Double == 0)
        #expect(!all.contains { ($0["id"] as? String)?.contains("old@") == true })
        #expect(!all.contains { ($0["id"] as? String)?.contains("ann@") == true })
    }

    @Test("--sort read puts the least read first, last-seen the newest; a QUERY selects the mail; -n limits")
    func sortingAndQuery() throws {
        let f = CLIFixture()
        try f.sendersMailbox()
        #expect(try f.run("hd-senders", "--sort", "read", "--ids").lines.first == "from:deals@shop.example")
        #expect(try f.run("hd-senders", "--sort", "last-seen", "--ids").lines.first == "from:deals@shop.example")
        #expect(try f.run("hd-senders", "from:bob", "--ids").lines == ["from:bob@example.org"])
        #expect(try f.run("hd-senders", "in:anywhere", "--ids").lines.contains("from:old@example.org"))
        #expect(try f.run("hd-senders", "-n", "1", "--ids").lines == ["list:news.example.org"])
        let none = try f.run("hd-senders", "from:nobody")
        #expect(none.status == 1 && none.stdout.isEmpty)
        let bad = try f.run("hd-senders", "from:(")
        #expect(bad.status == 65 && bad.stderr.hasPrefix("hd-senders: "))
    }

    @Test("an id is a query term: hd-search finds the group's mail with it")
    func idsAreQueries() throws {
        let f = CLIFixture()
        try f.sendersMailbox()
        for id in try f.run("hd-senders", "--ids").lines {
            let found = try f.run("hd-search", "--messages", "--count", id)
            #expect(found.status == 0, "\(id): \(found)")
        }
    }

    @Test("text output: no escape from mail reaches the terminal; one line per sender")
    func hostileText() throws {
        let f = CLIFixture()
        try f.sendersMailbox()
        let result = try f.run("hd-senders")
        #expect(result.lines.count == 4)
        #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{07}"))
    }

    @Test("a group whose headers were stored before Hudson kept them says unknown, not none")
    func unknownHeaders() throws {
        let f = CLIFixture()
        let store = try f.sendersMailbox()
        try store.db.execute("UPDATE messages SET list_headers_known = 0 WHERE gmail_id IN ('b1', 'b2')")
        let bob = try records(try f.run("hd-senders", "from:bob", "--json")).first
        #expect(bob?["unsubscribe"] as? [String] == ["unknown"])
    }

    @Test("--after-unsubscribe lists a sender that mailed after a recorded unsubscribe, and not one that stopped")
    func afterUnsubscribe() throws {
        let f = CLIFixture()
        let store = try f.sendersMailbox()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day: Int64 = 86_400_000
        // Unsubscribed from the list 4.5 days ago (n1 and n2 came after), from the shop today (nothing after).
        try store.db.execute("""
            INSERT INTO unsubscribes (account_id, sender, method, target, state, created_at, updated_at)
            VALUES (1, 'list:news.example.org', 'one-click', 'https://news.example.org/u/1', 'done', ?1, ?1)
            """, now - 4 * day - day / 2)
        try store.db.execute("""
            INSERT INTO unsubscribes (account_id, sender, method, target, state, outbox_id, created_at, updated_at)
            VALUES (1, 'deals@shop.example', 'mailto', 'stop@shop.example', 'queued', 1, ?1, ?1)
            """, now)
        let result = try f.run("hd-senders", "--after-unsubscribe", "--json")
        let all = try records(result)
        #expect(all.map { $0["id"] as? String } == ["list:news.example.org"])
        #expect(all.first?["messages"] as? Int == 2)
        #expect(all.first?["unsubscribed"] as? String != nil)
        #expect(try f.run("hd-senders", "--after-unsubscribe", "x").status == 64)
    }

    @Test("generated queries and options: no crash, a one-line error, a documented status", .timeLimit(.minutes(2)))
    func generatedInput() throws {
        let f = CLIFixture()
        try f.sendersMailbox()
        var generator = AddressSeededGenerator(seed: 7)
        let pieces = ["from:", "list:", "(", ")", "\"", "OR", "-", "newer_than:", "90d", "--sort", "read", "volume", "bogus",
                      "--after-unsubscribe", "--json", "--ids", "-n", "0", "-5", "is:unread", "\u{1B}[2J", "{", "}", "label:",
                      "older_than:1y", "after:2026/13/40", "in:anywhere", "%", "_"]
        for round in 0..<60 {
            let arguments = (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            let result = try CommandRunner.run(BuiltProducts.executable("hd-senders"), arguments, environment: f.environment, timeout: 30)
            #expect([0, 1, 64, 65].contains(result.status), "seed 7 round \(round): \(arguments) \(result)")
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count <= 1 || (errors.count == 2 && errors[1].hasPrefix("usage: ")), "seed 7 round \(round): \(arguments) \(result)")
            #expect(errors.first.map { $0.hasPrefix("hd-senders: ") } ?? true, "seed 7 round \(round): \(arguments) \(result)")
        }
    }
}
