// CONTRACT.md "Files": access tokens are never printed or logged. Every error the OAuth code can raise is
// driven here by a server that echoes the secrets it was sent, and no description may contain one.
import Foundation
@testable import HudsonGmail
import Testing

@Suite("OAuth secrets never appear in errors or printed values")
struct OAuthSecretRedactionTests {
    static let secrets = ["GOCSPX-client-secret-XYZ", "1//refresh-token-XYZ", "4/0AX-auth-code-XYZ",
                          "verifier-XYZ-0123456789-abcdefghijklmnopqrstuvwxyz", "ya29.access-token-XYZ"]

    private func expectClean(_ error: Error, _ context: String) {
        let texts = ["\(error)", String(reflecting: error), error.localizedDescription]
        for text in texts {
            for secret in Self.secrets {
                #expect(!text.contains(secret), "\(context): \(text)")
                #expect(!text.contains(OAuthFormEncoding.encode(secret)), "\(context): \(text)")
            }
        }
    }

    @Test("no token, code, verifier or client secret appears in any token-endpoint error description")
    func tokenEndpointErrors() async throws {
        // The server echoes the whole request body (every secret) in each error shape.
        let server = try OAuthTestHTTPServer { request in
            let echo = request.body + " " + request.form.values.joined(separator: " ")
            switch request.path {
            case "/invalid_grant", "/invalid_client", "/invalid_request":
                return .json(400, ["error": String(request.path.dropFirst()), "error_description": echo])
            case "/error-code":
                return .json(400, ["error": request.form["refresh_token"] ?? request.form["code"] ?? "", "error_description": echo])
            case "/scope":
                return .json(200, ["access_token": "ya29.access-token-XYZ", "refresh_token": echo, "scope": echo])
            case "/no-refresh":
                return .json(200, ["access_token": "ya29.access-token-XYZ", "scope": OAuthScope.gmailModify])
            default:
                return OAuthTestResponse(status: 503, body: echo)
            }
        }
        defer { server.stop() }
        for path in ["/invalid_grant", "/invalid_client", "/invalid_request", "/error-code", "/scope", "/no-refresh", "/busy"] {
            let client = try OAuthTokenClient(clientID: "c", clientSecret: Self.secrets[0], tokenEndpoint: server.url(path))
            do {
                _ = try await client.refresh(refreshToken: Self.secrets[1])
                if path != "/no-refresh" { Issue.record("\(path): refresh should fail") }
            } catch {
                expectClean(error, "refresh \(path)")
            }
            do {
                _ = try await client.exchange(code: Self.secrets[2], verifier: Self.secrets[3], redirectURI: "http://127.0.0.1:1")
                Issue.record("\(path): exchange should fail")
            } catch {
                expectClean(error, "exchange \(path)")
            }
        }
    }

    @Test("an endpoint URL with credentials in it is reported without them")
    func endpointURL() {
        let url = URL(string: "http://user:GOCSPX-client-secret-XYZ@example.com/token?refresh=1//refresh-token-XYZ")!
        do {
            try OAuthEndpoint.validate(url)
            Issue.record("http to example.com must be refused")
        } catch {
            expectClean(error, "insecure endpoint")
        }
    }

    @Test("a redirect's code is not echoed in the listener's error or page")
    func redirectErrors() async throws {
        let listener = try LoopbackRedirectListener()
        let url = URL(string: listener.redirectURI + "/?state=wrong&code=4%2F0AX-auth-code-XYZ")!
        // Serving from now on, on the listener's thread (an `async let` would serve only once the busy
        // cooperative pool ran it, possibly after the browser's request had timed out).
        let wait = try listener.start(expectedState: "state", timeout: .seconds(90))
        let page = try await oauthTestBrowserGET(url)
        #expect(!page.body.contains("auth-code-XYZ"))
        if case .failure(let error) = await oauthTestResult({ try await wait.code }) {
            expectClean(error, "state mismatch")
        } else {
            Issue.record("must fail")
        }
    }

    @Test("tokens, credentials and client secrets print redacted")
    func printedValues() {
        let access = OAuthAccessToken(value: Self.secrets[4], expiresAt: Date(), scopes: [])
        let tokens = OAuthTokens(accessToken: access, refreshToken: Self.secrets[1])
        let credential = OAuthCredential(email: "ada@example.com", clientSecret: ClientSecret(clientID: "c", clientSecret: Self.secrets[0]),
                                         tokens: tokens, tokenEndpoint: OAuthEndpoint.defaultTokenURL, authEndpoint: nil,
                                         createdAt: Date())
        for text in ["\(access)", "\(tokens)", "\(credential)", String(reflecting: tokens), String(reflecting: credential)] {
            for secret in Self.secrets { #expect(!text.contains(secret), "\(text)") }
        }
    }
}
