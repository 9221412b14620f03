// Issue 37 §2, in process over ScriptedGmail: the history cursor moves only to a history id
// Gmail gave for the mailbox, never back and never past what getProfile reports, and a page
// that says otherwise moves nothing; an id Gmail calls gone (404) or invalid (400) is
// confirmed gone on every read path, so it never jams a catch-up; what Gmail fails for ever
// stays parked and told until the user drops it, and a dropped message is fetched again
// only when history names it. (The same against the built binaries and the fake over HTTP:
// ReliabilityTests/ServerAnswerCommandTests, CLITests/GmailIDCommandTests.)
import Foundation
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

@Suite("Server answers: the cursor only moves as Gmail says, gone ids are gone, parked ones can be dropped")
struct ServerAnswerTests {
    func synced(_ count: Int = 3) async throws -> (SyncFixture, SyncEngine) { try await SyncFixture.synced(count) }

    func storedHistoryID(_ f: SyncFixture, _ id: String) throws -> Int64? {
        try f.database.read { try $0.db.scalarInt("SELECT history_id FROM messages WHERE gmail_id = ?", id) }
    }

    // MARK: - The cursor

    @Test("the issue's page: a record and a page historyId far past getProfile's are not trusted; the cursor waits, and what the page names is fetched as Gmail has it")
    func pagePastTheProfile() async throws {
        let (f, engine) = try await synced()
        f.gmail.deliver("new")
        let cursor = try f.account().historyID
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.historyId = "999999999999"
            page.history.append(HistoryRecord(id: "999999999999", labelsAdded: [
                HistoryLabelChange(message: GmailMessage(id: "m0", threadId: "m0"), labelIds: ["STARRED"])]))
            return page
        } }
        // Gmail does not promise getProfile and history.list agree at once: not a failure,
        // but nothing of the page is taken at its word.
        _ = try await engine.syncOnce()
        #expect(try f.account().historyID == cursor)
        #expect(try storedHistoryID(f, "m0") != 999_999_999_999)  // no record id poisoned its version
        #expect(try f.canonical("m0")?.contains("STARRED") == false)  // the record's claim, not Gmail's
        #expect(try f.storedIDs().contains("new"))  // named by the page, fetched as Gmail has it
        // Gmail answering as documented again, the poll resumes from the same cursor.
        f.gmail.historyPageHook.withLock { $0 = nil }
        f.gmail.change("m0", add: ["STARRED"])
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("new"))
        #expect(try f.canonical("m0")?.contains("STARRED") == true)
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
    }

    @Test("a page whose historyId is before the cursor, or before an earlier page's, fails the poll and moves nothing")
    func pageBeforeTheCursor() async throws {
        let f = try SyncFixture(historyPageSize: 1)
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        let engine = f.engine()
        try await f.syncUntilComplete(engine)
        let cursor = try #require(try f.account().historyID)
        f.gmail.deliver("a")
        f.gmail.deliver("b")
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.historyId = String(cursor - 1)
            return page
        } }
        await #expect(throws: SyncError.invalidHistoryID(String(cursor - 1))) { _ = try await engine.syncOnce() }
        #expect(try f.account().historyID == cursor)
        // Pages whose historyIds go back: the second page says less than the first.
        let calls = Mutex(0)
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            let call = calls.withLock { $0 += 1; return $0 }
            if call == 2 { page.historyId = String(cursor + 1) } else { page.historyId = String(cursor + 2) }
            return page
        } }
        await #expect(throws: SyncError.self) { _ = try await engine.syncOnce() }
        #expect(try f.account().historyID == cursor)
    }

    @Test("a store whose cursor is past the mailbox's (an older Hudson stored a record id): getProfile confirms it, and a re-list heals it")
    func cursorPastTheMailbox() async throws {
        let (f, engine) = try await synced()
        let accountID = try f.account().id
        try f.database.write { try $0.advanceCursor(accountID: accountID, to: 999_999_999_999) }
        f.gmail.deliver("new")
        f.gmail.change("m0", add: ["STARRED"])
        _ = try await engine.syncOnce()  // the reset; the re-list follows
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
        try await f.syncUntilComplete(engine)
        #expect(try f.storedIDs().contains("new"))
        #expect(try f.canonical("m0")?.contains("STARRED") == true)
        // A page that only says less than a sound cursor, with the profile at the cursor, is refused instead.
        let cursor = try #require(try f.account().historyID)
        f.gmail.deliver("later")
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.historyId = String(cursor - 5)
            return page
        } }
        await #expect(throws: SyncError.invalidHistoryID(String(cursor - 5))) { _ = try await engine.syncOnce() }
        #expect(try f.account().historyID == cursor && f.account().backfillState == .complete)
    }

    @Test("a getProfile that cannot be read does not stop polling: every message a page names is fetched instead, and the cursor waits",
          arguments: ["missing", "garbled", "server error"])
    func profileUnavailable(_ how: String) async throws {
        let (f, engine) = try await synced()
        let cursor = try f.account().historyID
        f.gmail.deliver("new")
        f.gmail.change("m1", add: ["STARRED"])
        f.gmail.profileHook.withLock { $0 = { profile in
            var profile = profile
            switch how {
            case "missing": profile.historyId = nil
            case "garbled": throw GmailError.invalidResponse("body is not valid JSON")
            default: throw GmailError.server(status: 503)
            }
            return profile
        } }
        // A record whose id no profile vouches for is not applied, so it cannot poison m0.
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.history.append(HistoryRecord(id: "999999999999", labelsRemoved: [
                HistoryLabelChange(message: GmailMessage(id: "m0", threadId: "m0"), labelIds: ["INBOX"])]))
            return page
        } }
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("new"))
        #expect(try f.canonical("m1")?.contains("STARRED") == true)  // from its snapshot
        #expect(try f.canonical("m0")?.contains("INBOX") == true)
        #expect(try storedHistoryID(f, "m0") ?? 0 < 999_999_999_999)
        #expect(try f.account().historyID == cursor)
        f.gmail.profileHook.withLock { $0 = nil }
        f.gmail.historyPageHook.withLock { $0 = nil }
        _ = try await engine.syncOnce()
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
    }

    @Test("ids of a wrong shape in a page are counted in the report, and nothing asks for them")
    func unusableIDsReported() async throws {
        let (f, engine) = try await synced()
        f.gmail.deliver("new")
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            var record = HistoryRecord(id: page.historyId)
            record.unusableIDs = ["..", "a/b"]
            page.history.append(record)
            return page
        } }
        f.gmail.resetCalls()
        let report = try await engine.syncOnce()
        #expect(report.unusableIDs == 2)
        #expect(try f.storedIDs().contains("new"))
        #expect(!f.gmail.calls.contains { if case .getMessage(let id, _) = $0 { id == ".." || id == "a/b" } else { false } })
    }

    // MARK: - Gone: 404 and 400 on every read path

    static let gone: [GmailError] = [.notFound, .badRequest(message: "Invalid id value")]

    @Test("backfill: a listed id Gmail calls gone or invalid is not stored and not parked; the catch-up completes", arguments: gone)
    func goneInBackfill(_ failure: GmailError) async throws {
        let f = try SyncFixture()
        for i in 0..<4 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.setHook { call in if case .getMessage("m1", _) = call { throw failure } }
        let engine = f.engine(pageSize: 2)
        try await f.syncUntilComplete(engine)
        #expect(try f.storedIDs() == ["m0", "m2", "m3"])
        #expect(try f.database.read { try $0.parkedCount() } == 0)
        #expect(try await engine.isCaughtUp())
    }

    @Test("history: a new message Gmail calls gone or invalid is confirmed gone; the cursor advances, nothing is parked", arguments: gone)
    func goneInHistory(_ failure: GmailError) async throws {
        let (f, engine) = try await synced()
        f.gmail.deliver("bad")
        f.gmail.deliver("good")
        f.gmail.setHook { call in if case .getMessage("bad", _) = call { throw failure } }
        let report = try await engine.syncOnce()
        #expect(report.parked == 0)
        #expect(try f.storedIDs().contains("good") && !f.storedIDs().contains("bad"))
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
        #expect(try f.database.read { try $0.db.scalarInt("SELECT deleted FROM message_seq WHERE gmail_id = 'bad'") } == 1)
        #expect(try await engine.isCaughtUp())
    }

    @Test("a parked message that Gmail later calls invalid leaves the parked set, confirmed gone", arguments: gone)
    func parkedThenGone(_ failure: GmailError) async throws {
        let (f, engine) = try await SyncFixture.synced(storeClock: SyncFixture.stoppedClock())
        f.gmail.deliver("bad")
        f.gmail.setHook { call in if case .getMessage("bad", _) = call { throw GmailError.server(status: 500) } }
        #expect(try await engine.syncOnce().parked == 1)
        f.gmail.setHook { call in if case .getMessage("bad", _) = call { throw failure } }
        let accountID = try f.account().id
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        #expect(try await engine.syncOnce().parked == 0)
        #expect(try await engine.isCaughtUp())
    }

    @Test("hydration and on-demand: a body Gmail calls gone or invalid tombstones its message instead of parking it", arguments: gone)
    func goneBody(_ failure: GmailError) async throws {
        let f = try SyncFixture()
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 2) }
        try await f.syncUntilComplete(f.engine(prefetchDays: 1))  // no body in a day's window
        #expect(try !f.hasBody("m0"))
        f.gmail.setHook { call in
            if case .getMessage("m1", let format) = call, format != "metadata" { throw failure }
        }
        let engine = f.engine(prefetchDays: 0)
        #expect(try await engine.hydrate(messageID: "m1") == false)
        #expect(try !f.storedIDs().contains("m1"))
        f.gmail.setHook { call in
            if case .getMessage("m2", let format) = call, format != "metadata" { throw failure }
        }
        _ = try await engine.syncOnce()
        #expect(try !f.storedIDs().contains("m2") && f.storedIDs().contains("m0"))
        #expect(try f.database.read { try $0.parkedCount() } == 0)
        #expect(try await engine.isCaughtUp())
    }

    @Test("settling a re-list: an unlisted message Gmail calls invalid is deleted, not parked", arguments: gone)
    func goneInRelist(_ failure: GmailError) async throws {
        let (f, engine) = try await synced()
        f.gmail.change("m0", add: ["STARRED"])
        f.gmail.expireHistory()
        _ = try await engine.syncOnce()  // the expiry: a re-list is due
        #expect(try f.account().backfillState == .pending)
        // Gmail no longer lists m1, and answers its fetch with the failure.
        f.gmail.state.withLock { _ = $0.mailbox.removeValue(forKey: "m1") }
        f.gmail.setHook { call in if case .getMessage("m1", _) = call { throw failure } }
        try await f.syncUntilComplete(engine)
        let stored = try f.storedIDs()
        #expect(stored == ["m0", "m2"], "\(stored) \(f.gmail.calls)")
        #expect(try f.database.read { try $0.parkedCount() } == 0)
    }

    // MARK: - What fails for ever, and dropping it

    @Test("5xx for ever on one listed message: the rest completes, it is parked and keeps the account from being caught up until dropped; history naming it fetches it again")
    func failingForeverThenDropped() async throws {
        let f = try SyncFixture(storeClock: SyncFixture.stoppedClock())
        for i in 0..<4 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.setHook { call in if case .getMessage("m1", _) = call { throw GmailError.server(status: 500) } }
        let engine = f.engine(pageSize: 2)
        try await f.syncUntilComplete(engine)
        #expect(try f.storedIDs() == ["m0", "m2", "m3"])
        #expect(try f.account().backfillState == .complete)
        #expect(try await !engine.isCaughtUp())
        let accountID = try f.account().id
        _ = try f.database.write { try $0.takeUnreportedParked(accountID: accountID) }
        let dropped = try f.database.write { try $0.dropParked(gmailIDs: ["m1"], accountID: accountID) }
        #expect(dropped.map(\.gmailID) == ["m1"] && dropped.allSatisfy(\.isDropped))
        #expect(try await engine.isCaughtUp())
        #expect(try await !engine.hasDueWork())
        // Not fetched again by a pass, even one that retries what is parked.
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        f.gmail.resetCalls()
        let report = try await engine.syncOnce()
        #expect(report.parked == 0)
        #expect(!f.gmail.calls.contains(.getMessage(id: "m1", format: "metadata")))
        // Still listed as dropped, for the record.
        #expect(try f.database.read { try $0.parkedMessages(includingDropped: true) }.map(\.gmailID) == ["m1"])
        #expect(try f.database.read { try $0.parkedMessages() }.isEmpty)
        // History names it (a change on another device): it is fetched again; failing, it is
        // parked and told afresh; served, it is stored and forgotten.
        f.gmail.change("m1", add: ["STARRED"])
        #expect(try await engine.syncOnce().parked == 1)
        #expect(try f.database.write { try $0.takeUnreportedParked(accountID: accountID) }.map(\.gmailID) == ["m1"])
        f.gmail.change("m1", remove: ["STARRED"])
        f.gmail.setHook(nil)
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("m1"))
        #expect(try f.database.read { try $0.parkedMessages(includingDropped: true) }.isEmpty)
        #expect(try await engine.isCaughtUp())
    }

    @Test("a body that fails for ever, dropped: hydration no longer fetches it and the account is caught up; opening it still fetches it")
    func bodyFailingForeverThenDropped() async throws {
        let f = try SyncFixture()
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.setHook { call in
            if case .getMessage("m0", let format) = call, format != "metadata" { throw GmailError.server(status: 500) }
        }
        let engine = f.engine(prefetchDays: 0)
        try await f.syncUntilComplete(engine)
        #expect(try f.hasBody("m1") && !f.hasBody("m0"))
        #expect(try await !engine.isCaughtUp())
        let accountID = try f.account().id
        _ = try f.database.write { try $0.dropParked(gmailIDs: ["m0"], accountID: accountID) }
        #expect(try await engine.isCaughtUp())
        f.gmail.resetCalls()
        _ = try await engine.syncOnce()
        #expect(!f.gmail.calls.contains(.getMessage(id: "m0", format: "full")))
        f.gmail.setHook(nil)
        #expect(try await engine.hydrate(messageID: "m0"))
        #expect(try f.hasBody("m0"))
        #expect(try f.database.read { try $0.parkedMessages(includingDropped: true) }.isEmpty)
    }

    // MARK: - Page tokens Gmail refuses

    @Test("a listing whose stored page token Gmail refuses (400) starts again from its first page instead of failing every pass")
    func listingTokenRefused() async throws {
        let f = try SyncFixture()
        for i in 0..<6 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        let engine = f.engine(pageSize: 2)
        _ = try await engine.syncOnce(maxBackfillPages: 1)
        let token = try #require(try f.account().backfillPageToken)
        let refused = Mutex(false)
        f.gmail.setHook { call in
            if case .listMessages(let pageToken, _) = call, pageToken == token, !refused.withLock({ $0 }) {
                refused.withLock { $0 = true }
                throw GmailError.badRequest(message: "Invalid pageToken")
            }
        }
        _ = try await engine.syncOnce(maxBackfillPages: 1)
        #expect(try f.account().backfillPageToken == nil && f.account().backfillState != .complete)
        try await f.syncUntilComplete(engine)
        #expect(try f.storedIDs().count == 6)
    }

    @Test("a history page token Gmail refuses fails the poll (75), and moves nothing; the next poll starts again from the cursor")
    func historyTokenRefused() async throws {
        let f = try SyncFixture(historyPageSize: 1)
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        let engine = f.engine()
        try await f.syncUntilComplete(engine)
        let cursor = try f.account().historyID
        f.gmail.deliver("a")
        f.gmail.deliver("b")
        f.gmail.setHook { call in
            if case .listHistory(_, let pageToken?) = call, !pageToken.isEmpty { throw GmailError.badRequest(message: "Invalid pageToken") }
        }
        await #expect(throws: GmailError.invalidResponse("Gmail refused the page token it gave (request rejected by Gmail: Invalid pageToken)")) {
            _ = try await engine.syncOnce()
        }
        #expect(try f.account().historyID == cursor)
        f.gmail.setHook(nil)
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().isSuperset(of: ["a", "b"]))
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
    }
}
