// The credentials files of CONTRACT.md "Files": 0700/0600 regardless of umask, atomic replacement, and
// the ssh-like refusal of files others could read, symlinks, foreign owners and open directories.
// The umask test keeps its umask to a thread of its own (oauthTestWithUmask), not the process's, which
// the suites running alongside share. Serialized for where that is refused and it falls back to the
// process's umask.
import Foundation
import Glibc
@testable import HudsonGmail
import Testing

@Suite("Credential store", .serialized)
struct CredentialStoreTests {
    let dir = OAuthTestDirectory()
    var store: CredentialStore { CredentialStore(configDirectory: dir.path("config/hudson")) }

    func credential(_ email: String = "ada@example.com", refresh: String = "1//refresh-token") -> OAuthCredential {
        OAuthCredential(email: email, clientID: "client.apps", clientSecret: "GOCSPX-secret",
                        tokenURI: OAuthEndpoint.defaultTokenURL, refreshToken: refresh,
                        scope: OAuthScope.gmailModify, createdAt: Date(timeIntervalSince1970: 1_700_000_000),
                        accessToken: OAuthAccessToken(value: "ya29.cached", expiresAt: Date(timeIntervalSince1970: 1_700_003_600),
                                                      scopes: [OAuthScope.gmailModify]))
    }

    @Test("directories are created 0700 and files written 0600 even under umask 000")
    func modesUnderPermissiveUmask() async throws {
        let store = store, credential = credential()
        try await oauthTestWithUmask(0) { try store.save(credential) }
        #expect(oauthTestMode(dir.path("config")) == 0o700)
        #expect(oauthTestMode(dir.path("config/hudson")) == 0o700)
        #expect(oauthTestMode(dir.path("config/hudson/credentials")) == 0o700)
        #expect(oauthTestMode(dir.path("config/hudson/credentials/ada@example.com.json")) == 0o600)
    }

    @Test("a file is read back as written, with snake_case keys, and listed by address")
    func roundTrip() throws {
        try store.save(credential())
        try store.save(credential("bob@example.com"))
        let loaded = try store.load(email: "ada@example.com")
        #expect(loaded == credential())
        #expect(loaded.cachedAccessToken?.value == "ya29.cached")
        #expect(try store.list() == ["ada@example.com", "bob@example.com"])
        let text = try String(contentsOfFile: try store.path(for: "ada@example.com"), encoding: .utf8)
        for key in ["\"email\"", "\"client_id\"", "\"client_secret\"", "\"token_uri\"", "\"refresh_token\"",
                    "\"scope\"", "\"created_at\"", "\"access_token\"", "\"access_token_expires_at\""] {
            #expect(text.contains(key), "\(key)")
        }
        #expect(text.contains("\"created_at\" : \"2023-11-14T22:13:20Z\""))
    }

    @Test("addresses are case-insensitive: one file, found by any spelling")
    func caseInsensitive() throws {
        try store.save(credential("Ada@Example.COM"))
        #expect(try store.list() == ["ada@example.com"])
        #expect(try store.load(email: "ada@example.com").email == "Ada@Example.COM")
    }

    @Test("saving again replaces the file by rename, leaving no temporary file")
    func atomicReplace() throws {
        try store.save(credential(refresh: "old"))
        let path = try store.path(for: "ada@example.com")
        var before = stat()
        stat(path, &before)
        try store.save(credential(refresh: "new"))
        var after = stat()
        stat(path, &after)
        #expect(before.st_ino != after.st_ino)  // a new inode renamed over the old one, not rewritten in place
        #expect(try store.load(email: "ada@example.com").refreshToken == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.credentialsDirectory) == ["ada@example.com.json"])
        #expect(oauthTestMode(path) == 0o600)
    }

    @Test("a write killed half-way (a leftover temporary file) leaves the old file in force and unlisted")
    func interruptedWrite() throws {
        try store.save(credential(refresh: "old"))
        let leftover = store.credentialsDirectory + "/.ada@example.com.json.tmp-dead"
        _ = FileManager.default.createFile(atPath: leftover, contents: Data("{\"email\": \"ada@exa".utf8),
                                       attributes: [.posixPermissions: 0o600])
        #expect(try store.load(email: "ada@example.com").refreshToken == "old")
        #expect(try store.list() == ["ada@example.com"])
        try store.save(credential(refresh: "new"))
        #expect(try store.load(email: "ada@example.com").refreshToken == "new")
    }

