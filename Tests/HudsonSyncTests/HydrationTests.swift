import HudsonGmail
import HudsonStore
import HudsonSync
import Testing

@Suite("Body hydration: newest first in the window, per-message errors, tombstones, on demand")
struct HydrationTests {
    @Test("bodies are fetched newest first within the prefetch window, hydrationBatch per pass")
    func newestFirstInWindow() async throws {
        let f = try SyncFixture(lookbackDays: 0)
        for i in 0..<5 { f.gmail.seed("m\(i)", daysAgo: Double(i) * 10 + 1) }  // 1, 11, 21, 31, 41 days
        f.gmail.seed("old", daysAgo: 120)
        let engine = f.engine(hydrationBatch: 2, prefetchDays: 30)
        f.gmail.setHook { _ in }
        var report = try await engine.syncOnce()
        #expect(report.bodiesHydrated == 2)
        #expect(try f.hasBody("m0") && f.hasBody("m1") && !f.hasBody("m2"))
        report = try await engine.syncOnce()
        #expect(report.bodiesHydrated == 1)  // m2 (21 days); m3 and m4 are outside 30 days
        #expect(try !f.hasBody("m3") && !f.hasBody("old"))
        #expect(try await engine.isCaughtUp())
    }

    @Test("a prefetch window of 0 hydrates every message")
    func windowZero() async throws {
        let f = try SyncFixture(lookbackDays: 0)
        f.gmail.seed("recent", daysAgo: 1)
        f.gmail.seed("ancient", daysAgo: 3000)
        let engine = f.engine(prefetchDays: 0)
        _ = try await engine.syncOnce()
        #expect(try f.hasBody("recent") && f.hasBody("ancient"))
    }

    @Test("one bad message does not stall hydration of the other 24")
    func badMessageDoesNotStall() async throws {
        let f = try SyncFixture(storeClock: SyncFixture.stoppedClock())
        for i in 0..<25 { f.gmail.seed(String(format: "m%02d", i), daysAgo: Double(i) + 1) }
        let engine = f.engine()
        f.gmail.setHook { call in
            if case .getMessage("m03", "full") = call { throw GmailError.server(status: 500) }
        }
        let report = try await engine.syncOnce()
        #expect(report.bodiesHydrated == 24)
        #expect(try !f.hasBody("m03") && f.hasBody("m04"))
        // The failing one is parked: it does not head the work-list, and it is not done.
        #expect(report.parked == 1)
        #expect(try await !engine.isCaughtUp())
        #expect(try await !engine.hasDueWork())
        #expect(try await engine.syncOnce().bodiesHydrated == 0)
        // Parked in the store, so a later pass (or process) tries it again once due.
        f.gmail.setHook(nil)
        let accountID = try f.account().id
        try f.database.write { _ = try $0.makeParkedDue(accountID: accountID) }
        #expect(try await f.engine().syncOnce().bodiesHydrated == 1)
        #expect(try f.hasBody("m03"))
        #expect(try await engine.isCaughtUp())
    }

    @Test("r10_undecodable_full_message_is_hydrated_from_raw: a body whose format=full answer cannot be decoded comes from format=raw")
    func r10_undecodable_full_message_is_hydrated_from_raw() async throws {
        let f = try SyncFixture()
        f.gmail.seed("m0", daysAgo: 1, body: "the innermost part of a MIME bomb")
        f.gmail.seed("m1", daysAgo: 2, body: "an ordinary body")
        let engine = f.engine()
        f.gmail.setHook { call in
            if case .getMessage("m0", "full") = call { throw GmailError.invalidResponse("body is not valid JSON") }
        }
        let report = try await engine.syncOnce()
        #expect(report.bodiesHydrated == 2)
        let accountID = try f.account().id
        #expect(try f.database.read { try $0.body(gmailID: "m0", accountID: accountID) }?.text == "the innermost part of a MIME bomb")
        #expect(try await engine.isCaughtUp())
        // On demand too (hd-show).
        try f.database.write { store in
            try store.db.execute("DELETE FROM message_bodies WHERE message_id = (SELECT id FROM messages WHERE gmail_id = 'm0')")
            try store.db.execute("UPDATE messages SET body_state = 0 WHERE gmail_id = 'm0'")
        }
        #expect(try await engine.hydrate(messageID: "m0"))
        #expect(try f.database.read { try $0.body(gmailID: "m0", accountID: accountID) }?.text == "the innermost part of a MIME bomb")
    }

    @Test("a hydration 404 tombstones the message instead of retrying it forever")
    func notFoundTombstones() async throws {
        let f = try SyncFixture()
        f.gmail.seed("m0", daysAgo: 1)
        f.gmail.seed("m1", daysAgo: 2)
        let engine = f.engine()
        f.gmail.setHook { call in
            if case .getMessage("m1", "full") = call { throw GmailError.notFound }
        }
        _ = try await engine.syncOnce()
        #expect(try f.storedIDs() == ["m0"])
        #expect(try await engine.isCaughtUp())
    }

    @Test("hydrate(messageID:) is the same pipeline for one message and rethrows, except a 404")
    func onDemand() async throws {
        let f = try SyncFixture(lookbackDays: 0)
        f.gmail.seed("m0", daysAgo: 200, body: "an old body about walruses")
        f.gmail.seed("m1", daysAgo: 1)
        let engine = SyncEngine(api: f.gmail, database: f.database, account: f.email, prefetchWindowDays: 30,
                                now: { f.now })
        // A store that has m0 without its body (outside the prefetch window).
        _ = try await SyncEngine(api: f.gmail, database: f.database, account: f.email, now: { f.now }).syncOnce()
        let accountID = try f.account().id
        #expect(try f.database.read { try $0.body(gmailID: "m0", accountID: accountID) } == nil)
        #expect(try await engine.hydrate(messageID: "m0"))
        #expect(try f.database.read { try $0.body(gmailID: "m0", accountID: accountID) }?.text == "an old body about walruses")
        f.gmail.setHook { call in
            if case .getMessage("m1", "full") = call { throw GmailError.server(status: 503) }
        }
        await #expect(throws: GmailError.server(status: 503)) { try await engine.hydrate(messageID: "m1") }
        f.gmail.setHook(nil)
        f.gmail.state.withLock { _ = $0.mailbox.removeValue(forKey: "m1") }
        #expect(try await !engine.hydrate(messageID: "m1"))
        #expect(try !f.storedIDs().contains("m1"))
    }
}
