// The access-token provider: caching, refresh ahead of expiry and after a 401 (gmail-api.md §7 step 7),
// and one shared refresh for concurrent callers. Time is an injected clock, so nothing sleeps for expiry.
import Foundation
@testable import HudsonGmail
import Synchronization
import Testing

/// A clock the test moves by hand, and a refresher that counts its calls.
private final class ProviderFixture: Sendable {
    let time = Mutex<Date>(Date(timeIntervalSince1970: 1_700_000_000))
    let calls = Mutex<Int>(0)
    let delay: Duration
    let failNext = Mutex<Bool>(false)

    init(delay: Duration = .zero) { self.delay = delay }

    var now: @Sendable () -> Date { { [self] in time.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }

    var refresher: OAuthTokenProvider.Refresher {
        { [self] refreshToken in
            let n = calls.withLock { $0 += 1; return $0 }
            if delay > .zero { try await Task.sleep(for: delay) }
            if failNext.withLock({ let f = $0; $0 = false; return f }) { throw OAuthTransientError(status: 503, reason: "HTTP 503") }
            return OAuthAccessToken(value: "token-\(n)-for-\(refreshToken)", expiresAt: now().addingTimeInterval(3600), scopes: [])
        }
    }
}

@Suite("OAuth access-token provider")
struct OAuthTokenProviderTests {
    @Test("the access token is cached until it is within the margin of expiry, then refreshed")
    func cachingAndRefreshAhead() async throws {
        let fixture = ProviderFixture()
        let provider = OAuthTokenProvider(refreshToken: "R", refreshMargin: 60, now: fixture.now, refresher: fixture.refresher)
        #expect(try await provider.accessToken() == "token-1-for-R")
        #expect(try await provider.accessToken() == "token-1-for-R")
        fixture.advance(3600 - 61)
        #expect(try await provider.accessToken() == "token-1-for-R")
        fixture.advance(2)  // 59 s left: inside the margin
        #expect(try await provider.accessToken() == "token-2-for-R")
        #expect(fixture.calls.withLock { $0 } == 2)
    }

    @Test("a saved access token is used while fresh, and refreshed once stale")
    func savedToken() async throws {
        let fixture = ProviderFixture()
        let saved = OAuthAccessToken(value: "saved", expiresAt: fixture.now().addingTimeInterval(600), scopes: [])
        let provider = OAuthTokenProvider(refreshToken: "R", cached: saved, now: fixture.now, refresher: fixture.refresher)
        #expect(try await provider.accessToken() == "saved")
        fixture.advance(600)
        #expect(try await provider.accessToken() == "token-1-for-R")
    }

    @Test("refreshAccessToken (after a 401) refreshes even when the cached token looks fresh")
    func forcedRefresh() async throws {
        let fixture = ProviderFixture()
        let saved = OAuthAccessToken(value: "saved", expiresAt: fixture.now().addingTimeInterval(3000), scopes: [])
        let stored = OAuthTestLocked<[String]>([])
        let provider = OAuthTokenProvider(refreshToken: "R", cached: saved, now: fixture.now,
                                          onRefresh: { token in stored.update { $0.append(token.value) } },
                                          refresher: fixture.refresher)
        #expect(try await provider.refreshAccessToken() == "token-1-for-R")
        #expect(try await provider.accessToken() == "token-1-for-R")
        #expect(stored.value == ["token-1-for-R"])
    }

    @Test("401s arriving one after another within seconds cost one refresh, not one each")
    func forcedRefreshesCoalesce() async throws {
        let fixture = ProviderFixture()
        let provider = OAuthTokenProvider(refreshToken: "R", now: fixture.now, refresher: fixture.refresher)
        #expect(try await provider.refreshAccessToken() == "token-1-for-R")
        fixture.advance(2)
        #expect(try await provider.refreshAccessToken() == "token-1-for-R")
        fixture.advance(4)
        #expect(try await provider.refreshAccessToken() == "token-2-for-R")
        #expect(fixture.calls.withLock { $0 } == 2)
    }

