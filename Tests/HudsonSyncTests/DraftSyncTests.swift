// Drafts on the sync side: the draft map read from drafts.list only when it disagrees with
// the stored DRAFT messages (DraftSync), and the outbox sender saving a draft once: a
// create whose answer was lost is found by drafts.list q=rfc822msgid: and not made again.
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

/// A scripted drafts API: drafts kept in memory, calls counted, and a switch that loses
/// the answer of the next create after applying it.
final class ScriptedDrafts: GmailDraftsAPI {
    struct State {
        var drafts: [(id: String, messageID: String, header: String)] = []
        var creates = 0
        var lists: [String?] = []
        var loseNextAnswer = false
        var pageSize = 2
    }
    let state = Mutex(State())

    func createDraft(raw: [UInt8], threadID: String?) async throws -> GmailDraft {
        let header = String(decoding: raw, as: UTF8.self).split(separator: "\r\n")
            .first { $0.hasPrefix("Message-ID: ") }.map { String($0.dropFirst("Message-ID: ".count)) } ?? ""
        let (draft, lose) = state.withLock { state -> (GmailDraft, Bool) in
            state.creates += 1
            let id = "r-\(state.creates)"
            state.drafts.append((id, "msg-\(state.creates)", header))
            defer { state.loseNextAnswer = false }
            return (GmailDraft(id: id, message: GmailMessage(id: "msg-\(state.creates)", threadId: "t-\(state.creates)")),
                    state.loseNextAnswer)
        }
        if lose { throw GmailError.network("connection reset after the request was written") }
        return draft
    }

    func updateDraft(id: String, raw: [UInt8], threadID: String?) async throws -> GmailDraft { throw GmailError.notFound }
    func getDraft(id: String, format: String) async throws -> GmailDraft { throw GmailError.notFound }
    func sendDraft(id: String) async throws -> GmailMessage { throw GmailError.notFound }
    func deleteDraft(id: String) async throws { throw GmailError.notFound }

    func listDrafts(pageToken: String?, query: String?) async throws -> DraftListPage {
        state.withLock { state in
            state.lists.append(query)
            var found = state.drafts
            if let query, query.hasPrefix("rfc822msgid:") {
                let wanted = String(query.dropFirst("rfc822msgid:".count))
                found = found.filter { $0.header == wanted }
            }
            let start = Int(pageToken ?? "0") ?? 0
            let page = found.dropFirst(start).prefix(state.pageSize)
            let next = start + state.pageSize < found.count ? String(start + state.pageSize) : nil
            return DraftListPage(drafts: page.map { GmailDraft(id: $0.id, message: GmailMessage(id: $0.messageID)) },
                                 nextPageToken: next)
        }
    }
}

@Suite("Drafts in sync: the draft map, and a draft saved once by the outbox sender")
struct DraftSyncTests {
    @Test("the map is read (every page) only when the DRAFT messages and the map disagree")
    func refreshWhenStale() async throws {
        let f = try SyncFixture()
        f.gmail.seed("d1", daysAgo: 0, labels: ["DRAFT"], subject: "One")
        f.gmail.seed("d2", daysAgo: 0, labels: ["DRAFT"], subject: "Two")
        f.gmail.seed("d3", daysAgo: 0, labels: ["DRAFT"], subject: "Three")
        try await f.syncUntilComplete(f.engine())
        let drafts = ScriptedDrafts()
        drafts.state.withLock { $0.drafts = [("r-a", "d1", ""), ("r-b", "d2", ""), ("r-c", "d3", "")] }
        #expect(try await DraftSync.refresh(api: drafts, database: f.database, email: f.email))
        #expect(drafts.state.withLock { $0.lists.count } == 2)  // two pages
        let accountID = try f.account().id
        let map = try f.database.read { try $0.drafts(accountID: accountID) }.map { "\($0.draftID)=\($0.gmailID)" }.sorted()
        #expect(map == ["r-a=d1", "r-b=d2", "r-c=d3"])
        // In agreement: nothing is read.
        #expect(try await !DraftSync.refresh(api: drafts, database: f.database, email: f.email))
        #expect(drafts.state.withLock { $0.lists.count } == 2)
        // A draft made elsewhere arrives as a DRAFT message no draft names: read again.
        let snapshot = MessageSnapshot(id: "d4", threadID: "d4", historyID: 999_999, internalDate: ScriptedGmail.now,
                                       labelIDs: ["DRAFT"], snippet: "", sizeEstimate: 10, headers: MessageHeaders(subject: "Four"))
        _ = try f.database.write { try $0.applySnapshots([snapshot], accountID: accountID) }
        #expect(try f.database.read { try $0.draftsNeedRefresh(accountID: accountID) })
    }

    @Test("drafts.create whose answer was lost: the next pass finds the draft by its Message-ID and creates nothing")
    func lostCreateIsProbed() async throws {
        let f = try SyncFixture()
        let accountID = try f.account().id
        let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: d\r\nMessage-ID: <draft.1@example.com>\r\n\r\nx\r\n".utf8)
        let entry = try f.database.write {
            try $0.enqueueOutbox(NewOutboxMessage(accountID: accountID, raw: raw, messageID: "<draft.1@example.com>",
                                                  recipients: ["bob@example.org"], subject: "d", kind: .draft))
        }
        let drafts = ScriptedDrafts()
        drafts.state.withLock { $0.loseNextAnswer = true }
        let sender = OutboxSender(api: f.gmail, database: f.database, account: f.email, exclusive: true, settle: .zero, drafts: drafts)
        let first = try await sender.sendDue()
        #expect(first.deferred == 1 && first.sent == 0)
        #expect(try f.database.read { try $0.outboxEntry(id: entry.id) }?.outcomeUnknown == true)
        let second = try await sender.sendDue()
        #expect(second.confirmed == 1)
        #expect(drafts.state.withLock { $0.creates } == 1)
        #expect(drafts.state.withLock { $0.lists } == ["rfc822msgid:<draft.1@example.com>"])
        let after = try #require(try f.database.read { try $0.outboxEntry(id: entry.id) })
        #expect(after.state == .sent && after.draftID == "r-1" && after.gmailID == "msg-1")
        #expect(try f.database.read { try $0.drafts(accountID: accountID) }.map(\.draftID) == ["r-1"])
    }
}
