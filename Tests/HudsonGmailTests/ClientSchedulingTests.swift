/*!
 How the client waits: a request is charged to the QuotaBucket before it is sent, so with the
 window full nothing reaches the server until quota frees up (local-first-sync.md
 "QuotaBucket"); and cancellation ends every kind of waiting promptly — an exchange in flight,
 a quota wait, a batch in backoff — without leaking a request or a result.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Client scheduling")
struct ClientSchedulingTests {
    @Test("a request waits for quota before it is sent")
    func quotaBeforeSend() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock(autoAdvance: false)
        let quota = QuotaBucket(configuration: .init(budget: 10), clock: clock.scheduling)
        try await quota.acquire(units: 10, lane: .interactive)
        let client = try makeClient(server, clock: clock, quota: quota) { $0.lane = .interactive }
        let task = Task { try await client.getProfile() }
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        #expect(server.requests.isEmpty)
        clock.advance(by: .seconds(60))
        #expect(try await task.value.emailAddress == "ann@example.com")
        #expect(server.requests.count == 1)
    }

    @Test("a request's units leave the quota window one window after its answer, answered or failed")
    func unitsLeaveAfterTheAnswer() async throws {
        let clock = ManualClock(autoAdvance: false)
        // Each answer takes 5 s of the test's clock: Gmail counted the request at some instant
        // in between, so the bucket must hold its units until 65 s, not 60.
        let server = try TestHTTPServer { request in
            clock.advance(by: .seconds(5))
            return request.path.contains("profile") ? .json(200, Fixture.profile) : .json(400, Fixture.error(400, reason: "invalid"))
        }
        defer { server.stop() }
        let quota = QuotaBucket(configuration: .init(budget: 10), clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota) { $0.lane = .interactive }
        _ = try await client.getProfile()                                   // 1 unit, answered at 5 s
        #expect(await gmailError { _ = try await client.listLabels() } != nil)  // 1 unit, failed at 10 s
        clock.advance(by: .seconds(56))                                     // 66 s
        #expect(await quota.stats().interactiveUnits == 1)
        clock.advance(by: .seconds(4))                                      // 70 s
        #expect(await quota.stats().interactiveUnits == 0)
    }

    @Test("the retry bounds count from the admission: a request that waited for quota is still retried")
    func retryBoundsFromAdmission() async throws {
        let server = try TestHTTPServer(script: [.status(503), .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock(autoAdvance: false)
        let quota = QuotaBucket(configuration: .init(budget: 10), clock: clock.scheduling)
        try await quota.acquire(units: 10, lane: .interactive)
        let client = try makeClient(server, clock: clock, jitter: 0, quota: quota) {
            $0.lane = .interactive
            $0.maxRetryDuration = .seconds(30)
        }
        let task = Task { try await client.getProfile() }
        // 60 s waiting for quota, longer than the retry bound; then a 503, retried at once
        // (jitter 0: no backoff; the window has room for the retry's unit).
        try #require(await eventually { await quota.stats().waitingInteractive == 1 })
        clock.advance(by: .seconds(60))
        #expect(try await task.value.emailAddress == "ann@example.com")
        #expect(server.requests.count == 2)
    }

    @Test("cancelling a request that waits for quota charges nothing and sends nothing")
    func cancelWhileWaitingForQuota() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock(autoAdvance: false)
        let quota = QuotaBucket(configuration: .init(budget: 10), clock: clock.scheduling)
        try await quota.acquire(units: 10, lane: .background)
        let client = try makeClient(server, clock: clock, quota: quota)
        let task = Task { try await client.getProfile() }
        try #require(await eventually { await quota.stats().waitingBackground == 1 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let stats = await quota.stats()
        #expect(stats.totalUnits == 10 && stats.waitingBackground == 0)
        #expect(server.requests.isEmpty)
    }

    @Test("cancelling an exchange in flight ends it with CancellationError, and its units leave one window after the cancel")
    func cancelInFlight() async throws {
        let release = DispatchSemaphore(value: 0)
        let server = try TestHTTPServer { _ in
            // Held until the test has cancelled (the defer releases it, and each release passes on to
            // any other request held here). It used to be held 5 s at most: when the parallel suites
            // kept this test's task from running for longer, the answer went out before the cancel.
            // The bound now only frees the server's thread if the test never gets that far.
            _ = release.wait(timeout: .now() + 600)
            release.signal()
            return .json(200, Fixture.profile)
        }
        defer {
            release.signal()
            server.stop()
        }
        let clock = ManualClock(autoAdvance: false)
        let quota = QuotaBucket(configuration: .init(budget: 10), clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota) { $0.lane = .interactive }
        let task = Task { try await client.getProfile() }
        try #require(await eventually { server.requests.count == 1 })
        clock.advance(by: .seconds(10))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The ticket was settled at the cancel: counted at 69 s, a window after the
        // admission; gone at 70 s, a window after the cancel.
        clock.advance(by: .seconds(59))
        #expect(await quota.stats().interactiveUnits == 1)
        clock.advance(by: .seconds(1))
        #expect(await quota.stats().interactiveUnits == 0)
    }

    @Test("cancelling getMessages during backoff marks the unfinished ids cancelled")
    func cancelBatch() async throws {
        let server = try TestHTTPServer { _ in .status(503) }
        defer { server.stop() }
        let clock = ManualClock(autoAdvance: false)
        let client = try makeClient(server, clock: clock)
        let task = Task { await client.getMessages(ids: ["a", "b"], format: "minimal") }
        try #require(await eventually { clock.pendingSleepers == 1 })
        task.cancel()
        let results = await task.value
        #expect(results.count == 2)
        #expect(results.values.allSatisfy { if case .failure(.cancelled) = $0 { true } else { false } })
        #expect(server.requests.count == 1)
    }
}
