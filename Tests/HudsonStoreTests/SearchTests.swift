import HudsonQuery
import HudsonStore
import SQLite
import Testing

@Suite("The search translator, checked by results on a fixture store")
struct SearchTests {
    /// Eight messages chosen so every operator has something to find and something to miss.
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "SPAM", name: "SPAM", kind: .system),
            LabelInfo(id: "TRASH", name: "TRASH", kind: .system), LabelInfo(id: "Label_1", name: "Travel/2026", kind: .user),
            LabelInfo(id: "Label_2", name: "Receipts", kind: .user),
        ])
        var m = [
            f.snapshot("budget", minute: 0, labels: ["INBOX", "UNREAD"], subject: "Quarterly budget", from: "Alice <alice@example.org>"),
            f.snapshot("flight", minute: 60 * 24, labels: ["INBOX", "Label_1", "STARRED"], subject: "Flight to Zürich",
                       from: "Travel Desk <desk@travel.example>"),
            f.snapshot("receipt", minute: 60 * 24 * 10, labels: ["Label_2", "CATEGORY_UPDATES"], subject: "Your receipt",
                       from: "Shop <orders@shop.example>"),
            f.snapshot("spam", minute: 20, labels: ["SPAM"], subject: "budget prize", from: "Spammer <x@spam.example>"),
            f.snapshot("trash", minute: 30, labels: ["TRASH"], subject: "old budget", from: "Alice <alice@example.org>"),
            f.snapshot("sent", minute: 40, labels: ["SENT"], subject: "Re: Quarterly budget", from: "Ann <ann@example.com>",
                       to: "Alice <alice@example.org>"),
            f.snapshot("list", minute: 50, labels: ["INBOX", "CATEGORY_FORUMS"], subject: "[dev] release notes",
                       from: "Dev List <dev@lists.example.org>"),
            f.snapshot("big", minute: 70, labels: ["INBOX", "IMPORTANT"], subject: "Design review", from: "Bob <bob@example.org>"),
        ]
        m[6].headers.listID = "Developers <dev.lists.example.org>"
        m[7].sizeEstimate = 5 * 1024 * 1024
        _ = try f.store.applySnapshots(m, accountID: f.account.id)
        try f.store.saveBody(MessageBody(text: "Please review the projected budget before Friday's meeting."), gmailID: "budget", accountID: f.account.id)
        try f.store.saveBody(MessageBody(text: "Your e-mail ticket", attachments: [
            AttachmentInfo(partID: "1", filename: "boarding-pass.pdf", mimeType: "application/pdf", size: 1000, attachmentID: "A"),
        ]), gmailID: "flight", accountID: f.account.id)
        return f
    }

    @Test("a listing read leaves out only the recipient and snippet, for a page and for every match")
    func listingReadsWhatALineShows() throws {
        let f = try fixture()
        let options = SearchOptions(now: f.clock.now)
        for limit in [3, Int.max] {
            var full: [MessageSummary] = [], listed: [MessageSummary] = []
            try f.store.forEachMessage(matching: Query.parse("in:anywhere"), options: options, limit: limit) { full.append($0) }
            try f.store.forEachMessage(matching: Query.parse("in:anywhere"), options: options, limit: limit, listing: true) {
                listed.append($0)
            }
            #expect(full.count == (limit == 3 ? 3 : 8) && listed.count == full.count)
            #expect(full.contains { $0.to != nil && !$0.snippet.isEmpty })
            for (one, other) in zip(full, listed) {
                var expected = one
                expected.to = nil
                expected.snippet = ""
                #expect(other == expected)
            }
        }
    }

    func search(_ f: StoreFixture, _ text: String, now minutes: Int64 = 60 * 24 * 30) throws -> [String] {
        let options = SearchOptions(accountID: f.account.id, now: 1_767_225_600_000 + minutes * 60_000)
        return try f.store.searchMessages(try Query.parse(text), options: options, limit: 100).map(\.messageID)
    }

    @Test("words match word starts, accents fold, phrases match in order; spam and trash are out of scope")
    func fullText() throws {
        let f = try fixture()
        #expect(try search(f, "budget") == ["sent", "budget"])
        #expect(try search(f, "proj") == ["budget"])
        #expect(try search(f, "zurich") == ["flight"])
        #expect(try search(f, "\"projected budget\"") == ["budget"])
        #expect(try search(f, "\"budget projected\"").isEmpty)
        #expect(try search(f, "e-mail") == ["flight"])
    }

    @Test("in:anywhere, in:spam and in:trash bring spam and trash back")
    func scope() throws {
        let f = try fixture()
        #expect(try search(f, "budget in:anywhere") == ["sent", "trash", "spam", "budget"])
        #expect(try search(f, "in:spam") == ["spam"])
        #expect(try search(f, "budget in:trash") == ["trash"])
        // r8_: a negated mention asks for nothing: spam stays out of "-in:trash".
        #expect(try search(f, "budget -in:trash") == ["sent", "budget"])
        #expect(try search(f, "budget -in:spam") == ["sent", "budget"])
        #expect(try search(f, "budget in:spam OR in:trash") == ["trash", "spam"])
    }

    @Test("from:, to: and from:me: exact addresses, names and domains")
    func addresses() throws {
        let f = try fixture()
        #expect(try search(f, "from:alice@example.org") == ["budget"])
        #expect(try search(f, "from:alice") == ["budget"])
        #expect(try search(f, "from:travel.example") == ["flight"])
        #expect(try search(f, "to:alice@example.org") == ["sent"])
        #expect(try search(f, "from:me") == ["sent"])
        #expect(try search(f, "-from:alice in:inbox") == ["flight", "big", "list"])
    }

    @Test("labels by name, hyphenated, case-insensitive; is:, in:, category:, has:")
    func labels() throws {
        let f = try fixture()
        #expect(try search(f, "label:travel-2026") == ["flight"])
        #expect(try search(f, "label:\"Travel/2026\"") == ["flight"])
        #expect(try search(f, "label:nosuchlabel").isEmpty)
        #expect(try search(f, "is:starred") == ["flight"])
        #expect(try search(f, "is:unread") == ["budget"])
        #expect(try search(f, "is:important") == ["big"])
        #expect(try search(f, "in:sent") == ["sent"])
        #expect(try search(f, "category:updates") == ["receipt"])
        #expect(try search(f, "category:forums") == ["list"])
        #expect(try search(f, "has:attachment") == ["flight"])
        #expect(try search(f, "has:userlabels") == ["receipt", "flight"])
        #expect(try search(f, "filename:pdf") == ["flight"])
        #expect(try search(f, "filename:boarding") == ["flight"])
    }

    @Test("labels read the effective labels: an archive queued a moment ago no longer matches in:inbox")
    func effective() throws {
        let f = try fixture()
        try f.store.perform([.archive], on: [.message("big")])
        #expect(try !search(f, "in:inbox").contains("big"))
        try f.store.perform([.addLabel("Receipts")], on: [.message("big")])
        #expect(try search(f, "label:receipts") == ["receipt", "big"])
    }

    @Test("dates, relative ages and sizes")
    func datesAndSizes() throws {
        let f = try fixture()
        #expect(try search(f, "after:2026/01/02") == ["receipt", "flight"])
        #expect(try search(f, "before:2026/01/02 in:inbox") == ["big", "list", "budget"])
        #expect(try search(f, "after:\(1_767_225_600 + 86_400) before:\(1_767_225_600 + 86_400 * 5)") == ["flight"])
        #expect(try search(f, "newer_than:25d") == ["receipt"])
        #expect(try search(f, "older_than:25d in:inbox") == ["flight", "big", "list", "budget"])
        #expect(try search(f, "larger:1M") == ["big"])
        #expect(try search(f, "smaller:2K in:inbox") == ["flight", "list", "budget"])
    }

    @Test("rfc822msgid:, list:, OR, braces and parentheses")
    func operators() throws {
        let f = try fixture()
        #expect(try search(f, "rfc822msgid:<flight@example.org>") == ["flight"])
        #expect(try search(f, "rfc822msgid:flight@example.org") == ["flight"])
        #expect(try search(f, "list:dev@lists.example.org") == ["list"])
        #expect(try search(f, "zurich OR receipt") == ["receipt", "flight"])
        #expect(try search(f, "{zurich receipt design}") == ["receipt", "flight", "big"])
        #expect(try search(f, "(zurich OR design) is:important") == ["big"])
        #expect(try search(f, "-label:travel-2026 in:inbox -is:important") == ["list", "budget"])
    }

    @Test("a search by exact sender is an index seek on message_addresses, not a scan of messages")
    func fromPlan() throws {
        let f = try fixture()
        let plan = try f.store.searchPlan(try Query.parse("from:alice@example.org"), options: SearchOptions(now: 0))
        #expect(plan.contains { $0.contains("message_addresses_by_address") }, "\(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN m ") || $0 == "SCAN m" || $0.contains("SCAN messages") }, "\(plan)")
    }

    @Test("thread results are the distinct threads of the matches, paged without repeats")
    func threads() throws {
        let f = try StoreFixture()
        _ = try f.store.applySnapshots((0..<6).map { i in
            f.snapshot("m\(i)", thread: "t\(i % 3)", minute: Int64(i), subject: "alpha \(i)")
        }, accountID: f.account.id)
        let options = SearchOptions(accountID: f.account.id, now: 0)
        let query = try Query.parse("alpha")
        let first = try f.store.searchThreads(query, options: options, limit: 2)
        #expect(first.map(\.threadID) == ["t2", "t1"])
        let second = try f.store.searchThreads(query, options: options, limit: 2, after: .thread("t1"))
        #expect(second.map(\.threadID) == ["t0"])
        #expect(try f.store.countSearch(query, options: options, threads: true) == 3)
        #expect(try f.store.countSearch(query, options: options, threads: false) == 6)
    }

    @Test("thread pages after a thread equal the unpaged list, whatever drives the query and however deep the page",
          arguments: ["alpha", "in:inbox", "from:carol@example.org", "alpha in:inbox", "-beta", "beta OR from:dave@example.org"])
    func threadPagesSeek(text: String) throws {
        let f = try StoreFixture()
        // 300 messages over 40 threads, interleaved by a fixed generator: a thread's
        // matches are spread over many pages, so a page must leave out threads already
        // placed on an earlier one.
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let senders = ["Carol <carol@example.org>", "Dave <dave@example.org>", "Erin <erin@example.org>"]
        _ = try f.store.applySnapshots((0..<300).map { i in
            f.snapshot("m\(i)", thread: "t\(next(40))", minute: Int64(i),
                       labels: next(3) == 0 ? ["UNREAD"] : ["INBOX"], subject: next(2) == 0 ? "alpha" : "beta",
                       from: senders[next(3)])
        }, accountID: f.account.id)
        let query = try Query.parse(text)
        for accountID in [f.account.id, nil] as [Int64?] {
            let options = SearchOptions(accountID: accountID, now: 0)
            let all = try f.store.searchThreads(query, options: options, limit: 1000).map(\.threadID)
            #expect(all.count > 10, "\(text): too few threads to page")
            for size in [1, 3, 7] {
                var paged: [String] = []
                var after: Reference?
                while true {
                    let page = try f.store.searchThreads(query, options: options, limit: size, after: after)
                    paged += page.map(\.threadID)
                    guard let last = page.last, paged.count <= all.count else { break }
                    after = .thread(last.threadID)
                }
                #expect(paged == all, "\(text), pages of \(size), account \(String(describing: accountID))")
            }
        }
    }

    @Test("a page after a thread that no longer matches goes on from where that thread was placed")
    func pageAfterAThreadThatLeft() throws {
        let f = try StoreFixture()
        _ = try f.store.applySnapshots((0..<6).map { i in
            f.snapshot("m\(i)", thread: "t\(i)", minute: Int64(i), labels: ["INBOX"])
        }, accountID: f.account.id)
        let options = SearchOptions(accountID: f.account.id, now: 0)
        let query = try Query.parse("in:inbox")
        let first = try f.store.searchThreads(query, options: options, limit: 3)
        #expect(first.map(\.threadID) == ["t5", "t4", "t3"])
        _ = try f.store.perform([.archive], on: [.thread("t3")])
        let second = try f.store.searchThreads(query, options: options, limit: 3, after: .thread("t3"))
        #expect(second.map(\.threadID) == ["t2", "t1", "t0"])
    }
}
