// The whole installed-app login (gmail-api.md §7 steps 2–6) with no real network: a scripted server plays
// both Google's consent page (answering 302 to the redirect URI, as after the user clicks Allow) and its
// token endpoint (checking that the PKCE verifier hashes to the challenge of the consent URL), while the
// presentConsentURL closure plays the browser.
import Foundation
@testable import HudsonGmail
import Testing

@Suite("OAuth login flow")
struct OAuthLoginTests {
    /// A scripted Google: the consent page redirects with a code; the token endpoint checks PKCE.
    private static func google(challenges: OAuthTestLocked<[String: String]>, redirectWith: @escaping @Sendable ([String: String]) -> String)
        throws -> OAuthTestHTTPServer {
        try OAuthTestHTTPServer { request in
            if request.path == "/auth" {
                let query = request.query
                challenges.update { $0["code-1"] = query["code_challenge"] }
                return .redirect(to: query["redirect_uri"]! + redirectWith(query))
            }
            let form = request.form
            let challenge = challenges.value[form["code"] ?? ""]
            guard form["grant_type"] == "authorization_code", let challenge,
                  PKCE.challenge(for: form["code_verifier"] ?? "") == challenge else {
                return .json(400, ["error": "invalid_grant", "error_description": "Invalid code verifier."])
            }
            return .json(200, ["access_token": "ya29.login", "expires_in": 3599, "refresh_token": "1//login",
                               "scope": OAuthScope.gmailModify, "token_type": "Bearer"])
        }
    }

    @Test("login: consent URL → 302 to the loopback listener → code exchanged with a verifier matching the challenge")
    func fullFlow() async throws {
        let challenges = OAuthTestLocked<[String: String]>([:])
        let server = try Self.google(challenges: challenges) { query in
            "?state=\(OAuthFormEncoding.encode(query["state"]!))&code=code-1&scope=x"
        }
        defer { server.stop() }
        let presented = OAuthTestLocked<URL?>(nil)
        let client = ClientSecret(clientID: "client.apps", clientSecret: "GOCSPX-s")
        let tokens = try await OAuthLogin.run(
            clientSecret: client, authEndpoint: server.url("/auth"), tokenEndpoint: server.url("/token"),
            loginHint: "ada@example.com", timeout: .seconds(20)
        ) { url in
            presented.update { $0 = url }
            let page = try? await oauthTestBrowserGET(url)
            #expect(page?.status == 200)
            #expect(page?.body.contains("Hudson is authorised") == true)
        }
        #expect(tokens.accessToken.value == "ya29.login")
        #expect(tokens.refreshToken == "1//login")

        let consent = try #require(presented.value)
        let query = OAuthTestRequest.form(consent.query ?? "")
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["login_hint"] == "ada@example.com")
        let exchange = try #require(server.requests.last)
        #expect(exchange.form["redirect_uri"] == query["redirect_uri"])  // §7 step 6: identical redirect_uri
        #expect(exchange.form["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true)
    }

    @Test("login: a declined consent ends with accessDenied and no token request")
    func declined() async throws {
        let challenges = OAuthTestLocked<[String: String]>([:])
        let server = try Self.google(challenges: challenges) { query in
            "?error=access_denied&state=\(OAuthFormEncoding.encode(query["state"]!))"
        }
        defer { server.stop() }
        await #expect(throws: LoopbackRedirectError.accessDenied) {
            try await OAuthLogin.run(clientSecret: ClientSecret(clientID: "c", clientSecret: "s"),
                                     authEndpoint: server.url("/auth"), tokenEndpoint: server.url("/token"),
                                     timeout: .seconds(20)) { url in _ = try? await oauthTestBrowserGET(url) }
        }
        #expect(server.requests.allSatisfy { $0.path == "/auth" })
    }

    @Test("login: cancelled while the URL is shown, it ends with CancellationError and closes the listener")
    func cancelledWhilePresenting() async throws {
        let presented = OAuthTestLocked<URL?>(nil)
        let login = Task {
            try await OAuthLogin.run(clientSecret: ClientSecret(clientID: "c", clientSecret: "s"),
                                     authEndpoint: URL(string: "https://accounts.example.com/auth")!,
                                     timeout: .seconds(300)) { url in
                presented.update { $0 = url }
                try? await Task.sleep(for: .seconds(300))  // a person reading the URL; ends when cancelled
            }
        }
        try #require(await oauthTestEventually { presented.value != nil })
        login.cancel()
        await #expect(throws: CancellationError.self) { try await login.value }
        let redirectURI = try #require(OAuthTestRequest.form(presented.value?.query ?? "")["redirect_uri"])
        let port = try #require(URL(string: redirectURI)?.port)
        #expect(OAuthTestRawClient(port: UInt16(port)) == nil)
    }

    @Test("login: endpoints are checked before anything is presented")
    func insecureEndpointBeforePresenting() async {
        let presented = OAuthTestLocked(false)
        await #expect(throws: OAuthTokenError.self) {
            try await OAuthLogin.run(clientSecret: ClientSecret(clientID: "c", clientSecret: "s"),
                                     authEndpoint: URL(string: "http://accounts.example.com/auth")!,
                                     timeout: .seconds(1)) { _ in presented.update { $0 = true } }
        }
        #expect(!presented.value)
    }
}
