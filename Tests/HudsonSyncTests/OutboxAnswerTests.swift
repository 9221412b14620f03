// Gmail's answers to sends and drafts, generated (issue 37, "Done when": server answers):
// an answer whose ids are empty, of the wrong shape (a path, a query, an escape sequence,
// 600 characters, non-ASCII) or missing is not an answer as documented. Nothing from it is
// recorded or printed; the entry stays "outcome unknown" and the probe decides, so the
// message is in the mailbox once. Fixed seed, printed on failure (HUDSON_TEST_SEED).
import Foundation
import GmailIDShape
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

/// The scripted Gmail, except that `send` answers what `answer` makes of its real answer
/// (Gmail stored the message either way).
final class RewrittenAnswers: GmailAPI {
    let inner: ScriptedGmail
    let answer: Mutex<(@Sendable (GmailMessage) -> GmailMessage)?>

    init(_ inner: ScriptedGmail) {
        self.inner = inner
        answer = Mutex(nil)
    }

    func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage {
        let sent = try await inner.send(raw: raw, threadID: threadID)
        return answer.withLock { $0 }?(sent) ?? sent
    }

    func getProfile() async throws -> Profile { try await inner.getProfile() }
    func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage {
        try await inner.listMessages(pageToken: pageToken, maxResults: maxResults, query: query)
    }
    func getMessage(id: String, format: String) async throws -> GmailMessage { try await inner.getMessage(id: id, format: format) }
    func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage {
        try await inner.listHistory(startHistoryID: startHistoryID, pageToken: pageToken, labelID: labelID)
    }
    func listLabels() async throws -> [GmailLabel] { try await inner.listLabels() }
    func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        try await inner.modify(id: id, addLabelIDs: addLabelIDs, removeLabelIDs: removeLabelIDs)
    }
    func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        try await inner.batchModify(ids: ids, addLabelIDs: addLabelIDs, removeLabelIDs: removeLabelIDs)
    }
    func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>] {
        await inner.getMessages(ids: ids, format: format)
    }
    func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody {
        try await inner.getAttachment(messageID: messageID, attachmentID: attachmentID)
    }
    func createLabel(name: String) async throws -> GmailLabel { try await inner.createLabel(name: name) }
    func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel { try await inner.createLabel(name: name, color: color) }
    func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel {
        try await inner.patchLabel(id: id, name: name, color: color)
    }
    func deleteLabel(id: String) async throws { try await inner.deleteLabel(id: id) }
}

@Suite("OutboxSender: Gmail's answers with missing or wrong-shaped ids decide nothing")
struct OutboxAnswerTests {
    static let hostileIDs = ["", ".", "..", "../../x", "a/b", "a?b", "a#b", "%2e%2e", "\u{1B}[2J", "a b", "a\nb", "ü",
                             String(repeating: "f", count: 600), "\"", "<x>", "a\\b"]

    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("messages.send answered with a hostile message or thread id: nothing recorded from it; probed; one copy")
    func sendAnswers() async throws {
        let seed = ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 3_720_211
        var random = Seeded(state: seed)
        let f = try SyncFixture()
        f.gmail.seed("m0", daysAgo: 1, subject: "Plans")
        try await f.syncUntilComplete(f.engine())
        let accountID = try f.account().id
        let api = RewrittenAnswers(f.gmail)
        for round in 0..<24 {
            let id = Self.hostileIDs.randomElement(using: &random)!
            let inThread = Bool.random(using: &random)
            api.answer.withLock { $0 = { sent in GmailMessage(id: inThread ? sent.id : id, threadId: inThread ? id : sent.threadId) } }
            let messageID = "<answer.\(round)@example.com>"
            let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: a\r\nMessage-ID: \(messageID)\r\n\r\nx\r\n".utf8)
            let entry = try f.database.write {
                try $0.enqueueOutbox(NewOutboxMessage(accountID: accountID, raw: raw, messageID: messageID,
                                                      recipients: ["bob@example.org"], subject: "a"))
            }
            let sender = OutboxSender(api: api, database: f.database, account: f.email, exclusive: true, settle: .zero)
            let first = try await sender.sendDue(only: [entry.id])
            let context = "seed \(seed) round \(round): \(id.debugDescription) as \(inThread ? "thread" : "message") id"
            #expect(first.deferred == 1 && first.sent == 0, "\(context)")
            let unknown = try #require(try f.database.read { try $0.outboxEntry(id: entry.id) })
            #expect(unknown.gmailID == nil || GmailID.isWellFormed(unknown.gmailID!, as: .message), "\(context)")
            api.answer.withLock { $0 = nil }
            _ = try await sender.sendDue(only: [entry.id])
            let after = try #require(try f.database.read { try $0.outboxEntry(id: entry.id) })
            #expect(after.state == .sent && GmailID.isWellFormed(after.gmailID ?? "", as: .message), "\(context)")
            #expect(f.gmail.copies(of: messageID) == 1, "\(context)")
        }
    }

    @Test("the id rule: Gmail's own shapes pass; what a path, a query or a terminal would read does not")
    func idRule() {
        for id in ["18c9a4f0e2b1d3c7", "r-7031000000000007919", "r5893190862344731526", "AB_cd-12"] {
            #expect(GmailID.isWellFormed(id, as: .message), "\(id)")
        }
        for id in Self.hostileIDs { #expect(!GmailID.isWellFormed(id, as: .message), "\(id.debugDescription)") }
    }
}
