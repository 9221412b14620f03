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
    /// An answer or a token beyond Hudson's bounds (`OAuthTokenClient.maximumAnswerBytes`,
    /// `maximumTokenLength`): the endpoint is broken, the grant may be fine.
    case oversized(String)

    public var kind: OAuthFailureKind {
        switch self {
        case .invalidGrant, .scopeNotGranted, .missingRefreshToken: return .notAuthorised
        case .invalidClient, .insecureEndpoint: return .configuration
        case .rejected, .malformedResponse, .oversized: return .unexpected
        }
    }

    public var description: String {
        switch self {
        case .invalidGrant(.refreshToken, let server):
            return OAuthGuidance.revoked(serverDescription: server)
        case .invalidGrant(.authorizationCode, let server):
            return "the authorisation code was refused (invalid_grant\(quoted(server))): it expired, was "
                + "already used, or the PKCE verifier did not match; run 'hd-auth login' again"
        case .invalidClient(let error, let server):
            return "the OAuth client was refused (\(error)\(quoted(server))); check the client id and secret "
                + "in the client JSON file, and that the client is of type \"Desktop app\""
        case .scopeNotGranted(let missing):
            return OAuthGuidance.missingScopes(missing)
        case .missingRefreshToken:
            return "Google returned no refresh token; remove Hudson's access at "
                + "https://myaccount.google.com/permissions and run 'hd-auth login' again"
        case .rejected(let status, let error, let server):
            return "the OAuth token endpoint refused the request (HTTP \(status), \(error)\(quoted(server)))"
        case .malformedResponse(let status, let detail):
            return "the OAuth token endpoint sent an unexpected response (HTTP \(status)): \(detail)"
        case .oversized(let detail):
            return "the OAuth token endpoint sent \(detail); nothing was stored, try again later"
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

/// What to tell a person whose authorisation stopped working, in one place: `OAuthTokenError` uses it,
/// and so does the CLI when the same failure reaches it from Gmail (a revoked grant behind a 401, a
/// narrowed grant behind a 403 insufficientPermissions). Each says what happened and what to do.
public enum OAuthGuidance {
    /// The command that gets a new grant.
    public static let loginCommand = "hd-auth login"

    /// `invalid_grant` on a refresh: the refresh token is dead.
    public static func revoked(serverDescription: String?) -> String {
        let server = serverDescription.flatMap { $0.isEmpty ? nil : ": \"\($0)\"" } ?? ""
        return "Google no longer accepts this account's authorisation (invalid_grant\(server)): access was "
            + "revoked, the password changed, or the grant expired; run '\(loginCommand)' to grant it again. "
            + "While the OAuth client's consent screen is in \"Testing\", Google expires its refresh tokens "
            + "after 7 days: publish the app (\"In production\") or expect to log in again every week"
    }

    /// A grant that does not cover what Hudson needs (`missing` as full scope URLs).
    public static func missingScopes(_ missing: [String]) -> String {
        let names = missing.map(shortName).joined(separator: ", ")
        return "the access granted to Hudson lacks \(names.isEmpty ? "a Gmail permission" : names), which it needs; "
            + "run '\(loginCommand)' and leave every permission the consent page asks for ticked"
    }

    /// `https://www.googleapis.com/auth/gmail.modify` as `gmail.modify`.
    public static func shortName(_ scope: String) -> String {
        let prefix = "https://www.googleapis.com/auth/"
        return scope.hasPrefix(prefix) ? String(scope.dropFirst(prefix.count)) : scope
    }
}
