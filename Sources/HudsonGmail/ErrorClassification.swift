/*!
 Turns a failed HTTP exchange into a `GmailError`: decodes Google's JSON error envelope
 (gmail-api.md §4), classifies by status and `errors[0].reason` (§9.10), reads `Retry-After`
 (seconds or HTTP-date), and maps transport errors to `.network`. Every string that came
 from the server is trimmed, stripped of control characters and scrubbed of the access token
 before it can reach an error description, so no description ever carries a token.
 */

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed exchange as the retry loop sees it: the typed error plus the HTTP status (when a
/// response arrived) and the server's requested wait, which `.server` cannot carry itself.
struct ExchangeFailure: Error, Sendable {
    var error: GmailError
    var status: Int?
    var retryAfter: Double?
    /// Nothing was listening at the server's address (ECONNREFUSED): no request reached it.
    var refused = false
}

/// Google's error body: `{"error": {"code", "message", "errors": [{reason, domain, message}], "status"}}`.
/// `errors[]` and `status` may be missing (§4), and the OAuth endpoint's `{"error": "…"}`
/// form simply fails to decode here, which falls back to the HTTP status.
struct GoogleErrorEnvelope: Decodable {
    struct Body: Decodable {
        var code: Int?
        var message: String?
        var status: String?
        var errors: [Item]?
    }

    struct Item: Decodable {
        var reason: String?
        var domain: String?
        var message: String?
    }

    var error: Body
}

enum ErrorClassifier {
    /// Reasons that mean "slow down", not "not allowed" (§4 table, §9.10).
    static let rateLimitReasons: Set<String> = ["userRateLimitExceeded", "rateLimitExceeded"]


    /// Classifies a non-2xx response. `secret` is the access token that was sent, so that a
    /// server echoing it back cannot leak it into an error description.
    static func classify(status: Int, headers: HTTPHeaders, body: Data, now: Date, secret: String?) -> ExchangeFailure {
        let envelope = try? JSONDecoder().decode(GoogleErrorEnvelope.self, from: body)
        let reason = envelope?.error.errors?.first?.reason
        let canonical = envelope?.error.status
        let message = envelope?.error.message.map { scrub($0, secret: secret) }
        let wait = retryAfter(header: headers["retry-after"], now: now)
            ?? message.flatMap { retryAfter(inMessage: $0, now: now) }

        let error: GmailError
        switch status {
        case 401:
            error = .unauthorized
        case 403:
            if let reason, rateLimitReasons.contains(reason) {
                error = .rateLimited(retryAfter: wait)
            } else if reason == nil, canonical == "RESOURCE_EXHAUSTED" {
                error = .rateLimited(retryAfter: wait)
            } else {
                error = .forbidden(reason: reason.map { scrub($0, secret: secret) } ?? canonical ?? "forbidden")
            }
        case 404:
            error = .notFound
        case 408:
            error = .network("request timed out (408)")
        case 429:
            error = .rateLimited(retryAfter: wait)
        case 400..<500:
            error = .badRequest(message: message ?? "HTTP \(status)")
        case 500..<600:
            error = .server(status: status)
        default:
            error = .invalidResponse("unexpected HTTP status \(status)")
        }
        return ExchangeFailure(error: error, status: status, retryAfter: wait)
    }

    /// `Retry-After` as seconds from now: either delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
    static func retryAfter(header: String?, now: Date) -> Double? {
        guard let value = header?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return Double(value).map(RetryAfterCap.apply)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return RetryAfterCap.apply(max(0, date.timeIntervalSince(now)))
    }

    /// The "Retry after 2024-12-02T12:34:56.789Z" that a sending-limit 429 may carry in its
    /// message text instead of a header (§4, unverified wording, so matched loosely).
    static func retryAfter(inMessage message: String, now: Date) -> Double? {
        guard let match = message.firstMatch(of: /[Rr]etry after ([0-9T:.\-]+Z)/) else { return nil }
        let text = String(match.1)
        let date = (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle()))
        guard let date else { return nil }
        return RetryAfterCap.apply(max(0, date.timeIntervalSince(now)))
    }

    /// Whether a transport failure is a refused connection (ECONNREFUSED: nothing listens
    /// at the address). FoundationNetworking reports libcurl's CURLE_COULDNT_CONNECT so; a
    /// connection that was accepted and then dropped, reset or timed out is something else.
    static func isRefused(_ error: any Error) -> Bool {
        (error as? URLError)?.code == .cannotConnectToHost
    }

    /// Maps a transport failure to `.network`, in fixed words: URLError descriptions carry
    /// the URL, whose query may hold a search term.
    static func transport(_ error: any Error) -> GmailError {
        guard let urlError = error as? URLError else { return .network("transfer failed") }
        switch urlError.code {
        case .timedOut: return .network("timed out")
        case .cannotConnectToHost: return .network("connection refused")
        case .networkConnectionLost: return .network("connection lost")
        case .cannotFindHost, .dnsLookupFailed: return .network("host not found")
        case .notConnectedToInternet: return .network("not connected to the internet")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return .network("TLS handshake failed")
        case .badServerResponse, .cannotParseResponse: return .network("connection closed without a valid HTTP response")
        default:
            // FoundationNetworking reports libcurl's CURLE_PARTIAL_FILE (a body shorter than its
            // Content-Length) as code -1 with curl's text; only that text tells it apart.
            let detail = urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            if detail.hasPrefix("transfer closed with") {
                return .network("connection closed before the response body was complete")
            }
            return .network("transfer failed (URLError \(urlError.code.rawValue))")
        }
    }

    /// Makes server text safe for a one-line description: the token (if echoed) and anything
    /// shaped like a Google access token or bearer credential is removed, control characters
    /// go, and the length is capped.
    static func scrub(_ text: String, secret: String?) -> String {
        var cleaned = text
        if let secret, !secret.isEmpty {
            cleaned = cleaned.replacingOccurrences(of: secret, with: "[redacted]")
        }
        cleaned = cleaned.replacing(/ya29\.[A-Za-z0-9._\-]+/, with: "[redacted]")
        cleaned = cleaned.replacing(/(?i)bearer\s+[A-Za-z0-9._\-~+\/]+=*/, with: "Bearer [redacted]")
        let scalars = cleaned.unicodeScalars.map { scalar -> Character in
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
                ? " " : Character(scalar)
        }
        let oneLine = String(scalars).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return oneLine.count > 200 ? String(oneLine.prefix(200)) + "…" : oneLine
    }
}
