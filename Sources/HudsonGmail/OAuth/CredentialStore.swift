/*!
 One account's saved authorisation (`OAuthCredential`) and the directory that holds them
 (`CredentialStore`), as CONTRACT.md "Files" specifies: `credentials/<email>.json` under the configuration
 directory the CLI resolves (`$HUDSON_CONFIG_DIR`, XDG), directory 0700, files 0600 written atomically,
 and a refusal, with the fix spelled out, of any file group or others could read, of a symlink, of a file
 owned by someone else, and of a credentials directory others can write. The e-mail address becomes a
 file name, so it is validated to stay inside the directory. Refresh tokens (and, optionally, a cached
 access token) live only in these files, never in the SQLite store.
 */
import Foundation
import Glibc

/// What is saved for one account.
public struct OAuthCredential: Codable, Sendable, Equatable {
    public var email: String
    public var clientID: String
    public var clientSecret: String
    public var tokenURI: URL
    public var authURI: URL?
    public var refreshToken: String
    /// The granted scopes, space-separated as the token endpoint returns them.
    public var scope: String
    public var createdAt: Date
    /// A cached access token, so that short-lived commands need not refresh every time.
    public var accessToken: String?
    public var accessTokenExpiresAt: Date?

    enum CodingKeys: String, CodingKey {
        case email, scope
        case clientID = "client_id", clientSecret = "client_secret", tokenURI = "token_uri", authURI = "auth_uri"
        case refreshToken = "refresh_token", createdAt = "created_at"
        case accessToken = "access_token", accessTokenExpiresAt = "access_token_expires_at"
    }

    public init(email: String, clientID: String, clientSecret: String, tokenURI: URL, authURI: URL? = nil,
                refreshToken: String, scope: String, createdAt: Date, accessToken: OAuthAccessToken? = nil) {
        self.email = email
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.tokenURI = tokenURI
        self.authURI = authURI
        self.refreshToken = refreshToken
        self.scope = scope
        self.createdAt = createdAt
        self.accessToken = accessToken?.value
        self.accessTokenExpiresAt = accessToken?.expiresAt
    }

    /// The credential of a completed login: the client it used, its endpoints and the tokens it got.
    public init(email: String, clientSecret: ClientSecret, tokens: OAuthTokens, tokenEndpoint: URL,
                authEndpoint: URL?, createdAt: Date, cacheAccessToken: Bool = true) {
        self.init(email: email, clientID: clientSecret.clientID, clientSecret: clientSecret.clientSecret,
                  tokenURI: tokenEndpoint, authURI: authEndpoint, refreshToken: tokens.refreshToken,
                  scope: tokens.scopes.joined(separator: " "), createdAt: createdAt,
                  accessToken: cacheAccessToken ? tokens.accessToken : nil)
    }

    /// The cached access token, when both its value and expiry were saved.
    public var cachedAccessToken: OAuthAccessToken? {
        guard let accessToken, let accessTokenExpiresAt else { return nil }
        return OAuthAccessToken(value: accessToken, expiresAt: accessTokenExpiresAt, scopes: OAuthScope.split(scope))
    }

    /// The client id and secret as a `ClientSecret`, for building an `OAuthTokenClient`.
    public var clientSecretValue: ClientSecret {
        ClientSecret(clientID: clientID, clientSecret: clientSecret, authURI: authURI, tokenURI: tokenURI)
    }
}

extension OAuthCredential: CustomStringConvertible, CustomDebugStringConvertible {
    /// Names the account and the client; every secret is redacted.
    public var description: String {
        "OAuthCredential(email: \(email), client_id: \(clientID), client_secret: <redacted>, "
            + "refresh_token: <redacted>, access_token: \(accessToken == nil ? "none" : "<redacted>"))"
    }
    public var debugDescription: String { description }
}

/// The `credentials/` directory of the configuration directory.
public struct CredentialStore: Sendable {
    /// The configuration directory (`$HUDSON_CONFIG_DIR`, `$XDG_CONFIG_HOME/hudson`, `~/.config/hudson`).
    public let configDirectory: String
    /// `<configDirectory>/credentials`.
    public var credentialsDirectory: String { configDirectory + "/credentials" }

    public init(configDirectory: String) {
        var path = configDirectory
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        self.configDirectory = path
    }

