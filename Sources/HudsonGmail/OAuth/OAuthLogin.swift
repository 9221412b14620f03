/*!
 The whole installed-app login of gmail-api.md §7 as one library call for `hd-auth login`: start the
 loopback listener (step 3), build the consent URL with a fresh PKCE pair and state (steps 2 and 4), hand
 the URL to the caller, wait for the redirect (step 5) and exchange the code with the same redirect_uri
 and the verifier (step 6). The library never prints, opens a browser or reads the environment (STYLE.md
 rule 2): the CLI resolves the endpoints and passes them in, and `presentConsentURL` is where it prints
 the URL to standard error and tries a browser. The listener waits while `presentConsentURL` runs, so a
 caller may also follow the URL itself (the tests do, playing the browser).
 */
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The interactive consent flow.
public enum OAuthLogin {
    /// Runs the login and returns the tokens; the caller learns the address (users.getProfile) and saves
    /// them with `CredentialStore`.
    /// - Parameters:
    ///   - clientSecret: the parsed client JSON ("Desktop app").
    ///   - authEndpoint: an override of the consent page (`HUDSON_OAUTH_AUTH_URL`), else the file's or Google's.
    ///   - tokenEndpoint: an override of the token endpoint (`HUDSON_OAUTH_TOKEN_URL`), else the file's or Google's.
    ///   - scope: the scopes to ask for; the grant must cover all of them.
    ///   - loginHint: the address to preselect on the consent page, if known.
    ///   - timeout: how long to wait for the browser.
    ///   - session: the URLSession for the token request.
    ///   - presentConsentURL: shows the consent URL to the user (prints it, tries a browser) and returns;
    ///     the redirect is awaited concurrently, and the code is exchanged once this has returned.
    public static func run(clientSecret: ClientSecret, authEndpoint: URL? = nil, tokenEndpoint: URL? = nil,
                           scope: [String] = [OAuthScope.gmailModify], loginHint: String? = nil,
                           timeout: Duration = .seconds(300), session: URLSession = .shared,
                           presentConsentURL: @escaping @Sendable (URL) async -> Void) async throws -> OAuthTokens {
        // Validate both endpoints before anything is shown to the user.
        let client = try OAuthTokenClient(clientSecret: clientSecret, tokenEndpointOverride: tokenEndpoint,
                                          requiredScopes: scope, session: session)
        let listener = try LoopbackRedirectListener()
        let pkce = PKCE.generate()
        let state = OAuthState.generate()
        let consentURL = try OAuthConsentURL.make(
            authEndpoint: clientSecret.authEndpoint(override: authEndpoint), clientID: clientSecret.clientID,
            redirectURI: listener.redirectURI, scopes: scope, pkce: pkce, state: state, loginHint: loginHint)

        // Serve before presenting: the browser (or a test playing it) may answer while the URL is shown. The
        // listener's own thread answers it from now on; a child task would start serving only once the
        // cooperative pool got round to it, which on a busy machine can be after the browser gave up.
        let redirect = try listener.start(expectedState: state, timeout: timeout)
        await withTaskCancellationHandler {
            await presentConsentURL(consentURL)
        } onCancel: {
            redirect.cancel()
        }
        let authorisationCode = try await redirect.code
        return try await client.exchange(code: authorisationCode, verifier: pkce.verifier,
                                         redirectURI: listener.redirectURI)
    }
}
