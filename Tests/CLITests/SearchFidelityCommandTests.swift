import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

@Suite("hd-search finds what Gmail finds: CJK words, snippets of body-less mail, and says what it could not read")
struct SearchFidelityCommandTests {
    /// Two stored bodies (Japanese, Chinese) and one message known only by its metadata.
    func mailbox() throws -> CLIFixture {
        let f = CLIFixture()
        let store = try f.openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        func message(_ id: String, minute: Int64, subject: String, snippet: String) -> MessageSnapshot {
            MessageSnapshot(
                id: id, threadID: id, historyID: 1000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
                labelIDs: ["INBOX"], snippet: snippet, sizeEstimate: 1000,
                headers: MessageHeaders(subject: subject, from: "Kenji <kenji@example.jp>", to: "Ann <ann@example.com>"))
        }
        _ = try store.applySnapshots([
            message("ja", minute: 1, subject: "会議", snippet: "会議の資料を明日送ります"),
            message("zh", minute: 2, subject: "会议", snippet: "明天的会议资料已经发送给你了"),
            message("old", minute: 3, subject: "Budget", snippet: "the aardvark numbers for March"),
        ], accountID: account.id)
        try store.saveBody(MessageBody(text: "会議の資料を明日送ります。よろしくお願いします。"), gmailID: "ja", accountID: account.id)
        try store.saveBody(MessageBody(text: "明天的会议资料已经发送给你了。"), gmailID: "zh", accountID: account.id)
        return f
    }

    let note = "hd-search: 1 message(s) have no stored body; their text was searched in the subject, addresses and Gmail's snippet only (hd-sync --catch-up --prefetch-days 0 stores every body)\n"

    @Test("hd-search 資料 finds the Japanese sentence and 资料 the Chinese one; a word of a body-less message's snippet is found, with a note")
    func cjkAndSnippets() throws {
        let f = try mailbox()
        let japanese = try f.run("hd-search", "--messages", "--ids", "資料")
        #expect(japanese.status == 0 && japanese.stdout == "message:ja\n", "\(japanese)")
        #expect(japanese.stderr == note)
        #expect(try f.run("hd-search", "--messages", "--ids", "资料").stdout == "message:zh\n")
        #expect(try f.run("hd-search", "--messages", "--ids", "よろしく").stdout == "message:ja\n")
        let snippet = try f.run("hd-search", "--messages", "--ids", "aardvark")
        #expect(snippet.stdout == "message:old\n" && snippet.stderr == note, "\(snippet)")
        let count = try f.run("hd-search", "--count", "nothing-like-this")
        #expect(count.status == 1 && count.stdout == "0\n" && count.stderr == note, "\(count)")
        #expect(try f.run("hd-search", "--explain", "資料").stdout.contains("note: 1 message(s) have no stored body"))
        // A query without words reads no text: no note.
        let flags = try f.run("hd-search", "--ids", "in:inbox")
        #expect(flags.status == 0 && flags.stderr.isEmpty, "\(flags)")
        let json = try f.run("hd-search", "--json", "--messages", "aardvark")
        #expect(json.stdout.contains("\"body_stored\":false") && json.stderr == note, "\(json)")
    }

    @Test("once every body is stored, no note")
    func noNoteWhenEveryBodyIsStored() throws {
        let f = try mailbox()
        let store = try f.openStore()
        let account = try #require(try store.accounts().first)
        try store.saveBody(MessageBody(text: "the aardvark numbers for March, in full"), gmailID: "old", accountID: account.id)
        let result = try f.run("hd-search", "--ids", "aardvark")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
    }
}
