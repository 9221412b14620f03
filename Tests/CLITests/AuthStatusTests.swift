// hd-auth status against the fake Gmail's token endpoint (issue 20 §5): a working grant,
// a revoked one (invalid_grant) and one that lost the gmail.modify scope; and hd-auth add
// refusing a grant without it.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-auth status: one refresh per account, the scopes granted, the sync state", .serialized)
struct AuthStatusTests {
    static let modify = "https://www.googleapis.com/auth/gmail.modify"
    static let readonly = "https://www.googleapis.com/auth/gmail.readonly"

    /// A synced account with one change queued and not sent.
    func connected() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "30", "--demo-span-days", "60"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let thread = try #require(f.run("hd-ls", "--ids", "-n", "1").lines.first)
        #expect(try f.run("hd-mark", "--no-flush", "archive", thread).status == 0)
        return (f, fake)
    }

    func status(_ f: CLIFixture, _ arguments: String...) throws -> (CommandResult, [String: Any]) {
        let result = try CommandRunner.run(BuiltProducts.executable("hd-auth"), ["status", "--json"] + arguments,
                                           environment: f.environment, stdin: nil)
        let object = try JSONSerialization.jsonObject(with: Data((result.lines.first ?? "{}").utf8)) as? [String: Any] ?? [:]
        return (result, object)
    }

    @Test("a working grant: exit 0, one refresh, gmail.modify granted, the window, the last sync, the queue")
    func working() throws {
        let (f, fake) = try connected()
        try fake.clearRequests()
        let (result, record) = try status(f)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(result.lines.count == 1)
        #expect(record["type"] as? String == "account_status" && record["id"] as? String == fake.email)
        #expect(record["credentials"] as? String == "ok" && record["refresh"] as? String == "ok")
        #expect(record["scopes"] as? [String] == [Self.modify])
        #expect((record["missing_scopes"] as? [String])?.isEmpty == true)
        #expect(record["needs_login"] as? Bool == false && record["fix"] is NSNull && record["problem"] is NSNull)
        #expect(record["lookback_days"] as? Int == 90 && record["window_start"] is String)
        #expect(record["backfill"] as? String == "complete" && record["last_sync"] is String)
        #expect((record["queued_changes"] as? Int ?? 0) >= 1 && record["outbox"] as? Int == 0 && record["parked"] as? Int == 0)
        #expect(try fake.requests().filter { $0.path == "/token" }.count == 1, "one refresh, no more")
        #expect(try fake.requests().allSatisfy { $0.path == "/token" }, "status must not touch Gmail")

        let text = try f.run("hd-auth", "status")
        #expect(text.status == 0)
        let fields = (text.lines.first ?? "").split(separator: "\t").map(String.init)
        #expect(fields.first == fake.email && fields.dropFirst().first == "ok" && fields.contains("gmail.modify"), "\(text)")
        #expect(try f.run("hd-auth", "status", fake.email.uppercased()).status == 0)
        #expect(try f.run("hd-auth", "status", "nobody@example.com").status == 77)
    }

    @Test("a revoked grant (invalid_grant): exit 77, what happened, the 7-day Testing expiry, and the command to run")
    func revoked() throws {
        let (f, fake) = try connected()
        try fake.admin("POST", "revoke", ["refresh_token": fake.refreshToken])
        let (result, record) = try status(f)
        #expect(result.status == 77, "\(result)")
        #expect(record["refresh"] as? String == "revoked" && record["needs_login"] as? Bool == true)
        #expect(record["scopes"] is NSNull)
        #expect(record["fix"] as? String == "hd-auth login --client-secret FILE")
        #expect((record["queued_changes"] as? Int ?? 0) >= 1, "the queue is still shown")
        #expect(result.stderr.contains("invalid_grant") && result.stderr.contains("Testing") && result.stderr.contains("7 days"),
                "\(result.stderr)")
        #expect(result.stderr.contains("publish"), "\(result.stderr)")
        #expect(result.stderr.contains("to grant access again, run: hd-auth login --client-secret FILE"), "\(result.stderr)")
        // With the client JSON where hd-auth login looks for it, the command is exactly that.
        try FileManager.default.createDirectory(atPath: f.dir.path("config"), withIntermediateDirectories: true)
        try fake.clientSecretJSON.write(toFile: f.dir.path("config/client_secret.json"), atomically: true, encoding: .utf8)
        let plain = try f.run("hd-auth", "status")
        #expect(plain.status == 77 && plain.stderr.hasSuffix("to grant access again, run: hd-auth login\n"), "\(plain)")
        #expect(plain.lines.first?.split(separator: "\t").dropFirst().first == "revoked", "\(plain)")
        // hd-sync says the same.
        let sync = try f.run("hd-sync")
        #expect(sync.status == 77 && sync.stderr.contains("hd-auth login") && sync.stderr.contains("7 days"), "\(sync)")
    }

    @Test("a grant without gmail.modify: exit 77, the missing scope named, the command to run; hd-sync says the same")
    func missingScope() throws {
        let (f, fake) = try connected()
        try fake.admin("POST", "scope", ["refresh_token": fake.refreshToken, "scope": Self.readonly])
        let (result, record) = try status(f)
        #expect(result.status == 77, "\(result)")
        #expect(record["refresh"] as? String == "scope-missing")
        #expect(record["scopes"] as? [String] == [Self.readonly] && record["missing_scopes"] as? [String] == [Self.modify])
        #expect(result.stderr.contains("gmail.modify") && result.stderr.contains("hd-auth login"), "\(result.stderr)")
        let sync = try f.run("hd-sync")
        #expect(sync.status == 77 && sync.stderr.contains("lacks gmail.modify"), "\(sync)")
    }

    @Test("hd-auth add refuses a refresh token whose grant lacks gmail.modify, storing nothing")
    func addChecksScope() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "5"])
        try fake.admin("POST", "scope", ["refresh_token": fake.refreshToken, "scope": Self.readonly])
        f.environment.merge(fake.environment) { $1 }
        try fake.clientSecretJSON.write(toFile: f.dir.path("client_secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: f.dir.path("refresh_token"), atomically: true, encoding: .utf8)
        let add = try f.run("hd-auth", "add", fake.email, "--client-secret", f.dir.path("client_secret.json"),
                            "--refresh-token-file", f.dir.path("refresh_token"))
        #expect(add.status == 77 && add.stderr.contains("gmail.modify"), "\(add)")
        #expect(!FileManager.default.fileExists(atPath: f.credentialsPath))
    }
}
