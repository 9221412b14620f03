// The loopback redirect listener (gmail-api.md §7 steps 3 and 5), end to end over real sockets: the test
// plays the browser with URLSession or, for misbehaving clients, a raw socket.
import Foundation
@testable import HudsonGmail
import Testing

@Suite("Loopback redirect listener")
struct LoopbackRedirectListenerTests {
    /// Runs `browser` while the listener waits, and returns the wait's result and the browser's.
    private func run<T: Sendable>(_ listener: LoopbackRedirectListener, state: String = "expected-state",
                                  timeout: Duration = .seconds(10),
                                  browser: @escaping @Sendable () async throws -> T) async -> (Result<String, Error>, T?) {
        async let code = oauthTestResult { try await listener.waitForRedirect(expectedState: state, timeout: timeout) }
        let seen = try? await browser()
        return (await code, seen)
    }

    @Test("binds 127.0.0.1 on a kernel-chosen port and names it in the redirect URI")
    func redirectURI() throws {
        let a = try LoopbackRedirectListener()
        let b = try LoopbackRedirectListener()
        #expect(a.port != 0 && b.port != 0 && a.port != b.port)
        #expect(a.redirectURI == "http://127.0.0.1:\(a.port)")
        #expect(try LoopbackRedirectListener(path: "/callback").redirectURI.hasSuffix("/callback"))
    }

