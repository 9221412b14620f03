/*!
 The errors of the token endpoint and the classification every OAuth error carries. The library does not
 know exit codes (STYLE.md rule 2), but it knows what a failure means, so each error says whether it is
 a lack of authorisation (CONTRACT.md exit 77: `invalid_grant`, a narrowed scope, a declined consent), a
 configuration problem (exit 78: a bad client, a too-open credentials file), or temporary (exit 75:
 network down, 5xx, 429). Temporary failures are their own type, `OAuthTransientError`, so a caller can
 catch "retry later" without looking inside an enum. No description ever contains a token, an
 authorisation code, a verifier or a client secret: server-supplied text is scrubbed of every secret the
 request carried before it is kept (see `OAuthTokenClient`).
 */

/// What an OAuth failure means for the caller (the CLI maps it to an exit status).
public enum OAuthFailureKind: Sendable, Equatable {
    /// The account is not (or no longer) authorised: run `hd-auth login` again.
    case notAuthorised
    /// The client file, an endpoint or the credentials file is wrong; a person must fix it.
    case configuration
    /// Network trouble, a 5xx or 429: safe to retry later.
    case temporary
    /// The server answered something that does not follow the protocol.
    case unexpected
}

/// Every OAuth-side error conforms, so callers can catch them together and read `kind`.
public protocol OAuthFailure: Error, Sendable, CustomStringConvertible {
    var kind: OAuthFailureKind { get }
}

/// Which token request failed; `invalid_grant` means different things for each (gmail-api.md §7).
public enum OAuthGrant: String, Sendable, Equatable {
    case authorizationCode = "authorization_code"
    case refreshToken = "refresh_token"
}

/// A network failure, a 5xx or a 429 from the token endpoint: nothing is wrong with the authorisation.
public struct OAuthTransientError: OAuthFailure, Equatable {
    /// The HTTP status, or nil when no response arrived.
    public let status: Int?
    /// A short reason without secrets, e.g. "HTTP 503" or "connection refused".
    public let reason: String

    public init(status: Int?, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var kind: OAuthFailureKind { .temporary }

    public var description: String { "the OAuth token endpoint is unavailable: \(reason); try again later" }
}

/// A token endpoint answer that is not a usable token, or an endpoint that may not be used.
public enum OAuthTokenError: OAuthFailure, Equatable {
    /// `invalid_grant` (gmail-api.md §7 "Token endpoint errors"): not retryable.
    case invalidGrant(grant: OAuthGrant, serverDescription: String?)
    /// `invalid_client`/`unauthorized_client`: the client id or secret is wrong or disabled.
    case invalidClient(error: String, serverDescription: String?)
    /// The user's consent covered fewer scopes than Hudson needs (granular consent, §7 step 6).
    case scopeNotGranted(missing: [String])
    /// The code exchange returned no refresh token, so Hudson could not work offline.
    case missingRefreshToken
    /// Any other OAuth error code (`invalid_request`, `unsupported_grant_type`, ...).
    case rejected(status: Int, error: String, serverDescription: String?)
    /// A 2xx without the fields of a token response, or a non-JSON error.
    case malformedResponse(status: Int, detail: String)
    /// An http URL to a non-loopback host (CONTRACT.md "Endpoints").
    case insecureEndpoint(String)

    public var kind: OAuthFailureKind {
        switch self {
        case .invalidGrant, .scopeNotGranted, .missingRefreshToken: return .notAuthorised
        case .invalidClient, .insecureEndpoint: return .configuration
        case .rejected, .malformedResponse: return .unexpected
        }
    }

    public var description: String {
        switch self {
        case .invalidGrant(.refreshToken, let server):
            return "the authorisation was revoked or has expired (invalid_grant\(quoted(server))); run "
                + "'hd-auth login' again. Refresh tokens of an OAuth app whose consent screen is in \"Testing\" "
                + "status expire after 7 days: publish the app (\"In production\") or log in again each week"
        case .invalidGrant(.authorizationCode, let server):
            return "the authorisation code was refused (invalid_grant\(quoted(server))): it expired, was "
                + "already used, or the PKCE verifier did not match; run 'hd-auth login' again"
        case .invalidClient(let error, let server):
            return "the OAuth client was refused (\(error)\(quoted(server))); check the client id and secret "
                + "in the client JSON file, and that the client is of type \"Desktop app\""
        case .scopeNotGranted(let missing):
            return "the consent did not grant \(missing.joined(separator: " ")); run 'hd-auth login' again "
                + "and leave every requested permission ticked"
        case .missingRefreshToken:
            return "Google returned no refresh token; remove Hudson's access at "
                + "https://myaccount.google.com/permissions and run 'hd-auth login' again"
        case .rejected(let status, let error, let server):
            return "the OAuth token endpoint refused the request (HTTP \(status), \(error)\(quoted(server)))"
        case .malformedResponse(let status, let detail):
            return "the OAuth token endpoint sent an unexpected response (HTTP \(status)): \(detail)"
        case .insecureEndpoint(let url):
            return "refusing OAuth endpoint '\(url)': plain http is allowed only for 127.0.0.1, localhost "
                + "and [::1]; use https"
        }
    }

    private func quoted(_ server: String?) -> String {
        guard let server, !server.isEmpty else { return "" }
        return ": \"\(server)\""
    }
}
