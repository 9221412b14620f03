/*!
 Every row of gmail-api.md §4's error table, sent by the local test server through the real
 URLSession path and read back as a `GmailError`: envelopes with and without `errors[]` and
 `status`, 403s classified by reason (§9.10), Retry-After as seconds and as an HTTP-date,
 transport failures (refused, dropped, truncated), and bodies that are not what the method
 returns. Retries are disabled here (maxAttempts 1); RetryTests covers them.
 */

import Foundation
import Testing
@testable import HudsonGmail

struct ErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var response: ScriptedResponse
    var expected: GmailError
    var testDescription: String { name }
}

@Suite("Error mapping")
struct ErrorMappingTests {
    static let cases: [ErrorCase] = [
        ErrorCase(name: "400 badRequest carries Google's message",
                  response: .json(400, Fixture.error(400, reason: "badRequest", message: "Missing/invalid parameter: startHistoryId", status: "INVALID_ARGUMENT")),
                  expected: .badRequest(message: "Missing/invalid parameter: startHistoryId")),
        ErrorCase(name: "400 without an envelope falls back to the status",
                  response: .respond(status: 400, headers: ["Content-Type": "text/html"], body: Data("<html>bad</html>".utf8)),
                  expected: .badRequest(message: "HTTP 400")),
        ErrorCase(name: "403 insufficientPermissions is forbidden",
                  response: .json(403, Fixture.error(403, reason: "insufficientPermissions", message: "Request had insufficient authentication scopes.", status: "PERMISSION_DENIED")),
                  expected: .forbidden(reason: "insufficientPermissions")),
        ErrorCase(name: "403 domainPolicy is forbidden",
                  response: .json(403, Fixture.error(403, reason: "domainPolicy")),
                  expected: .forbidden(reason: "domainPolicy")),
        ErrorCase(name: "403 dailyLimitExceeded is forbidden",
                  response: .json(403, Fixture.error(403, reason: "dailyLimitExceeded")),
                  expected: .forbidden(reason: "dailyLimitExceeded")),
        ErrorCase(name: "403 userRateLimitExceeded is a rate limit",
                  response: .json(403, Fixture.error(403, reason: "userRateLimitExceeded", message: "User Rate Limit Exceeded")),
                  expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "403 rateLimitExceeded is a rate limit",
                  response: .json(403, Fixture.error(403, reason: "rateLimitExceeded")),
                  expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "403 without errors[] uses the canonical status",
                  response: .json(403, Fixture.bareError(403, message: "denied", status: "PERMISSION_DENIED")),
                  expected: .forbidden(reason: "PERMISSION_DENIED")),
        ErrorCase(name: "403 RESOURCE_EXHAUSTED without errors[] is a rate limit",
                  response: .json(403, Fixture.bareError(403, message: "quota", status: "RESOURCE_EXHAUSTED")),
                  expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "403 with no body at all is forbidden",
                  response: .status(403), expected: .forbidden(reason: "forbidden")),
        ErrorCase(name: "404 notFound",
                  response: .json(404, Fixture.notFound), expected: .notFound),
        ErrorCase(name: "409 is a bad request",
                  response: .json(409, Fixture.bareError(409, message: "Label name exists or conflicts", status: "ALREADY_EXISTS")),
                  expected: .badRequest(message: "Label name exists or conflicts")),
        ErrorCase(name: "429 without Retry-After",
                  response: .json(429, Fixture.error(429, reason: "rateLimitExceeded", message: "Too many concurrent requests for user", status: "RESOURCE_EXHAUSTED")),
                  expected: .rateLimited(retryAfter: nil)),
        ErrorCase(name: "429 with Retry-After seconds",
                  response: .json(429, Fixture.error(429, reason: "rateLimitExceeded"), headers: ["Retry-After": "7"]),
                  expected: .rateLimited(retryAfter: 7)),
        ErrorCase(name: "429 with Retry-After as an HTTP-date",
                  response: .json(429, Fixture.error(429, reason: "rateLimitExceeded"), headers: ["Retry-After": "Mon, 02 Dec 2024 12:00:30 GMT"]),
                  expected: .rateLimited(retryAfter: 30)),
        ErrorCase(name: "429 with the retry time inside the message",
                  response: .json(429, Fixture.error(429, reason: "rateLimitExceeded", message: "User-rate limit exceeded.  Retry after 2024-12-02T12:01:00.000Z (Mail sending)")),
                  expected: .rateLimited(retryAfter: 60)),
        ErrorCase(name: "500 backendError",
                  response: .json(500, Fixture.error(500, reason: "backendError", message: "Backend Error", status: "INTERNAL")),
                  expected: .server(status: 500)),
        ErrorCase(name: "503 with an HTML body",
                  response: .respond(status: 503, headers: ["Content-Type": "text/html"], body: Data("<h1>Unavailable</h1>".utf8)),
                  expected: .server(status: 503)),
        ErrorCase(name: "302 is not followed",
                  response: .respond(status: 302, headers: ["Location": "http://127.0.0.2:9/elsewhere"], body: Data()),
                  expected: .invalidResponse("unexpected HTTP status 302")),
        ErrorCase(name: "200 with invalid JSON",
                  response: .respond(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>proxy login</html>".utf8)),
                  expected: .invalidResponse("body is not valid JSON")),
        ErrorCase(name: "200 with JSON of the wrong shape",
                  response: .json(200, #"{"emailAddress": 42}"#),
                  expected: .invalidResponse("field emailAddress has the wrong type")),
        ErrorCase(name: "200 with an empty body",
                  response: .status(200), expected: .invalidResponse("empty body where JSON was expected")),
        ErrorCase(name: "200 with a body cut short but a complete Content-Length",
                  response: .json(200, #"{"emailAddress": "ann@exa"#),
                  expected: .invalidResponse("body is not valid JSON")),
        ErrorCase(name: "connection dropped before any response",
                  response: .drop, expected: .network("connection closed without a valid HTTP response")),
        ErrorCase(name: "body shorter than its Content-Length",
                  response: .truncated(status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"emailAddress": "a"#.utf8), declaredLength: 400),
                  expected: .network("connection closed before the response body was complete")),
    ]

    /// 12:00:00 UTC on 2 Dec 2024, the manual clock's epoch, is what Retry-After dates count from.
    static let epoch = Date(timeIntervalSince1970: 1_733_140_800)

    @Test("each failure maps to its GmailError", arguments: cases)
    func mapsFailure(_ errorCase: ErrorCase) async throws {
        let server = try TestHTTPServer(script: [errorCase.response])
        defer { server.stop() }
        let client = try makeClient(server, clock: ManualClock(epoch: Self.epoch)) { $0.maxAttempts = 1 }
        let error = await gmailError { _ = try await client.getProfile() }
        #expect(error == errorCase.expected)
        #expect(server.requests.count == 1)
    }

    @Test("401 after the one refresh is unauthorized")
    func secondUnauthorizedIsUnauthorized() async throws {
        let body = Fixture.error(401, reason: "authError", message: "Invalid Credentials", status: "UNAUTHENTICATED")
        let server = try TestHTTPServer(script: [.json(401, body), .json(401, body)])
        defer { server.stop() }
        let client = try makeClient(server) { $0.maxAttempts = 1 }
        #expect(await gmailError { _ = try await client.getProfile() } == .unauthorized)
    }

    @Test("a refused connection is a network error")
    func refusedConnectionIsNetwork() async throws {
        let server = try TestHTTPServer(script: [])
        server.stop()
        let client = try makeClient(server) { $0.maxAttempts = 1 }
        #expect(await gmailError { _ = try await client.getProfile() } == .network("connection refused"))
    }

    @Test("retryability: 429, rate-limit 403, 5xx and network only")
    func retryability() {
        let retryable: [GmailError] = [.rateLimited(retryAfter: nil), .rateLimited(retryAfter: 3), .server(status: 500), .server(status: 503), .network("x")]
        let final: [GmailError] = [.notFound, .unauthorized, .authorizationRevoked("x"), .forbidden(reason: "insufficientPermissions"),
                                   .forbidden(reason: "dailyLimitExceeded"), .badRequest(message: "x"), .invalidResponse("x"), .cancelled]
        #expect(retryable.allSatisfy { $0.isRetryable })
        #expect(!final.contains { $0.isRetryable })
    }

    @Test("account-wide: a refused token and every 403 that is not a rate limit, batched or not; refusals: 400 and 404 of the request itself")
    func accountWideAndRefusal() {
        let accountWide: [GmailError] = [.unauthorized, .authorizationRevoked("invalid_grant"), .forbidden(reason: "insufficientPermissions"),
                                         .forbidden(reason: "domainPolicy"), .forbidden(reason: "dailyLimitExceeded"),
                                         .forbidden(reason: "forbidden"), .batchFailed(.unauthorized),
                                         .batchFailed(.forbidden(reason: "domainPolicy"))]
        let others: [GmailError] = [.notFound, .rateLimited(retryAfter: nil), .server(status: 503), .badRequest(message: "x"),
                                    .network("x"), .invalidResponse("x"), .cancelled, .batchFailed(.server(status: 500)),
                                    .batchFailed(.badRequest(message: "x"))]
        #expect(accountWide.allSatisfy { $0.isAccountWide })
        #expect(!others.contains { $0.isAccountWide })
        let refusals: [GmailError] = [.badRequest(message: "Invalid label"), .notFound]
        #expect(refusals.allSatisfy { $0.isRefusal })
        // A batch that failed as a whole refused none of its items.
        let notRefusals = accountWide + [.rateLimited(retryAfter: 2), .server(status: 500), .network("x"), .invalidResponse("x"),
                                         .cancelled, .batchFailed(.badRequest(message: "x")), .batchFailed(.notFound)]
        #expect(!notRefusals.contains { $0.isRefusal })
    }

    @Test("authorizationRevoked tells the user to log in again and mentions the 7-day Testing expiry")
    func revokedDescription() {
        let text = GmailError.authorizationRevoked("Token has been expired or revoked.").description
        #expect(text.contains("hd-auth login"))
        #expect(text.contains("7 days"))
        #expect(text.contains("Testing"))
    }

    @Test("no access token appears in any error description, even when the server echoes it")
    func noTokenInDescriptions() async throws {
        let token = "ya29.a0AfB_secret-token-value"
        let echoes: [ScriptedResponse] = [
            .json(400, Fixture.error(400, reason: "badRequest", message: "bad header Authorization: Bearer \(token)")),
            .json(403, Fixture.error(403, reason: token)),
            .json(409, Fixture.bareError(409, message: "token \(token) conflicts", status: "ALREADY_EXISTS")),
            .json(401, Fixture.error(401, reason: "authError", message: token)),
        ]
        for echo in echoes {
            let server = try TestHTTPServer(script: [echo, echo])
            defer { server.stop() }
            let client = try makeClient(server, tokens: StaticAccessTokenProvider(token: token)) { $0.maxAttempts = 1 }
            let error = try #require(await gmailError { _ = try await client.getProfile() })
            #expect(!error.description.contains("secret-token-value"), "\(error)")
            #expect(!String(reflecting: error).contains("secret-token-value"), "\(error)")
        }
        let all: [GmailError] = [.notFound, .unauthorized, .authorizationRevoked("invalid_grant"), .forbidden(reason: "domainPolicy"),
                                 .rateLimited(retryAfter: 1.5), .server(status: 502), .badRequest(message: "m"), .network("n"),
                                 .invalidResponse("i"), .cancelled]
        #expect(all.allSatisfy { !$0.description.isEmpty && !$0.description.contains("\n") })
    }

    @Test("server text is scrubbed: control characters go, length is capped")
    func scrubbing() {
        let long = String(repeating: "x", count: 500)
        #expect(ErrorClassifier.scrub("a\u{1B}[31mb\nc", secret: nil) == "a [31mb c")
        #expect(ErrorClassifier.scrub(long, secret: nil).count == 201)
        #expect(ErrorClassifier.scrub("key=SECRET;", secret: "SECRET") == "key=[redacted];")
    }
}
