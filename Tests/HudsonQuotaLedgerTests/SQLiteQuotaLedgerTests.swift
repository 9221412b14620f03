/*!
 The SQLite quota ledger (issue 17, point 5): two ledger instances on one file stand in for
 two processes. What they must keep: each sees the other's admissions; background is held
 back while the other has an interactive request waiting; a killed waiter's lease lapses; a
 429 penalty is shared; buckets over them never admit more than the budget in any rolling
 window; the file stays one window's size; a clock from another timeline strands nobody; and
 a file that cannot be used, or a lock that is not let go, is a typed failure within the busy
 timeout, after which the bucket goes on alone.
 */
import Foundation
import Glibc
import Synchronization
import HudsonGmail
import HudsonQuotaLedger
import HudsonTestSupport
import SQLite
import Testing

@Suite("SQLite quota ledger")
struct SQLiteQuotaLedgerTests {
    private func ledgers(_ clock: TestClock, in directory: TemporaryDirectory, count: Int = 2) -> [SQLiteQuotaLedger] {
        (0..<count).map { _ in SQLiteQuotaLedger(path: directory.path("quota/ann@example.com.sqlite3"), clock: clock.nanoseconds) }
    }

    private func bucket(_ clock: TestClock, _ ledger: SQLiteQuotaLedger, budget: Int = 100,
                        window: Duration = .seconds(60)) -> QuotaBucket {
        QuotaBucket(configuration: .init(budget: budget, backgroundShare: 0.7, window: window), clock: clock.scheduling,
                    ledger: ledger)
    }

    private func admit(_ ledger: SQLiteQuotaLedger, _ units: Int, _ lane: QuotaLane) throws -> QuotaLedgerAdmission {
        try ledger.admit(units: units, lane: lane, window: .seconds(60)) { _ in true }
    }