    @Test("a file group or others can access is refused, saying how to fix it (as ssh does)")
    func tooOpenFile() throws {
        try store.save(credential())
        let path = try store.path(for: "ada@example.com")
        for mode: mode_t in [0o644, 0o640, 0o604, 0o660] {
            chmod(path, mode)
            let error = #expect(throws: CredentialStoreError.tooOpen(path: path, mode: mode)) {
                try store.load(email: "ada@example.com")
            }
            #expect(error?.kind == .configuration)
        }
        chmod(path, 0o644)
        let message = CredentialStoreError.tooOpen(path: path, mode: 0o644).description
        #expect(message.contains("permissions 0644 for '\(path)' are too open"))
        #expect(message.contains("chmod 600 '\(path)'"))
        chmod(path, 0o400)
        #expect(try store.load(email: "ada@example.com").email == "ada@example.com")
    }

    @Test("a symlink in place of the file is refused, even to a private file")
    func symlinkRefused() throws {
        try store.save(credential())
        let path = try store.path(for: "ada@example.com")
        let elsewhere = dir.path("elsewhere.json")
        try FileManager.default.moveItem(atPath: path, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: elsewhere)
        #expect(throws: CredentialStoreError.symlink(path: path)) { try store.load(email: "ada@example.com") }
    }

    @Test("a credentials directory group or others can write is refused")
    func openDirectoryRefused() throws {
        try store.save(credential())
        let credentials = store.credentialsDirectory
        for mode: mode_t in [0o770, 0o703, 0o777] {
            chmod(credentials, mode)
            #expect(throws: CredentialStoreError.directoryTooOpen(path: credentials, mode: mode)) {
                try store.load(email: "ada@example.com")
            }
            #expect(throws: CredentialStoreError.directoryTooOpen(path: credentials, mode: mode)) { try store.save(credential()) }
        }
        chmod(credentials, 0o750)
        #expect(try store.load(email: "ada@example.com").email == "ada@example.com")
        chmod(credentials, 0o700)
    }

    @Test("a file owned by another user is refused")
    func foreignOwner() throws {
        guard geteuid() == 0 else { return }  // only root can give a file away
        try store.save(credential())
        let path = try store.path(for: "ada@example.com")
        #expect(chown(path, 4242, 4242) == 0)
        #expect(throws: CredentialStoreError.wrongOwner(path: path, owner: 4242, user: 0)) {
            try store.load(email: "ada@example.com")
        }
    }

    @Test("addresses that could escape the directory or hide a file are rejected everywhere")
    func pathEscapes() throws {
        for email in ["../evil@example.com", "a/b@example.com", "ada@example.com/../../x", "a\u{0}b@example.com",
                      "no-at-sign", ".hidden@example.com", "", "a..b@example.com", "a b@example.com", "a\\b@x"] {
            #expect(throws: CredentialStoreError.invalidEmail, "\(email.debugDescription)") { try store.save(credential(email)) }
            #expect(throws: CredentialStoreError.invalidEmail) { try store.load(email: email) }
            #expect(throws: CredentialStoreError.invalidEmail) { try store.remove(email: email) }
            #expect(throws: CredentialStoreError.invalidEmail) { try store.path(for: email) }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("config")))
    }

    @Test("missing accounts are 'not authorised'; remove deletes exactly one account")
    func missingAndRemove() throws {
        #expect(try store.list() == [])
        let missing = #expect(throws: CredentialStoreError.notFound(email: "ada@example.com")) {
            try store.load(email: "ada@example.com")
        }
        #expect(missing?.kind == .notAuthorised)
        #expect(missing?.description.contains("hd-auth login") == true)
        try store.save(credential())
        try store.save(credential("bob@example.com"))
        try store.remove(email: "ada@example.com")
        #expect(try store.list() == ["bob@example.com"])
        #expect(throws: CredentialStoreError.notFound(email: "ada@example.com")) { try store.remove(email: "ada@example.com") }
    }

    @Test("a corrupt file is a configuration error that names no secret from it")
    func malformed() throws {
        try store.save(credential())
        let path = try store.path(for: "ada@example.com")
        let bad = #"{"email": "ada@example.com", "refresh_token": 1, "client_secret": "GOCSPX-leak"}"#
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = Array(bad.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let error = #expect(throws: CredentialStoreError.self) { try store.load(email: "ada@example.com") }
        #expect(error?.kind == .configuration)
        #expect(error?.description.contains("GOCSPX-leak") == false)
    }
}
