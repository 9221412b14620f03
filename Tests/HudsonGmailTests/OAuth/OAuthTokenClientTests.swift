// The token endpoint client (gmail-api.md §7 steps 6–7 and "Token endpoint errors") against a scripted
// loopback server playing oauth2.googleapis.com/token.
import Foundation
@testable import HudsonGmail
import Testing

@Suite("OAuth token endpoint client")
struct OAuthTokenClientTests {
    static let modify = "https://www.googleapis.com/auth/gmail.modify"

    private func client(_ server: OAuthTestHTTPServer, now: @escaping @Sendable () -> Date = { Date() }) throws -> OAuthTokenClient {
        try OAuthTokenClient(clientID: "client-1.apps", clientSecret: "GOCSPX-topsecret",
                             tokenEndpoint: server.url("/token"), now: now)
    }

    @Test("code exchange posts the §7 step 6 form and returns both tokens with the expiry")
    func exchange() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(200, ["access_token": "ya29.access", "expires_in": 3599, "refresh_token": "1//refresh",
                        "scope": Self.modify, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let tokens = try await client(server, now: { start })
            .exchange(code: "4/0AX-code", verifier: "v-e-r-i-f-i-e-r", redirectURI: "http://127.0.0.1:5555")
        #expect(tokens.accessToken.value == "ya29.access")
        #expect(tokens.refreshToken == "1//refresh")
        #expect(tokens.accessToken.expiresAt == start.addingTimeInterval(3599))
        #expect(tokens.scopes == [Self.modify])
        let request = try #require(server.requests.first)
        #expect(request.method == "POST" && request.path == "/token")
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(request.form == ["code": "4/0AX-code", "client_id": "client-1.apps", "client_secret": "GOCSPX-topsecret",
                                 "redirect_uri": "http://127.0.0.1:5555", "grant_type": "authorization_code",
                                 "code_verifier": "v-e-r-i-f-i-e-r"])
    }

    @Test("refresh posts the §7 step 7 form; a response without refresh_token is normal")
    func refresh() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(200, ["access_token": "ya29.new", "expires_in": 3599, "scope": Self.modify, "token_type": "Bearer"])
        }
        defer { server.stop() }
        let token = try await client(server).refresh(refreshToken: "1//refresh")
        #expect(token.value == "ya29.new")
        #expect(server.requests.first?.form == ["client_id": "client-1.apps", "client_secret": "GOCSPX-topsecret",
                                                "refresh_token": "1//refresh", "grant_type": "refresh_token"])
    }

    @Test("a code exchange without a refresh token is an error: Hudson could not work offline")
    func exchangeWithoutRefreshToken() async throws {
        let server = try OAuthTestHTTPServer { _ in .json(200, ["access_token": "a", "expires_in": 10, "scope": Self.modify]) }
        defer { server.stop() }
        await #expect(throws: OAuthTokenError.missingRefreshToken) {
            try await client(server).exchange(code: "c", verifier: "v", redirectURI: "http://127.0.0.1:1")
        }
    }

    @Test("invalid_grant on refresh: revoked or expired, run hd-auth login, and the 7-day Testing expiry")
    func invalidGrant() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(400, ["error": "invalid_grant", "error_description": "Token has been expired or revoked."])
        }
        defer { server.stop() }
        let error = await #expect(throws: OAuthTokenError.self) { try await client(server).refresh(refreshToken: "1//r") }
        #expect(error == .invalidGrant(grant: .refreshToken, serverDescription: "Token has been expired or revoked."))
        let text = error?.description ?? ""
        #expect(text.contains("revoked") && text.contains("expired") && text.contains("hd-auth login"))
        #expect(text.contains("Testing") && text.contains("7 days"))
        #expect(error?.kind == .notAuthorised)

        let exchange = await #expect(throws: OAuthTokenError.self) {
            try await client(server).exchange(code: "c", verifier: "v", redirectURI: "http://127.0.0.1:1")
        }
        #expect(exchange?.description.contains("PKCE verifier") == true, "\(String(describing: exchange))")
    }

    @Test("a grant narrower than requested (granular consent) names the missing scope")
    func narrowedScope() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(200, ["access_token": "a", "expires_in": 3599, "refresh_token": "r",
                        "scope": "https://www.googleapis.com/auth/gmail.readonly", "token_type": "Bearer"])
        }
        defer { server.stop() }
        let error = await #expect(throws: OAuthTokenError.self) {
            try await client(server).exchange(code: "c", verifier: "v", redirectURI: "http://127.0.0.1:1")
        }
        #expect(error == .scopeNotGranted(missing: [Self.modify]))
        #expect(error?.description.contains("gmail.modify") == true)
        #expect(OAuthScope.missing(requested: [Self.modify], granted: ["https://mail.google.com/"]).isEmpty)
    }

    @Test("invalid_client is a configuration error")
    func invalidClient() async throws {
        let server = try OAuthTestHTTPServer { _ in
            .json(401, ["error": "invalid_client", "error_description": "The OAuth client was not found."])
        }
        defer { server.stop() }
        let error = await #expect(throws: OAuthTokenError.self) { try await client(server).refresh(refreshToken: "r") }
        #expect(error?.kind == .configuration)
        #expect(error?.description.contains("client id and secret") == true)
    }

    @Test("5xx, 429 and a refused connection are transient (OAuthTransientError), not authorisation failures")
    func transient() async throws {
        for status in [500, 503, 429] {
            let server = try OAuthTestHTTPServer { _ in OAuthTestResponse(status: status, body: "<html>busy</html>") }
            let error = await #expect(throws: OAuthTransientError.self) { try await client(server).refresh(refreshToken: "r") }
            #expect(error?.status == status)
            #expect(error?.kind == .temporary)
            server.stop()
        }
        let closed = try OAuthTestHTTPServer { _ in OAuthTestResponse(status: 200) }
        let deadURL = closed.url("/token")
        closed.stop()
        let offline = try OAuthTokenClient(clientID: "c", clientSecret: "s", tokenEndpoint: deadURL)
        let error = await #expect(throws: OAuthTransientError.self) { try await offline.refresh(refreshToken: "r") }
        #expect(error?.status == nil)
    }

    @Test("other errors and malformed answers are reported, not mistaken for success")
    func malformed() async throws {
        let server = try OAuthTestHTTPServer { request in
            switch request.form["refresh_token"] {
            case "html": return OAuthTestResponse(status: 400, body: "<html>nope</html>")
            case "nojson": return OAuthTestResponse(status: 200, body: "ok")
            case "notoken": return .json(200, ["expires_in": 5])
            default: return .json(400, ["error": "invalid_request", "error_description": "Missing parameter"])
            }
        }
        defer { server.stop() }
        let c = try client(server)
        await #expect(throws: OAuthTokenError.malformedResponse(status: 400, detail: "not an OAuth error response")) {
            try await c.refresh(refreshToken: "html")
        }
        await #expect(throws: OAuthTokenError.malformedResponse(status: 200, detail: "not a JSON object")) {
            try await c.refresh(refreshToken: "nojson")
        }
        await #expect(throws: OAuthTokenError.malformedResponse(status: 200, detail: "no access_token string")) {
            try await c.refresh(refreshToken: "notoken")
        }
        await #expect(throws: OAuthTokenError.rejected(status: 400, error: "invalid_request", serverDescription: "Missing parameter")) {
            try await c.refresh(refreshToken: "other")
        }
    }

    @Test("plain http to a non-loopback token endpoint is refused before any request")
    func insecureEndpointRefused() {
        #expect(throws: OAuthTokenError.insecureEndpoint("http://oauth2.googleapis.com/token")) {
            try OAuthTokenClient(clientID: "c", clientSecret: "s", tokenEndpoint: URL(string: "http://oauth2.googleapis.com/token")!)
        }
        #expect(throws: OAuthTokenError.self) {
            try OAuthTokenClient(clientSecret: ClientSecret(clientID: "c", clientSecret: "s",
                                                            tokenURI: URL(string: "http://evil.example/token")!))
        }
    }
}