    @Test("a redirect with the right state returns the code and shows the 'authorised' page")
    func success() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?state=expected-state&code=4%2F0AX-code&scope=x")!
        let (result, page) = await run(listener) { try await oauthTestBrowserGET(url) }
        #expect(try result.get() == "4/0AX-code")
        #expect(page?.status == 200)
        #expect(page?.body.contains("Hudson is authorised; you can close this tab.") == true)
        #expect(page?.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page?.headers["referrer-policy"] == "no-referrer")
        #expect(page?.headers["cache-control"] == "no-store")
        #expect(page?.body.contains("0AX-code") == false)
    }

    @Test("a redirect with another state is refused, and the page says so")
    func stateMismatch() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?state=forged&code=c")!
        let (result, page) = await run(listener) { try await oauthTestBrowserGET(url) }
        #expect(throws: LoopbackRedirectError.stateMismatch) { try result.get() }
        #expect(page?.status == 400)
        #expect(page?.body.contains("state mismatch") == true)
    }

    @Test("error=access_denied is its own error, checked only after the state")
    func accessDenied() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?error=access_denied&state=expected-state")!
        let (result, page) = await run(listener) { try await oauthTestBrowserGET(url) }
        #expect(throws: LoopbackRedirectError.accessDenied) { try result.get() }
        #expect(page?.body.contains("declined") == true)

        let other = try LoopbackRedirectListener()
        let forged = URL(string: other.redirectURI + "/?error=access_denied&state=wrong")!
        let (otherResult, _) = await run(other) { try await oauthTestBrowserGET(forged) }
        #expect(throws: LoopbackRedirectError.stateMismatch) { try otherResult.get() }
    }

    @Test("another error value is reported sanitised, never echoing markup")
    func otherError() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?error=%3Cscript%3Eserver_error&state=expected-state")!
        let (result, page) = await run(listener) { try await oauthTestBrowserGET(url) }
        #expect(throws: LoopbackRedirectError.authorisationFailed(error: "scriptserver_error")) { try result.get() }
        #expect(page?.body.contains("<script>") == false)
    }

    @Test("/favicon.ico gets a 404 and the listener keeps waiting for the redirect")
    func faviconIgnored() async throws {
        let listener = try LoopbackRedirectListener()
        let base = listener.redirectURI
        let (result, statuses) = await run(listener) { () async throws -> [Int] in
            let favicon = try await oauthTestBrowserGET(URL(string: base + "/favicon.ico")!)
            let bare = try await oauthTestBrowserGET(URL(string: base + "/")!)
            let redirect = try await oauthTestBrowserGET(URL(string: base + "/?state=expected-state&code=abc")!)
            return [favicon.status, bare.status, redirect.status]
        }
        #expect(try result.get() == "abc")
        #expect(statuses == [404, 400, 200])
    }

    @Test("idle or half-sent connections (browser preconnects) do not delay the real redirect")
    func idleConnectionsDoNotBlock() async throws {
        let listener = try LoopbackRedirectListener(connectionTimeout: .seconds(30))
        let port = listener.port
        let started = ContinuousClock.now
        let (result, status) = await run(listener) { () async throws -> Int in
            let silent = OAuthTestRawClient(port: port)
            let partial = OAuthTestRawClient(port: port)
            partial?.send("GET /?state=expected-state&co")
            defer { _ = (silent, partial) }
            return try await oauthTestBrowserGET(URL(string: "http://127.0.0.1:\(port)/?state=expected-state&code=late")!).status
        }
        #expect(try result.get() == "late")
        #expect(status == 200)
        // Well under the 30 s an idle connection could hold it (generous: CI machines are busy).
        #expect(ContinuousClock.now - started < .seconds(25))
    }

    @Test("a client that sends no complete request in time is dropped; junk gets 400; the wait goes on")
    func perConnectionTimeout() async throws {
        // Long enough that a busy machine still reads the junk request before dropping it.
        let listener = try LoopbackRedirectListener(connectionTimeout: .seconds(2))
        let port = listener.port
        let (result, answers) = await run(listener) { () async throws -> [String] in
            let silent = OAuthTestRawClient(port: port)
            let junk = OAuthTestRawClient(port: port)
            junk?.send("hello\r\n\r\n")
            let silentAnswer = silent?.readAll() ?? "refused"  // returns when the listener closes it
            let junkAnswer = junk?.readAll() ?? "refused"
            let redirect = try await oauthTestBrowserGET(URL(string: "http://127.0.0.1:\(port)/?state=expected-state&code=c")!)
            return [silentAnswer, String(junkAnswer.prefix(12)), String(redirect.status)]
        }
        #expect(try result.get() == "c")
        #expect(answers == ["", "HTTP/1.1 400", "200"])
    }

    @Test("no redirect within the timeout is an error")
    func timeout() async throws {
        let listener = try LoopbackRedirectListener()
        let started = ContinuousClock.now
        await #expect(throws: LoopbackRedirectError.timedOut(seconds: 0)) {
            try await listener.waitForRedirect(expectedState: "s", timeout: .milliseconds(200))
        }
        #expect(ContinuousClock.now - started < .seconds(30))  // ends, rather than waiting forever
    }

    @Test("cancelling the waiting task ends the wait promptly")
    func cancellation() async throws {
        let listener = try LoopbackRedirectListener()
        let task = Task { try await listener.waitForRedirect(expectedState: "s", timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("the socket is closed once the wait ends, on success and on error, and a listener serves once")
    func closedAfterwards() async throws {
        let listener = try LoopbackRedirectListener()
        let port = listener.port
        let url = URL(string: listener.redirectURI + "/?state=expected-state&code=abc")!
        _ = await run(listener) { try await oauthTestBrowserGET(url) }
        #expect(OAuthTestRawClient(port: port) == nil)
        await #expect(throws: LoopbackRedirectError.alreadyUsed) {
            try await listener.waitForRedirect(expectedState: "s", timeout: .seconds(1))
        }

        let failing = try LoopbackRedirectListener()
        let failingPort = failing.port
        _ = try? await failing.waitForRedirect(expectedState: "s", timeout: .milliseconds(50))
        #expect(OAuthTestRawClient(port: failingPort) == nil)
    }

    @Test("request parsing: only GET on the redirect path is a redirect; percent and plus decoding")
    func parsing() {
        let parse = { (line: String) in LoopbackRedirectHTTP.parse(head: Array((line + "\r\n\r\n").utf8), expectedPath: "/") }
        #expect(parse("GET /?code=a%2Fb+c&state=s HTTP/1.1") == .redirect(["code": "a/b c", "state": "s"]))
        #expect(parse("GET http://127.0.0.1:5/?code=x HTTP/1.1") == .redirect(["code": "x"]))
        #expect(parse("GET /favicon.ico HTTP/1.1") == .other)
        #expect(parse("POST /?code=x HTTP/1.1") == .other)
        #expect(parse("GET /?code=%zz HTTP/1.1") == .malformed)
        #expect(parse("nonsense") == .malformed)
        #expect(LoopbackRedirectHTTP.hasCompleteHead(Array("GET / HTTP/1.1\nHost: x\n\n".utf8)))
        #expect(!LoopbackRedirectHTTP.hasCompleteHead(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)))
    }
}