    @Test("concurrent callers share one in-flight refresh (single-flight)")
    func singleFlight() async throws {
        let fixture = ProviderFixture(delay: .milliseconds(500))
        let provider = OAuthTokenProvider(refreshToken: "R", now: fixture.now, refresher: fixture.refresher)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                group.addTask { index % 5 == 0 ? try await provider.refreshAccessToken() : try await provider.accessToken() }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["token-1-for-R"])
        #expect(fixture.calls.withLock { $0 } == 1)
    }

    @Test("a failed refresh reaches every waiter and the next call tries again")
    func failureThenRetry() async throws {
        let fixture = ProviderFixture(delay: .milliseconds(100))
        fixture.failNext.withLock { $0 = true }
        let provider = OAuthTokenProvider(refreshToken: "R", now: fixture.now, refresher: fixture.refresher)
        async let first = oauthTestResult { try await provider.accessToken() }
        async let second = oauthTestResult { try await provider.accessToken() }
        let results = await [first, second]
        for result in results { #expect(throws: OAuthTransientError.self) { try result.get() } }
        #expect(fixture.calls.withLock { $0 } == 1)
        #expect(try await provider.accessToken() == "token-2-for-R")
        #expect(await provider.cachedToken?.value == "token-2-for-R")
    }

    @Test("the provider built on OAuthTokenClient refreshes over HTTP with the stored refresh token")
    func overHTTP() async throws {
        let server = try OAuthTestHTTPServer { request in
            .json(200, ["access_token": "ya29.from-\(request.form["refresh_token"] ?? "")", "expires_in": 3599,
                        "scope": OAuthScope.gmailModify, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let client = try OAuthTokenClient(clientID: "c", clientSecret: "s", tokenEndpoint: server.url("/token"))
        let provider = OAuthTokenProvider(client: client, refreshToken: "1//stored")
        #expect(try await provider.accessToken() == "ya29.from-1//stored")
        #expect(try await provider.accessToken() == "ya29.from-1//stored")
        #expect(server.requests.count == 1)
    }

    @Test("a provider for a stored account starts from the cached token and caches refreshed ones in the file")
    func fromCredential() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(200, ["access_token": "ya29.refreshed", "expires_in": 3599, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let dir = OAuthTestDirectory()
        let store = CredentialStore(configDirectory: dir.path)
        let fixture = ProviderFixture()
        let credential = OAuthCredential(
            email: "ada@example.com", clientID: "c", clientSecret: "s", tokenURI: URL(string: "https://unused.example/token")!,
            refreshToken: "1//stored", scope: OAuthScope.gmailModify, createdAt: fixture.now(),
            accessToken: OAuthAccessToken(value: "ya29.cached", expiresAt: fixture.now().addingTimeInterval(120), scopes: []))
        try store.save(credential)
        let provider = try OAuthTokenProvider(credential: credential, store: store, tokenEndpointOverride: server.url("/token"),
                                              now: fixture.now)
        #expect(try await provider.accessToken() == "ya29.cached")
        #expect(server.requests.isEmpty)
        fixture.advance(61)
        #expect(try await provider.accessToken() == "ya29.refreshed")
        let saved = try store.load(email: "ada@example.com")
        #expect(saved.accessToken == "ya29.refreshed")
        #expect(saved.refreshToken == "1//stored")

        // A newer login replaced the refresh token: the old provider must not write its token over it.
        var relogged = saved
        relogged.refreshToken = "1//newer"
        relogged.accessToken = nil
        try store.save(relogged)
        fixture.advance(10)
        #expect(try await provider.refreshAccessToken() == "ya29.refreshed")
        #expect(server.requests.count == 2)
        #expect(try store.load(email: "ada@example.com").accessToken == nil)
        #expect(try store.load(email: "ada@example.com").refreshToken == "1//newer")
    }
}
