// The loopback redirect listener (gmail-api.md §7 steps 3 and 5), end to end over real sockets: the test
// plays the browser with URLSession or, for misbehaving clients, a raw socket.
//
// `swift test` runs every suite at once on the cooperative pool, which on a two-core machine has two
// threads, mostly held by suites that wait for processes. A task that awaits may then run again only a
// minute or more later. So nothing here is timed by when the test's task runs: the listener serves on its
// own thread from `start`, the browser plays on its own thread (`oauthTestOffPool`), and durations are
// taken on those threads (`LoopbackRedirectWait.settledAt`, the browser's own clock).
import Foundation
@testable import HudsonGmail
import Testing

@Suite("Loopback redirect listener")
struct LoopbackRedirectListenerTests {
    /// Starts the listener's wait, runs `browser` on a thread of its own meanwhile, and returns the wait's
    /// result and the browser's. The timeout only ends a wait that would never end: each exchange takes
    /// milliseconds, but a machine busy with builds and parallel suites may take seconds to run a thread.
    private func run<T: Sendable>(_ listener: LoopbackRedirectListener, state: String = "expected-state",
                                  timeout: Duration = .seconds(90),
                                  browser: @escaping @Sendable () throws -> T) async throws -> (Result<String, Error>, T?) {
        let wait = try listener.start(expectedState: state, timeout: timeout)
        let seen = try? await oauthTestOffPool(browser).get()
        return (await oauthTestResult { try await wait.code }, seen)
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
        let (result, page) = try await run(listener) { try oauthTestBrowserGETBlocking(url) }
        #expect(try result.get() == "4/0AX-code")
        #expect(page?.status == 200)
        #expect(page?.body.contains("Hudson is authorised; you can close this tab.") == true)
        #expect(page?.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page?.headers["referrer-policy"] == "no-referrer")
        #expect(page?.headers["cache-control"] == "no-store")
        #expect(page?.body.contains("0AX-code") == false)
    }

    @Test("start serves from the call on: the browser is answered before any task awaits the outcome")
    func servesBeforeAwaited() async throws {
        // What OAuthLogin relies on: it starts the wait, then shows the URL, and awaits only afterwards.
        let listener = try LoopbackRedirectListener()
        let wait = try listener.start(expectedState: "expected-state", timeout: .seconds(90))
        // On this task's own thread, with nothing awaiting the wait yet (a few milliseconds of blocking).
        let page = try oauthTestBrowserGETBlocking(URL(string: listener.redirectURI + "/?state=expected-state&code=early")!)
        #expect(page.status == 200)
        #expect(!wait.isAwaited)
        #expect(try await wait.code == "early")
    }

