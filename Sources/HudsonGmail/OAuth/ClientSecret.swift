/*!
 Google's downloaded OAuth client file (`client_secret_<id>.json`, gmail-api.md §7 step 1) and the choice
 of endpoints derived from it. Only a "Desktop app" client (`{"installed": {...}}`) can use the loopback
 redirect (§7 step 3), so a `{"web": {...}}` file is rejected with a message saying what to create
 instead. Endpoints resolve as: the caller's override (the CLI reads `HUDSON_OAUTH_*_URL`, CONTRACT.md
 "Endpoints"), else the file's `token_uri`/`auth_uri` ("Use the `token_uri` from the file", §7 step 1), else
 Google's defaults. The client secret of a desktop client is not confidential ([native]), but it is still
 kept out of every error message.
 */
import Foundation

/// The `installed` section of a Google OAuth client JSON file.
public struct ClientSecret: Sendable, Equatable {
    public let clientID: String
    public let clientSecret: String
    /// The file's `auth_uri`, if any.
    public let authURI: URL?
    /// The file's `token_uri`, if any.
    public let tokenURI: URL?
    public let redirectURIs: [String]

    public init(clientID: String, clientSecret: String, authURI: URL? = nil, tokenURI: URL? = nil,
                redirectURIs: [String] = []) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authURI = authURI
        self.tokenURI = tokenURI
        self.redirectURIs = redirectURIs
    }

    /// Parses the downloaded client JSON; throws `ClientSecretError` naming what is wrong.
    public init(json data: Data) throws {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ClientSecretError.notJSON
        }
        guard let installed = root["installed"] as? [String: Any] else {
            if root["web"] != nil { throw ClientSecretError.webClient }
            throw ClientSecretError.notInstalledClient(keys: root.keys.sorted())
        }
        func string(_ key: String) throws -> String {
            guard let value = installed[key] as? String,
                  !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw ClientSecretError.missingField(key)
            }
            return value
        }
        func url(_ key: String) throws -> URL? {
            guard installed[key] != nil else { return nil }
            guard let text = installed[key] as? String, let url = URL(string: text), url.scheme != nil else {
                throw ClientSecretError.invalidField(key)
            }
            return url
        }
        self.init(clientID: try string("client_id"), clientSecret: try string("client_secret"),
                  authURI: try url("auth_uri"), tokenURI: try url("token_uri"),
                  redirectURIs: installed["redirect_uris"] as? [String] ?? [])
    }

    /// Reads and parses a client JSON file.
    public init(contentsOfFile path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ClientSecretError.unreadable(path: path)
        }
        try self.init(json: data)
    }

    /// The token endpoint to use: `override`, else the file's `token_uri`, else Google's default.
    public func tokenEndpoint(override: URL? = nil) -> URL {
        override ?? tokenURI ?? OAuthEndpoint.defaultTokenURL
    }

    /// The consent page to use: `override`, else the file's `auth_uri`, else Google's default.
    public func authEndpoint(override: URL? = nil) -> URL {
        override ?? authURI ?? OAuthEndpoint.defaultAuthURL
    }
}

extension ClientSecret: CustomStringConvertible, CustomDebugStringConvertible {
    /// Names the client id only; the secret never appears in logs or error output.
    public var description: String { "ClientSecret(client_id: \(clientID), client_secret: <redacted>)" }
    public var debugDescription: String { description }
}

/// A client JSON file that Hudson cannot use. All cases are configuration problems.
public enum ClientSecretError: OAuthFailure, Equatable {
    case unreadable(path: String)
    case notJSON
    /// The file is for a "Web application" client, which cannot use a loopback redirect.
    case webClient
    case notInstalledClient(keys: [String])
    case missingField(String)
    case invalidField(String)

    public var kind: OAuthFailureKind { .configuration }

    public var description: String {
        switch self {
        case .unreadable(let path):
            return "cannot read the OAuth client file '\(path)'"
        case .notJSON:
            return "the OAuth client file is not a JSON object; download it again from the Google Cloud console"
        case .webClient:
            return "the OAuth client file is for a \"Web application\" client; create an OAuth client of type "
                + "\"Desktop app\" in the Google Cloud console and download its JSON"
        case .notInstalledClient(let keys):
            let found = keys.isEmpty ? "no keys" : "keys " + keys.joined(separator: ", ")
            return "the OAuth client file has no \"installed\" section (found \(found)); "
                + "download the JSON of a \"Desktop app\" OAuth client"
        case .missingField(let key):
            return "the OAuth client file has no \"\(key)\" in its \"installed\" section"
        case .invalidField(let key):
            return "the OAuth client file's \"\(key)\" is not a URL"
        }
    }
}
