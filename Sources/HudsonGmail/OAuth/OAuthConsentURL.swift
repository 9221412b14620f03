/*!
 The consent-page URL of the installed-app flow, with every parameter of gmail-api.md §7 step 4 in one
 place: client_id, redirect_uri, response_type=code, scope, the PKCE challenge and its method, state,
 access_type=offline (so a refresh token is issued) and prompt=consent (so a *new* refresh token is issued
 even when the user consented before), plus an optional login_hint. Values are percent-encoded with the
 same encoder as the token request body, so the redirect_uri sent in both is byte-for-byte identical
 (§7 step 6: "The `redirect_uri` must be identical to the one in step 4").
 */
import Foundation

/// Builds the URL the user opens to grant Hudson access.
public enum OAuthConsentURL {
    /// The consent URL for `authEndpoint`, keeping any query the endpoint already has.
    /// Throws `OAuthTokenError.insecureEndpoint` for http to a non-loopback host.
    public static func make(authEndpoint: URL, clientID: String, redirectURI: String,
                            scopes: [String] = [OAuthScope.gmailModify], pkce: PKCE, state: String,
                            loginHint: String? = nil) throws -> URL {
        try OAuthEndpoint.validate(authEndpoint)
        var pairs: [(String, String)] = [
            ("client_id", clientID),
            ("redirect_uri", redirectURI),
            ("response_type", "code"),
            ("scope", scopes.joined(separator: " ")),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", pkce.method),
            ("state", state),
            ("access_type", "offline"),
            ("prompt", "consent"),
        ]
        if let loginHint, !loginHint.isEmpty { pairs.append(("login_hint", loginHint)) }
        var text = authEndpoint.absoluteString
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        let separator = text.contains("?") ? (text.hasSuffix("?") || text.hasSuffix("&") ? "" : "&") : "?"
        // Sound: `text` is a parsed URL's own string and the query adds only unreserved characters,
        // `%XX`, `=` and `&`.
        return URL(string: text + separator + OAuthFormEncoding.encode(pairs))!
    }
}
