// What a token endpoint or Gmail may make Hudson do (issue 18): a broken token answer is
// temporary, not a revoked grant; an answer or a token past its bound is refused before it
// is kept; a token request has a deadline even when the server trickles bytes; a
// Retry-After is believed up to 15 minutes. docs/reliability.md gives the reasons.
import Foundation
import Glibc
import Synchronization
@testable import HudsonGmail
import Testing

@Suite("Server bounds: token answers, token request deadline, Retry-After cap")
struct ServerBoundsUnitTests {
    static let modify = "https://www.googleapis.com/auth/gmail.modify"

    private func client(_ server: OAuthTestHTTPServer, timeout: TimeInterval = 30) throws -> OAuthTokenClient {
        try OAuthTokenClient(clientID: "client-1.apps", clientSecret: "GOCSPX-topsecret",
                             tokenEndpoint: server.url("/token"), requestTimeout: timeout)
    }

    @Test("a 200 token answer that is not JSON, a list, or has an access_token of the wrong type reaches the Gmail client as a network failure, not a revoked grant",
          arguments: ["ok", "[1, 2]", #"{"access_token": 12345, "expires_in": "soon", "token_type": "Bearer"}"#])
    func brokenAnswerIsTemporary(_ body: String) async throws {
        let tokenServer = try OAuthTestHTTPServer { _ in OAuthTestResponse(status: 200, headers: [("Content-Type", "application/json")], body: body) }
        defer { tokenServer.stop() }
        let gmail = try TestHTTPServer(script: [])
        let provider = OAuthTokenProvider(client: try client(tokenServer), refreshToken: "1//refresh")
        let api = try makeClient(gmail, tokens: provider) { $0.maxAttempts = 1 }
        let error = await gmailError { _ = try await api.getProfile() }
        guard case .network(let detail)? = error else {
            Issue.record("expected a network failure, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("token endpoint"), "\(detail)")
        #expect(!detail.contains("hd-auth login"))
    }

    @Test("an answer longer than 64 KiB is refused before it is read")
    func oversizedAnswer() async throws {
        let huge = "ya29." + String(repeating: "y", count: 100_000)
        let server = try OAuthTestHTTPServer { _ in
            .json(200, ["access_token": huge, "expires_in": 3599, "scope": Self.modify, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let error = await #expect(throws: OAuthTokenError.self) { try await client(server).refresh(refreshToken: "1//refresh") }
        guard case .oversized(let detail)? = error else {
            Issue.record("expected .oversized, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("65536"))
        #expect(error?.kind == .unexpected)
        // What the Gmail client makes of it: temporary, not "log in again".
        #expect(error?.gmailError.isRetryable == true)
    }

    @Test("an access token or refresh token longer than 8 KiB in a small answer is refused, naming the field, never the value")
    func overlongTokens() async throws {
        let long = String(repeating: "t", count: OAuthTokenClient.maximumTokenLength + 1)
        let server = try OAuthTestHTTPServer { request in
            if request.form["grant_type"] == "authorization_code" {
                return .json(200, ["access_token": "ya29.ok", "refresh_token": long, "expires_in": 3599, "scope": Self.modify])
            }
            return .json(200, ["access_token": long, "expires_in": 3599, "scope": Self.modify, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let c = try client(server)
        for operation in ["refresh", "exchange"] {
            let error = await #expect(throws: OAuthTokenError.self) {
                if operation == "refresh" {
                    _ = try await c.refresh(refreshToken: "1//refresh")
                } else {
                    _ = try await c.exchange(code: "4/code", verifier: "v", redirectURI: "http://127.0.0.1:1")
                }
            }
            guard case .oversized(let detail)? = error else {
                Issue.record("\(operation): expected .oversized, got \(String(describing: error))")
                continue
            }
            #expect(detail.contains(operation == "refresh" ? "access_token" : "refresh_token"), "\(detail)")
            #expect(!(error?.description.contains(long) ?? true))
        }
        // At the bound it is accepted.
        let fitting = String(repeating: "t", count: OAuthTokenClient.maximumTokenLength)
        let ok = try OAuthTestHTTPServer { _ in .json(200, ["access_token": fitting, "expires_in": 3599, "scope": Self.modify]) }
        defer { ok.stop() }
        #expect(try await client(ok).refresh(refreshToken: "1//refresh").value == fitting)
    }

    @Test("a token endpoint that trickles its answer a byte at a time is given up on at the request timeout")
    func trickleHasADeadline() async throws {
        let trickle = try TrickleServer()
        defer { trickle.stop() }
        let c = try OAuthTokenClient(clientID: "c", clientSecret: "s", tokenEndpoint: URL(string: "http://127.0.0.1:\(trickle.port)/token")!,
                                     requestTimeout: 1)
        let error = await #expect(throws: OAuthTransientError.self) { try await c.refresh(refreshToken: "r") }
        #expect(error?.reason.contains("within 1 s") == true, "\(String(describing: error))")
        // Timed on the server's thread, by when the client hung up: under a parallel `swift test`
        // the awaiting task may run again much later than the deadline fired (docs/reliability.md).
        let hungUp = await trickle.hangUp()
        #expect(hungUp.map { $0 < 10 } == true, "the client hung up after \(hungUp.map { "\($0) s" } ?? "the whole answer (74 s)")")
    }

    @Test("Retry-After is believed up to 15 minutes: delta-seconds, an HTTP-date and a sending-limit message alike; the cut is said")
    func retryAfterCap() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let cutsBefore = RetryAfterCap.timesApplied
        #expect(ErrorClassifier.retryAfter(header: "86400", now: now) == 900)
        #expect(ErrorClassifier.retryAfter(header: "120", now: now) == 120)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(ErrorClassifier.retryAfter(header: formatter.string(from: now.addingTimeInterval(86_400)), now: now) == 900)
        #expect(ErrorClassifier.retryAfter(inMessage: "Retry after 2027-01-16T08:00:00.000Z", now: now) == 900)
        #expect(RetryAfterCap.timesApplied >= cutsBefore + 3)
        #expect(RetryAfterCap.seconds == 900)

        let failure = ErrorClassifier.classify(status: 429, headers: HTTPHeaders([("Retry-After", "86400")]), body: Data(), now: now, secret: nil)
        #expect(failure.error == .rateLimited(retryAfter: 900) && failure.retryAfter == 900)
        #expect(failure.error.description.contains("Hudson waits at most 900 s"), "\(failure.error)")
        #expect(!GmailError.rateLimited(retryAfter: 120).description.contains("at most"))

        let policy = RetryPolicy(GmailClientConfiguration(maxRetryDuration: .seconds(3600)))
        #expect(policy.delay(retry: 0, retryAfter: 86_400, unit: 0.5) == .seconds(900))
    }
}

/// Accepts one connection, reads the request, and sends a valid-looking answer one byte every
/// 200 ms: each byte resets an idle timeout, so only a deadline ends it.
final class TrickleServer: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32
    private let stopped = Mutex<Bool>(false)
    private let done = Mutex<Bool>(false)
    /// Seconds from the request to the first send the client no longer took; nil while it takes them all.
    private let hungUpAfter = Mutex<TimeInterval?>(nil)

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = self.fd
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Int32 in
                guard bind(fd, generic, length) == 0, listen(fd, 4) == 0 else { return -1 }
                return getsockname(fd, generic, &length)
            }
        }
        guard result == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in
            defer { close(fd); done.withLock { $0 = true } }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while !stopped.withLock({ $0 }) && poll(&poller, 1, 50) <= 0 {}
            guard !stopped.withLock({ $0 }) else { return }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            let requested = Date()
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"access_token\": \"".utf8)
                + Array(repeating: UInt8(ascii: "a"), count: 300)
            for byte in answer {
                if stopped.withLock({ $0 }) { return }
                guard [byte].withUnsafeBytes({ send(connection, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }) == 1 else {
                    hungUpAfter.withLock { $0 = Date().timeIntervalSince(requested) }
                    return
                }
                usleep(200_000)
            }
        }.start()
    }

    /// When the client hung up, waiting for its hang-up up to the whole answer's length.
    func hangUp() async -> TimeInterval? {
        for _ in 0..<800 where hungUpAfter.withLock({ $0 }) == nil && !done.withLock({ $0 }) {
            try? await Task.sleep(for: .milliseconds(100))
        }
        return hungUpAfter.withLock { $0 }
    }

    func stop() {
        stopped.withLock { $0 = true }
        while !done.withLock({ $0 }) { usleep(5_000) }
    }
}
