// A temporary store, a scripted Gmail and engines over them. "Now" is 2026-01-01 for
// both the mailbox and the account's consent, so the 90-day window is easy to reason about.
import Foundation
import HudsonGmail
import HudsonStore
import HudsonSync
import HudsonTestSupport
import Synchronization
import Testing

final class SyncFixture: @unchecked Sendable {
    let dir = TemporaryDirectory()
    let gmail: ScriptedGmail
    let database: SharedStore
    let email = "ann@example.com"
    let clock = Mutex<Int64>(ScriptedGmail.now)

    /// - Parameter storeClock: the store's clock (claims, backoff); the system clock by default.
    init(lookbackDays: Int = 90, historyPageSize: Int = 100, storeClock: @escaping Store.Clock = Store.systemClock) throws {
        gmail = ScriptedGmail(historyPageSize: historyPageSize)
        let store = try Store.open(path: dir.path("hudson.sqlite3"), access: .create, clock: storeClock)
        try store.addAccount(email: "ann@example.com", consentedAt: ScriptedGmail.now / 1000, lookbackDays: lookbackDays)
        database = SharedStore(store)
    }

    /// A store clock stopped at the time it is made: a test that parks a message and then
    /// checks it is not yet due must not depend on how long a busy machine takes between
    /// the two (the back-off is a minute of this clock; `makeParkedDue` moves it on).
    static func stoppedClock() -> Store.Clock {
        let stopped = Store.systemClock()
        return { stopped }
    }

    var now: Date { Date(timeIntervalSince1970: Double(clock.withLock { $0 }) / 1000) }

    func advance(days: Double) { clock.withLock { $0 += Int64(days * 86_400_000) } }

    func engine(pageSize: Int = 100, hydrationBatch: Int = 25, prefetchDays: Int = 90) -> SyncEngine {
        SyncEngine(api: gmail, database: database, account: email, pageSize: pageSize, hydrationBatch: hydrationBatch,
                   prefetchWindowDays: prefetchDays, now: { [self] in self.now })
    }

    func flusher() -> MutationFlusher {
        MutationFlusher(api: gmail, database: database, account: email)
    }

    func account() throws -> Account {
        try #require(try database.read { try $0.account(email: "ann@example.com") })
    }

    func storedIDs() throws -> Set<String> {
        Set(try database.read { store in try store.db.map("SELECT gmail_id FROM messages") { $0.string(0) } })
    }

    func labels(_ id: String) throws -> [String]? {
        let accountID = try account().id
        return try database.read { try $0.effectiveLabels(gmailID: id, accountID: accountID) }
    }

    func canonical(_ id: String) throws -> [String]? {
        let accountID = try account().id
        return try database.read { try $0.canonicalLabels(gmailID: id, accountID: accountID) }
    }

    func hasBody(_ id: String) throws -> Bool {
        let accountID = try account().id
        return try database.read { try $0.body(gmailID: id, accountID: accountID) } != nil
    }

    func inbox() throws -> [String] {
        let accountID = try account().id
        return try database.read { try $0.inboxThreads(accountID: accountID, limit: 1000).map(\.threadID) }
    }

    func queue() throws -> [QueuedMutation] {
        try database.read { try $0.queuedMutations() }
    }

    func perform(_ actions: [TriageAction], on references: [Reference]) throws {
        _ = try database.write { try $0.perform(actions, on: references) }
    }

    /// A synced mailbox of `count` one-message threads, all in the inbox, and its engine.
    static func synced(_ count: Int = 3, storeClock: @escaping Store.Clock = Store.systemClock) async throws -> (SyncFixture, SyncEngine) {
        let f = try SyncFixture(storeClock: storeClock)
        for i in 0..<count { f.gmail.seed("m\(i)", daysAgo: Double(i) + 1) }
        let engine = f.engine()
        try await f.syncUntilComplete(engine)
        return (f, engine)
    }

    /// Runs passes until backfill is complete.
    func syncUntilComplete(_ engine: SyncEngine, passes: Int = 50) async throws {
        for _ in 0..<passes {
            if try await engine.syncOnce(maxBackfillPages: 5).backfillComplete { return }
        }
        Issue.record("backfill did not complete")
    }
}

struct InjectedFailure: Error {}
