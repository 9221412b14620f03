/*!
 The settings of one GmailClient, passed in by the caller: the library never reads the
 environment (STYLE.md rule 2); the CLI turns `$HUDSON_GMAIL_URL` into `baseURL`. Validation
 happens once, at client creation: plain `http://` is accepted only for loopback hosts
 (CONTRACT.md "Endpoints"), because a bearer token sent in clear text to anything else is
 readable by every hop on the way.
 */

import Foundation

/// How a `GmailClient` talks to Gmail.
public struct GmailClientConfiguration: Sendable, Equatable {
    /// Root URL; requests go to `{baseURL}/gmail/v1/users/me/…` and `{baseURL}/batch/gmail/v1`.
    public var baseURL: URL
    /// Sent as `User-Agent`.
    public var userAgent: String
    /// Most exchanges for one request, first attempt included (the one retry after a token
    /// refresh is not counted). gmail-api.md §4 suggests capping at 5 to 7.
    public var maxAttempts: Int
    /// No retry is scheduled that would end later than this after the first attempt began
    /// (was admitted by the quota: waiting for quota is not failing).
    public var maxRetryDuration: Duration
    /// Backoff ceiling of the first retry; doubles per retry (§4: "1 s, 2 s, 4 s, …").
    public var initialBackoff: Duration
    /// Backoff ceiling cap (§4: `min(2^n, 32)`).
    public var maxBackoff: Duration
    /// Per-exchange timeout.
    public var requestTimeout: Duration
    /// Sub-requests per batch, 1...100. Gmail allows 100 but answers big batches with
    /// "Too many concurrent requests"; public clients settle on 10–25 (§3, §9.6).
    public var batchSize: Int
    /// HTTP exchanges in flight at once for this client.
    public var maxConcurrentRequests: Int
    /// Which QuotaBucket lane this client's requests are charged to.
    public var lane: QuotaLane

    public init(
        baseURL: URL = URL(string: "https://gmail.googleapis.com")!,
        userAgent: String = "hudson-gmail/1",
        maxAttempts: Int = 5,
        maxRetryDuration: Duration = .seconds(60),
        initialBackoff: Duration = .seconds(1),
        maxBackoff: Duration = .seconds(32),
        requestTimeout: Duration = .seconds(30),
        batchSize: Int = 25,
        maxConcurrentRequests: Int = 4,
        lane: QuotaLane = .background
    ) {
        self.baseURL = baseURL
        self.userAgent = userAgent
        self.maxAttempts = maxAttempts
        self.maxRetryDuration = maxRetryDuration
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.requestTimeout = requestTimeout
        self.batchSize = batchSize
        self.maxConcurrentRequests = maxConcurrentRequests
        self.lane = lane
    }

    /// Checks the URL scheme and the numeric bounds.
    public func validate() throws(GmailConfigurationError) {
        guard let scheme = baseURL.scheme?.lowercased(), let host = baseURL.host, !host.isEmpty else {
            throw .invalidURL(baseURL.absoluteString)
        }
        switch scheme {
        case "https": break
        case "http": guard OAuthEndpoint.isLoopback(host: host) else { throw .insecureURL(host) }
        default: throw .invalidURL(baseURL.absoluteString)
        }
        guard baseURL.query == nil, baseURL.fragment == nil, baseURL.user == nil else {
            throw .invalidURL(baseURL.absoluteString)
        }
        guard maxAttempts >= 1 else { throw .invalidValue("maxAttempts must be at least 1") }
        guard (1...100).contains(batchSize) else { throw .invalidValue("batchSize must be within 1...100") }
        guard maxConcurrentRequests >= 1 else { throw .invalidValue("maxConcurrentRequests must be at least 1") }
        guard initialBackoff > .zero, maxBackoff >= initialBackoff else {
            throw .invalidValue("backoff must satisfy 0 < initialBackoff <= maxBackoff")
        }
        guard requestTimeout > .zero, maxRetryDuration >= .zero else {
            throw .invalidValue("requestTimeout must be positive and maxRetryDuration not negative")
        }
    }
}

/// A `GmailClientConfiguration` that cannot be used.
public enum GmailConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Plain http to a host that is not loopback.
    case insecureURL(String)
    /// Not an absolute http(s) URL without query, fragment or credentials.
    case invalidURL(String)
    /// A numeric setting out of range.
    case invalidValue(String)

    public var description: String {
        switch self {
        case .insecureURL(let host):
            return "refusing plain http to \(host): only loopback hosts (127.0.0.0/8, localhost, ::1) may use http; use https"
        case .invalidURL(let url):
            return "invalid Gmail URL \(url): expected http(s)://host[:port][/path]"
        case .invalidValue(let detail):
            return "invalid Gmail client setting: \(detail)"
        }
    }
}
