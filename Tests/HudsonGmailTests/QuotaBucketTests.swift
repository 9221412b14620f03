/*!
 The QuotaBucket's promises (local-first-sync.md "QuotaBucket"; gmail-api.md §3): interactive
 waiters are served before background ones, background never uses more than its share of any
 rolling window, a 429 shrinks the budget until the window clears, cancelled waiters leave
 without being charged, and the stats report usage per lane. Time is driven by hand: the gated
 clock holds the bucket at an instant; the auto-advancing clock runs long simulations at once.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Quota bucket")
struct QuotaBucketTests {
    private func bucket(_ clock: ManualClock, budget: Int = 100, share: Double = 0.7) -> QuotaBucket {
        QuotaBucket(configuration: .init(budget: budget, backgroundShare: share), clock: clock.scheduling)
    }

    @Test("interactive waiters are served before background waiters that queued earlier")
    func interactiveServedFirst() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 100, lane: .interactive)
        let background = Task { try await quota.acquire(units: 60, lane: .background) }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        let interactive = Task { try await quota.acquire(units: 60, lane: .interactive) }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })

        clock.advance(by: .seconds(60))
        _ = try await interactive.value
        // Only one of the two 60-unit requests fits the 100-unit window: the interactive one.
        let stats = await quota.stats()
        #expect(stats.interactiveUnits == 60 && stats.waitingBackground == 1)

        clock.advance(by: .seconds(60))
        _ = try await background.value
        #expect(await quota.stats().backgroundUnits == 60)
    }

    @Test("background is held to its share even when the window has room; interactive is not")
    func backgroundShare() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 70, lane: .background)
        let waiting = Task { try await quota.acquire(units: 1, lane: .background) }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        try await quota.acquire(units: 30, lane: .interactive)
        let stats = await quota.stats()
        #expect(stats.totalUnits == 100 && stats.backgroundBudget == 70)
        clock.advance(by: .seconds(60))
        _ = try await waiting.value
        #expect(await quota.stats().backgroundUnits == 1)
    }

    @Test("usage leaves the window exactly one window after admission")
    func rollingWindow() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 40, lane: .interactive)
        clock.advance(by: .seconds(30))
        try await quota.acquire(units: 50, lane: .interactive)
        let waiting = Task { try await quota.acquire(units: 30, lane: .interactive) }
        try #require(await eventually { clock.pendingSleepers == 1 })
        clock.advance(by: .seconds(29))
        #expect(await quota.stats().waitingInteractive == 1)
        clock.advance(by: .seconds(1))
        _ = try await waiting.value
        #expect(await quota.stats().interactiveUnits == 80)
    }

    @Test("units in flight stay in the window until settled, and leave one window after the settle")
    func inFlightUntilSettled() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        let ticket = try await quota.admit(units: 60, lane: .interactive)
        #expect(ticket.admittedAt == .zero)
        // The answer takes 70 s: a window after the admission the units are still Gmail's.
        clock.advance(by: .seconds(70))
        #expect(await quota.stats().interactiveUnits == 60)
        let timers = clock.timerWaits
        let waiting = Task { try await quota.acquire(units: 50, lane: .interactive) }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        // Only units in flight hold it back: no timer until the settle says when they leave
        // (a timer due at once would wake the bucket again and again).
        for _ in 0..<2_000 { await Task.yield() }
        #expect(clock.timerWaits == timers && clock.pendingSleepers == 0)
        await quota.settle(ticket)
        try #require(await eventually { clock.pendingSleepers == 1 })
        clock.advance(by: .seconds(59))
        #expect(await quota.stats().waitingInteractive == 1)
        clock.advance(by: .seconds(1))
        #expect(try await waiting.value == .seconds(130))
        // A second settle of the same ticket changes nothing.
        await quota.settle(ticket)
        #expect(await quota.stats().interactiveUnits == 50)
    }

    @Test("admit and settle at once count like acquire: the units leave one window after")
    func settledAtOnce() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        await quota.settle(try await quota.admit(units: 100, lane: .background))
        let waiting = Task { try await quota.admit(units: 1, lane: .interactive) }
        try #require(await eventually { clock.pendingSleepers == 1 })
        clock.advance(by: .seconds(60))
        #expect(try await waiting.value.admittedAt == .seconds(60))
        #expect(await quota.stats().totalUnits == 1)
    }

    @Test("a 429 shrinks the effective budget by a fifth, and each further one while that lasts by half, until the window clears")
    func penaltyShrinksBudget() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        await quota.penalize(retryAfter: nil)
        var stats = await quota.stats()
        #expect(stats.effectiveBudget == 80 && stats.backgroundBudget == 56)
        try await quota.acquire(units: 80, lane: .interactive)
        let waiting = Task { try await quota.acquire(units: 1, lane: .interactive) }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        await quota.penalize(retryAfter: 120)
        #expect(await quota.stats().effectiveBudget == 40)
        clock.advance(by: .seconds(60))
        _ = try await waiting.value
        stats = await quota.stats()
        #expect(stats.effectiveBudget == 40)
        await quota.penalize(retryAfter: nil)
        await quota.penalize(retryAfter: nil)
        #expect(await quota.stats().effectiveBudget == 12, "compounding stops at the minimum factor, an eighth")
        clock.advance(by: .seconds(60))
        #expect(await quota.stats().effectiveBudget == 100)
        await quota.penalize(retryAfter: nil)
        #expect(await quota.stats().effectiveBudget == 80, "once a penalty ended, the next 429 is a first one again")
    }

    @Test("after a 429 shrank the window under background's units, an interactive request still finds what background never takes")
    func penaltyKeepsInteractiveReserve() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 70, lane: .background)
        await quota.penalize(retryAfter: nil)
        // 80 admitted now, 56 for background: 24 background never takes.
        let reserved = Task { try await quota.acquire(units: 24, lane: .interactive) }
        try #require(await eventually {
            let stats = await quota.stats()
            return stats.interactiveUnits == 24 || stats.waitingInteractive == 1
        })
        try #require(await quota.stats().waitingInteractive == 0, "the reserve was not held back by background's units")
        try #require(await eventually { await quota.stats().interactiveUnits == 24 })
        #expect(try await reserved.value == .zero)
        let waiting = Task { try await quota.acquire(units: 1, lane: .interactive) }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        let background = Task { try await quota.acquire(units: 1, lane: .background) }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        clock.advance(by: .seconds(60))
        #expect(try await waiting.value == .seconds(60))
        #expect(try await background.value == .seconds(60))
    }

    @Test("a timer wakes at its instant even when the clock passes it before the timer starts waiting")
    func timerSleepsUntilAnInstant() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 100, lane: .interactive)
        // The window frees at 60 s. Time reaches 60 s after the bucket set its timer and
        // before the timer waits. A timer that turned its instant into a duration first
        // would wait until 120 s, which this test never reaches: the waiter would hang
        // (it did, once in a while, when a test advanced the clock at that moment).
        clock.beforeNextWait { clock.advance(by: .seconds(60)) }
        let waiting = Task { try await quota.acquire(units: 10, lane: .interactive) }
        let admitted = await eventually { await quota.stats() == QuotaStats(
            interactiveUnits: 10, backgroundUnits: 0, effectiveBudget: 100, backgroundBudget: 70,
            waitingInteractive: 0, waitingBackground: 0) }
        #expect(admitted)
        if !admitted { waiting.cancel() }
        _ = try? await waiting.value
    }

    @Test("a cancelled waiter leaves the queue, is not charged, and unblocks those behind it")
    func cancelledWaiter() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 95, lane: .interactive)
        let big = Task { try await quota.acquire(units: 50, lane: .interactive) }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        let small = Task { try await quota.acquire(units: 5, lane: .background) }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        big.cancel()
        await #expect(throws: CancellationError.self) { try await big.value }
        _ = try await small.value
        let stats = await quota.stats()
        #expect(stats.totalUnits == 100 && stats.waitingInteractive == 0 && stats.waitingBackground == 0)
    }

    @Test("a request larger than its lane's limit is admitted into an empty window")
    func oversizeRequest() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = bucket(clock)
        try await quota.acquire(units: 500, lane: .background)
        #expect(await quota.stats().backgroundUnits == 500)
    }

    @Test("background leaves at least 300 units (a quarter of a smaller window) to interactive requests, after 429s too: a send fits at once")
    func interactiveFloor() {
        let configuration = QuotaBucket.Configuration(budget: 6_000)
        for factor in [1, 0.5, 0.25, 0.125] {
            let limits = QuotaBucket.limits(configuration, factor: factor)
            let usage = (total: limits.background, background: limits.background)
            #expect(QuotaBucket.fits(100, lane: .interactive, usage: usage, limits: limits), "factor \(factor): \(limits)")
            #expect(!QuotaBucket.fits(5, lane: .background, usage: usage, limits: limits))
        }
        // At Gmail's 15,000 a minute the share decides: a first sync at 95 % of the quota.
        #expect(QuotaBucket.limits(QuotaBucket.Configuration(budget: 15_000), factor: 1).background == 14_250)
    }

    @Test("long run: background never exceeds its share, nor the total the budget, in any rolling 60 s window")
    func longRunNeverExceedsSubBudget() async throws {
        let clock = ManualClock()
        let configuration = QuotaBucket.Configuration(budget: 6_000, backgroundShare: 0.7)
        let quota = QuotaBucket(configuration: configuration, clock: clock.scheduling)
        let log = Locked<[(time: Duration, units: Int, lane: QuotaLane)]>([])

        await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<3 {
                group.addTask {
                    for step in 0..<400 {
                        let units = [5, 5, 2, 50, 5, 1][(step + worker) % 6]
                        let admitted = try await quota.acquire(units: units, lane: .background)
                        log.withLock { $0.append((admitted, units, .background)) }
                    }
                }
            }
            group.addTask {
                for step in 0..<300 {
                    let units = step % 10 == 0 ? 100 : 5
                    let admitted = try await quota.acquire(units: units, lane: .interactive)
                    log.withLock { $0.append((admitted, units, .interactive)) }
                    if step % 7 == 0 { try await clock.sleep(.seconds(1)) }
                }
            }
        }

        let entries = log.withLock { $0 }
        #expect(entries.count == 1_500)
        // About 13,600 background units at 4,200 a minute need four windows: the last are
        // admitted at 180 s at the earliest (exactly 180 s in some interleavings).
        #expect(clock.now >= .seconds(180))
        for entry in entries {
            let window = entries.filter { $0.time > entry.time - .seconds(60) && $0.time <= entry.time }
            let background = window.filter { $0.lane == .background }.reduce(0) { $0 + $1.units }
            let total = window.reduce(0) { $0 + $1.units }
            #expect(background <= 4_200, "background used \(background) in the window ending \(entry.time)")
            #expect(total <= 6_000, "total \(total) in the window ending \(entry.time)")
        }
    }

    @Test("stats report units per lane in the current window")
    func statsPerLane() async throws {
        let clock = ManualClock(autoAdvance: false)
        let quota = QuotaBucket(clock: clock.scheduling)
        try await quota.acquire(units: GmailMethod.messagesSend.units, lane: .interactive)
        try await quota.acquire(units: GmailMethod.historyList.units, lane: .background)
        try await quota.acquire(units: GmailMethod.messagesGet.units * 25, lane: .background)
        let stats = await quota.stats()
        #expect(stats == QuotaStats(interactiveUnits: 100, backgroundUnits: 127, effectiveBudget: 6_000,
                                    backgroundBudget: 5_700, waitingInteractive: 0, waitingBackground: 0))
        clock.advance(by: .seconds(60))
        #expect(await quota.stats().totalUnits == 0)
    }

    @Test("the concurrency limiter never lets more than its limit run at once")
    func limiterBound() async throws {
        let limiter = AsyncLimiter(limit: 2)
        let flight = Locked((current: 0, peak: 0))
        let gate = Locked(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await limiter.withPermit {
                        flight.withLock { $0.current += 1; $0.peak = max($0.peak, $0.current) }
                        _ = await eventually { gate.withLock { $0 } }
                        flight.withLock { $0.current -= 1 }
                    }
                }
            }
            #expect(await eventually { await limiter.state == (inUse: 2, waiting: 4) })
            gate.withLock { $0 = true }
            try await group.waitForAll()
        }
        #expect(flight.withLock { $0.peak } == 2)
        #expect(await limiter.state == (inUse: 0, waiting: 0))
    }
}