    /// Saves (or replaces) the credential of `credential.email`, creating the directories 0700 as needed.
    public func save(_ credential: OAuthCredential) throws {
        let name = try CredentialStore.fileName(for: credential.email)
        try CredentialFileIO.makeDirectory(configDirectory)
        try CredentialFileIO.makeDirectory(credentialsDirectory)
        try CredentialFileIO.checkPrivateDirectory(credentialsDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var data = try encoder.encode(credential)
        data.append(0x0A)
        try CredentialFileIO.writeAtomically(data, directory: credentialsDirectory, name: name)
    }

    /// Loads the credential of `email`, refusing files that are not private (CONTRACT.md "Files").
    public func load(email: String) throws -> OAuthCredential {
        let name = try CredentialStore.fileName(for: email)
        guard try CredentialFileIO.checkPrivateDirectory(credentialsDirectory) else {
            throw CredentialStoreError.notFound(email: email)
        }
        let path = credentialsDirectory + "/" + name
        guard let data = try CredentialFileIO.readPrivateFile(path) else { throw CredentialStoreError.notFound(email: email) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let credential: OAuthCredential
        do {
            credential = try decoder.decode(OAuthCredential.self, from: data)
        } catch {
            throw CredentialStoreError.malformed(path: path, detail: credentialStoreDecodingDetail(error))
        }
        guard credential.email.lowercased() == email.lowercased() else {
            throw CredentialStoreError.malformed(path: path, detail: "it holds another account")
        }
        return credential
    }

    /// The stored addresses (file names), sorted. Leftover temporary files are not listed.
    public func list() throws -> [String] {
        guard let names = try CredentialFileIO.names(in: credentialsDirectory) else { return [] }
        return names.filter { $0.hasSuffix(".json") }
            .map { String($0.dropLast(5)) }
            .filter { (try? CredentialStore.fileName(for: $0)) == $0 + ".json" }
            .sorted()
    }

    /// Deletes the credential of `email`; throws `.notFound` when there is none.
    public func remove(email: String) throws {
        let name = try CredentialStore.fileName(for: email)
        guard try CredentialFileIO.remove(directory: credentialsDirectory, name: name) else {
            throw CredentialStoreError.notFound(email: email)
        }
    }

    /// The file that holds `email`'s credential.
    public func path(for email: String) throws -> String {
        credentialsDirectory + "/" + (try CredentialStore.fileName(for: email))
    }

    /// `<email>.json`, lower-cased (Gmail addresses are case-insensitive), after checking that the address
    /// cannot name anything outside the directory or a hidden (temporary) file.
    static func fileName(for email: String) throws -> String {
        let scalars = email.unicodeScalars
        guard !email.isEmpty, email.utf8.count <= 254, email.contains("@"),
              !email.hasPrefix("."), !email.contains(".."),
              !scalars.contains(where: { $0 == "/" || $0 == "\\" || $0 == "\0" || $0.properties.isWhitespace
                                         || $0.properties.generalCategory == .control }) else {
            throw CredentialStoreError.invalidEmail
        }
        return email.lowercased() + ".json"
    }
}

/// Why a credentials file could not be used.
public enum CredentialStoreError: OAuthFailure, Equatable {
    case invalidEmail
    case notFound(email: String)
    case tooOpen(path: String, mode: mode_t)
    case directoryTooOpen(path: String, mode: mode_t)
    case symlink(path: String)
    case notRegularFile(path: String)
    case wrongOwner(path: String, owner: uid_t, user: uid_t)
    case malformed(path: String, detail: String)
    case io(operation: String, path: String, errno: Int32)

    public var kind: OAuthFailureKind {
        if case .notFound = self { return .notAuthorised }
        return .configuration
    }

    public var description: String {
        switch self {
        case .invalidEmail:
            return "not a usable account address (it must contain '@' and no '/', '..', NUL or spaces)"
        case .notFound(let email):
            return "no credentials for \(email); run 'hd-auth login'"
        case .tooOpen(let path, let mode):
            return "permissions \(octal(mode)) for '\(path)' are too open; it must not be accessible by group "
                + "or others: run chmod 600 '\(path)'"
        case .directoryTooOpen(let path, let mode):
            return "permissions \(octal(mode)) for directory '\(path)' are too open; it must not be writable by "
                + "group or others: run chmod 700 '\(path)'"
        case .symlink(let path):
            return "'\(path)' is a symbolic link; a credentials file must be a regular file: replace the link "
                + "with the file, or run 'hd-auth login' again"
        case .notRegularFile(let path):
            return "'\(path)' is not a regular file; remove it and run 'hd-auth login' again"
        case .wrongOwner(let path, let owner, let user):
            return "'\(path)' is owned by uid \(owner), not by you (uid \(user)); run chown \(user) '\(path)' "
                + "or 'hd-auth login' again"
        case .malformed(let path, let detail):
            return "'\(path)' is not a valid credentials file (\(detail)); run 'hd-auth login' again"
        case .io(let operation, let path, let code):
            return "cannot \(operation) '\(path)': \(String(cString: strerror(code)))"
        }
    }

    private func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// A decoding failure as a field name, never the value (which could be a token).
private func credentialStoreDecodingDetail(_ error: Error) -> String {
    switch error as? DecodingError {
    case .keyNotFound(let key, _)?: return "missing \"\(key.stringValue)\""
    case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? "not JSON" : "bad \"\(path)\""
    default: return "not JSON"
    }
}
