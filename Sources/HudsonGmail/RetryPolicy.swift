/*!
 When to try again and how long to wait first. Exponential backoff with full jitter: the
 n-th retry waits a uniformly random time in [0, min(maxBackoff, initialBackoff·2ⁿ)), which
 spreads clients apart better than a fixed schedule plus small jitter; a server's
 `Retry-After` is a floor under that (gmail-api.md §4 "Retry policy"). Attempts are bounded
 by count and by total time, so a caller never retries for longer than it configured; the
 time counts from the first attempt's admission by the quota (waiting for the user's own
 quota is not failing, and a request that waited a minute for it still gets its retries).

 A server's `Retry-After` (header, HTTP-date or the "Retry after <time>" of a sending-limit
 429) is believed up to `maximumRetryAfter`, 15 minutes, and no further: a proxy, a bug or a
 hostile server asking for a day would otherwise park the queue and the outbox for that long.
 Asking again after 15 minutes costs one request, and a limit that still holds answers with a
 new Retry-After. An error whose wait was cut says so (`GmailError.description`).

 A refused connection (nothing listening: ECONNREFUSED) is retried with backoff like any
 transient network error when Gmail is Google's (§4), but not when the configured Gmail is on
 this machine (a loopback host: the demo's fake Gmail, a test's): a server there that refuses
 has been stopped, and the user should hear so at once, not after seconds of backoff (issue
 38 §4). Everything else that fails against a loopback Gmail (5xx, 429, a dropped, reset or
 timed-out connection: the fake's faults) keeps its retries.
 */

import Synchronization

/// How often this process has cut a server's `Retry-After` to `RetryPolicy.maximumRetryAfter`,
/// so that a command can say so (hd-sync does, once per account and pass).
public enum RetryAfterCap {
    private static let count = Atomic<Int>(0)

    /// The longest wait obeyed, in seconds.
    public static var seconds: Double { RetryPolicy.maximumRetryAfter }
    /// Cuts seen so far in this process.
    public static var timesApplied: Int { count.load(ordering: .relaxed) }

    /// `seconds` from a server, capped; a cut is counted.
    static func apply(_ seconds: Double) -> Double {
        guard seconds > RetryPolicy.maximumRetryAfter else { return seconds }
        count.add(1, ordering: .relaxed)
        return RetryPolicy.maximumRetryAfter
    }
}

/// Backoff and retry bounds, copied from the client configuration.
struct RetryPolicy: Sendable, Equatable {
    /// The longest `Retry-After` Hudson obeys, in seconds (see the comment at the top).
    static let maximumRetryAfter: Double = 15 * 60

    var maxAttempts: Int
    var maxRetryDuration: Duration
    var initialBackoff: Duration
    var maxBackoff: Duration
    /// The Gmail is on this machine (`baseURL`'s host is loopback): a refused connection is final.
    var refusalIsFinal: Bool

    init(_ configuration: GmailClientConfiguration) {
        maxAttempts = configuration.maxAttempts
        maxRetryDuration = configuration.maxRetryDuration
        initialBackoff = configuration.initialBackoff
        maxBackoff = configuration.maxBackoff
        refusalIsFinal = configuration.baseURL.host.map { OAuthEndpoint.isLoopback(host: $0) } ?? false
    }

    /// Whether this policy retries `failure` at all, whatever its error: not a refused
    /// connection to a loopback Gmail (see the comment at the top).
    func retries(_ failure: ExchangeFailure) -> Bool {
        !(failure.refused && refusalIsFinal)
    }

    /// The upper bound of the wait before retry `n` (0 for the first retry).
    func ceiling(retry n: Int) -> Duration {
        // 2^30 · any sane initial backoff is beyond every cap; stop doubling before overflow.
        let doubled = initialBackoff * (1 << min(max(0, n), 30))
        return min(maxBackoff, doubled)
    }

    /// The wait before retry `n`: `unit` (uniform in 0..<1) of the ceiling, or the server's
    /// `retryAfter` seconds if that is longer.
    func delay(retry n: Int, retryAfter: Double?, unit: Double) -> Duration {
        let jittered = ceiling(retry: n) * min(max(0, unit), 1)
        guard let retryAfter, retryAfter.isFinite, retryAfter > 0 else { return jittered }
        return max(jittered, .seconds(min(retryAfter, Self.maximumRetryAfter)))
    }

    /// Whether a retry after `attemptsMade` attempts and `elapsed` time, waiting `delay`,
    /// stays within both bounds.
    func allowsRetry(attemptsMade: Int, elapsed: Duration, delay: Duration) -> Bool {
        attemptsMade < maxAttempts && elapsed + delay <= maxRetryDuration
    }

    /// Whether `error` from `method` may be retried at all. Non-idempotent calls are retried
    /// only after a rate-limit refusal, which means the server did not act (§4).
    static func isRetryable(_ error: GmailError, for method: GmailMethod) -> Bool {
        guard error.isRetryable else { return false }
        if method.isIdempotent { return true }
        if case .rateLimited = error { return true }
        return false
    }
}
