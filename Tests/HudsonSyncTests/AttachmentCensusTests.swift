// AttachmentCensus (issue 37 §4): Gmail's own has:attachment for messages whose body is not
// stored, one list call per 500 messages, against the GmailAPI protocol (a scripted
// listing) and against the project's fake Gmail over HTTP.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HudsonGmail
import HudsonQuery
import HudsonStore
import HudsonSync
import HudsonTestSupport
import Synchronization
import Testing

/// A Gmail whose only working call is messages.list, answered by `answer` (query, page
/// token) and recorded; every other call fails the test.
final class ListingGmail: GmailAPI {
    let answer: @Sendable (String?, String?) throws -> MessageListPage
    private let log = Mutex<[(query: String?, token: String?)]>([])
    var queries: [(query: String?, token: String?)] { log.withLock { $0 } }

    init(_ answer: @escaping @Sendable (_ query: String?, _ token: String?) throws -> MessageListPage) {
        self.answer = answer
    }

    func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage {
        #expect(maxResults == 500)
        log.withLock { $0.append((query, pageToken)) }
        return try answer(query, pageToken)
    }

    private func unexpected() -> GmailError {
        Issue.record("the census made a call other than messages.list")
        return GmailError.badRequest(message: "unexpected")
    }
    func getProfile() async throws -> Profile { throw unexpected() }
    func getMessage(id: String, format: String) async throws -> GmailMessage { throw unexpected() }
    func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage { throw unexpected() }
    func listLabels() async throws -> [GmailLabel] { throw unexpected() }
    func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws { throw unexpected() }
    func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws { throw unexpected() }
    func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>] {
        _ = unexpected()
        return [:]
    }
    func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody { throw unexpected() }
    func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage { throw unexpected() }
    func createLabel(name: String) async throws -> GmailLabel { throw unexpected() }
    func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel { throw unexpected() }
    func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel { throw unexpected() }
    func deleteLabel(id: String) async throws { throw unexpected() }
}

@Suite("AttachmentCensus asks Gmail which body-less messages have attachments, a list call per 500")
struct AttachmentCensusTests {
    let day: Int64 = 86_400_000
    let start: Int64 = 1_767_225_600_000  // 2026-01-01

