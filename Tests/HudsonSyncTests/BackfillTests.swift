import HudsonGmail
import HudsonStore
import HudsonSync
import Testing

@Suite("Backfill: the bounded window, resumable paging, one commit per page")
struct BackfillTests {
    @Test("the cursor is recorded before the first list call")
    func cursorBeforeListing() async throws {
        let f = try SyncFixture()
        f.gmail.seed("m1", daysAgo: 1)
        _ = try await f.engine().syncOnce()
        let calls = f.gmail.calls
        let profile = try #require(calls.firstIndex(of: .getProfile))
        let list = try #require(calls.firstIndex { if case .listMessages = $0 { return true }; return false })
        #expect(profile < list)
        #expect(try f.account().historyID == 100_000)
    }

    @Test("the cursor predates the listing: an event during backfill is not lost")
    func eventDuringBackfill() async throws {
        let f = try SyncFixture()
        for i in 0..<6 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        // While the second page is listed, the user archives m0 (already backfilled) on the web.
        f.gmail.setHook { call in
            if case .listMessages(let token?, _) = call, token == "3" { f.gmail.change("m0", remove: ["INBOX"]) }
        }
        let engine = f.engine(pageSize: 3)
        _ = try await engine.syncOnce(maxBackfillPages: 5)
        #expect(try f.storedIDs().count == 6)
        // The next pass polls history from the cursor recorded before the listing.
        _ = try await engine.syncOnce()
        #expect(try f.canonical("m0") == ["UNREAD"])
    }

