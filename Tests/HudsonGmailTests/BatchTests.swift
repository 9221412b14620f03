/*!
 Many gets through the batch endpoint (gmail-api.md §1 "Batch endpoint", §3, §9.6, §9.12):
 the request encoding, parsing of responses whose parts arrive out of order, per-id results
 (404 → `.notFound`), retrying only the failed retryable sub-requests, retrying a failed
 batch as a whole, chunking by batchSize, the in-flight bound, per-sub-request quota, and the
 one token refresh that serves every sub-request.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Batch")
struct BatchTests {
    @Test("the codec writes application/http parts with Content-IDs and path-only GETs")
    func encodeBatch() {
        let body = BatchCodec.encode([
            .init(contentID: "item-0", target: "/gmail/v1/users/me/messages/a?format=minimal&prettyPrint=false"),
            .init(contentID: "item-1", target: "/gmail/v1/users/me/messages/b?format=minimal&prettyPrint=false"),
        ], boundary: "batch_X")
        #expect(String(decoding: body, as: UTF8.self) == """
            --batch_X\r
            Content-Type: application/http\r
            Content-ID: <item-0>\r
            \r
            GET /gmail/v1/users/me/messages/a?format=minimal&prettyPrint=false HTTP/1.1\r
            \r
            --batch_X\r
            Content-Type: application/http\r
            Content-ID: <item-1>\r
            \r
            GET /gmail/v1/users/me/messages/b?format=minimal&prettyPrint=false HTTP/1.1\r
            \r
            --batch_X--\r

            """)
    }

    @Test("the codec pairs parts by Content-ID, accepts LF line ends, quoted boundaries and Content-Length")
    func decodeBatch() {
        #expect(BatchCodec.boundary(fromContentType: #"multipart/mixed; charset=utf-8; boundary="batch_q""#) == "batch_q")
        #expect(BatchCodec.boundary(fromContentType: "application/json") == nil)
        let text = """
            --b
            Content-Type: application/http
            Content-ID: <response-item-7>

            HTTP/1.1 404 Not Found
            Content-Type: application/json

            {"error": {"code": 404}}
            --b
            Content-Type: application/http

            HTTP/1.1 200 OK

            {"id": "no content id"}
            --b
            Content-Type: application/http
            Content-ID: <response-item-2>

            HTTP/1.1 200 OK
            Content-Length: 11

            {"id": "x"}trailing junk
            --b--
            """
        let parts = BatchCodec.decode(Data(text.utf8), boundary: "b")
        #expect(Set(parts.keys) == ["item-7", "item-2"])
        #expect(parts["item-7"]?.status == 404)
        #expect(String(decoding: parts["item-7"]!.body, as: UTF8.self) == #"{"error": {"code": 404}}"#)
        #expect(String(decoding: parts["item-2"]!.body, as: UTF8.self) == #"{"id": "x"}"#)
        #expect(BatchCodec.decode(Data("garbage".utf8), boundary: "b").isEmpty)
    }

    @Test("getMessages posts one multipart batch and reads out-of-order parts by Content-ID")
    func outOfOrderParts() async throws {
        let server = try TestHTTPServer { request in
            let parts = BatchScript.parts(of: request)
            return BatchScript.response(parts.reversed().map { ($0.contentID, 200, BatchScript.message($0.messageID)) })
        }
        defer { server.stop() }
        let client = try makeClient(server)
        let results = await client.getMessages(ids: ["a1", "b2", "c3", "a1"], format: "minimal")
        #expect(results.count == 3)
        for id in ["a1", "b2", "c3"] {
            #expect(try results[id]?.get().threadId == "t-\(id)")
        }
        let request = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(request.method == "POST" && request.target == "/batch/gmail/v1")
        #expect(request.headers["content-type"]?.hasPrefix("multipart/mixed; boundary=") == true)
        #expect(request.headers["authorization"] == "Bearer ya29.first-token")
        #expect(BatchScript.parts(of: request) == [
            BatchPartRequest(contentID: "<item-0>", requestLine: "GET /gmail/v1/users/me/messages/a1?format=minimal&prettyPrint=false HTTP/1.1"),
            BatchPartRequest(contentID: "<item-1>", requestLine: "GET /gmail/v1/users/me/messages/b2?format=minimal&prettyPrint=false HTTP/1.1"),
            BatchPartRequest(contentID: "<item-2>", requestLine: "GET /gmail/v1/users/me/messages/c3?format=minimal&prettyPrint=false HTTP/1.1"),
        ])
    }

    @Test("§9.6: only the failed retryable sub-request is sent again; a 404 part is notFound for that id")
    func failedPartRetriedAlone() async throws {
        let server = try TestHTTPServer(handler: { request in
            let parts = BatchScript.parts(of: request)
            return BatchScript.response(parts.map { part in
                switch (part.messageID, parts.count) {
                case ("b2", 3): return (part.contentID, 429, Fixture.error(429, reason: "rateLimitExceeded"))
                case ("c3", _): return (part.contentID, 404, Fixture.notFound)
                default: return (part.contentID, 200, BatchScript.message(part.messageID))
                }
            })
        })
        defer { server.stop() }
        let clock = ManualClock()
        let quota = QuotaBucket(clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota)
        let results = await client.getMessages(ids: ["a1", "b2", "c3"], format: "full")
        #expect(try results["a1"]?.get().id == "a1")
        #expect(try results["b2"]?.get().id == "b2")
        #expect(results["c3"].map { if case .failure(.notFound) = $0 { true } else { false } } == true)
        #expect(server.requests.map { BatchScript.parts(of: $0).map(\.messageID) } == [["a1", "b2", "c3"], ["b2"]])
        #expect(server.requests[1].headers["content-type"] != server.requests[0].headers["content-type"])
        #expect(clock.sleeps.count == 1)
        let stats = await quota.stats()
        #expect(stats.backgroundUnits == 4 * GmailMethod.messagesGet.units)
        #expect(stats.effectiveBudget == 4_800)
    }

    @Test("a sub-request failing with 5xx every time ends with its error after maxAttempts")
    func persistentPartFailure() async throws {
        let server = try TestHTTPServer { request in
            BatchScript.response(BatchScript.parts(of: request).map { part in
                part.messageID == "bad" ? (part.contentID, 503, "") : (part.contentID, 200, BatchScript.message(part.messageID))
            })
        }
        defer { server.stop() }
        let clock = ManualClock()
        let client = try makeClient(server, clock: clock) { $0.maxAttempts = 3 }
        let results = await client.getMessages(ids: ["ok", "bad"], format: "minimal")
        #expect(try results["ok"]?.get().id == "ok")
        #expect(results["bad"].map { if case .failure(.server(status: 503)) = $0 { true } else { false } } == true)
        #expect(server.requests.count == 3)
        #expect(clock.sleeps.count == 2)
    }

    @Test("a non-retryable sub-response is not sent again")
    func finalPartNotRetried() async throws {
        let server = try TestHTTPServer { request in
            BatchScript.response(BatchScript.parts(of: request).map { ($0.contentID, 400, Fixture.error(400, reason: "badRequest", message: "Invalid id")) })
        }
        defer { server.stop() }
        let client = try makeClient(server)
        let results = await client.getMessages(ids: ["x"], format: "minimal")
        #expect(results["x"].map { if case .failure(.badRequest("Invalid id")) = $0 { true } else { false } } == true)
        #expect(server.requests.count == 1)
    }

    @Test("a sub-response echoing the access token does not leak it into the error")
    func partErrorsAreScrubbed() async throws {
        let server = try TestHTTPServer { request in
            BatchScript.response(BatchScript.parts(of: request).map {
                ($0.contentID, 400, Fixture.error(400, reason: "badRequest", message: "bad token plain-secret-123"))
            })
        }
        defer { server.stop() }
        let client = try makeClient(server, tokens: StaticAccessTokenProvider(token: "plain-secret-123"))
        let results = await client.getMessages(ids: ["x"], format: "minimal")
        guard case .failure(let error) = try #require(results["x"]) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error == .badRequest(message: "bad token [redacted]"))
    }

    @Test("a batch that fails as a whole with a retryable error is retried as a whole")
    func wholeBatchRetried() async throws {
        let count = Locked(0)
        let server = try TestHTTPServer { request in
            if count.withLock({ $0 += 1; return $0 }) == 1 { return .status(503) }
            return BatchScript.response(BatchScript.parts(of: request).map { ($0.contentID, 200, BatchScript.message($0.messageID)) })
        }
        defer { server.stop() }
        let client = try makeClient(server)
        let results = await client.getMessages(ids: ["a", "b"], format: "minimal")
        #expect(results.values.allSatisfy { (try? $0.get()) != nil })
        #expect(server.requests.map { BatchScript.parts(of: $0).map(\.messageID) } == [["a", "b"], ["a", "b"]])
    }

    @Test("a part missing from the response is sent again")
    func missingPartRetried() async throws {
        let server = try TestHTTPServer { request in
            let parts = BatchScript.parts(of: request)
            return BatchScript.response(parts.dropFirst(parts.count > 1 ? 1 : 0).map { ($0.contentID, 200, BatchScript.message($0.messageID)) })
        }
        defer { server.stop() }
        let client = try makeClient(server)
        let results = await client.getMessages(ids: ["a", "b"], format: "minimal")
        #expect(try results["a"]?.get().id == "a" && results["b"]?.get().id == "b")
        #expect(server.requests.map { BatchScript.parts(of: $0).map(\.messageID) } == [["a", "b"], ["a"]])
    }

    @Test("a response that is not multipart fails every id with invalidResponse, marked as the batch's failure, not the ids'")
    func nonMultipartResponse() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.profile)])
        defer { server.stop() }
        let client = try makeClient(server)
        let results = await client.getMessages(ids: ["a", "b"], format: "minimal")
        #expect(results.count == 2)
        #expect(results.values.allSatisfy { if case .failure(.batchFailed(.invalidResponse)) = $0 { true } else { false } })
    }

    @Test("ids are split into batches of batchSize, each charged 5 units per sub-request")
    func chunking() async throws {
        let server = try TestHTTPServer { request in
            BatchScript.response(BatchScript.parts(of: request).map { ($0.contentID, 200, BatchScript.message($0.messageID)) })
        }
        defer { server.stop() }
        let clock = ManualClock()
        let quota = QuotaBucket(clock: clock.scheduling)
        let client = try makeClient(server, clock: clock, quota: quota)
        let ids = (0..<60).map { "m\($0)" }
        let results = await client.getMessages(ids: ids, format: "metadata")
        #expect(results.count == 60 && results.values.allSatisfy { (try? $0.get()) != nil })
        #expect(server.requests.map { BatchScript.parts(of: $0).count }.sorted() == [10, 25, 25])
        #expect(await quota.stats().backgroundUnits == 300)
        let line = try #require(BatchScript.parts(of: server.requests[0]).first?.requestLine)
        #expect(line.contains("format=metadata&metadataHeaders=Subject&metadataHeaders=From&"))
    }

    @Test("at most maxConcurrentRequests batches are in flight")
    func concurrencyBound() async throws {
        final class Flight: @unchecked Sendable {
            let condition = NSCondition()
            var current = 0, peak = 0, done = 0
            var gaveUp = false
        }
        let flight = Flight()
        let total = 8, limit = 2
        let server = try TestHTTPServer { request in
            flight.condition.lock()
            flight.current += 1
            flight.peak = max(flight.peak, flight.current)
            flight.condition.broadcast()
            // Hold each batch until `limit` are in flight (or all that remain), so a client
            // that ignored the bound would pile up more than `limit` here. The client's batches
            // start as tasks, which parallel suites can keep waiting for a minute: the deadline
            // is only there so that a client sending fewer than `limit` at once ends the wait
            // (once; then peak < limit fails the test) instead of hanging the suite.
            let deadline = Date().addingTimeInterval(300)
            while !flight.gaveUp, flight.current < min(limit, total - flight.done) {
                if !flight.condition.wait(until: deadline) { flight.gaveUp = true }
            }
            flight.current -= 1
            flight.done += 1
            flight.condition.broadcast()
            flight.condition.unlock()
            return BatchScript.response(BatchScript.parts(of: request).map { ($0.contentID, 200, BatchScript.message($0.messageID)) })
        }
        defer { server.stop() }
        let client = try makeClient(server) {
            $0.batchSize = 1
            $0.maxConcurrentRequests = limit
        }
        let results = await client.getMessages(ids: (0..<total).map { "m\($0)" }, format: "minimal")
        #expect(results.count == total)
        #expect(flight.condition.withLock { flight.peak } == limit)
    }

    @Test("sub-responses of 401 trigger one refresh; the retry carries the new token")
    func partUnauthorizedRefreshes() async throws {
        let server = try TestHTTPServer { request in
            let fresh = request.headers["authorization"] == "Bearer ya29.second-token"
            return BatchScript.response(BatchScript.parts(of: request).map {
                fresh ? ($0.contentID, 200, BatchScript.message($0.messageID)) : ($0.contentID, 401, Fixture.error(401, reason: "authError"))
            })
        }
        defer { server.stop() }
        let tokens = StaticAccessTokenProvider(tokens: ["ya29.first-token", "ya29.second-token"])
        let clock = ManualClock()
        let client = try makeClient(server, tokens: tokens, clock: clock)
        let results = await client.getMessages(ids: ["a", "b"], format: "minimal")
        #expect(results.values.allSatisfy { (try? $0.get()) != nil })
        #expect(tokens.refreshCount == 1)
        #expect(server.requests.count == 2 && clock.sleeps.isEmpty)
    }

    @Test("no ids make no request; an unknown format fails every id without a request")
    func trivialInputs() async throws {
        let server = try TestHTTPServer(script: [])
        defer { server.stop() }
        let client = try makeClient(server)
        #expect(await client.getMessages(ids: [], format: "full").isEmpty)
        let results = await client.getMessages(ids: ["a"], format: "html")
        #expect(results["a"].map { if case .failure(.badRequest) = $0 { true } else { false } } == true)
        #expect(server.requests.isEmpty)
    }
}
