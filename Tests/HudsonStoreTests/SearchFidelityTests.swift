import HudsonQuery
import HudsonStore
import Testing

@Suite("Search finds what Gmail finds: words inside CJK sentences, bodies not stored, attachments by name")
struct SearchFidelityTests {
    func search(_ f: StoreFixture, _ text: String) throws -> [String] {
        try f.store.searchMessages(Query.parse(text), options: SearchOptions(now: f.clock.now), limit: 50).map(\.messageID).sorted()
    }

    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.apply(
            f.snapshot("ja", minute: 1, labels: ["INBOX"], subject: "会議について", snippet: "会議の資料を明日送ります"),
            f.snapshot("zh", minute: 2, labels: ["INBOX"], subject: "会议", snippet: "明天的会议资料已经发送给你了"),
            f.snapshot("ko", minute: 3, labels: ["INBOX"], subject: "회의 자료", snippet: "내일 회의 자료를 보내드리겠습니다"),
            f.snapshot("de", minute: 4, labels: ["INBOX"], subject: "Treffen in Zürich", snippet: "Wir sehen uns im Café"),
            f.snapshot("mixed", minute: 5, labels: ["INBOX"], subject: "Hudson資料v2です", snippet: "ｶﾀｶﾅ"))
        return f
    }

    @Test("a Japanese or Chinese word inside a sentence is found, in the subject and in the text")
    func cjkWordsInsideSentences() throws {
        let f = try fixture()
        #expect(try search(f, "資料") == ["ja", "mixed"])
        #expect(try search(f, "资料") == ["zh"])
        #expect(try search(f, "明日送ります") == ["ja"])
        #expect(try search(f, "\"明日送ります\"") == ["ja"])
        #expect(try search(f, "会議") == ["ja"])
        #expect(try search(f, "subject:会議") == ["ja"])
        #expect(try search(f, "subject:について") == ["ja"])
        #expect(try search(f, "会议资料") == ["zh"])
        // One character is found anywhere in a run, also last.
        #expect(try search(f, "資") == ["ja", "mixed"])
        #expect(try search(f, "す") == ["ja", "mixed"])
        #expect(try search(f, "ｶﾅ") == ["mixed"])
        // Characters that are not adjacent in the text are not a word of it.
        #expect(try search(f, "会議資料").isEmpty)
        #expect(try search(f, "\"資料 明日\"").isEmpty)
        // A run followed by more text: phrases across runs, punctuation and Latin.
        try f.apply(f.snapshot("trip", minute: 6, labels: ["INBOX"], subject: "東京 大阪 出張", snippet: "資料A版です"),
                    f.snapshot("list", minute: 7, labels: ["INBOX"], subject: "会議、資料", snippet: ""))
        #expect(try search(f, "\"東京 大阪\"") == ["trip"])
        #expect(try search(f, "資料A") == ["trip"])
        #expect(try search(f, "\"会議、資料\"") == ["list"])
        #expect(try search(f, "\"大阪 東京\"").isEmpty)
        // Latin beside CJK without a space is its own word.
        #expect(try search(f, "hudson") == ["mixed"])
        #expect(try search(f, "v2") == ["mixed"])
        try f.checkDerivedTables()
    }

    @Test("Korean words (spaced) and accent folding work as before")
    func koreanAndAccents() throws {
        let f = try fixture()
        #expect(try search(f, "회의") == ["ko"])
        #expect(try search(f, "자료") == ["ko"])
        #expect(try search(f, "zurich") == ["de"])
        #expect(try search(f, "cafe") == ["de"])
        #expect(try search(f, "Café") == ["de"])
    }

    @Test("a word of the snippet is found while the body is not stored, and of the body once it is")
    func snippetUntilTheBody() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m", minute: 1, labels: ["INBOX"], subject: "Quarterly", snippet: "the aardvark budget is ready"))
        #expect(try search(f, "aardvark") == ["m"])
        #expect(try f.store.messagesWithoutBody(accountID: f.account.id) == 1)
        try f.store.saveBody(MessageBody(text: "The aardvark budget is ready. Also: zeppelin."), gmailID: "m", accountID: f.account.id)
        #expect(try search(f, "zeppelin") == ["m"])
        #expect(try search(f, "aardvark") == ["m"])
        #expect(try f.store.messagesWithoutBody(accountID: f.account.id) == 0)
        try f.checkDerivedTables()
        // A new snippet re-indexes a message without a body.
        try f.apply(f.snapshot("n", minute: 2, labels: ["INBOX"], snippet: "first words"))
        try f.apply(f.snapshot("n", history: 200, minute: 2, labels: ["INBOX"], snippet: "second thoughts"))
        #expect(try search(f, "first").isEmpty)
        #expect(try search(f, "thoughts") == ["n"])
        try f.checkDerivedTables()
    }

    @Test("larger: that few messages pass is found by the size index; one that many pass walks newest first")
    func largerUsesTheSizeIndexForLargeSizes() throws {
        let f = try fixture()
        let options = SearchOptions(now: f.clock.now)
        func bySize(_ text: String) throws -> Bool {
            try f.store.searchPlan(Query.parse(text), options: options).joined().contains("messages_by_size")
        }
        #expect(try bySize("larger:1M") && bySize("larger:10K") && bySize("larger:1K"))  // 0, 0 and 5 messages pass
        #expect(try !bySize("larger:5M 資料"))  // full text drives
        #expect(try search(f, "larger:1M").isEmpty)
        #expect(try search(f, "larger:1K").count == 5)
        // One past the limit: more than 5,000 messages of 1,234 bytes pass larger:1K.
        let many = (0...5_000).map { f.snapshot("bulk\($0)", minute: 100 + Int64($0)) }
        _ = try f.store.applySnapshots(many, accountID: f.account.id)
        #expect(try !bySize("larger:1K"))
        #expect(try bySize("larger:2K"))
        #expect(try f.store.searchMessages(Query.parse("larger:1K"), options: options, limit: 3).map(\.messageID)
                == ["bulk5000", "bulk4999", "bulk4998"])
    }

    @Test("has:attachment is a part with a non-empty filename, as Gmail's filename field says")
    func attachmentsByName() throws {
        let f = try StoreFixture()
        let cases: [(String, [AttachmentInfo], Bool)] = [
            ("named-pdf", [.init(partID: "1", filename: "report.pdf", mimeType: "application/pdf", size: 10, isInline: false)], true),
            ("named-inline-image", [.init(partID: "1", filename: "logo.png", mimeType: "image/png", size: 10, contentID: "logo", isInline: true)], true),
            ("unnamed-inline-image", [.init(partID: "1", filename: "", mimeType: "image/png", size: 10, contentID: "x", isInline: true)], false),
            ("unnamed-octets", [.init(partID: "1", filename: "", mimeType: "application/octet-stream", size: 10, isInline: false)], false),
            ("unnamed-calendar", [.init(partID: "1", filename: "", mimeType: "text/calendar", size: 10, isInline: false)], false),
            ("named-signature", [.init(partID: "2", filename: "smime.p7s", mimeType: "application/pkcs7-signature", size: 10, isInline: false)], true),
            ("unnamed-message", [.init(partID: "2", filename: "", mimeType: "message/rfc822", size: 10, isInline: false)], false),
        ]
        for (index, (id, attachments, _)) in cases.enumerated() {
            try f.apply(f.snapshot(id, minute: Int64(index), labels: ["INBOX"]))
            try f.store.saveBody(MessageBody(text: "see attached", attachments: attachments), gmailID: id, accountID: f.account.id)
        }
        #expect(try search(f, "has:attachment") == cases.filter(\.2).map(\.0).sorted())
        #expect(try search(f, "filename:pdf") == ["named-pdf"])
        #expect(try search(f, "filename:png") == ["named-inline-image"])
        #expect(try search(f, "filename:calendar").isEmpty)
        try f.checkDerivedTables()
    }
}