    @Test("a historyId that is not an integer throws rather than seeding a zero cursor")
    func nonIntegerHistoryID() async throws {
        struct BadProfile: GmailAPI {
            let base: ScriptedGmail
            func getProfile() async throws -> Profile { Profile(emailAddress: "ann@example.com", historyId: "12abc") }
            func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage {
                try await base.listMessages(pageToken: pageToken, maxResults: maxResults, query: query)
            }
            func getMessage(id: String, format: String) async throws -> GmailMessage { try await base.getMessage(id: id, format: format) }
            func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage {
                try await base.listHistory(startHistoryID: startHistoryID, pageToken: pageToken, labelID: labelID)
            }
            func listLabels() async throws -> [GmailLabel] { [] }
            func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws { throw GmailError.notFound }
            func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws {}
            func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>] { [:] }
            func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody { throw GmailError.notFound }
            func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage { throw GmailError.notFound }
            func createLabel(name: String) async throws -> GmailLabel { throw GmailError.notFound }
            func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel { throw GmailError.notFound }
            func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel { throw GmailError.notFound }
            func deleteLabel(id: String) async throws { throw GmailError.notFound }
        }
        let f = try SyncFixture()
        let engine = SyncEngine(api: BadProfile(base: f.gmail), database: f.database, account: f.email)
        await #expect(throws: SyncError.invalidHistoryID("12abc")) { try await engine.syncOnce() }
        #expect(try f.account().historyID == nil)
    }

    @Test("backfill lists after:<consented_at − lookback>, so mail outside the window is not fetched")
    func window() async throws {
        let f = try SyncFixture()
        f.gmail.seed("recent", daysAgo: 10)
        f.gmail.seed("edge", daysAgo: 89)
        f.gmail.seed("old", daysAgo: 200)
        try await f.syncUntilComplete(f.engine())
        #expect(try f.storedIDs() == ["recent", "edge"])
        let query = "after:\(ScriptedGmail.now / 1000 - 90 * 86_400)"
        #expect(f.gmail.calls.contains(.listMessages(pageToken: nil, query: query)))
    }

    @Test("lookback 0 lists the whole mailbox")
    func wholeMailbox() async throws {
        let f = try SyncFixture(lookbackDays: 0)
        f.gmail.seed("recent", daysAgo: 10)
        f.gmail.seed("old", daysAgo: 2000)
        try await f.syncUntilComplete(f.engine())
        #expect(try f.storedIDs() == ["recent", "old"])
        #expect(f.gmail.calls.contains(.listMessages(pageToken: nil, query: nil)))
    }

    @Test("the backfill query is identical on a page resumed days later, by a new process")
    func resumedDaysLater() async throws {
        let f = try SyncFixture()
        for i in 0..<5 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        _ = try await f.engine(pageSize: 2).syncOnce(maxBackfillPages: 1)
        #expect(try f.account().backfillState == .running)
        #expect(try f.account().backfillPageToken == "2")
        f.advance(days: 5)
        f.gmail.resetCalls()
        _ = try await f.engine(pageSize: 2).syncOnce(maxBackfillPages: 1)
        let query = "after:\(ScriptedGmail.now / 1000 - 90 * 86_400)"
        #expect(f.gmail.calls.contains(.listMessages(pageToken: "2", query: query)))
        #expect(try f.storedIDs().count == 4)
    }

    @Test("progress lives in the accounts row: a quit mid-backfill resumes without duplicates")
    func resumeWithoutDuplicates() async throws {
        let f = try SyncFixture()
        for i in 0..<7 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        _ = try await f.engine(pageSize: 3).syncOnce(maxBackfillPages: 1)
        let report = try await f.engine(pageSize: 3).syncOnce(maxBackfillPages: 5)
        #expect(report.backfilledThisPass == 4 && report.backfillComplete)
        #expect(try f.storedIDs().count == 7)
        #expect(try f.account().backfillListed == 7)
    }

    @Test("one commit per page: a message that cannot be mapped is parked, with its reason, and the page token still advances")
    func badMessageParked() async throws {
        let f = try SyncFixture()
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.state.withLock { $0.mailbox["m1"]?.malformed = true }
        let report = try await f.engine().syncOnce()
        #expect(report.backfillComplete && report.backfilledThisPass == 2 && report.parked == 1)
        #expect(try f.storedIDs() == ["m0", "m2"])
        let parked = try f.database.read { try $0.parkedMessages() }
        #expect(parked.map(\.gmailID) == ["m1"] && parked.first?.error == "Gmail's answer cannot be stored: no thread id")
    }

    @Test("a failure that is not the message's (the network) keeps the page token, so the page is re-listed")
    func transientFailureKeepsToken() async throws {
        let f = try SyncFixture()
        for i in 0..<4 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.setHook { call in
            if case .getMessage("m1", "metadata") = call { throw GmailError.network("connection reset") }
        }
        await #expect(throws: GmailError.network("connection reset")) { try await f.engine(pageSize: 2).syncOnce() }
        #expect(try f.account().backfillPageToken == nil && f.account().backfillState == .pending)
        f.gmail.setHook(nil)
        try await f.syncUntilComplete(f.engine(pageSize: 2))
        #expect(try f.storedIDs().count == 4)
    }

    @Test("r10_garbled_message_response_is_not_skipped_by_backfill: a message whose answer is garbled or a 5xx every time is parked with its page, and fetched once due",
          arguments: [GmailError.invalidResponse("body is not valid JSON"), GmailError.server(status: 500)])
    func r10_garbled_message_response_is_not_skipped_by_backfill(_ failure: GmailError) async throws {
        let f = try SyncFixture(storeClock: SyncFixture.stoppedClock())
        for i in 0..<4 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        f.gmail.setHook { call in
            if case .getMessage("m1", "metadata") = call { throw failure }
        }
        let engine = f.engine(pageSize: 2)
        try await f.syncUntilComplete(engine)
        // The listing went on past it; it is not lost: parked with the error.
        #expect(try f.storedIDs() == ["m0", "m2", "m3"])
        let parked = try f.database.read { try $0.parkedMessages() }
        #expect(parked.map(\.gmailID) == ["m1"] && parked.first?.error == failure.description)
        #expect(try await !engine.isCaughtUp())
        #expect(try await !engine.hasDueWork())
        // Its back-off over and Gmail serving it again, the next pass stores it.
        f.gmail.setHook(nil)
        let accountID = try f.account().id
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        #expect(try await engine.hasDueWork())
        let report = try await engine.syncOnce()
        #expect(report.parked == 0)
        #expect(try f.storedIDs() == ["m0", "m1", "m2", "m3"])
        #expect(try await engine.isCaughtUp())
    }

    @Test("a second concurrent syncOnce returns the empty report")
    func singleFlight() async throws {
        let f = try SyncFixture()
        f.gmail.seed("m0", daysAgo: 1)
        let engine = f.engine()
        let started = AsyncGate()
        let release = AsyncGate()
        f.gmail.setHook { call in
            if case .listMessages = call {
                await started.open()
                _ = await release.wait()
            }
        }
        async let first = engine.syncOnce()
        // Bounded waits, and the gate opened on every path: a pass that failed before its
        // listing, or a second pass that threw, fails the test instead of hanging it.
        try #require(await started.wait())
        let second: SyncReport
        do {
            second = try await engine.syncOnce()
        } catch {
            await release.open()
            throw error
        }
        await release.open()
        #expect(second == SyncReport())
        #expect(try await first.backfilledThisPass == 1)
    }
}

/// Opens once; every waiter before and after passes. A wait gives up (false) after its
/// timeout.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var nextWaiter = 0

    func open() {
        isOpen = true
        for waiter in waiters.values { waiter.resume(returning: true) }
        waiters.removeAll()
    }

    func wait(timeout: Duration = .seconds(30)) async -> Bool {
        if isOpen { return true }
        nextWaiter += 1
        let id = nextWaiter
        Task {
            try? await Task.sleep(for: timeout)
            self.expire(id)
        }
        return await withCheckedContinuation { waiters[id] = $0 }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(returning: false)
    }
}