    @Test("two ledgers on one file see each other's admissions, per lane, until they leave the window")
    func sharedAdmissions() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        _ = try admit(ledger[0], 30, .interactive)
        clock.advance(by: .seconds(10))
        _ = try admit(ledger[1], 20, .background)
        #expect(try ledger[0].view(window: .seconds(60)) == QuotaLedgerView(interactiveUnits: 30, backgroundUnits: 20))
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView(interactiveUnits: 30, backgroundUnits: 20))

        // Refused, a step answers with every admission and when it leaves the window.
        let refused = try ledger[1].admit(units: 5, lane: .background, window: .seconds(60)) { _ in false }
        #expect(!refused.admitted)
        #expect(refused.entries == [QuotaLedgerEntry(expiresIn: .seconds(50), units: 30, lane: .interactive),
                                    QuotaLedgerEntry(expiresIn: .seconds(60), units: 20, lane: .background)])
        clock.advance(by: .seconds(50))
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView(interactiveUnits: 0, backgroundUnits: 20))
    }

    @Test("a settled admission leaves the window one window after its settle; one the window forgot is recorded again")
    func settleMovesTheAdmission() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        let answered = try #require(try admit(ledger[0], 30, .interactive).record)
        clock.advance(by: .seconds(10))
        try ledger[0].settle(record: answered, units: 30, lane: .interactive)
        clock.advance(by: .seconds(55))  // 65 s after the admission, 55 after the answer
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView(interactiveUnits: 30))
        clock.advance(by: .seconds(5))
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView())

        // In flight for 90 s: the window forgot it after 60; its answer records it again.
        let slow = try #require(try admit(ledger[0], 20, .background).record)
        clock.advance(by: .seconds(90))
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView())
        _ = try admit(ledger[1], 1, .background)  // tidies the forgotten row away
        try ledger[0].settle(record: slow, units: 20, lane: .background)
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView(backgroundUnits: 21))
        // Another owner's settle of the same record is not this admission's: recorded apart.
        try ledger[1].settle(record: slow, units: 20, lane: .background)
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView(backgroundUnits: 41))
        clock.advance(by: .seconds(60))
        #expect(try ledger[0].view(window: .seconds(60)) == QuotaLedgerView())
        #expect(try ledger[0].rowCounts().admissions == 3)  // kept until the next admission tidies
    }

    @Test("a rowid SQLite hands out again names a new admission: settling the old one records it again")
    func settleAfterRowidReuse() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory, count: 1)[0]
        let first = try #require(try admit(ledger, 10, .background).record)
        let slow = try #require(try admit(ledger, 10, .background).record)
        clock.advance(by: .seconds(50))
        try ledger.settle(record: first, units: 10, lane: .background)
        // At 70 s the slow one, still in flight, has left the window; the next admission of
        // the same process gets its rowid back (the largest left is the first's).
        clock.advance(by: .seconds(20))
        let next = try #require(try admit(ledger, 10, .background).record)
        #expect(next.id == slow.id)
        try ledger.settle(record: slow, units: 10, lane: .background)
        #expect(try ledger.view(window: .seconds(60)) == QuotaLedgerView(backgroundUnits: 30))
        // The new admission kept its own time: it leaves at 130 s, the slow one at 130 s too
        // (answered at 70), the first at 110.
        clock.advance(by: .seconds(41))
        #expect(try ledger.view(window: .seconds(60)) == QuotaLedgerView(backgroundUnits: 20))
    }

    @Test("an interactive request waiting in one process holds back the other's background, not its own")
    func waitingInteractiveIsSeenByOthers() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        try ledger[0].setInteractiveWaiting(lease: .seconds(3))
        #expect(try ledger[1].view(window: .seconds(60)).othersWaitingInteractive)
        #expect(try !ledger[0].view(window: .seconds(60)).othersWaitingInteractive)
        var seen: QuotaLedgerView?
        _ = try ledger[1].admit(units: 5, lane: .background, window: .seconds(60)) { seen = $0; return false }
        #expect(seen?.othersWaitingInteractive == true)
        try ledger[0].setInteractiveWaiting(lease: nil)
        #expect(try !ledger[1].view(window: .seconds(60)).othersWaitingInteractive)
    }

    @Test("a killed waiter's lease lapses within the lease, and its row goes with the next lease step")
    func killedWaiterLeaseLapses() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        var ledger = ledgers(clock, in: directory)
        try ledger[0].setInteractiveWaiting(lease: .seconds(3))
        ledger.removeFirst()  // "killed": the lease is never withdrawn
        clock.advance(by: .milliseconds(2_999))
        #expect(try ledger[0].view(window: .seconds(60)).othersWaitingInteractive)
        clock.advance(by: .milliseconds(1))
        #expect(try !ledger[0].view(window: .seconds(60)).othersWaitingInteractive)
        try ledger[0].setInteractiveWaiting(lease: nil)
        #expect(try ledger[0].rowCounts().waiters == 0)
    }

    @Test("a 429 penalty recorded by one process is seen by the other until it ends")
    func sharedPenalty() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        try ledger[0].penalize { current in
            #expect(current == nil)
            return QuotaPenalty(factor: 0.5, remaining: .seconds(60))
        }
        clock.advance(by: .seconds(20))
        #expect(try ledger[1].view(window: .seconds(60)).penalty == QuotaPenalty(factor: 0.5, remaining: .seconds(40)))
        try ledger[1].penalize { current in
            #expect(current == QuotaPenalty(factor: 0.5, remaining: .seconds(40)))
            return QuotaPenalty(factor: 0.25, remaining: .seconds(60))
        }
        clock.advance(by: .seconds(60))
        #expect(try ledger[0].view(window: .seconds(60)).penalty == nil)
        try ledger[0].penalize { current in
            #expect(current == nil)
            return QuotaPenalty(factor: 0.5, remaining: .zero)
        }
        #expect(try ledger[0].rowCounts().penalty == 1)
    }

    @Test("background in one process yields to an interactive request waiting in another, then goes")
    func bucketsYieldAcrossProcesses() async throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        let first = bucket(clock, ledger[0], window: .seconds(10))
        let second = bucket(clock, ledger[1], window: .seconds(10))
        try await first.acquire(units: 100, lane: .interactive)
        let interactive = Task { try await first.acquire(units: 60, lane: .interactive) }
        try #require(await eventually { (try? ledger[1].view(window: .seconds(10)).othersWaitingInteractive) == true })
        // Either fits alone once the window frees at 10 s, not both.
        let background = Task { try await second.acquire(units: 50, lane: .background) }
        try #require(await eventually { await second.stats().waitingBackground == 1 })
        for _ in 1...10 {
            try #require(await eventually { clock.pendingSleepers == 2 })
            clock.advance(by: .seconds(1))
        }
        #expect(try await interactive.value == .seconds(10))
        for _ in 0..<20 {
            if await eventually({ clock.pendingSleepers == 1 }) { clock.advance(by: .milliseconds(500)) }
            if await second.stats().waitingBackground == 0 { break }
        }
        #expect(try await background.value == .seconds(20))
        #expect(await first.sharing == .shared)
        #expect(await second.sharing == .shared)
    }

    @Test("long run: buckets of three processes over one ledger file never exceed the budget, nor background its share, in any rolling window; the file keeps one window")
    func rollingWindowNeverExceeded() async throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: true)
        let log = Locked<[(time: Int64, units: Int, lane: QuotaLane)]>([])
        let ledger = (0..<3).map { _ in
            RecordingLedger(path: directory.path("quota/ann@example.com.sqlite3"), clock: clock.nanoseconds, log: log)
        }
        let buckets = ledger.map {
            QuotaBucket(configuration: .init(budget: 1_000, backgroundShare: 0.7), clock: clock.scheduling, ledger: $0)
        }
        await withThrowingTaskGroup(of: Void.self) { group in
            for (index, quota) in buckets.enumerated() {
                group.addTask {
                    for step in 0..<120 {
                        try await quota.acquire(units: [5, 125, 2, 5, 50][(step + index) % 5], lane: .background)
                    }
                }
                group.addTask {
                    for step in 0..<60 {
                        try await quota.acquire(units: step % 6 == 0 ? 100 : 5, lane: .interactive)
                        if step % 5 == 0 { try await clock.scheduling.sleep(.seconds(2)) }
                    }
                }
            }
        }
        // Windows on the ledger's own time (each bucket's clock may read a moment earlier).
        let entries = log.withLock { $0 }
        #expect(entries.count == 540)
        #expect(clock.now > .seconds(120))
        var worst = (total: 0, background: 0)
        for entry in entries {
            let window = entries.filter { $0.time > entry.time - 60_000_000_000 && $0.time <= entry.time }
            worst.total = max(worst.total, window.reduce(0) { $0 + $1.units })
            worst.background = max(worst.background, window.filter { $0.lane == .background }.reduce(0) { $0 + $1.units })
        }
        #expect(worst.total <= 1_000 && worst.background <= 700, "worst rolling 60 s window: \(worst)")
        for quota in buckets { #expect(await quota.sharing == .shared) }
        // Bounded: the file holds what the last window admitted, no more.
        _ = try admit(ledger[0].inner, 0, .background)
        let now = clock.nanoseconds()
        let recent = entries.filter { $0.time > now - 60_000_000_000 }.count + 1
        #expect(try ledger[0].inner.rowCounts().admissions == recent)
    }

    @Test("an entry stamped by another timeline (the clock restarted at a reboot) counts one window at most; its lease and penalty are dropped")
    func clockFromAnotherTimeline() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory)
        clock.set(.seconds(1_000))
        _ = try admit(ledger[0], 100, .interactive)
        try ledger[0].setInteractiveWaiting(lease: .seconds(3))
        try ledger[0].penalize { _ in QuotaPenalty(factor: 0.5, remaining: .seconds(60)) }
        clock.set(.seconds(5))  // CLOCK_BOOTTIME after a reboot: everything above is "in the future"
        let step = try ledger[1].admit(units: 1, lane: .background, window: .seconds(60)) { _ in false }
        #expect(step.view.totalUnits == 100 && !step.view.othersWaitingInteractive)
        #expect(step.view.penalty == nil)
        #expect(step.entries == [QuotaLedgerEntry(expiresIn: .seconds(60), units: 100, lane: .interactive)])
        clock.advance(by: .seconds(60))
        #expect(try ledger[1].view(window: .seconds(60)) == QuotaLedgerView())
    }

    @Test("the file is created 0600 in a directory made 0700, with its own schema version")
    func fileModes() throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let ledger = ledgers(clock, in: directory, count: 1)[0]
        _ = try admit(ledger, 1, .interactive)
        var info = stat()
        #expect(stat(ledger.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(directory.path("quota"), &info) == 0 && info.st_mode & 0o777 == 0o700)
        let db = try Connection(path: ledger.path, options: ConnectionOptions(access: .readOnly))
        #expect(try db.scalarInt("PRAGMA user_version") == SQLiteQuotaLedger.schemaVersion)
        #expect(try db.scalarInt("PRAGMA application_id") == SQLiteQuotaLedger.applicationID)
    }

    @Test("a ledger that cannot be created, another program's database, or a newer Hudson's ledger is a typed failure, and the bucket goes on alone")
    func unusableFiles() async throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        // A directory that cannot be made (a file is in the way): as a read-only one would be.
        _ = FileManager.default.createFile(atPath: directory.path("file"), contents: Data())
        let blocked = SQLiteQuotaLedger(path: directory.path("file/quota/ann.sqlite3"), clock: clock.nanoseconds)
        #expect(throws: QuotaLedgerFailure.self) { try blocked.view(window: .seconds(60)) }
        let quota = bucket(clock, blocked)
        try await quota.acquire(units: 10, lane: .interactive)
        guard case .fellBack(let failure) = await quota.sharing else {
            Issue.record("expected the bucket to fall back")
            return
        }
        #expect(failure.operation == .open && failure.reason.contains("file/quota"))

        // Someone else's database: left alone.
        let other = directory.path("other.sqlite3")
        try Connection(path: other, options: ConnectionOptions(access: .readWriteCreate)).execute("CREATE TABLE notes (x)")
        #expect(throws: QuotaLedgerFailure(.open, "\(other): not a Hudson quota ledger")) {
            try SQLiteQuotaLedger(path: other, clock: clock.nanoseconds).view(window: .seconds(60))
        }
        // Not SQLite at all.
        let garbage = directory.path("garbage.sqlite3")
        _ = FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 0x41, count: 4096))
        #expect(throws: QuotaLedgerFailure.self) { try SQLiteQuotaLedger(path: garbage, clock: clock.nanoseconds).view(window: .seconds(60)) }
        // A newer Hudson's ledger.
        let newer = directory.path("newer.sqlite3")
        _ = try SQLiteQuotaLedger(path: newer, clock: clock.nanoseconds).view(window: .seconds(60))
        try Connection(path: newer, options: ConnectionOptions(access: .readWrite)).execute("PRAGMA user_version = 99")
        #expect(throws: QuotaLedgerFailure(.open, "\(newer): written by a newer Hudson (ledger version 99)")) {
            try SQLiteQuotaLedger(path: newer, clock: clock.nanoseconds).view(window: .seconds(60))
        }
    }

    @Test("a ledger whose lock is held (a process stopped mid-step) fails within its busy timeout, and the bucket goes on alone")
    func heldLockFailsWithinBusyTimeout() async throws {
        let directory = TemporaryDirectory()
        let clock = TestClock(autoAdvance: false)
        let path = directory.path("quota/ann.sqlite3")
        let ledger = SQLiteQuotaLedger(path: path, busyTimeout: .milliseconds(50), clock: clock.nanoseconds)
        _ = try admit(ledger, 1, .interactive)
        let holder = try Connection(path: path, options: ConnectionOptions(access: .readWrite))
        try holder.execute("BEGIN IMMEDIATE")
        let started = ContinuousClock.now
        #expect(throws: QuotaLedgerFailure.self) { try admit(ledger, 1, .interactive) }
        #expect(ContinuousClock.now - started < .seconds(2))
        let quota = bucket(clock, ledger)
        try await quota.acquire(units: 5, lane: .background)
        guard case .fellBack(let failure) = await quota.sharing else {
            Issue.record("expected the bucket to fall back")
            return
        }
        #expect(failure.operation == .admit && failure.reason.contains("SQLITE_BUSY"))
        try holder.execute("ROLLBACK")
        clock.advance(by: .seconds(10))
        try await quota.acquire(units: 5, lane: .background)
        #expect(await quota.sharing == .shared)
    }
}

