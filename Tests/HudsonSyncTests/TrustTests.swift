// Issue 17, in process over ScriptedGmail: the write path depends on no field Gmail does
// not promise, a change that may have reached Gmail is never treated as unsent, one bad
// message never stalls the account, a refusal is narrowed to the change that caused it,
// and rows retire only once the state that replaces them is stored. (The same rules run
// against the built binaries and the fake over HTTP in ReliabilityTests/TrustTests.)
import Foundation
import HudsonGmail
import HudsonStore
import HudsonSync
import Synchronization
import Testing

@Suite("Trust under faults: the queue and the poll (issue 17)")
struct TrustTests {
    func synced(_ count: Int = 3) async throws -> (SyncFixture, SyncEngine) { try await SyncFixture.synced(count) }

    // MARK: §0 — nothing depends on a field Gmail does not promise

    @Test("a one-message change is gated by getProfile like a batch, not by the modify answer, and retires on its echo")
    func oneMessageChangeGatedByProfile() async throws {
        let (f, engine) = try await synced()
        try f.perform([.star], on: [.message("m0")])
        f.gmail.resetCalls()
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 1)
        #expect(f.gmail.calls == [.modify(id: "m0", add: ["STARRED"], remove: []), .getProfile])
        let row = try #require(try f.queue().first)
        #expect(row.state == .inFlight && row.expectedHistoryID == Int64(f.gmail.currentHistoryID))
        _ = try await engine.syncOnce()
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().isEmpty)
        #expect(try f.canonical("m0")?.contains("STARRED") == true)
    }

    @Test("a getProfile answer without a usable historyId leaves the sent rows pending and attempted, retried later",
          arguments: ["missing", "not a number"])
    func unusableGate(_ kind: String) async throws {
        let (f, engine) = try await synced()
        try f.perform([.star], on: [.message("m0")])
        f.gmail.profileHook.withLock { $0 = { profile in
            var profile = profile
            profile.historyId = kind == "missing" ? nil : "12abc"
            return profile
        } }
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 0)
        let row = try #require(try f.queue().first)
        #expect(row.state == .pending && row.attemptedAt != nil && row.lastError?.hasPrefix("sent;") == true)
        // Once getProfile answers, the change is sent again, gated and retired.
        f.gmail.profileHook.withLock { $0 = nil }
        let accountID = try f.account().id
        try f.database.write { try $0.recordMutationFailure(ids: [row.id], error: "due", retryAfterMilliseconds: 0) }
        #expect(try await f.flusher().flushOnce().flushed == 1)
        _ = try await engine.syncOnce()
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().isEmpty && accountID > 0)
    }

    @Test("a history page without a usable historyId fails the poll and moves nothing (issue 37 §2); once Gmail gives one, the mail arrives")
    func pageWithoutHistoryID() async throws {
        let (f, engine) = try await synced()
        f.gmail.deliver("new")
        let cursor = try f.account().historyID
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.historyId = "oops"
            return page
        } }
        await #expect(throws: SyncError.invalidHistoryID("oops")) { _ = try await engine.syncOnce() }
        #expect(try !f.storedIDs().contains("new"))
        #expect(try f.account().historyID == cursor)
        f.gmail.historyPageHook.withLock { $0 = nil }
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("new"))
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
    }

    @Test("a history record without a usable id: its messages are fetched again and the poll goes on")
    func recordWithoutID() async throws {
        let (f, engine) = try await synced()
        f.gmail.change("m0", add: ["STARRED"])
        f.gmail.deliver("new")
        f.gmail.historyPageHook.withLock { $0 = { page in
            var page = page
            page.history = page.history.map { record in
                var record = record
                if record.labelsAdded.isEmpty == false { record.id = "not-a-number" }
                return record
            }
            return page
        } }
        _ = try await engine.syncOnce()
        #expect(try f.canonical("m0")?.contains("STARRED") == true)  // from the refetched snapshot
        #expect(try f.storedIDs().contains("new"))
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
    }

    // MARK: §1 — a change that may have reached Gmail is never treated as unsent

    @Test("a lost answer after Gmail applied the change: an undo is sent as the inverse, and Gmail ends as the user last asked",
          arguments: ["modify", "batchModify", "getProfile"])
    func undoAfterLostAnswer(_ lost: String) async throws {
        let (f, engine) = try await synced()
        let references: [Reference] = lost == "batchModify" ? [.message("m0"), .message("m1")] : [.message("m0")]
        try f.perform([.archive], on: references)
        if lost == "getProfile" {
            f.gmail.profileHook.withLock { $0 = { _ in throw GmailError.network("connection reset") } }
        } else {
            f.gmail.afterModifyHook.withLock { $0 = { throw GmailError.network("connection reset") } }
        }
        _ = try await f.flusher().flushOnce()
        #expect(f.gmail.labels(of: "m0")?.contains("INBOX") == false)  // Gmail applied it
        #expect(try f.queue().allSatisfy { $0.state == .pending && $0.attemptedAt != nil })
        f.gmail.profileHook.withLock { $0 = nil }
        f.gmail.afterModifyHook.withLock { $0 = nil }
        // The user changes their mind: the undo must reach Gmail, not be cancelled locally.
        let undone = try f.database.write { try $0.undo() }
        #expect(undone.deltas.allSatisfy { $0.outcome == .flipped })
        #expect(try f.inbox().contains("m0"))
        for _ in 0..<3 {
            _ = try await f.flusher().flushOnce()
            _ = try await engine.syncOnce()
            _ = try await f.flusher().flushOnce()
        }
        #expect(try f.queue().isEmpty)
        #expect(f.gmail.labels(of: "m0")?.contains("INBOX") == true)
        #expect(try f.inbox().contains("m0"))
    }

    @Test("a refusal of the whole account while reading the gate (a 403 on getProfile): the flush stops with it, the rows stay pending and attempted, and retire once it passes")
    func accountWideGateFailure() async throws {
        // A store clock the test moves past the rows' backoff.
        let clock = Mutex<Int64>(Store.systemClock())
        let f = try SyncFixture(storeClock: { clock.withLock { $0 } })
        for i in 0..<3 { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        let engine = f.engine()
        try await f.syncUntilComplete(engine)
        try f.perform([.archive], on: [.message("m0")])
        f.gmail.profileHook.withLock { $0 = { _ in throw GmailError.forbidden(reason: "domainPolicy") } }
        await #expect(throws: GmailError.forbidden(reason: "domainPolicy")) { _ = try await f.flusher().flushOnce() }
        #expect(f.gmail.labels(of: "m0")?.contains("INBOX") == false)  // Gmail applied it
        #expect(try f.queue().allSatisfy { $0.state == .pending && $0.attemptedAt != nil })
        f.gmail.profileHook.withLock { $0 = nil }
        clock.withLock { $0 += 16 * 60 * 1000 }  // past the longest backoff
        for _ in 0..<3 {
            _ = try await f.flusher().flushOnce()
            _ = try await engine.syncOnce()
        }
        #expect(try f.queue().isEmpty)
        #expect(try !f.inbox().contains("m0"))
    }

    @Test("a 5xx or 429 after the request: the rows stay pending and attempted, and an undo flips them",
          arguments: [GmailError.server(status: 503), GmailError.rateLimited(retryAfter: nil)])
    func transientAfterRequest(_ failure: GmailError) async throws {
        let (f, _) = try await synced()
        try f.perform([.archive], on: [.message("m0")])
        f.gmail.setHook { call in if case .modify = call { throw failure } }
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().first?.attemptedAt != nil)
        #expect(try f.database.write { try $0.undo() }.deltas.map(\.outcome) == [.flipped])
    }

    // MARK: §2 — one bad message never stalls the account

    @Test("a new message Gmail answers with an error every time is parked; the cursor advances and later mail arrives",
          arguments: [GmailError.server(status: 500), GmailError.invalidResponse("not JSON")])
    func badNewMessageParked(_ failure: GmailError) async throws {
        let (f, engine) = try await SyncFixture.synced(storeClock: SyncFixture.stoppedClock())
        f.gmail.deliver("bad")
        f.gmail.deliver("good")
        f.gmail.setHook { call in if case .getMessage("bad", _) = call { throw failure } }
        let report = try await engine.syncOnce()
        #expect(report.parked == 1)
        #expect(try f.storedIDs().contains("good") && !f.storedIDs().contains("bad"))
        #expect(try f.account().historyID == Int64(f.gmail.currentHistoryID))
        let parked = try #require(try f.database.read { try $0.parkedMessages() }.first)
        #expect(parked.gmailID == "bad" && parked.stage == .message && parked.error == failure.description && parked.attempts == 1)
        // Later mail keeps arriving while it fails.
        f.gmail.deliver("later")
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("later"))
        // Once due it is fetched again: failing, it waits longer; served, it is stored.
        let accountID = try f.account().id
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        _ = try await engine.syncOnce()
        #expect(try f.database.read { try $0.parkedMessages() }.first?.attempts == 2)
        f.gmail.setHook(nil)
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        #expect(try await engine.syncOnce().parked == 0)
        #expect(try f.storedIDs().contains("bad"))
    }

    @Test("a parked message deleted at Gmail meanwhile leaves the parked set")
    func parkedThenDeleted() async throws {
        let (f, engine) = try await synced()
        f.gmail.deliver("bad")
        f.gmail.setHook { call in if case .getMessage("bad", _) = call { throw GmailError.server(status: 500) } }
        _ = try await engine.syncOnce()
        f.gmail.setHook(nil)
        f.gmail.delete("bad")
        _ = try await engine.syncOnce()
        #expect(try f.database.read { try $0.parkedCount() } == 0)
    }

    @Test("a failure that is not the message's (the network) stops the poll before the cursor moves: nothing parked, nothing lost")
    func networkStopsPoll() async throws {
        let (f, engine) = try await synced()
        let cursor = try f.account().historyID
        f.gmail.deliver("new")
        f.gmail.setHook { call in if case .getMessage("new", _) = call { throw GmailError.network("reset") } }
        await #expect(throws: GmailError.network("reset")) { try await engine.syncOnce() }
        #expect(try f.account().historyID == cursor)
        #expect(try f.database.read { try $0.parkedCount() } == 0)
        f.gmail.setHook(nil)
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("new"))
    }

    // MARK: §3 — a refusal is narrowed to the change that caused it

    @Test("a label deleted at Gmail: only its change is dropped, with Gmail's reason; the archive sent with it goes through")
    func refusedLabelNarrowed() async throws {
        let (f, engine) = try await synced(6)
        let accountID = try f.account().id
        try f.database.write { try $0.replaceLabels(accountID: accountID, with: [LabelInfo(id: "Label_9", name: "Gone", kind: .user)]) }
        let threads = (0..<6).map { Reference.thread("m\($0)") }
        try f.perform([.archive, .addLabel("Gone")], on: threads)
        f.gmail.resetCalls()
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 6 && report.dropped == 6)
        // The refused batch, the archive alone, the label alone, Gmail's labels; one getProfile.
        #expect(f.gmail.calls.count == 5, "\(f.gmail.calls)")
        #expect(f.gmail.calls.contains(.listLabels))
        for i in 0..<6 { #expect(f.gmail.labels(of: "m\(i)")?.contains("INBOX") == false) }
        let rejected = try f.database.read { try $0.rejectedChanges() }
        #expect(rejected.count == 6 && rejected.allSatisfy { $0.label == "Label_9" && $0.reason.contains("Invalid label: Label_9") })
        #expect(try f.queue().allSatisfy { $0.label == "INBOX" && $0.state == .inFlight })
        _ = try await engine.syncOnce()
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().isEmpty && f.inbox().isEmpty)
        #expect(try (0..<6).allSatisfy { try f.labels("m\($0)")?.contains("Label_9") == false })
    }

    @Test("a message Gmail refuses alone: only its change is dropped, the others are sent, in a few requests")
    func refusedMessageNarrowed() async throws {
        let (f, _) = try await synced(8)
        try f.perform([.star], on: (0..<8).map { Reference.message("m\($0)") })
        f.gmail.setHook { call in
            switch call {
            case .batchModify(let ids, _, _) where ids.contains("m5"): throw GmailError.badRequest(message: "Invalid id value")
            case .modify("m5", _, _): throw GmailError.badRequest(message: "Invalid id value")
            default: break
            }
        }
        f.gmail.resetCalls()
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 7 && report.dropped == 1)
        #expect(try f.database.read { try $0.rejectedChanges() }.map(\.messageID) == ["m5"])
        for i in 0..<8 where i != 5 { #expect(f.gmail.labels(of: "m\(i)")?.contains("STARRED") == true) }
        #expect(f.gmail.calls.count <= 10, "\(f.gmail.calls)")
    }

    @Test("two messages Gmail refuses: only their changes are dropped; the label is not blamed, the rest is sent")
    func twoRefusedMessagesNarrowed() async throws {
        let (f, _) = try await synced(8)
        try f.perform([.star], on: (0..<8).map { Reference.message("m\($0)") })
        let refused: Set<String> = ["m0", "m5"]
        f.gmail.setHook { call in
            switch call {
            case .batchModify(let ids, _, _) where !refused.isDisjoint(with: ids): throw GmailError.badRequest(message: "Invalid id value")
            case .modify(let id, _, _) where refused.contains(id): throw GmailError.badRequest(message: "Invalid id value")
            default: break
            }
        }
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 6 && report.dropped == 2)
        #expect(Set(try f.database.read { try $0.rejectedChanges() }.map(\.messageID)) == refused)
        for i in 0..<8 where !refused.contains("m\(i)") { #expect(f.gmail.labels(of: "m\(i)")?.contains("STARRED") == true) }
    }

    @Test("a batch request that fails as a whole parks nothing: the poll stops before the cursor moves, and resumes")
    func wholeBatchFailureStopsPoll() async throws {
        let (f, engine) = try await synced()
        let cursor = try f.account().historyID
        f.gmail.deliver("a")
        f.gmail.deliver("b")
        f.gmail.batchFailure.withLock { $0 = .invalidResponse("batch response is not multipart/mixed") }
        await #expect(throws: GmailError.invalidResponse("batch response is not multipart/mixed")) { try await engine.syncOnce() }
        #expect(try f.account().historyID == cursor)
        #expect(try f.database.read { try $0.parkedCount() } == 0)
        f.gmail.batchFailure.withLock { $0 = nil }
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().isSuperset(of: ["a", "b"]))
    }

    @Test("a message the re-list cannot fetch is parked and settled: the re-list ends and the account is not stalled")
    func relistSettlesAParkedMessage() async throws {
        let (f, engine) = try await synced()
        f.gmail.change("m0", add: ["STARRED"])  // history moves on, then ages out
        f.gmail.expireHistory()
        // m2 fails for good: not listed by the re-list (moved out of the window), then
        // refused when fetched on its own.
        f.gmail.setHook { call in
            if case .listMessages = call { f.gmail.state.withLock { $0.mailbox["m2"]?.internalDate = 0 } }
            if case .getMessage("m2", _) = call { throw GmailError.server(status: 500) }
        }
        for _ in 0..<4 { _ = try await engine.syncOnce() }
        let accountID = try f.account().id
        #expect(try f.database.read { try $0.messagesUnconfirmedByRelist(accountID: accountID, limit: 10) }.isEmpty)
        let stored = try f.storedIDs()
        #expect(try f.database.read { try $0.parkedMessages() }.map(\.gmailID) == ["m2"], "\(f.gmail.calls) \(stored)")
        f.gmail.deliver("new")
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs().contains("new"))
    }

    @Test("a message gone at Gmail (404 to modify): its changes are dropped and it is tombstoned")
    func goneMessage() async throws {
        let (f, _) = try await synced()
        try f.perform([.star, .archive], on: [.message("m0")])
        f.gmail.state.withLock { _ = $0.mailbox.removeValue(forKey: "m0") }
        let report = try await f.flusher().flushOnce()
        #expect(report.dropped == 2)
        #expect(try !f.storedIDs().contains("m0"))
        #expect(try f.database.read { try $0.rejectedChanges() }.first?.reason == "the message is no longer at Gmail")
    }

    // MARK: §4 — no flicker after a history expiry

    @Test("after an expired cursor an archived thread never shows in the inbox: its row waits for the re-list")
    func noFlickerAfterExpiry() async throws {
        let (f, engine) = try await synced()
        try f.perform([.archive], on: [.thread("m0")])
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().first?.state == .inFlight)
        f.gmail.expireHistory()
        _ = try await engine.syncOnce()   // 404: fresh cursor, re-list deferred
        _ = try await f.flusher().retireConfirmed()
        #expect(try f.queue().count == 1, "retired before the re-list stored Gmail's state")
        #expect(try !f.inbox().contains("m0"))
        for _ in 0..<3 {
            _ = try await engine.syncOnce()
            _ = try await f.flusher().retireConfirmed()
            #expect(try !f.inbox().contains("m0"))
        }
        #expect(try f.queue().isEmpty)
        #expect(try f.canonical("m0")?.contains("INBOX") == false)
    }
}
