import Foundation
import HudsonGmail
import HudsonStore
import HudsonSync
import Testing

@Suite("MutationFlusher: claim, send, gate, retire on echo")
struct FlusherTests {
    func synced(_ count: Int = 3) async throws -> (SyncFixture, SyncEngine) { try await SyncFixture.synced(count) }

    @Test("retire on echo, not on 2xx: between the send and the echo the thread stays out of the inbox")
    func retireOnEcho() async throws {
        let (f, engine) = try await synced()
        try f.perform([.archive], on: [.thread("m1")])
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 1 && report.retired == 0)
        #expect(f.gmail.labels(of: "m1") == ["UNREAD"])
        #expect(try f.queue().map(\.state) == [.inFlight])
        #expect(try !f.inbox().contains("m1"))  // no flicker: canonical still says INBOX here
        _ = try await engine.syncOnce()  // the echo lands and the cursor passes the gate
        #expect(try await f.flusher().retireConfirmed() == 1)
        #expect(try f.queue().isEmpty)
        #expect(try f.canonical("m1") == ["UNREAD"] && !f.inbox().contains("m1"))
    }

    @Test("crash before send: the row is still pending and the next flush sends it")
    func crashBeforeSend() async throws {
        let (f, _) = try await synced()
        try f.perform([.star], on: [.message("m0")])
        // A flusher that dies before its request: the claim is released by the next process
        // only after it expires, so simulate the crash by the send failing before reaching Gmail.
        f.gmail.setHook { call in if case .modify = call { throw InjectedFailure() } }
        await #expect(throws: InjectedFailure.self) { try await f.flusher().flushOnce() }
        #expect(try f.queue().map(\.state) == [.pending])
        f.gmail.setHook(nil)
        #expect(try await f.flusher().flushOnce().flushed == 1)
        #expect(f.gmail.labels(of: "m0")?.contains("STARRED") == true)
    }

    @Test("crash after send, before markInFlight: the row is sent once more, harmlessly")
    func crashAfterSend() async throws {
        let (f, _) = try await synced()
        try f.perform([.archive], on: [.message("m0")])
        let accountID = try f.account().id
        // The send reaches Gmail, then the process dies: the claim stays until it expires.
        let claimed = try f.database.write { try $0.claimPendingMutations(accountID: accountID, limit: 10) }
        _ = try await f.gmail.modify(id: "m0", addLabelIDs: [], removeLabelIDs: ["INBOX"])
        #expect(try await f.flusher().flushOnce().flushed == 0)  // still claimed by the dead sender
        try f.database.write { try $0.releaseClaims(ids: claimed.map(\.id)) }  // as expiry would
        #expect(try await f.flusher().flushOnce().flushed == 1)
        #expect(f.gmail.labels(of: "m0") == ["UNREAD"])
    }

    @Test("r10_claim_left_by_a_dead_flusher_is_taken_over_at_once: the flush lock's holder sends a row a crashed flusher claimed")
    func r10_claim_left_by_a_dead_flusher_is_taken_over_at_once() async throws {
        let (f, _) = try await synced()
        try f.perform([.archive], on: [.message("m0")])
        let accountID = try f.account().id
        // A flusher claims the row, sends it, and dies before markInFlight.
        _ = try f.database.write { try $0.claimPendingMutations(accountID: accountID, limit: 10) }
        _ = try await f.gmail.modify(id: "m0", addLabelIDs: [], removeLabelIDs: ["INBOX"])
        let lock = MemoryFlushLock()
        let report = try await MutationFlusher(api: f.gmail, database: f.database, account: f.email, lock: lock).flushOnce()
        #expect(report.flushed == 1)  // not held back for the claim's five-minute lifetime
        #expect(try f.queue().map(\.state) == [.inFlight])
        #expect(!lock.isHeld)
    }

    @Test("r10_flush_lock_held_elsewhere_sends_nothing: while another flusher holds the lock, nothing is claimed or sent")
    func r10_flush_lock_held_elsewhere_sends_nothing() async throws {
        let (f, _) = try await synced()
        try f.perform([.star], on: [.message("m1")])
        let lock = MemoryFlushLock()
        #expect(try lock.tryLock())
        let report = try await MutationFlusher(api: f.gmail, database: f.database, account: f.email, lock: lock).flushOnce()
        #expect(report.flushed == 0)
        #expect(f.gmail.labels(of: "m1")?.contains("STARRED") == false)
        lock.unlock()
        #expect(try await MutationFlusher(api: f.gmail, database: f.database, account: f.email, lock: lock).flushOnce().flushed == 1)
    }

    @Test("crash after markInFlight: the row retires when the echo lands")
    func crashAfterMarkInFlight() async throws {
        let (f, engine) = try await synced()
        try f.perform([.read], on: [.message("m2")])
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().map(\.state) == [.inFlight])
        _ = try await engine.syncOnce()
        #expect(try await f.flusher().flushOnce().retired == 1)  // a new process retires it
        #expect(try f.queue().isEmpty && f.canonical("m2") == ["INBOX"])
    }

    @Test("in-flight collision flips forward: the inverse is sent on the next flush")
    func inFlightFlipSendsInverse() async throws {
        let (f, engine) = try await synced()
        try f.perform([.archive], on: [.thread("m0")])
        _ = try await f.flusher().flushOnce()
        try f.perform([.unarchive], on: [.thread("m0")])  // overlays forward
        #expect(try f.queue().map(\.op) == [.add] && f.queue().map(\.state) == [.pending])
        #expect(try f.inbox().contains("m0"))
        _ = try await f.flusher().flushOnce()
        #expect(f.gmail.labels(of: "m0")?.contains("INBOX") == true)
        _ = try await engine.syncOnce()
        _ = try await f.flusher().flushOnce()
        #expect(try f.queue().isEmpty && f.inbox().contains("m0"))
    }

    @Test("a terminal failure drops the row, keeps Gmail's reason, and the message shows server truth")
    func terminalFailureDrops() async throws {
        let (f, engine) = try await synced()
        let accountID = try f.account().id
        try f.database.write { try $0.replaceLabels(accountID: accountID, with: [LabelInfo(id: "Label_9", name: "Gone", kind: .user)]) }
        try f.perform([.addLabel("Gone")], on: [.message("m0")])
        #expect(try f.labels("m0")?.contains("Label_9") == true)
        f.gmail.change("m0", add: ["STARRED"])  // meanwhile, on the server
        let report = try await f.flusher().flushOnce()
        #expect(report.dropped == 1 && report.flushed == 0)
        #expect(try f.queue().isEmpty)
        #expect(try f.labels("m0") == ["INBOX", "UNREAD"])  // canonical, without the refused label
        let rejected = try f.database.read { try $0.rejectedChanges() }
        #expect(rejected.map(\.label) == ["Label_9"] && rejected.first?.reason == "request rejected by Gmail: Invalid label: Label_9")
        _ = try await engine.syncOnce()  // the poll brings what changed meanwhile
        #expect(try f.labels("m0") == ["INBOX", "STARRED", "UNREAD"])
    }

    @Test("a transient failure keeps the row pending with its attempts and error, retried later")
    func transientFailureKeeps() async throws {
        let (f, _) = try await synced()
        try f.perform([.star], on: [.message("m0")])
        f.gmail.setHook { call in if case .modify = call { throw GmailError.server(status: 503) } }
        let report = try await f.flusher().flushOnce()
        var interrupted = FlushReport()
        interrupted.interruptedBy = .server(status: 503)  // what kept the rest queued
        #expect(report == interrupted)
        let row = try #require(try f.queue().first)
        #expect(row.state == .pending && row.attempts == 1 && row.lastError?.contains("503") == true)
        #expect(row.nextAttemptAt != nil)
        f.gmail.setHook(nil)
        #expect(try await f.flusher().flushOnce().flushed == 0)  // backing off
        #expect(try f.labels("m0")?.contains("STARRED") == true)  // still shown meanwhile
    }

    @Test("two concurrent flushOnce calls never send a row twice")
    func concurrentFlushes() async throws {
        let (f, _) = try await synced()
        try f.perform([.star], on: [.message("m0")])
        let flusher = f.flusher()
        let other = f.flusher()  // another process's flusher: the claim keeps it away
        async let a = flusher.flushOnce()
        async let b = flusher.flushOnce()
        async let c = other.flushOnce()
        let total = try await a.flushed + b.flushed + c.flushed
        #expect(total == 1)
        #expect(f.gmail.calls.filter { if case .modify = $0 { return true }; return false }.count == 1)
    }

    @Test("archiving 1000 threads costs a few requests, not a thousand")
    func batchModify() async throws {
        let f = try SyncFixture(lookbackDays: 0)
        for i in 0..<1000 { f.gmail.seed(String(format: "m%04d", i), daysAgo: Double(i) / 100 + 0.1) }
        try await f.syncUntilComplete(f.engine(prefetchDays: 1))
        try f.perform([.archive], on: (0..<1000).map { .thread(String(format: "m%04d", $0)) })
        f.gmail.resetCalls()
        let report = try await f.flusher().flushOnce()
        #expect(report.flushed == 1000)
        let calls = f.gmail.calls
        #expect(calls.count <= 3, "\(calls.count) requests")
        #expect(calls.filter { if case .batchModify = $0 { return true }; return false }.count == 1)
        #expect(f.gmail.labels(of: "m0500") == ["UNREAD"])
    }
}

/// A flush lock within one process, for the flusher's tests.
final class MemoryFlushLock: FlushLock, @unchecked Sendable {
    private let mutex = NSLock()
    private var held = false

    var isHeld: Bool { mutex.withLock { held } }

    func tryLock() throws -> Bool {
        mutex.withLock {
            if held { return false }
            held = true
            return true
        }
    }

    func unlock() { mutex.withLock { held = false } }
}
