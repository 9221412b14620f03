// The consent URL (gmail-api.md §7 step 4) and the http-only-to-loopback rule (CONTRACT.md "Endpoints").
import Foundation
@testable import HudsonGmail
import Testing

@Suite("OAuth consent URL")
struct OAuthConsentURLTests {
    let pkce = try! PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")

    private func items(_ url: URL) -> [String: String] {
        var result: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            result[item.name] = item.value
        }
        return result
    }

    @Test("the URL carries every parameter of §7 step 4 with PKCE S256, offline access and forced consent")
    func parameters() throws {
        let url = try OAuthConsentURL.make(authEndpoint: OAuthEndpoint.defaultAuthURL, clientID: "id-1.apps",
                                           redirectURI: "http://127.0.0.1:4711", pkce: pkce, state: "st4te",
                                           loginHint: "ada@example.com")
        #expect(url.absoluteString.hasPrefix("https://accounts.google.com/o/oauth2/v2/auth?"))
        #expect(items(url) == [
            "client_id": "id-1.apps", "redirect_uri": "http://127.0.0.1:4711", "response_type": "code",
            "scope": "https://www.googleapis.com/auth/gmail.modify",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
            "state": "st4te", "access_type": "offline", "prompt": "consent", "login_hint": "ada@example.com",
        ])
    }

    @Test("values are percent-encoded: ':' '/' '@' and the space between scopes never appear raw")
    func encoding() throws {
        let url = try OAuthConsentURL.make(authEndpoint: OAuthEndpoint.defaultAuthURL, clientID: "id",
                                           redirectURI: "http://127.0.0.1:4711",
                                           scopes: [OAuthScope.gmailModify, "openid"], pkce: pkce, state: "s",
                                           loginHint: "a+b@example.com")
        let query = url.query(percentEncoded: true) ?? ""
        #expect(query.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A4711"))
        #expect(query.contains("scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fgmail.modify%20openid"))
        #expect(query.contains("login_hint=a%2Bb%40example.com"))
        #expect(items(url)["scope"] == "https://www.googleapis.com/auth/gmail.modify openid")
        #expect(items(url)["login_hint"] == "a+b@example.com")
    }

    @Test("without a login hint there is no login_hint; an endpoint's own query is kept")
    func noHintAndExistingQuery() throws {
        let url = try OAuthConsentURL.make(authEndpoint: URL(string: "http://127.0.0.1:8/auth?tenant=x")!,
                                           clientID: "id", redirectURI: "http://127.0.0.1:1", pkce: pkce, state: "s")
        #expect(items(url)["login_hint"] == nil)
        #expect(items(url)["tenant"] == "x")
        #expect(items(url)["client_id"] == "id")
    }

    @Test("plain http is accepted only for loopback hosts; anything else must be https")
    func loopbackRule() throws {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "[::1]"] {
            try OAuthEndpoint.validate(URL(string: "http://\(host):8080/token")!)
        }
        for url in ["http://example.com/token", "http://127.0.0.1.example.com/token", "http://10.0.0.1/t",
                    "ftp://127.0.0.1/t", "http://128.0.0.1/t"] {
            #expect(throws: OAuthTokenError.self, "\(url)") { try OAuthEndpoint.validate(URL(string: url)!) }
        }
        try OAuthEndpoint.validate(URL(string: "https://oauth2.googleapis.com/token")!)
        #expect(throws: OAuthTokenError.insecureEndpoint("http://example.com/auth")) {
            try OAuthConsentURL.make(authEndpoint: URL(string: "http://user:pw@example.com/auth?k=secret")!,
                                     clientID: "id", redirectURI: "http://127.0.0.1:1", pkce: pkce, state: "s")
        }
    }
}