    /// A store of `count` body-less messages a day apart, newest last; `attached` say which
    /// Gmail calls has:attachment (by index), all guessed "no" (text/plain).
    func store(count: Int, multipartMixed: Set<Int> = []) throws -> (TemporaryDirectory, SharedStore, Int64) {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path("hudson.sqlite3"), access: .create)
        let account = try store.addAccount(email: "ann@example.com", consentedAt: start / 1000, lookbackDays: 90)
        let snapshots = (0..<count).map { index in
            MessageSnapshot(id: String(format: "m%04d", index), threadID: String(format: "m%04d", index), historyID: 100,
                            internalDate: start + Int64(index) * day, labelIDs: ["INBOX"], sizeEstimate: 1000,
                            headers: MessageHeaders(subject: "s", from: "a@example.org",
                                                    contentType: multipartMixed.contains(index) ? "multipart/mixed" : "text/plain"))
        }
        _ = try store.applySnapshots(snapshots, accountID: account.id)
        return (dir, SharedStore(store), account.id)
    }

    func hasAttachment(_ database: SharedStore, _ accountID: Int64) throws -> [String] {
        try database.read {
            var options = SearchOptions(now: start)
            options.accountID = accountID
            return try $0.searchMessages(Query.parse("has:attachment in:anywhere"), options: options, limit: 10_000).map(\.messageID).sorted()
        }
    }

    /// The `after:`/`before:` epoch seconds of a census query.
    static func range(_ query: String?) -> (after: Int64?, before: Int64?) {
        var after: Int64?
        var before: Int64?
        for term in (query ?? "").split(separator: " ") {
            if term.hasPrefix("after:") { after = Int64(term.dropFirst(6)) }
            if term.hasPrefix("before:") { before = Int64(term.dropFirst(7)) }
        }
        return (after, before)
    }

    @Test("a chunk's date range widened by a day is asked once; what Gmail lists has an attachment, the rest of the chunk none")
    func decides() async throws {
        let (dir, database, accountID) = try store(count: 12, multipartMixed: [1, 2])
        defer { withExtendedLifetime(dir) {} }
        // Gmail: m0003 and m0007 have attachments; m0001 and m0002 (multipart/mixed) do not.
        let dates = Dictionary(uniqueKeysWithValues: (0..<12).map { (String(format: "m%04d", $0), start + Int64($0) * day) })
        let gmail = ListingGmail { query, _ in
            let (after, before) = Self.range(query)
            #expect(query?.hasPrefix("has:attachment in:anywhere ") == true, "\(query ?? "")")
            let ids = ["m0003", "m0007"].filter { id in
                let seconds = dates[id]! / 1000
                return (after.map { seconds > $0 } ?? true) && (before.map { seconds < $0 } ?? true)
            }
            return MessageListPage(messages: ids.map { MessageRef(id: $0, threadId: $0) })
        }
        #expect(try hasAttachment(database, accountID) == ["m0001", "m0002"])
        let decided = try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID)
        #expect(decided == 12)
        #expect(try hasAttachment(database, accountID) == ["m0003", "m0007"])
        #expect(gmail.queries.count == 1)
        let (after, before) = Self.range(gmail.queries.first?.query)
        #expect(after == start / 1000 - 86_400 && before == (start + 11 * day) / 1000 + 86_401)
        #expect(try database.read { try $0.guessedAttachmentCount(accountID: accountID) } == 0)
        // Nothing left to ask: no call.
        #expect(try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID) == 0)
        #expect(gmail.queries.count == 1)
    }

    @Test("500 messages a chunk, newest first, at most maxChunks chunks a pass")
    func chunks() async throws {
        let (dir, database, accountID) = try store(count: 1_203)
        defer { withExtendedLifetime(dir) {} }
        let gmail = ListingGmail { _, _ in MessageListPage() }
        #expect(try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID, maxChunks: 2) == 1_000)
        #expect(gmail.queries.count == 2)
        // The newest 1,000 first: the oldest 203 are left for the next pass.
        let left = try database.read { try $0.messagesWithGuessedAttachment(accountID: accountID, limit: 1_000) }
        #expect(left.count == 203 && left.first?.gmailID == "m0202")
        #expect(try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID) == 203)
    }

    @Test("a listing that pages on past the limit, or loops, decides only what it listed")
    func incompleteListing() async throws {
        for looping in [false, true] {
            let (dir, database, accountID) = try store(count: 5)
            defer { withExtendedLifetime(dir) {} }
            let gmail = ListingGmail { _, token in
                let next = looping ? "again" : String((Int(token ?? "0") ?? 0) + 1)
                return MessageListPage(messages: [MessageRef(id: "m0002", threadId: "m0002")], nextPageToken: next)
            }
            let decided = try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID, maxChunks: 1)
            #expect(decided == 1, "looping: \(looping)")
            #expect(try hasAttachment(database, accountID) == ["m0002"])
            #expect(gmail.queries.count <= 4, "bounded: \(gmail.queries.count) pages")
            #expect(try database.read { try $0.guessedAttachmentCount(accountID: accountID) } == 4)
        }
    }

    @Test("a range too dense to list within the page limit is asked again in halves, so the pass decides it")
    func denseRangeNarrowed() async throws {
        let (dir, database, accountID) = try store(count: 40)
        defer { withExtendedLifetime(dir) {} }
        // Gmail lists endless pages for a range wider than a week (a mailbox dense with
        // attachments there), and for a narrower one an answer that ends: m0005 has one.
        let gmail = ListingGmail { query, token in
            let (after, before) = Self.range(query)
            if let after, let before, before - after <= 9 * 86_400 {
                let listed = ["m0005"].filter { id in
                    let seconds = (start + 5 * day) / 1000
                    return seconds > after && seconds < before && id == "m0005"
                }
                return MessageListPage(messages: listed.map { MessageRef(id: $0, threadId: $0) })
            }
            return MessageListPage(messages: [], nextPageToken: String((Int(token ?? "0") ?? 0) + 1))
        }
        let decided = try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID, maxChunks: 20)
        #expect(decided > 0)
        let firstPass = try database.read { try $0.guessedAttachmentCount(accountID: accountID) }
        #expect(firstPass < 40, "the narrowed chunks were decided")
        // Later passes finish the rest; the walks per pass stay bounded.
        var passes = 1
        while try database.read({ try $0.guessedAttachmentCount(accountID: accountID) }) > 0 && passes < 10 {
            _ = try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID, maxChunks: 20)
            passes += 1
        }
        #expect(try database.read { try $0.guessedAttachmentCount(accountID: accountID) } == 0, "after \(passes) passes")
        #expect(try hasAttachment(database, accountID) == ["m0005"])
    }

    @Test("a Gmail error ends the step without failing it; what was decided stays", arguments: [
        GmailError.server(status: 503), .network("down"), .rateLimited(retryAfter: 1), .badRequest(message: "Invalid query"),
        .unauthorized, .invalidResponse("wrong type"),
    ])
    func gmailErrors(_ error: GmailError) async throws {
        let (dir, database, accountID) = try store(count: 700)
        defer { withExtendedLifetime(dir) {} }
        let calls = Mutex(0)
        let gmail = ListingGmail { _, _ in
            let call = calls.withLock { $0 += 1; return $0 }
            if call > 1 { throw error }
            return MessageListPage()
        }
        #expect(try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: accountID) == 500)
        #expect(try database.read { try $0.guessedAttachmentCount(accountID: accountID) } == 200)
    }

    @Test("listed ids the store does not have, hostile or empty, change nothing; dates before 1970 ask without after:")
    func hostileAnswers() async throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path("hudson.sqlite3"), access: .create)
        let account = try store.addAccount(email: "ann@example.com", consentedAt: start / 1000, lookbackDays: 90)
        _ = try store.applySnapshots([MessageSnapshot(id: "old", threadID: "old", historyID: 100, internalDate: -5_000_000,
                                                  labelIDs: ["INBOX"], headers: MessageHeaders(contentType: "multipart/mixed"))],
                                 accountID: account.id)
        let database = SharedStore(store)
        let gmail = ListingGmail { _, _ in
            MessageListPage(messages: ["", "../../etc/passwd", "old'; DROP TABLE messages; --", "\u{1B}[2J"].map { MessageRef(id: $0, threadId: "t") })
        }
        #expect(try await AttachmentCensus.decideGuessed(database: database, api: gmail, accountID: account.id) == 1)
        let query = gmail.queries.first?.query ?? ""
        #expect(query.hasPrefix("has:attachment in:anywhere") && !query.contains("after:"), "\(query)")
        #expect(try hasAttachment(database, account.id).isEmpty)
        #expect(try database.read { try $0.db.scalarInt("SELECT count(*) FROM messages") } == 1)
    }

    @Test("against the fake Gmail over HTTP: after a census, has:attachment in the store is Gmail's answer")
    func againstTheFake() async throws {
        let fake = try FakeGmail(["--demo", "--demo-count", "150", "--demo-span-days", "400", "--now", "1767225600"])
        defer { withExtendedLifetime(fake) {} }
        // A mixed message of two text parts and a lone PDF: the two the Content-Type guesses wrong.
        for raw in [AttachmentCensusFixtures.mixedText, AttachmentCensusFixtures.lonePDF] {
            try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX"], "internalDate": 1_760_000_000_000])
        }
        let client = try await AttachmentCensusFixtures.client(fake)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path("hudson.sqlite3"), access: .create)
        let account = try store.addAccount(email: fake.email, consentedAt: start / 1000, lookbackDays: 0)
        // Metadata only, as backfill stores it: no body, the flag a guess.
        var ids: [String] = []
        var token: String?
        repeat {
            let page = try await client.listMessages(pageToken: token, maxResults: 500, query: "in:anywhere")
            ids += page.messages.map(\.id)
            token = page.nextPageToken
        } while token != nil
        let answers = await client.getMessages(ids: ids, format: "metadata")
        let snapshots = try ids.map { try SnapshotMapping.mapped(try #require(try answers[$0]?.get())) }
        _ = try store.applySnapshots(snapshots, accountID: account.id)
        var gmailSays = Set<String>()
        token = nil
        repeat {
            let page = try await client.listMessages(pageToken: token, maxResults: 500, query: "has:attachment in:anywhere")
            gmailSays.formUnion(page.messages.map(\.id))
            token = page.nextPageToken
        } while token != nil
        let database = SharedStore(store)
        let guessed = Set(try hasAttachment(database, account.id))
        #expect(guessed != gmailSays, "the fixture has messages the Content-Type guesses wrong")
        let decided = try await AttachmentCensus.decideGuessed(database: database, api: client, accountID: account.id)
        #expect(decided == ids.count)
        #expect(Set(try hasAttachment(database, account.id)) == gmailSays)
        #expect(!gmailSays.isEmpty)
    }
}

enum AttachmentCensusFixtures {
    static let mixedText = "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: two text parts\r\nMIME-Version: 1.0\r\n"
        + "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\none\r\n"
        + "--b\r\nContent-Type: text/plain\r\n\r\ntwo\r\n--b--\r\n"
    static let lonePDF = "From: a@example.org\r\nTo: demo@hudson.test\r\nSubject: a lone pdf\r\nMIME-Version: 1.0\r\n"
        + "Content-Type: application/pdf; name=\"report.pdf\"\r\nContent-Disposition: attachment; filename=\"report.pdf\"\r\n"
        + "Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n"

    /// A client of `fake` with an access token from its token endpoint.
    static func client(_ fake: FakeGmail) async throws -> GmailClient {
        var request = URLRequest(url: URL(string: fake.url + "/token")!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("grant_type=refresh_token&refresh_token=\(fake.refreshToken)&client_id=\(fake.clientID)&client_secret=\(fake.clientSecret)".utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let token = try #require(object?["access_token"] as? String)
        return try GmailClient(configuration: GmailClientConfiguration(baseURL: URL(string: fake.url)!),
                               tokenProvider: StaticAccessTokenProvider(token: token))
    }
}
