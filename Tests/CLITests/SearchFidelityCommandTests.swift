import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

/// Gmail's own answer to a query, asked over HTTP as Hudson's client would (issue 37 §4):
/// the fake's messages.list with `q`, every page.
func gmailAnswer(_ fake: FakeGmail, _ query: String) throws -> Set<String> {
    var request = URLRequest(url: URL(string: fake.url + "/token")!)
    request.httpMethod = "POST"
    request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data("grant_type=refresh_token&refresh_token=\(fake.refreshToken)&client_id=\(fake.clientID)&client_secret=\(fake.clientSecret)".utf8)
    let token = try #require((try JSONSerialization.jsonObject(with: try httpData(request)) as? [String: Any])?["access_token"] as? String)
    var ids = Set<String>()
    var pageToken: String?
    repeat {
        var components = URLComponents(string: fake.url + "/gmail/v1/users/me/messages")!
        components.queryItems = [URLQueryItem(name: "q", value: query), URLQueryItem(name: "maxResults", value: "500"),
                                 URLQueryItem(name: "includeSpamTrash", value: "true")]
            + (pageToken.map { [URLQueryItem(name: "pageToken", value: $0)] } ?? [])
        var list = URLRequest(url: components.url!)
        list.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        let page = try #require(try JSONSerialization.jsonObject(with: try httpData(list)) as? [String: Any])
        for message in page["messages"] as? [[String: Any]] ?? [] { if let id = message["id"] as? String { ids.insert(id) } }
        pageToken = page["nextPageToken"] as? String
    } while pageToken != nil
    return ids
}

private func httpData(_ request: URLRequest) throws -> Data {
    final class Box: @unchecked Sendable { var result: Result<Data, any Error> = .failure(URLError(.timedOut)) }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { data, _, error in
        box.result = data.map { .success($0) } ?? .failure(error ?? URLError(.badServerResponse))
        done.signal()
    }.resume()
    _ = done.wait(timeout: .now() + 30)
    return try box.result.get()
}

@Suite("has:attachment, filename:, larger: and smaller: without stored bodies: Gmail's answer, or a note of how many are a guess")
struct AttachmentFidelityCommandTests {
    static let note = "3 matching message(s) rest on a guess and 2 other message(s) may match: has:attachment cannot be decided without their attachments, which are not stored (hd-sync --catch-up --prefetch-days 0 stores every body)"

    /// Body-less messages whose Content-Type guess is right and wrong, and one with its body.
    func mailbox() throws -> (CLIFixture, Store, Int64) {
        let f = CLIFixture()
        let store = try f.openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        func message(_ id: String, _ minute: Int64, _ contentType: String) -> MessageSnapshot {
            MessageSnapshot(id: id, threadID: id, historyID: 1000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
                            labelIDs: ["INBOX"], snippet: "s", sizeEstimate: 1000 * minute,
                            headers: MessageHeaders(subject: id, from: "Bob <bob@example.org>", contentType: contentType))
        }
        _ = try store.applySnapshots([
            message("mixedtext", 1, "multipart/mixed; boundary=b"), message("digest", 2, "multipart/mixed; boundary=d"),
            message("pdfalone", 3, "application/pdf"), message("mixedpdf", 4, "multipart/mixed; boundary=c"),
            message("plain", 5, "text/plain"), message("stored", 6, "multipart/mixed; boundary=e"),
        ], accountID: account.id)
        try store.saveBody(MessageBody(text: "x", attachments: [AttachmentInfo(partID: "1", filename: "a.pdf", mimeType: "application/pdf", size: 1)]),
                           gmailID: "stored", accountID: account.id)
        return (f, store, account.id)
    }

