/*!
 Where OAuth meets the client: the refresh-token provider is the client's token source,
 and OAuth failures reach the client's callers as the GmailError they amount to (a
 revoked grant is `authorizationRevoked`, exit 77; a token endpoint that is down is
 `network`, exit 75).
 */

extension OAuthTokenProvider: AccessTokenProvider {}

extension OAuthTokenError: GmailErrorConvertible {
    public var gmailError: GmailError {
        if case .invalidGrant = self { return .authorizationRevoked(description) }
        return .unauthorized
    }
}

extension OAuthTransientError: GmailErrorConvertible {
    public var gmailError: GmailError { .network("token endpoint: \(description)") }
}