/// A SQLite ledger that logs each admission at the instant the ledger itself recorded it (the
/// clock it reads inside its transaction).
final class RecordingLedger: QuotaLedger {
    private final class LastRead: Sendable {
        let value = Mutex<Int64>(0)
    }

    let inner: SQLiteQuotaLedger
    private let lastRead = LastRead()
    private let log: Locked<[(time: Int64, units: Int, lane: QuotaLane)]>

    init(path: String, clock: @escaping @Sendable () -> Int64, log: Locked<[(time: Int64, units: Int, lane: QuotaLane)]>) {
        let lastRead = self.lastRead
        inner = SQLiteQuotaLedger(path: path, clock: {
            let now = clock()
            lastRead.value.withLock { $0 = now }
            return now
        })
        self.log = log
    }

    func admit(units: Int, lane: QuotaLane, window: Duration,
               decide: (QuotaLedgerView) -> Bool) throws(QuotaLedgerFailure) -> QuotaLedgerAdmission {
        let answer = try inner.admit(units: units, lane: lane, window: window, decide: decide)
        if answer.admitted {
            let time = lastRead.value.withLock { $0 }
            log.withLock { $0.append((time, units, lane)) }
        }
        return answer
    }

    func settle(record: QuotaLedgerRecord, units: Int, lane: QuotaLane) throws(QuotaLedgerFailure) {
        try inner.settle(record: record, units: units, lane: lane)
    }
    func setInteractiveWaiting(lease: Duration?) throws(QuotaLedgerFailure) { try inner.setInteractiveWaiting(lease: lease) }
    func penalize(_ update: (QuotaPenalty?) -> QuotaPenalty) throws(QuotaLedgerFailure) { try inner.penalize(update) }
    func view(window: Duration) throws(QuotaLedgerFailure) -> QuotaLedgerView { try inner.view(window: window) }
}