    @Test("hd-search (threads, --messages, --count, --explain, --json) and hd-ls with a query say how many matches rest on a guess")
    func noteEverywhere() throws {
        let (f, _, _) = try mailbox()
        let messages = try f.run("hd-search", "--messages", "--ids", "has:attachment")
        #expect(messages.status == 0 && messages.lines == ["message:stored", "message:mixedpdf", "message:digest", "message:mixedtext"], "\(messages)")
        #expect(messages.stderr == "hd-search: \(Self.note)\n", "\(messages)")
        let threads = try f.run("hd-search", "--ids", "has:attachment")
        #expect(threads.status == 0 && threads.stderr == "hd-search: \(Self.note)\n", "\(threads)")
        let count = try f.run("hd-search", "--count", "--messages", "has:attachment")
        #expect(count.stdout == "4\n" && count.stderr == "hd-search: \(Self.note)\n", "\(count)")
        let ls = try f.run("hd-ls", "--ids", "has:attachment")
        #expect(ls.status == 0 && ls.stderr == "hd-ls: \(Self.note)\n", "\(ls)")
        #expect(try f.run("hd-search", "--explain", "has:attachment").stdout.contains("note: \(Self.note)"))
        let negated = try f.run("hd-search", "--count", "--messages", "-has:attachment")
        #expect(negated.stdout == "2\n" && negated.stderr.contains("2 matching message(s) rest on a guess and 3 other message(s) may match"), "\(negated)")
        let names = try f.run("hd-search", "--count", "--messages", "filename:pdf")
        #expect(names.stdout == "1\n" && names.stderr.hasPrefix("hd-search: 5 other message(s) may match: filename: cannot be decided"), "\(names)")
        // What reads no attachment owes no note; a word search keeps its own.
        let plain = try f.run("hd-search", "--ids", "in:inbox larger:1")
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain)")
        let json = try f.run("hd-search", "--json", "--messages", "has:attachment")
        #expect(json.stdout.split(separator: "\n").filter { $0.contains("\"attachment_known\":false") }.count == 3, "\(json.stdout)")
        #expect(json.stdout.split(separator: "\n").filter { $0.contains("\"attachment_known\":true") }.count == 1, "\(json.stdout)")
    }

    @Test("once Gmail's answer is recorded, the answer is Gmail's and there is no note")
    func answered() throws {
        let (f, store, accountID) = try mailbox()
        try store.recordAttachmentAnswers(with: ["pdfalone", "mixedpdf"], without: ["mixedtext", "digest", "plain"], accountID: accountID)
        let result = try f.run("hd-search", "--messages", "--ids", "has:attachment")
        #expect(result.lines == ["message:stored", "message:mixedpdf", "message:pdfalone"] && result.stderr.isEmpty, "\(result)")
        let ls = try f.run("hd-ls", "--ids", "has:attachment")
        #expect(ls.stderr.isEmpty && ls.lines.count == 3, "\(ls)")
    }

    @Test("against the fake Gmail, bodies not prefetched: larger:/smaller: and has:attachment are Gmail's answer; filename: says it guesses until every body is stored")
    func againstGmail() throws {
        let f = CLIFixture()
        let fake = try fixedFake()
        defer { withExtendedLifetime(fake) {} }
        for raw in [
            "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: two text parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\none\r\n--b\r\nContent-Type: text/plain\r\n\r\ntwo\r\n--b--\r\n",
            "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: a lone pdf\r\nMIME-Version: 1.0\r\nContent-Type: application/pdf; name=\"r.pdf\"\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n",
        ] {
            try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX"], "internalDate": 1_780_000_000_000])
        }
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
        // What sync stores (not spam and trash it never listed) is what Gmail's answers are compared on.
        let stored = Set(try f.run("hd-search", "--messages", "--ids", "-n", "0", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
        func hudson(_ query: String) throws -> (ids: Set<String>, stderr: String) {
            let result = try f.run("hd-search", "--messages", "--ids", "-n", "0", query + " in:anywhere")
            return (Set(result.lines.map { String($0.dropFirst("message:".count)) }), result.stderr)
        }
        for query in ["larger:2K", "smaller:2K", "larger:1500", "smaller:1M", "larger:3000 smaller:5000", "size:2500"] {
            let (ids, stderr) = try hudson(query)
            #expect(ids == (try gmailAnswer(fake, query + " in:anywhere")).intersection(stored), "\(query)")
            #expect(stderr.isEmpty, "\(query): \(stderr)")
        }
        // Sync asked Gmail which of the body-less messages it calls has:attachment (one list
        // call per 500 messages, AttachmentCensus): the answer is Gmail's, with no note, although
        // the mailbox has messages the Content-Type guesses wrong.
        let gmail = try gmailAnswer(fake, "has:attachment in:anywhere").intersection(stored)
        let (decided, quietBefore) = try hudson("has:attachment")
        #expect(decided == gmail && quietBefore.isEmpty, "\(quietBefore)")
        let logged = try fake.admin("GET", "requests") as? [[String: Any]] ?? []
        let census = logged.filter { "\($0["query"] ?? "")".removingPercentEncoding?.contains("has:attachment") ?? false }
        #expect(!census.isEmpty, "sync never asked Gmail")
        // filename: needs the parts, which a body-less message lacks: a note owns up to it.
        let (_, filenameNote) = try hudson("filename:pdf")
        #expect(filenameNote.contains("filename: cannot be decided without their attachments"), "\(filenameNote)")
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let (exact, quiet) = try hudson("has:attachment")
        #expect(exact == gmail && quiet.isEmpty, "\(quiet)")
        #expect(try hudson("filename:pdf").ids == (try gmailAnswer(fake, "filename:pdf in:anywhere")).intersection(stored))
    }
}
