// Drafts on the sync side: the draft map read from drafts.list only when it disagrees with
// the stored DRAFT messages (DraftSync), and the outbox sender saving a draft once: a
// create whose answer was lost is found by drafts.list q=rfc822msgid: and not made again.
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

/// A scripted drafts API: drafts kept in memory, calls counted, switches that lose the
/// answer of the next create or update after applying it, make search miss what it holds
/// (its index lagging), or fail the next drafts.get; and an edit "on another device".
final class ScriptedDrafts: GmailDraftsAPI {
    struct State {
        var drafts: [(id: String, messageID: String, header: String)] = []
        var creates = 0
        var updates = 0
        var gets = 0
        var sends = 0
        var lists: [String?] = []
        var loseNextAnswer = false
        var searchLags = false
        var nextGetFails: GmailError?
        var pageSize = 2
        var serial = 0
        /// Drafts that exist before the test: created ids start after them.
        var existing = 0
        /// The draft id the next create's answer gives instead of the real one.
        var answerDraftID: String?
    }
    let state = Mutex(State())

    static func messageIDHeader(_ raw: [UInt8]) -> String {
        String(decoding: raw, as: UTF8.self).split(separator: "\r\n")
            .first { $0.hasPrefix("Message-ID: ") }.map { String($0.dropFirst("Message-ID: ".count)) } ?? ""
    }

    func createDraft(raw: [UInt8], threadID: String?) async throws -> GmailDraft {
        let header = Self.messageIDHeader(raw)
        let (draft, lose) = state.withLock { state -> (GmailDraft, Bool) in
            state.creates += 1
            state.serial += 1
            let id = "r-\(state.creates + state.existing)"
            state.drafts.append((id, "msg-\(state.serial)", header))
            defer { state.loseNextAnswer = false; state.answerDraftID = nil }
            return (GmailDraft(id: state.answerDraftID ?? id, message: GmailMessage(id: "msg-\(state.serial)", threadId: "t-\(state.creates)")),
                    state.loseNextAnswer)
        }
        if lose { throw GmailError.network("connection reset after the request was written") }
        return draft
    }

    /// drafts.update: a new message, the same draft id (404 for one it does not have).
    func updateDraft(id: String, raw: [UInt8], threadID: String?) async throws -> GmailDraft {
        let header = Self.messageIDHeader(raw)
        let (draft, lose) = try state.withLock { state throws -> (GmailDraft, Bool) in
            guard let index = state.drafts.firstIndex(where: { $0.id == id }) else { throw GmailError.notFound }
            state.updates += 1
            state.serial += 1
            state.drafts[index] = (id, "msg-\(state.serial)", header)
            defer { state.loseNextAnswer = false }
            return (GmailDraft(id: id, message: GmailMessage(id: "msg-\(state.serial)")), state.loseNextAnswer)
        }
        if lose { throw GmailError.network("connection reset after the request was written") }
        return draft
    }

    /// The draft edited on another device: a new message and Message-ID, the same draft id.
    func editElsewhere(_ id: String) {
        state.withLock { state in
            guard let index = state.drafts.firstIndex(where: { $0.id == id }) else { return }
            state.serial += 1
            state.drafts[index] = (id, "msg-\(state.serial)", "<phone.\(state.serial)@example.com>")
        }
    }

    func getDraft(id: String, format: String) async throws -> GmailDraft {
        try state.withLock { state in
            state.gets += 1
            if let failure = state.nextGetFails {
                state.nextGetFails = nil
                throw failure
            }
            guard let draft = state.drafts.first(where: { $0.id == id }) else { throw GmailError.notFound }
            let headers = format == "minimal" ? [] : [MessagePartHeader(name: "Message-ID", value: draft.header)]
            return GmailDraft(id: id, message: GmailMessage(id: draft.messageID, threadId: "t", payload: MessagePart(headers: headers)))
        }
    }

    func sendDraft(id: String) async throws -> GmailMessage {
        try state.withLock { state in
            guard let index = state.drafts.firstIndex(where: { $0.id == id }) else { throw GmailError.notFound }
            state.sends += 1
            state.drafts.remove(at: index)
            return GmailMessage(id: "sent-\(state.sends)", threadId: "t")
        }
    }

    func deleteDraft(id: String) async throws { throw GmailError.notFound }

