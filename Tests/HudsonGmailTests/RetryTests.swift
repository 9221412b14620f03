/*!
 The request loop's retry rules, counted through the local test server: what is retryable is
 retried and nothing else (gmail-api.md §4 "Retry?" column, §9.10), a 401 refreshes the token
 exactly once (§4 "retry once"), backoff is full jitter within its ceiling with `Retry-After`
 as a floor, attempts and total time are bounded, `messages.send` is not repeated after an
 ambiguous failure, a 429 penalises the quota bucket, and cancellation stops the loop. The
 manual clock records every sleep, so nothing here waits.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Retries")
struct RetryTests {
    static let retryable: [ErrorCase] = [
        ErrorCase(name: "429", response: .json(429, Fixture.error(429, reason: "rateLimitExceeded")), expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "403 userRateLimitExceeded", response: .json(403, Fixture.error(403, reason: "userRateLimitExceeded")), expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "403 rateLimitExceeded", response: .json(403, Fixture.error(403, reason: "rateLimitExceeded")), expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "500", response: .json(500, Fixture.error(500, reason: "backendError")), expected: .server(status: 500)),
        ErrorCase(name: "502", response: .status(502), expected: .server(status: 502)),
        ErrorCase(name: "503", response: .status(503), expected: .server(status: 503)),
        ErrorCase(name: "dropped connection", response: .drop, expected: .network("connection closed without a valid HTTP response")),
        ErrorCase(name: "truncated body", response: .truncated(status: 200, headers: [:], body: Data("{".utf8), declaredLength: 90), expected: .network("connection closed before the response body was complete")),
    ]

    static let final: [ErrorCase] = [
        ErrorCase(name: "400", response: .json(400, Fixture.error(400, reason: "badRequest")), expected: .badRequest(message: "An error")),
        ErrorCase(name: "403 insufficientPermissions", response: .json(403, Fixture.error(403, reason: "insufficientPermissions")), expected: .forbidden(reason: "insufficientPermissions")),
        ErrorCase(name: "403 domainPolicy", response: .json(403, Fixture.error(403, reason: "domainPolicy")), expected: .forbidden(reason: "domainPolicy")),
        ErrorCase(name: "403 dailyLimitExceeded", response: .json(403, Fixture.error(403, reason: "dailyLimitExceeded")), expected: .forbidden(reason: "dailyLimitExceeded")),
        ErrorCase(name: "404", response: .json(404, Fixture.notFound), expected: .notFound),
        ErrorCase(name: "409", response: .json(409, Fixture.error(409, reason: "conflict", message: "exists")), expected: .badRequest(message: "exists")),
        ErrorCase(name: "200 invalid JSON", response: .json(200, "<html>"), expected: .invalidResponse("body is not valid JSON")),
        ErrorCase(name: "200 wrong shape", response: .json(200, "[1, 2]"), expected: .invalidResponse("field (root) has the wrong type")),
    ]

    @Test("a retryable failure is retried and the next success returned", arguments: retryable)
    func retryableIsRetried(_ errorCase: ErrorCase) async throws {
        #expect(errorCase.expected.isRetryable)
        let server = try TestHTTPServer(script: [errorCase.response, .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock)
        let profile = try await client.getProfile()
        #expect(profile.emailAddress == "ann@example.com")
        #expect(server.requests.count == 2)
        #expect(clock.sleeps.count == 1)
    }

    @Test("a final failure is not retried", arguments: final)
    func finalIsNotRetried(_ errorCase: ErrorCase) async throws {
        #expect(!errorCase.expected.isRetryable)
        let server = try TestHTTPServer(script: [errorCase.response, .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock)
        #expect(await gmailError { _ = try await client.getProfile() } == errorCase.expected)
        #expect(server.requests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("retries stop after maxAttempts with the last error")
    func attemptsAreBounded() async throws {
        let server = try TestHTTPServer { _ in .status(503) }
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock) { $0.maxAttempts = 4 }
        #expect(await gmailError { _ = try await client.getProfile() } == .server(status: 503))
        #expect(server.requests.count == 4)
        #expect(clock.sleeps.count == 3)
    }

    @Test("a refused connection to a Gmail on this machine (the demo's stopped fake) fails at once, without backoff")
    func loopbackRefusalIsFinal() async throws {
        let server = try TestHTTPServer(script: [])
        server.stop()  // nothing listens at its port now
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock)  // maxAttempts 5, 1 s initial backoff
        #expect(await gmailError { _ = try await client.getProfile() } == .network("connection refused"))
        #expect(clock.sleeps.isEmpty, "\(clock.sleeps)")
    }

    @Test("a refused connection to a Gmail that is not on this machine keeps its retries with backoff")
    func remoteRefusalIsRetried() async throws {
        let server = try TestHTTPServer(script: [])
        server.stop()
        let clock = ManualClock()
        // The same port, named by an address that is not a loopback host by Hudson's rule (an
        // IPv4-mapped IPv6 address), so the connection is refused as by a distant server.
        let client = try makeClient(server, clock: clock) {
            $0.baseURL = URL(string: "https://[::ffff:127.0.0.1]:\(server.port)")!
            $0.maxAttempts = 3
        }
        let error = await gmailError { _ = try await client.getProfile() }
        #expect(error?.isRetryable == true, "\(String(describing: error))")
        #expect(clock.sleeps.count == 2, "\(clock.sleeps)")

        // The rule itself: only a refusal, and only on a loopback host, is final.
        let refused = ExchangeFailure(error: .network("connection refused"), status: nil, retryAfter: nil, refused: true)
        let dropped = ExchangeFailure(error: .network("connection lost"), status: nil, retryAfter: nil)
        for (url, final) in [("http://127.0.0.1:8080", true), ("http://localhost:1", true), ("http://[::1]:2", true),
                             ("https://gmail.googleapis.com", false), ("https://127.0.0.1.example.com", false)] {
            let policy = RetryPolicy(GmailClientConfiguration(baseURL: URL(string: url)!))
            #expect(policy.retries(refused) == !final, "\(url)")
            #expect(policy.retries(dropped), "\(url)")
        }
    }

    @Test("backoff is full jitter: ceiling doubles from initialBackoff to maxBackoff, times the random unit")
    func backoffIsFullJitter() async throws {
        let server = try TestHTTPServer { _ in .status(500) }
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock, jitter: 0.75) {
            $0.maxAttempts = 7
            $0.initialBackoff = .seconds(1)
            $0.maxBackoff = .seconds(8)
            $0.maxRetryDuration = .seconds(600)
        }
        _ = await gmailError { _ = try await client.getProfile() }
        #expect(clock.sleeps == [0.75, 1.5, 3, 6, 6, 6].map { Duration.seconds($0) })
    }

    @Test("full jitter stays within [0, ceiling] for any random draw")
    func jitterWithinBounds() {
        let policy = RetryPolicy(GmailClientConfiguration(initialBackoff: .milliseconds(500), maxBackoff: .seconds(32)))
        var generator = SystemRandomNumberGenerator()
        for retry in 0..<12 {
            let ceiling = policy.ceiling(retry: retry)
            #expect(ceiling == min(.seconds(32), .milliseconds(500) * (1 << retry)))
            for _ in 0..<200 {
                let delay = policy.delay(retry: retry, retryAfter: nil, unit: Double.random(in: 0..<1, using: &generator))
                #expect(delay >= .zero && delay <= ceiling)
            }
        }
        #expect(policy.delay(retry: 3, retryAfter: nil, unit: 0) == .zero)
        #expect(policy.ceiling(retry: 10_000) == .seconds(32))
    }

    @Test("Retry-After is a floor under the jittered delay")
    func retryAfterIsAFloor() async throws {
        let limited = ScriptedResponse.json(429, Fixture.error(429, reason: "rateLimitExceeded"), headers: ["Retry-After": "10"])
        let server = try TestHTTPServer(script: [limited, .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock, jitter: 0.5)
        _ = try await client.getProfile()
        #expect(clock.sleeps == [.seconds(10)])

        let policy = RetryPolicy(GmailClientConfiguration(initialBackoff: .seconds(8)))
        let jittered = policy.delay(retry: 0, retryAfter: 2, unit: 0.9)
        #expect(abs(jittered.inSecondsForTests - 7.2) < 1e-9)
        #expect(policy.delay(retry: 0, retryAfter: 9, unit: 0.9) == .seconds(9))
    }

    @Test("Retry-After on a 503 is honoured too")
    func retryAfterOnServerError() async throws {
        let server = try TestHTTPServer(script: [.status(503, headers: ["Retry-After": "4"]), .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock, jitter: 0)
        _ = try await client.getProfile()
        #expect(clock.sleeps == [.seconds(4)])
    }

    @Test("no retry is scheduled past maxRetryDuration")
    func durationIsBounded() async throws {
        let server = try TestHTTPServer { _ in .status(500) }
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock, jitter: 1) {
            $0.maxAttempts = 10
            $0.initialBackoff = .seconds(4)
            $0.maxRetryDuration = .seconds(13)
        }
        #expect(await gmailError { _ = try await client.getProfile() } == .server(status: 500))
        // 4 s, then 8 s (12 s in all); a third wait of 16 s would end past 13 s.
        #expect(clock.sleeps == [.seconds(4), .seconds(8)])
        #expect(server.requests.count == 3)
    }

    @Test("a Retry-After beyond maxRetryDuration is returned to the caller at once")
    func longRetryAfterGivesUp() async throws {
        let limited = ScriptedResponse.json(429, Fixture.error(429, reason: "rateLimitExceeded"), headers: ["Retry-After": "3600"])
        let server = try TestHTTPServer(script: [limited, .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock)
        // 3600 s asked, 900 s believed (RetryPolicy.maximumRetryAfter): still past the 60 s budget.
        #expect(await gmailError { _ = try await client.getProfile() } == .rateLimited(retryAfter: 900))
        #expect(server.requests.count == 1 && clock.sleeps.isEmpty)
    }

    @Test("401 refreshes the token exactly once and retries with the new token")
    func unauthorizedRefreshesOnce() async throws {
        let server = try TestHTTPServer(script: [.json(401, Fixture.error(401, reason: "authError")), .json(200, Fixture.profile)])
        defer { server.stop() }
        let tokens = StaticAccessTokenProvider(tokens: ["ya29.old", "ya29.new"])
        let clock = ManualClock()
        let client = try makeClient(server, tokens: tokens, clock: clock)
        _ = try await client.getProfile()
        #expect(tokens.refreshCount == 1)
        #expect(server.requests.map { $0.headers["authorization"] } == ["Bearer ya29.old", "Bearer ya29.new"])
        #expect(clock.sleeps.isEmpty)
    }

    @Test("a second 401 is unauthorized after exactly one refresh and two requests")
    func secondUnauthorizedStops() async throws {
        let server = try TestHTTPServer { _ in .json(401, Fixture.error(401, reason: "authError")) }
        defer { server.stop() }
        let tokens = StaticAccessTokenProvider(tokens: ["ya29.old", "ya29.new"])
        let client = try makeClient(server, tokens: tokens)
        #expect(await gmailError { _ = try await client.getProfile() } == .unauthorized)
        #expect(tokens.refreshCount == 1)
        #expect(server.requests.count == 2)
    }

    @Test("invalid_grant from the token provider is authorizationRevoked, not retried")
    func revokedRefreshIsFinal() async throws {
        let server = try TestHTTPServer { _ in .json(401, Fixture.error(401, reason: "authError")) }
        defer { server.stop() }
        let tokens = StaticAccessTokenProvider(tokens: ["ya29.old"], refreshError: .authorizationRevoked("Token has been expired or revoked."))
        let client = try makeClient(server, tokens: tokens)
        #expect(await gmailError { _ = try await client.getProfile() } == .authorizationRevoked("Token has been expired or revoked."))
        #expect(server.requests.count == 1)
    }

    @Test("token provider errors are mapped: convertible errors keep their meaning, unknown ones are unauthorized")
    func providerErrorsAreMapped() {
        struct Revoked: GmailErrorConvertible { var gmailError: GmailError { .authorizationRevoked("invalid_grant") } }
        struct Opaque: Error {}
        #expect(GmailClient.tokenError(Revoked()) as? GmailError == .authorizationRevoked("invalid_grant"))
        #expect(GmailClient.tokenError(Opaque()) as? GmailError == .unauthorized)
        #expect(GmailClient.tokenError(GmailError.network("x")) as? GmailError == .network("x"))
        #expect(GmailClient.tokenError(CancellationError()) is CancellationError)
    }

    @Test("send is not repeated after a 5xx: the message may have gone out")
    func sendNotRetriedAfterServerError() async throws {
        let server = try TestHTTPServer(script: [.status(500), .json(200, Fixture.sentMessage)])
        defer { server.stop() }
        let client = try makeClient(server)
        #expect(await gmailError { _ = try await client.send(raw: Array("x".utf8), threadID: nil) } == .server(status: 500))
        #expect(server.requests.count == 1)
    }

    @Test("send is repeated after a 429: the server refused it")
    func sendRetriedAfterRateLimit() async throws {
        let server = try TestHTTPServer(script: [.json(429, Fixture.error(429, reason: "rateLimitExceeded")), .json(200, Fixture.sentMessage)])
        defer { server.stop() }
        let client = try makeClient(server)
        let sent = try await client.send(raw: Array("x".utf8), threadID: nil)
        #expect(sent.labelIds == ["SENT"])
        #expect(server.requests.count == 2)
    }

    @Test("a 429 shrinks what the quota bucket admits by a fifth")
    func rateLimitPenalisesQuota() async throws {
        let server = try TestHTTPServer(script: [.json(429, Fixture.error(429, reason: "rateLimitExceeded")), .json(200, Fixture.profile)])
        defer { server.stop() }
        let clock = ManualClock()
        let quota = QuotaBucket(clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota)
        _ = try await client.getProfile()
        #expect(await quota.stats().effectiveBudget == 4_800)
    }

    @Test("every attempt is charged to the client's lane before it is sent")
    func attemptsAreCharged() async throws {
        let server = try TestHTTPServer(script: [.status(503), .json(200, Fixture.profile), .json(200, Fixture.messageList)])
        defer { server.stop() }
        let clock = ManualClock()
        let quota = QuotaBucket(clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota) { $0.lane = .interactive }
        _ = try await client.getProfile()
        _ = try await client.listMessages(pageToken: nil, maxResults: 100, query: nil)
        let stats = await quota.stats()
        #expect(stats.interactiveUnits == 1 + 1 + 5)
        #expect(stats.backgroundUnits == 0)
    }

    @Test("cancellation during backoff stops the loop with CancellationError")
    func cancellationStopsRetrying() async throws {
        let server = try TestHTTPServer { _ in .status(500) }
        defer { server.stop() }
        let clock = ManualClock(autoAdvance: false)
        let client = try makeClient(server, clock: clock)
        let task = Task { try await client.getProfile() }
        #expect(await eventually { clock.pendingSleepers == 1 })
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(server.requests.count == 1)
    }
}
