/*!
 The typed errors of the Gmail client and the one rule for which of them are worth retrying.
 Each case is one row of gmail-api.md §4's error table, classified by HTTP status and
 `errors[0].reason` (never by status alone: §9.10). Descriptions are one line, name what
 failed and what to do, and never contain an access token or mail content: server messages
 are trimmed and scrubbed before they are stored (see ErrorClassification.swift).
 */
import GmailIDShape

/// A failure talking to Gmail.
public enum GmailError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 404: the message, label or history cursor is unknown or gone (§4). On history.list it
    /// means the cursor aged out and a full sync is due (§9.2).
    case notFound
    /// 401 again after one token refresh and one retry: the token is not accepted.
    case unauthorized
    /// The token provider's refresh was refused with `invalid_grant` (§7, §9.7). The payload is
    /// the provider's short explanation, without the token.
    case authorizationRevoked(String)
    /// 403 that is not a rate limit: `insufficientPermissions`, `domainPolicy`,
    /// `dailyLimitExceeded`, or whatever reason Google gave. Not retried.
    case forbidden(reason: String)
    /// 429, or 403 with `userRateLimitExceeded`/`rateLimitExceeded` (§9.10). `retryAfter`
    /// is the server's requested wait in seconds, when it gave one.
    case rateLimited(retryAfter: Double?)
    /// 5xx.
    case server(status: Int)
    /// 400, 409 and the other 4xx: the request itself is wrong. The message is Google's.
    case badRequest(message: String)
    /// The exchange did not complete: refused, reset, timed out, DNS, TLS, dropped mid-body.
    case network(String)
    /// A response arrived but is not what the method returns: undecodable or wrong-shape
    /// JSON, a non-JSON body, a malformed batch response.
    case invalidResponse(String)
    /// The calling task was cancelled before this item finished (used in per-item results
    /// such as `getMessages`; throwing methods throw `CancellationError` instead).
    case cancelled
    /// In a per-item result of a batch: the batch request itself failed (a 5xx that
    /// outlasted the retries, an answer that is not a readable multipart, a part missing),
    /// so the error says nothing about this item. Callers that set a failing item aside
    /// (sync parks a message Gmail will not serve) must not do so for this one.
    indirect case batchFailed(GmailError)

    /// The error itself, out of a `batchFailed` wrapper: what to report or exit with.
    public var unwrapped: GmailError {
        if case .batchFailed(let failure) = self { return failure.unwrapped }
        return self
    }

    /// Whether the failure holds for every request of the account, not for the one that met
    /// it: the token refused (401 after a refresh, `invalid_grant`), or a 403 that is not a
    /// rate limit, which gmail-api.md §4 lists as the token's scopes
    /// (`insufficientPermissions`), the Workspace domain's policy (`domainPolicy`) or the
    /// project's daily quota (`dailyLimitExceeded`) — none of them about one message, label
    /// or mail. Whoever meets one stops, and does not take it for that item's failure (no
    /// message parked, failed or refused for it): the next request would meet it too. The
    /// one rule for sync, the flushers, the outbox, hd-export and hd-import. A 403 whose
    /// reason Gmail does not document counts too: stopping keeps the item, where taking it
    /// for the item's own could lose it.
    public var isAccountWide: Bool {
        switch unwrapped {
        case .unauthorized, .authorizationRevoked, .forbidden: return true
        default: return false
        }
    }

    /// Gmail refused this very request for good, for what it asked: a 400 (a label it does
    /// not have or will not set, a malformed id or message) or a 404 (a message that is
    /// gone). Not a `batchFailed`: a batch that failed as a whole says nothing of its items.
    public var isRefusal: Bool {
        switch self {
        case .badRequest, .notFound: return true
        default: return false
        }
    }

    /// A request Hudson did not send because an id it would carry has not the shape of a
    /// Gmail id (GmailIDShape; issue 37 §1). A 400 in every way that matters to a caller —
    /// the request itself is wrong, retrying cannot help, and Gmail applied nothing — so it
    /// is one: a refusal (`isRefusal`), exit 65; only its words say it never left.
    public static func malformedID(_ id: String, kind: GmailID.Kind) -> GmailError {
        let problem = GmailID.problem(with: id, as: kind) ?? "not a Gmail \(kind) id"
        return .badRequest(message: notSentPrefix + "\(kind) id \(shown(id)): \(problem)")
    }

    /// Whether this is `malformedID`: refused here, never sent.
    public var isMalformedID: Bool {
        if case .badRequest(let message) = self { return message.hasPrefix(Self.notSentPrefix) }
        return false
    }

    /// Whether this answer to one message's `messages.get` says Gmail will never serve that
    /// id (issue 37 §2): a 404 ("drop it from the local store", gmail-api.md §4), a 400 in
    /// which Gmail calls the id invalid ("Invalid id value"), or an id Hudson would not send
    /// (`malformedID`). Any other 400 (`failedPrecondition`, a proxy's page, a request of
    /// Hudson's that Gmail no longer takes) says nothing about the message and is not one.
    public var saysMessageGone: Bool {
        switch self {
        case .notFound: return true
        case .badRequest(let message):
            return isMalformedID || message.lowercased().contains("invalid id")
        default: return false
        }
    }

    /// The words that begin a `malformedID`'s message, and that keep "rejected by Gmail" out
    /// of its description.
    static let notSentPrefix = "not sent: "

    /// An id as an error shows it: quoted, cut short, and every byte outside printable
    /// ASCII (and `"`, `\`) as `\xHH`, so a hostile id cannot drive a terminal.
    static func shown(_ id: String) -> String {
        var out = "\""
        for (index, byte) in id.utf8.enumerated() {
            if index == 40 { out += "…"; break }
            if byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out + "\""
    }

    /// Whether repeating the same request later may succeed.
    ///
    /// Rate limits, 5xx and network failures are transient (§4 table, "Retry?" column).
    /// `invalidResponse` is deliberately *not* retryable: a wrong-shape body from Gmail is
    /// deterministic and retrying it only burns quota, and a garbled body from a proxy is
    /// indistinguishable from that at this layer. The line is drawn at the transport: a body
    /// shorter than its Content-Length, or a connection closed mid-response, is `.network`
    /// and retried; a complete response whose JSON does not parse is `.invalidResponse`.
    /// Hudson's sync runs in bounded passes, so a transient proxy fault heals on the next
    /// pass at no extra cost.
    public var isRetryable: Bool {
        switch self {
        case .rateLimited, .server, .network: return true
        case .batchFailed(let failure): return failure.isRetryable
        case .notFound, .unauthorized, .authorizationRevoked, .forbidden, .badRequest,
             .invalidResponse, .cancelled:
            return false
        }
    }

    public var description: String {
        switch self {
        case .notFound:
            return "not found (404)"
        case .unauthorized:
            return "not authorised (401 after a token refresh): run `hd-auth login` again"
        case .authorizationRevoked(let detail):
            let why = detail.isEmpty ? "" : " (\(detail))"
            return "authorization revoked or expired\(why): run `hd-auth login` again; "
                + "refresh tokens of an OAuth app left in Testing mode expire after 7 days"
        case .forbidden(let reason):
            return Self.forbiddenDescription(reason)
        case .rateLimited(let retryAfter):
            if let retryAfter {
                // Waits are capped when read (RetryPolicy.maximumRetryAfter), so the cap means "asked for at least this".
                let capped = retryAfter >= RetryPolicy.maximumRetryAfter
                    ? " (the server asked for longer; Hudson waits at most \(Self.seconds(RetryPolicy.maximumRetryAfter)))" : ""
                return "rate limited by Gmail: retry after \(Self.seconds(retryAfter))\(capped)"
            }
            return "rate limited by Gmail: retry later"
        case .server(let status):
            return "Gmail server error (\(status)): retry later"
        case .badRequest(let message):
            return message.hasPrefix(Self.notSentPrefix) ? message : "request rejected by Gmail: \(message)"
        case .network(let detail):
            return "network error: \(detail)"
        case .invalidResponse(let detail):
            return "invalid response from Gmail: \(detail)"
        case .cancelled:
            return "cancelled"
        case .batchFailed(let failure):
            return failure.description
        }
    }

    private static func forbiddenDescription(_ reason: String) -> String {
        switch reason {
        case "insufficientPermissions":
            return "forbidden (insufficientPermissions): the grant lacks a Gmail scope; "
                + "run `hd-auth login` and allow gmail.modify"
        case "domainPolicy":
            return "forbidden (domainPolicy): the Workspace administrator blocks this app"
        case "dailyLimitExceeded":
            return "forbidden (dailyLimitExceeded): the project's daily quota is used up; retry tomorrow"
        default:
            return "forbidden (\(reason))"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e12 ? "\(Int(value)) s" : "\(value) s"
    }
}
