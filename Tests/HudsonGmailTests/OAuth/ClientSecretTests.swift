// Google's client JSON (gmail-api.md §7 step 1) and endpoint resolution (CONTRACT.md "Endpoints").
import Foundation
@testable import HudsonGmail
import Testing

@Suite("OAuth client JSON")
struct ClientSecretTests {
    static let installed = """
        {"installed": {
           "client_id": "1234567890-abc123.apps.googleusercontent.com",
           "project_id": "hudson-123456",
           "auth_uri": "https://accounts.google.com/o/oauth2/auth",
           "token_uri": "https://oauth2.googleapis.com/token",
           "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
           "client_secret": "GOCSPX-xxxxxxxxxxxxxxxxxxxxxxxx",
           "redirect_uris": ["http://localhost"]}}
        """

    @Test("an \"installed\" (Desktop app) file gives id, secret, endpoints and redirect URIs")
    func installed() throws {
        let client = try ClientSecret(json: Data(Self.installed.utf8))
        #expect(client.clientID == "1234567890-abc123.apps.googleusercontent.com")
        #expect(client.clientSecret == "GOCSPX-xxxxxxxxxxxxxxxxxxxxxxxx")
        #expect(client.authURI?.absoluteString == "https://accounts.google.com/o/oauth2/auth")
        #expect(client.tokenURI?.absoluteString == "https://oauth2.googleapis.com/token")
        #expect(client.redirectURIs == ["http://localhost"])
    }

    @Test("a \"web\" client file is refused with a message asking for a Desktop app client")
    func webRejected() {
        let json = #"{"web": {"client_id": "x", "client_secret": "y"}}"#
        #expect(throws: ClientSecretError.webClient) { try ClientSecret(json: Data(json.utf8)) }
        #expect(ClientSecretError.webClient.description.contains("Desktop app"))
        #expect(ClientSecretError.webClient.kind == .configuration)
    }

    @Test("a missing client_id or client_secret, another shape, or non-JSON is named in the error")
    func missingFields() {
        #expect(throws: ClientSecretError.missingField("client_id")) {
            try ClientSecret(json: Data(#"{"installed": {"client_secret": "s"}}"#.utf8))
        }
        #expect(throws: ClientSecretError.missingField("client_secret")) {
            try ClientSecret(json: Data(#"{"installed": {"client_id": "c", "client_secret": " "}}"#.utf8))
        }
        #expect(throws: ClientSecretError.notInstalledClient(keys: ["other"])) {
            try ClientSecret(json: Data(#"{"other": {}}"#.utf8))
        }
        #expect(throws: ClientSecretError.notJSON) { try ClientSecret(json: Data("[1]".utf8)) }
        #expect(throws: ClientSecretError.invalidField("token_uri")) {
            try ClientSecret(json: Data(#"{"installed": {"client_id": "c", "client_secret": "s", "token_uri": 5}}"#.utf8))
        }
        #expect(throws: ClientSecretError.unreadable(path: "/nonexistent/client.json")) {
            try ClientSecret(contentsOfFile: "/nonexistent/client.json")
        }
    }

    @Test("endpoints: the caller's override, else the file's, else Google's defaults")
    func endpointResolution() throws {
        let file = try ClientSecret(json: Data(Self.installed.utf8))
        let override = URL(string: "http://127.0.0.1:9/token")!
        #expect(file.tokenEndpoint(override: override) == override)
        #expect(file.tokenEndpoint() == URL(string: "https://oauth2.googleapis.com/token")!)
        #expect(file.authEndpoint() == URL(string: "https://accounts.google.com/o/oauth2/auth")!)
        let bare = ClientSecret(clientID: "c", clientSecret: "s")
        #expect(bare.tokenEndpoint() == OAuthEndpoint.defaultTokenURL)
        #expect(bare.authEndpoint() == URL(string: "https://accounts.google.com/o/oauth2/v2/auth")!)
    }

    @Test("the client secret is redacted when the value is printed")
    func redacted() throws {
        let client = try ClientSecret(json: Data(Self.installed.utf8))
        #expect(!"\(client)".contains("GOCSPX"))
        #expect(!String(reflecting: client).contains("GOCSPX"))
    }
}
