/*!
 The QuotaBucket across processes (issue 17, point 5): buckets that share a QuotaLedger spend
 one budget. Each bucket here stands in for one process and has its own handle on an
 in-memory ledger; time is one ManualClock for all. The rules: the buckets together never
 admit more than the budget in any rolling window, nor background more than its share; a
 background request waits while another process has an interactive one waiting, and such a
 process, killed, holds nobody back for longer than its lease; a 429 seen by one shrinks what
 the others admit; and a failing ledger leaves a bucket working alone, saying why.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Quota bucket shared across processes")
struct SharedQuotaBucketTests {
    private func bucket(_ clock: ManualClock, _ ledger: MemoryQuotaLedger, budget: Int = 100,
                        window: Duration = .seconds(60)) -> QuotaBucket {
        QuotaBucket(configuration: .init(budget: budget, backgroundShare: 0.7, window: window), clock: clock.scheduling,
                    ledger: ledger)
    }

    @Test("long run: two processes together never exceed the budget, nor background its share, in any rolling 60 s window")
    func twoProcessesStayWithinBudget() async throws {
        let clock = ManualClock()
        let account = MemoryQuotaAccount(clock: clock)
        let buckets = [bucket(clock, account.handle(owner: 1), budget: 6_000),
                       bucket(clock, account.handle(owner: 2), budget: 6_000)]
        let admitted = Locked<[(time: Duration, units: Int, lane: QuotaLane)]>([])

        await withThrowingTaskGroup(of: Void.self) { group in
            for (index, quota) in buckets.enumerated() {
                for worker in 0..<2 {
                    group.addTask {
                        for step in 0..<200 {
                            let units = [5, 125, 2, 50, 5, 125][(step + worker + index) % 6]
                            let time = try await quota.acquire(units: units, lane: .background)
                            admitted.withLock { $0.append((time, units, .background)) }
                        }
                    }
                }
                group.addTask {
                    for step in 0..<150 {
                        let units = step % 10 == 0 ? 100 : 5
                        let time = try await quota.acquire(units: units, lane: .interactive)
                        admitted.withLock { $0.append((time, units, .interactive)) }
                        if step % 7 == 0 { try await clock.sleep(.seconds(1)) }
                    }
                }
            }
        }

        let entries = admitted.withLock { $0 }
        #expect(entries.count == 1_100)
        // The ledger recorded exactly what the buckets admitted, and at the same instants.
        let history = account.history
        #expect(history.count == entries.count)
        #expect(Set(history.map(\.owner)) == [1, 2])
        #expect(history.map(\.units).reduce(0, +) == entries.map(\.units).reduce(0, +))
        // Windows on the ledger's time, which is what the processes share (each bucket's own
        // clock may read a moment earlier).
        var worst = (total: 0, background: 0)
        for entry in history {
            let window = history.filter { $0.time > entry.time - .seconds(60) && $0.time <= entry.time }
            worst.background = max(worst.background, window.filter { $0.lane == .background }.reduce(0) { $0 + $1.units })
            worst.total = max(worst.total, window.reduce(0) { $0 + $1.units })
        }
        #expect(worst.background <= 4_200 && worst.total <= 6_000, "worst rolling 60 s window: \(worst)")
        for quota in buckets { #expect(await quota.sharing == .shared) }
    }

    @Test("a request in flight in one process holds the others back until one window after its answer")
    func inFlightHoldsTheSharedWindow() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let first = bucket(clock, account.handle(owner: 1)), second = bucket(clock, account.handle(owner: 2))
        let ticket = try await first.admit(units: 100, lane: .interactive)
        clock.advance(by: .seconds(30))
        await first.settle(ticket)
        #expect(account.settled.map(\.time) == [.seconds(30)])
        // At 60 s the admission is a window old, but its answer only 30 s.
        clock.advance(by: .seconds(30))
        let waiting = Task { try await second.acquire(units: 10, lane: .interactive) }
        try #require(await eventually { await second.stats().waitingInteractive == 1 })
        clock.advance(by: .seconds(29))
        #expect(await second.stats().waitingInteractive == 1)
        clock.advance(by: .seconds(1))
        #expect(try await waiting.value == .seconds(90))
        #expect(await first.sharing == .shared)
        #expect(await second.sharing == .shared)
    }

    @Test("background waits while another process has an interactive request waiting, even with room in the window")
    func backgroundYieldsToOtherProcessInteractive() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let first = bucket(clock, account.handle(owner: 1))
        let second = bucket(clock, account.handle(owner: 2))
        try await first.acquire(units: 60, lane: .interactive)
        let interactive = Task { try await first.acquire(units: 50, lane: .interactive) }
        try #require(await eventually { account.lease(of: 1) != nil })

        // 60 + 10 fits the window and the background share; only the waiting request holds it back.
        let background = Task { try await second.acquire(units: 10, lane: .background) }
        try #require(await eventually { await second.stats().waitingBackground == 1 })
        for _ in 0..<5 {
            clock.advance(by: .milliseconds(100))
            try #require(await eventually { clock.pendingSleepers >= 2 })
        }
        #expect(await second.stats().waitingBackground == 1)
        #expect(account.history.map(\.units) == [60])

        // The interactive request gives up: its lease goes, and the background one is admitted.
        interactive.cancel()
        await #expect(throws: CancellationError.self) { try await interactive.value }
        try #require(await eventually { account.lease(of: 1) == nil })
        clock.advance(by: .milliseconds(100))
        #expect(try await background.value == .milliseconds(600))
        #expect(account.history.map(\.owner) == [1, 2])
    }

    @Test("when the window frees, an interactive request waiting in one process goes before background waiting in another")
    func interactiveFirstAcrossProcesses() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let first = bucket(clock, account.handle(owner: 1), window: .seconds(10))
        let second = bucket(clock, account.handle(owner: 2), window: .seconds(10))
        try await first.acquire(units: 100, lane: .interactive)
        let interactive = Task { try await first.acquire(units: 60, lane: .interactive) }
        try #require(await eventually { account.lease(of: 1) == .seconds(3) })
        // Either one fits alone once the window frees at 10 s, not both: who goes first is the question.
        let background = Task { try await second.acquire(units: 50, lane: .background) }
        try #require(await eventually { await second.stats().waitingBackground == 1 })

        // The waiting process renews its lease every second.
        for step in 1..<10 {
            clock.advance(by: .seconds(1))
            try #require(await eventually { account.lease(of: 1) == .seconds(step + 3) })
        }
        clock.advance(by: .seconds(1))
        #expect(try await interactive.value == .seconds(10))
        try #require(await eventually { account.lease(of: 1) == nil })
        for _ in 0..<10 {
            try #require(await eventually { clock.pendingSleepers >= 1 })
            clock.advance(by: .seconds(1))
        }
        #expect(try await background.value == .seconds(20))
    }

    @Test("a lease that is not renewed lapses: a process killed while waiting holds background back no longer than its lease")
    func killedWaiterLapses() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        // Owner 9 announced a waiting interactive request for 3 s and was killed.
        account.setLease(owner: 9, until: .seconds(3))
        let quota = bucket(clock, account.handle(owner: 1))
        let background = Task { try await quota.acquire(units: 10, lane: .background) }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        // It asks again every 100 ms, and is refused until the lease lapses at 3 s.
        for _ in 0..<40 {
            try #require(await eventually { clock.pendingSleepers == 1 })
            clock.advance(by: .milliseconds(100))
            try #require(await eventually { account.history.count == 1 || clock.pendingSleepers == 1 })
            if account.history.count == 1 { break }
        }
        _ = try await background.value
        #expect(account.history.first?.time == .seconds(3))
    }

    @Test("a 429 seen by one process shrinks the budget of the others until it ends")
    func sharedPenalty() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let first = bucket(clock, account.handle(owner: 1))
        let second = bucket(clock, account.handle(owner: 2))
        await first.penalize(retryAfter: nil)
        try await second.acquire(units: 80, lane: .interactive)
        let waiting = Task { try await second.acquire(units: 1, lane: .interactive) }
        try #require(await eventually { await second.stats().waitingInteractive == 1 })
        try #require(await eventually { clock.pendingSleepers == 1 })
        clock.advance(by: .seconds(59))
        try #require(await eventually { clock.pendingSleepers == 1 })
        #expect(await second.stats().waitingInteractive == 1)
        clock.advance(by: .seconds(1))
        #expect(try await waiting.value == .seconds(60))
        // A second 429, in the other process, compounds the first while it lasts.
        await first.penalize(retryAfter: nil)
        await second.penalize(retryAfter: nil)
        let view = try account.handle(owner: 3).view(window: .seconds(60))
        #expect(view.penalty?.factor == 0.4)
    }

    @Test("a request bigger than the budget is admitted only into a window empty in every process")
    func oversizeNeedsEmptySharedWindow() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let first = bucket(clock, account.handle(owner: 1))
        let second = bucket(clock, account.handle(owner: 2))
        try await first.acquire(units: 10, lane: .interactive)
        let big = Task { try await second.acquire(units: 500, lane: .background) }
        try #require(await eventually { await second.stats().waitingBackground == 1 })
        try #require(await eventually { clock.pendingSleepers == 1 })
        clock.advance(by: .seconds(60))
        #expect(try await big.value == .seconds(60))
        #expect(account.history.map(\.units) == [10, 500])
    }

    @Test("a failing ledger leaves the bucket working alone, saying why, and it shares again once the ledger works")
    func ledgerFailureFallsBack() async throws {
        let clock = ManualClock(autoAdvance: false)
        let account = MemoryQuotaAccount(clock: clock)
        let ledger = account.handle(owner: 1)
        let quota = bucket(clock, ledger)
        #expect(await quota.sharing == .shared)
        ledger.failure.withLock { $0 = QuotaLedgerFailure(.admit, "disk full") }
        try await quota.acquire(units: 10, lane: .background)
        #expect(await quota.sharing == .fellBack(QuotaLedgerFailure(.admit, "disk full")))
        // While it falls back the ledger is left alone, and the bucket's own window still holds.
        let calls = ledger.calls.withLock { $0 }
        try await quota.acquire(units: 10, lane: .interactive)
        #expect(ledger.calls.withLock { $0 } == calls)
        #expect(await quota.stats().totalUnits == 20)

        ledger.failure.withLock { $0 = nil }
        clock.advance(by: .seconds(10))
        try await quota.acquire(units: 5, lane: .interactive)
        #expect(await quota.sharing == .shared)
        #expect(await quota.lastLedgerFailure == QuotaLedgerFailure(.admit, "disk full"))
        #expect(account.history.map(\.units) == [5])
    }

    @Test("without a ledger the budget is the process's own")
    func noLedger() async throws {
        let quota = QuotaBucket(clock: ManualClock(autoAdvance: false).scheduling)
        #expect(await quota.sharing == .inProcess)
    }
}