    @Test("a redirect with another state is refused, and the page says so")
    func stateMismatch() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?state=forged&code=c")!
        let (result, page) = try await run(listener) { try oauthTestBrowserGETBlocking(url) }
        #expect(throws: LoopbackRedirectError.stateMismatch) { try result.get() }
        #expect(page?.status == 400)
        #expect(page?.body.contains("state mismatch") == true)
    }

    @Test("error=access_denied is its own error, checked only after the state")
    func accessDenied() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?error=access_denied&state=expected-state")!
        let (result, page) = try await run(listener) { try oauthTestBrowserGETBlocking(url) }
        #expect(throws: LoopbackRedirectError.accessDenied) { try result.get() }
        #expect(page?.body.contains("declined") == true)

        let other = try LoopbackRedirectListener()
        let forged = URL(string: other.redirectURI + "/?error=access_denied&state=wrong")!
        let (otherResult, _) = try await run(other) { try oauthTestBrowserGETBlocking(forged) }
        #expect(throws: LoopbackRedirectError.stateMismatch) { try otherResult.get() }
    }

    @Test("another error value is reported sanitised, never echoing markup")
    func otherError() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?error=%3Cscript%3Eserver_error&state=expected-state")!
        let (result, page) = try await run(listener) { try oauthTestBrowserGETBlocking(url) }
        #expect(throws: LoopbackRedirectError.authorisationFailed(error: "scriptserver_error")) { try result.get() }
        #expect(page?.body.contains("<script>") == false)
    }

    @Test("/favicon.ico gets a 404 and the listener keeps waiting for the redirect")
    func faviconIgnored() async throws {
        let listener = try LoopbackRedirectListener()
        let base = listener.redirectURI
        let (result, statuses) = try await run(listener) { () throws -> [Int] in
            let favicon = try oauthTestBrowserGETBlocking(URL(string: base + "/favicon.ico")!)
            let bare = try oauthTestBrowserGETBlocking(URL(string: base + "/")!)
            let redirect = try oauthTestBrowserGETBlocking(URL(string: base + "/?state=expected-state&code=abc")!)
            return [favicon.status, bare.status, redirect.status]
        }
        #expect(try result.get() == "abc")
        #expect(statuses == [404, 400, 200])
    }

    @Test("idle or half-sent connections (browser preconnects) do not delay the real redirect")
    func idleConnectionsDoNotBlock() async throws {
        // A listener serving one connection at a time would answer the redirect only once the idle ones
        // were dropped, after 120 s (or time out at 90 s).
        let listener = try LoopbackRedirectListener(connectionTimeout: .seconds(120))
        let port = listener.port
        let started = ContinuousClock.now
        let (result, answer) = try await run(listener) { () throws -> (status: Int, at: ContinuousClock.Instant) in
            let silent = OAuthTestRawClient(port: port)
            let partial = OAuthTestRawClient(port: port)
            partial?.send("GET /?state=expected-state&co")
            defer { _ = (silent, partial) }
            let status = try oauthTestBrowserGETBlocking(URL(string: "http://127.0.0.1:\(port)/?state=expected-state&code=late")!).status
            return (status, .now)
        }
        #expect(try result.get() == "late")
        #expect(answer?.status == 200)
        // Timed on the browser's thread, when the page arrived: well under the 120 s, even on a busy machine.
        let answered = try #require(answer?.at)
        #expect(answered - started < .seconds(60))
    }

    @Test("a client that sends no complete request in time is dropped; junk gets 400; the wait goes on")
    func perConnectionTimeout() async throws {
        let listener = try LoopbackRedirectListener(connectionTimeout: .seconds(2))
        let port = listener.port
        // Both connect, and the junk is sent, before the listener serves (the kernel queues them): the junk
        // has arrived when it is accepted, so it is answered however late the listener's thread runs.
        let silent = try #require(OAuthTestRawClient(port: port))
        let junk = try #require(OAuthTestRawClient(port: port))
        junk.send("hello\r\n\r\n")
        let (result, answers) = try await run(listener) { () throws -> [String] in
            let silentAnswer = silent.readAll()  // returns when the listener drops it, 2 s after accepting it
            let junkAnswer = junk.readAll()
            let redirect = try oauthTestBrowserGETBlocking(URL(string: "http://127.0.0.1:\(port)/?state=expected-state&code=c")!)
            return [silentAnswer, String(junkAnswer.prefix(12)), String(redirect.status)]
        }
        #expect(try result.get() == "c")
        #expect(answers == ["", "HTTP/1.1 400", "200"])
    }

    @Test("a request that arrived in time is answered even when the listener gets to it after its deadline")
    func lateListenerStillReads() async throws {
        // A zero connection timeout puts every connection past its deadline as soon as it is accepted, as
        // when the listener's thread gets no CPU for a while on a busy machine. What the client sent by then
        // must still be read: the favicon answered 404, the redirect accepted.
        let listener = try LoopbackRedirectListener(connectionTimeout: .zero)
        let port = listener.port
        let favicon = try #require(OAuthTestRawClient(port: port))
        favicon.send("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let redirect = try #require(OAuthTestRawClient(port: port))
        redirect.send("GET /?state=expected-state&code=on-time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (result, answers) = try await run(listener, timeout: .seconds(20)) { () throws -> [String] in
            [String(favicon.readAll().prefix(12)), String(redirect.readAll().prefix(12))]
        }
        #expect(try result.get() == "on-time")
        #expect(answers == ["HTTP/1.1 404", "HTTP/1.1 200"])
    }

    @Test("no redirect within the timeout is an error")
    func timeout() async throws {
        let listener = try LoopbackRedirectListener()
        let started = ContinuousClock.now
        let wait = try listener.start(expectedState: "s", timeout: .milliseconds(200))
        await #expect(throws: LoopbackRedirectError.timedOut(seconds: 0)) { try await wait.code }
        // The listener ended the wait at its deadline rather than waiting forever; timed by when its thread
        // settled the wait, not by when this task ran again.
        let settled = try #require(wait.settledAt)
        #expect(settled - started >= .milliseconds(200))
        #expect(settled - started < .seconds(30))
    }

    @Test("cancelling the waiting task ends the wait promptly")
    func cancellation() async throws {
        let listener = try LoopbackRedirectListener()
        let wait = try listener.start(expectedState: "s", timeout: .seconds(300))
        let task = Task { try await wait.code }
        try #require(await oauthTestEventually { wait.isAwaited })
        let cancelled = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let settled = try #require(wait.settledAt)
        #expect(settled - cancelled < .seconds(5))
    }

    @Test("a task cancelled before it awaits the redirect ends the wait too")
    func cancelledBeforeAwaiting() async throws {
        let listener = try LoopbackRedirectListener()
        let wait = try listener.start(expectedState: "s", timeout: .seconds(300))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await wait.code
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(wait.settledAt != nil)
        #expect(OAuthTestRawClient(port: listener.port) == nil)
    }

    @Test("the socket is closed once the wait ends, on success and on error, and a listener serves once")
    func closedAfterwards() async throws {
        let listener = try LoopbackRedirectListener()
        let port = listener.port
        let url = URL(string: listener.redirectURI + "/?state=expected-state&code=abc")!
        _ = try await run(listener) { try oauthTestBrowserGETBlocking(url) }
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