    func listDrafts(pageToken: String?, query: String?) async throws -> DraftListPage {
        state.withLock { state in
            state.lists.append(query)
            var found = state.searchLags && query != nil ? [] : state.drafts
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

/// The check before a draft is written (issue 37 §5): drafts.update and drafts.send are
/// blind, so the sender reads the draft and writes only what was based on its current
/// message; an update of a draft changed or gone elsewhere is kept as a new draft, a send
/// is refused, and nothing is written or sent twice, whatever answer is lost.
@Suite("OutboxSender: a draft is checked before it is updated or sent")
struct DraftCheckTests {
    struct Setup {
        final class Clock: Sendable {
            let milliseconds = Mutex<Int64>(ScriptedGmail.now)
        }
        let clock = Clock()
        let f: SyncFixture
        let accountID: Int64
        let drafts = ScriptedDrafts()

        init() throws {
            let clock = self.clock
            f = try SyncFixture(storeClock: { clock.milliseconds.withLock { $0 } })
            accountID = try f.account().id
            // The draft as the store knows it: r-1, whose message is msg-1.
            drafts.state.withLock { $0.drafts = [("r-1", "msg-1", "<v1@example.com>")]; $0.serial = 1; $0.existing = 1 }
        }

        func sender() -> OutboxSender {
            OutboxSender(api: f.gmail, database: f.database, account: f.email, exclusive: true, settle: .zero, drafts: drafts)
        }

        /// Queues an update of r-1 (or `kind` of it) based on `base`.
        @discardableResult
        func enqueue(_ n: Int, base: String = "msg-1", kind: OutboxKind = .draft) throws -> OutboxEntry {
            let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: v\(n)\r\nMessage-ID: <v\(n)@example.com>\r\n\r\nx\r\n".utf8)
            let accountID = self.accountID
            return try f.database.write {
                try $0.enqueueOutbox(NewOutboxMessage(accountID: accountID, raw: raw, messageID: "<v\(n)@example.com>",
                                                      recipients: ["bob@example.org"], subject: "v\(n)", kind: kind, draftID: "r-1",
                                                      draftBaseGmailID: base))
            }
        }

        /// Time passes: any backoff is over.
        func later() { clock.milliseconds.withLock { $0 += 86_400_000 } }

        func entry(_ id: Int64) throws -> OutboxEntry { try #require(try f.database.read { try $0.outboxEntry(id: id) }) }
        var headers: [String] { drafts.state.withLock { $0.drafts.map(\.header) } }
    }

    @Test("unchanged since the edit was based on it: updated in place, after one drafts.get")
    func unchangedIsUpdated() async throws {
        let s = try Setup()
        let entry = try s.enqueue(2)
        let report = try await s.sender().sendDue()
        #expect(report.sent == 1 && report.kept.isEmpty)
        #expect(s.headers == ["<v2@example.com>"])
        #expect(s.drafts.state.withLock { ($0.gets, $0.updates, $0.creates) } == (1, 1, 0))
        #expect(try s.entry(entry.id).draftID == "r-1" && s.entry(entry.id).keptNote == nil)
        // A second local update based on the same, now older, message: the version there is
        // Hudson's own (outbox:1 wrote it), so it is no other device's edit.
        let next = try s.enqueue(3)
        #expect(try await s.sender().sendDue().sent == 1)
        #expect(s.headers == ["<v3@example.com>"])
        #expect(try s.entry(next.id).keptBesideDraftID == nil)
    }

    @Test("changed on another device: the update is saved as a new draft, both are kept, and the note says so")
    func changedIsKeptBeside() async throws {
        let s = try Setup()
        let entry = try s.enqueue(2)
        s.drafts.editElsewhere("r-1")
        let report = try await s.sender().sendDue()
        #expect(report.sent == 1 && report.kept == [entry.id])
        #expect(s.headers == ["<phone.2@example.com>", "<v2@example.com>"])
        #expect(s.drafts.state.withLock { ($0.updates, $0.creates) } == (0, 1))
        let after = try s.entry(entry.id)
        #expect(after.state == .sent && after.draftID == "r-2" && after.keptBesideDraftID == "r-1")
        #expect(after.keptNote == "outbox:\(entry.id): draft:r-1 was changed on another device after this version was based on it; "
                + "both are kept: saved as a new draft, draft:r-2")
        let listed = try s.f.database.read { try $0.drafts(accountID: s.accountID) }
        #expect(listed.first { $0.draftID == "r-2" }?.keptNote?.contains("draft:r-1") == true)
    }

    @Test("deleted (or sent) on another device: 404 to the check, and the update is saved as a new draft")
    func deletedIsKeptAsNew() async throws {
        let s = try Setup()
        let entry = try s.enqueue(2)
        s.drafts.state.withLock { $0.drafts = [] }
        let report = try await s.sender().sendDue()
        #expect(report.sent == 1 && report.kept == [entry.id])
        #expect(s.headers == ["<v2@example.com>"])
        #expect(try s.entry(entry.id).note == "deleted or sent on another device")
    }

    @Test("the check's answer lost, a 5xx or a 429: nothing is written, and the next pass decides")
    func checkFaults() async throws {
        for failure in [GmailError.network("reset"), .server(status: 503), .rateLimited(retryAfter: nil)] {
            let s = try Setup()
            let entry = try s.enqueue(2)
            s.drafts.state.withLock { $0.nextGetFails = failure }
            let report = try await s.sender().sendDue()
            #expect(report.deferred == 1 && report.sent == 0, "\(failure)")
            #expect(s.drafts.state.withLock { ($0.updates, $0.creates) } == (0, 0), "\(failure)")
            #expect(try s.entry(entry.id).state == .queued, "\(failure)")
            s.later()
            s.drafts.editElsewhere("r-1")
            #expect(try await s.sender().sendDue().kept == [entry.id], "\(failure)")
            #expect(s.headers == ["<phone.2@example.com>", "<v2@example.com>"], "\(failure)")
        }
    }

    @Test("drafts.update applied and its answer lost while search lags: the check finds its own Message-ID; nothing is written twice")
    func lostUpdateFoundByTheCheck() async throws {
        let s = try Setup()
        let entry = try s.enqueue(2)
        s.drafts.state.withLock { $0.loseNextAnswer = true }
        #expect(try await s.sender().sendDue().deferred == 1)
        #expect(try s.entry(entry.id).outcomeUnknown)
        s.drafts.state.withLock { $0.searchLags = true }
        let report = try await s.sender().sendDue()
        #expect(report.confirmed == 1 && report.kept.isEmpty)
        #expect(s.drafts.state.withLock { ($0.updates, $0.creates) } == (1, 0))
        #expect(s.headers == ["<v2@example.com>"])
        #expect(try s.entry(entry.id).state == .sent)
    }

    @Test("a kept update whose create answer is lost is found by its Message-ID: two drafts, never three")
    func keptCreateLost() async throws {
        let s = try Setup()
        let entry = try s.enqueue(2)
        s.drafts.editElsewhere("r-1")
        s.drafts.state.withLock { $0.loseNextAnswer = true }
        let first = try await s.sender().sendDue()
        #expect(first.kept == [entry.id] && first.deferred == 1)
        let second = try await s.sender().sendDue()
        #expect(second.confirmed == 1)
        #expect(s.headers.count == 2 && s.drafts.state.withLock { $0.creates } == 1)
        #expect(try s.entry(entry.id).draftID == "r-2")
    }

    @Test("drafts.create answered with a draft id of the wrong shape: nothing recorded from it; the probe finds the real one")
    func wrongShapedDraftID() async throws {
        for hostile in ["../../x", "r-1/../..", "\u{1B}]0;x\u{7}", "", String(repeating: "r", count: 600)] {
            let s = try Setup()
            let accountID = s.accountID
            let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: n\r\nMessage-ID: <new@example.com>\r\n\r\nx\r\n".utf8)
            let entry = try s.f.database.write {
                try $0.enqueueOutbox(NewOutboxMessage(accountID: accountID, raw: raw, messageID: "<new@example.com>",
                                                      recipients: ["bob@example.org"], subject: "n", kind: .draft))
            }
            s.drafts.state.withLock { $0.answerDraftID = hostile }
            #expect(try await s.sender().sendDue().deferred == 1, "\(hostile.debugDescription)")
            #expect(try s.entry(entry.id).draftID == nil, "\(hostile.debugDescription)")
            #expect(try await s.sender().sendDue().confirmed == 1, "\(hostile.debugDescription)")
            #expect(try s.entry(entry.id).draftID == "r-2" && s.drafts.state.withLock { $0.creates } == 1, "\(hostile.debugDescription)")
        }
    }

    @Test("hd-drafts send of a draft changed since it was read is refused before drafts.send; unchanged, it is sent once")
    func sendChecked() async throws {
        let s = try Setup()
        let entry = try s.enqueue(1, base: "msg-1", kind: .draftSend)
        s.drafts.editElsewhere("r-1")
        let report = try await s.sender().sendDue()
        #expect(report.failed == 1 && report.rejected == [entry.id])
        #expect(s.drafts.state.withLock { $0.sends } == 0)
        let refused = try s.entry(entry.id)
        #expect(refused.state == .failed && refused.lastError?.contains("changed on another device") == true)
        let again = try s.enqueue(4, base: "msg-2", kind: .draftSend)
        #expect(try await s.sender().sendDue().sent == 1)
        #expect(s.drafts.state.withLock { $0.sends } == 1)
        #expect(try s.entry(again.id).state == .sent)
    }
}
