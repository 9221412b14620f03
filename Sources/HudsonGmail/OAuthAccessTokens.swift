/*!
 Where OAuth meets the client: the refresh-token provider is the client's token source,
 and OAuth failures reach the client's callers as the GmailError they amount to (a
 revoked grant is `authorizationRevoked`, exit 77; a token endpoint that is down is
 `network`, exit 75, and so is one that answers nonsense).
 */

extension OAuthTokenProvider: AccessTokenProvider {}

extension OAuthTokenError: GmailErrorConvertible {
    /// Only a refused grant means "log in again" (exit 77). A token endpoint that answers
    /// nonsense, too much, or an error code that is not about the grant is broken, and the grant
    /// may be fine: that is temporary (75), never a reason to send the user through consent.
    public var gmailError: GmailError {
        switch self {
        case .invalidGrant(_, let server): return .authorizationRevoked(server ?? "")
        case .scopeNotGranted: return .forbidden(reason: "insufficientPermissions")
        case .missingRefreshToken, .invalidClient: return .unauthorized
        case .malformedResponse, .rejected, .oversized: return .network(description)
        case .insecureEndpoint: return .unauthorized
        }
    }
}

extension OAuthTransientError: GmailErrorConvertible {
    public var gmailError: GmailError { .network("token endpoint: \(description)") }
}
