/*!
 The access-token source the Gmail client asks before every request. It holds one account's refresh
 token, keeps the current access token in memory with its expiry, and refreshes it a margin ahead of
 expiry ("Refresh shortly before `expires_in` runs out ... or when a 401 arrives", gmail-api.md §7 step 7).
 Concurrent callers share one in-flight refresh (single-flight), so a burst of parallel requests on an
 expired token costs one token request, not one each. Access tokens live only here and, if the caller
 asks for it through `onRefresh`, in the credentials file: never in the SQLite store (CONTRACT.md "Files").
 The clock is injectable so tests can move time without sleeping.
 */
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Supplies access tokens for one account from its refresh token (the lead declares its conformance to
/// `AccessTokenProvider`).
public actor OAuthTokenProvider {
    /// The function that trades the refresh token for a new access token.
    public typealias Refresher = @Sendable (_ refreshToken: String) async throws -> OAuthAccessToken

    private let refreshToken: String
    private let refresher: Refresher
    private let refreshMargin: TimeInterval
    private let forcedRefreshWindow: TimeInterval = 5
    private let now: @Sendable () -> Date
    private let onRefresh: (@Sendable (OAuthAccessToken) async -> Void)?
    private var cached: OAuthAccessToken?
    /// When `cached` was obtained by a refresh of this provider.
    private var refreshedAt: Date?
    private var inFlight: (id: UInt64, task: Task<OAuthAccessToken, Error>)?
    private var nextID: UInt64 = 0

    /// - Parameters:
    ///   - refreshToken: the account's refresh token.
    ///   - cached: an access token saved earlier (from the credentials file), used while it is fresh.
    ///   - refreshMargin: refresh when the token expires within this many seconds.
    ///   - now: the clock.
    ///   - onRefresh: called with each new token, e.g. to cache it in the credentials file.
    ///   - refresher: performs the refresh; `OAuthTokenClient.refresh` in production.
    public init(refreshToken: String, cached: OAuthAccessToken? = nil, refreshMargin: TimeInterval = 60,
                now: @escaping @Sendable () -> Date = { Date() },
                onRefresh: (@Sendable (OAuthAccessToken) async -> Void)? = nil,
                refresher: @escaping Refresher) {
        self.refreshToken = refreshToken
        self.cached = cached
        self.refreshMargin = refreshMargin
        self.now = now
        self.onRefresh = onRefresh
        self.refresher = refresher
    }

    /// A provider that refreshes through `client` (gmail-api.md §7 step 7).
    public init(client: OAuthTokenClient, refreshToken: String, cached: OAuthAccessToken? = nil,
                refreshMargin: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() },
                onRefresh: (@Sendable (OAuthAccessToken) async -> Void)? = nil) {
        self.init(refreshToken: refreshToken, cached: cached, refreshMargin: refreshMargin, now: now,
                  onRefresh: onRefresh, refresher: { try await client.refresh(refreshToken: $0) })
    }

    /// The cached access token, or a new one when it is missing or expires within the margin.
    public func accessToken() async throws -> String {
        if let cached, !cached.expires(within: refreshMargin, of: now()) { return cached.value }
        return try await sharedRefresh().value
    }

    /// A new access token regardless of the cache: the Gmail client calls this after a 401. Several
    /// requests can hit a 401 together, so this joins a refresh that is already running, and returns the
    /// token of a refresh that finished less than `forcedRefreshWindow` seconds ago: either is newer
    /// than the token that was refused.
    public func refreshAccessToken() async throws -> String {
        if inFlight == nil, let cached, let refreshedAt, now().timeIntervalSince(refreshedAt) < forcedRefreshWindow {
            return cached.value
        }
        cached = nil
        return try await sharedRefresh().value
    }

    /// The current cached token, if any (for tests and for saving it).
    public var cachedToken: OAuthAccessToken? { cached }

    /// Starts a refresh, or joins the one in flight. The refresh runs in its own task, so one caller's
    /// cancellation does not fail the others that wait for it.
    private func sharedRefresh() async throws -> OAuthAccessToken {
        let entry: (id: UInt64, task: Task<OAuthAccessToken, Error>)
        if let inFlight {
            entry = inFlight
        } else {
            nextID &+= 1
            let refresher = self.refresher
            let refreshToken = self.refreshToken
            entry = (nextID, Task { try await refresher(refreshToken) })
            inFlight = entry
        }
        let result = await entry.task.result
        // Only the first waiter to resume settles the shared state; a later refresh may already be running.
        if inFlight?.id == entry.id {
            inFlight = nil
            if case .success(let token) = result {
                cached = token
                refreshedAt = now()
                await onRefresh?(token)
            }
        }
        return try result.get()
    }
}

extension OAuthTokenProvider {
    /// A provider for a stored account: it starts from the access token cached in the file, refreshes
    /// through the credential's token endpoint (or `tokenEndpointOverride`, `HUDSON_OAUTH_TOKEN_URL`), and,
    /// when `store` is given, caches each new access token back into the credentials file. Caching is best
    /// effort (a failure only costs a refresh next time) and is skipped when the file meanwhile holds another
    /// refresh token, so a concurrent `hd-auth login` is never undone.
    public init(credential: OAuthCredential, store: CredentialStore? = nil, tokenEndpointOverride: URL? = nil,
                session: URLSession = .shared, requestTimeout: TimeInterval = 30, refreshMargin: TimeInterval = 60,
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        // The scope was checked at consent; a later narrowing (a partial revocation) surfaces as Gmail's
        // 403 insufficientPermissions, so refreshes do not re-check it.
        let client = try OAuthTokenClient(clientSecret: credential.clientSecretValue,
                                          tokenEndpointOverride: tokenEndpointOverride,
                                          requiredScopes: [], session: session, requestTimeout: requestTimeout, now: now)
        var onRefresh: (@Sendable (OAuthAccessToken) async -> Void)?
        if let store {
            onRefresh = { @Sendable token in
                guard var current = try? store.load(email: credential.email),
                      current.refreshToken == credential.refreshToken else { return }
                current.accessToken = token.value
                current.accessTokenExpiresAt = token.expiresAt
                try? store.save(current)
            }
        }
        self.init(client: client, refreshToken: credential.refreshToken, cached: credential.cachedAccessToken,
                  refreshMargin: refreshMargin, now: now, onRefresh: onRefresh)
    }
}
