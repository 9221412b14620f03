import Foundation
import HudsonTestSupport
import Testing

/// The demo mailbox: 300 messages over the two years before now, so a 90-day window
/// taken at consent (now) holds some of them and leaves the rest out.
func demoFake(_ extra: [String] = []) throws -> FakeGmail {
    try FakeGmail(["--demo", "--demo-count", "300", "--demo-span-days", "730"] + extra)
}

@Suite("hd-auth and hd-sync against the fake Gmail over HTTP", .serialized)
struct SyncCommandTests {
    @Test("hd-auth add stores credentials 0600 in a 0700 directory, and no token reaches the store or any output")
    func authAdd() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        let added = try f.connect(fake)
        let attributes = try FileManager.default.attributesOfItem(atPath: f.credentialsPath)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: f.dir.path("config/credentials"))
        #expect(directory[.posixPermissions] as? Int == 0o700)
        let sync = try f.run("hd-sync", "--catch-up", "--json")
        #expect(sync.status == 0, "\(sync)")
        let list = try f.run("hd-auth", "list")
        #expect(list.stdout.hasPrefix("demo@hudson.test\tok\t90d\tcomplete\t"), "\(list)")
        // The refresh token and every access token the fake issued stay out of the store and outputs.
        let credential = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.credentialsPath))) as? [String: Any])
        let secrets = [fake.refreshToken, credential["access_token"] as? String].compactMap { $0 }
        #expect(secrets.count == 2)
        for file in try FileManager.default.contentsOfDirectory(atPath: f.dir.path("data")) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: f.dir.path("data/\(file)")))
            for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "a token is in \(file)") }
        }
        for text in [added.stdout, added.stderr, sync.stdout, sync.stderr, list.stdout, list.stderr] {
            for secret in secrets { #expect(!text.contains(secret)) }
        }
    }

    @Test("a credentials file that others can read is refused with exit 78 and a fix")
    func tooOpen() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        chmod(f.credentialsPath, 0o644)
        let result = try f.run("hd-sync")
        #expect(result.status == 78)
        #expect(result.stderr.contains("chmod 600"), "\(result.stderr)")
    }

    @Test("a revoked refresh token gives exit 77")
    func revoked() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        try fake.admin("POST", "revoke", ["refresh_token": fake.refreshToken])
        try fake.admin("POST", "expire-access-tokens")
        let result = try f.run("hd-sync")
        #expect(result.status == 77, "\(result)")
        #expect(result.stderr.contains("hd-auth login"))
    }

    @Test("an address that does not match getProfile stores nothing")
    func wrongAddress() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        f.environment.merge(fake.environment) { $1 }
        try fake.clientSecretJSON.write(toFile: f.dir.path("secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: f.dir.path("token"), atomically: true, encoding: .utf8)
        let result = try f.run("hd-auth", "add", "someone.else@example.com", "--client-secret", f.dir.path("secret.json"),
                               "--refresh-token-file", f.dir.path("token"))
        #expect(result.status == 77)
        #expect(result.stderr == "hd-auth: someone.else@example.com: the refresh token belongs to demo@hudson.test; nothing was stored\n")
        #expect(!FileManager.default.fileExists(atPath: f.dir.path("config/credentials")))
        #expect(!FileManager.default.fileExists(atPath: f.storePath))
    }

    @Test("hd-auth login: the consent URL, the loopback redirect, PKCE and the code exchange, end to end")
    func login() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        f.environment.merge(fake.environment) { $1 }
        try Paths.ensure(f.dir.path("config"))
        try fake.clientSecretJSON.write(toFile: f.dir.path("config/client_secret.json"), atomically: true, encoding: .utf8)
        let child = try ChildProcess(BuiltProducts.executable("hd-auth"), ["login", "--no-browser"], environment: f.environment,
                                     replaceEnvironment: true)
        // Play the browser: read the consent URL, let the fake consent, follow its redirect.
        var consent: String?
        while consent == nil, let line = child.readErrorLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("http") { consent = trimmed }
        }
        let url = try #require(consent)
        #expect(url.hasPrefix(fake.url + "/auth?") && url.contains("code_challenge_method=S256") && url.contains("state="))
        let answer = try FakeGmail.getWithoutRedirect(url)
        #expect(answer.status == 302)
        let redirect = try #require(answer.location)
        #expect(redirect.hasPrefix("http://127.0.0.1:"))
        let page = try FakeGmail.getWithoutRedirect(redirect)
        #expect(page.status == 200)
        let result = child.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try f.run("hd-auth", "list").stdout.hasPrefix("demo@hudson.test\tok"))
    }

    @Test("with lookback 90, hd-sync stores exactly the messages inside the window, then all later history")
    func windowAndHistory() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        // The window is fixed at consent: after:<consented_at − 90 days>.
        let account = try #require(try JSONSerialization.jsonObject(with: Data(try f.run("hd-auth", "list", "--json").stdout.utf8)) as? [String: Any])
        let consent = try #require((account["consented_at"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        let cutoff = (Int64(consent.timeIntervalSince1970) - 90 * 86_400) * 1000
        let server = try fake.messages()
        // messages.list leaves spam and trash out (includeSpamTrash defaults to false).
        let expected = Set(server.filter {
            $0.value.internalDate >= cutoff && $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"])
        }.keys)
        let stored = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
        #expect(!expected.isEmpty && stored == expected)
        // Later history is unfiltered: an old-dated message delivered now still arrives.
        try fake.admin("POST", "insert", ["raw": "From: Old <old@example.org>\r\nTo: demo@hudson.test\r\nSubject: Late arrival\r\nMessage-ID: <late@example.org>\r\n\r\nhello\r\n",
                                          "labelIds": ["INBOX", "UNREAD"], "internalDate": 1_000_000_000_000])
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-search", "--ids", "subject:late").lines.count == 1)
    }

    @Test("a label change made on another device shows in hd-ls after the next pass")
    func otherDevice() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let first = try #require(try f.run("hd-ls", "--ids", "-n", "1").lines.first)
        let thread = String(first.dropFirst("thread:".count))
        for (id, message) in try fake.messages() where message.thread == thread && message.labels.contains("INBOX") {
            try fake.modify(id, remove: ["INBOX"])
        }
        #expect(try f.run("hd-ls", "--ids").lines.contains(first))
        let pass = try f.run("hd-sync", "--json")
        #expect(pass.stdout.contains("\"events_applied\":"), "\(pass)")
        #expect(try !f.run("hd-ls", "--ids").lines.contains(first))
    }

    @Test("hd-sync --json prints one object per account with the contract's fields")
    func jsonReport() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        let result = try f.run("hd-sync", "--json")
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        for key in ["type", "id", "backfilled", "events_applied", "bodies_hydrated", "backfill_complete", "flushed", "retired", "dropped"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["id"] as? String == "demo@hudson.test")
    }

    @Test("with the server down hd-sync exits 75, and nothing in the store is lost")
    func serverDown() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let before = try f.run("hd-ls").stdout
        fake.stop()
        let result = try f.run("hd-sync")
        #expect(result.status == 75, "\(result)")
        #expect(try f.run("hd-ls").stdout == before)
    }

    @Test("a second hd-sync on an account that is already syncing exits 0 at once with an all-zero report")
    func secondSyncCoalesces() throws {
        let f = CLIFixture()
        let fake = try demoFake(["--latency-ms", "300"])
        try f.connect(fake)
        let first = try ChildProcess(BuiltProducts.executable("hd-sync"), ["--catch-up"], environment: f.environment,
                                     replaceEnvironment: true)
        Thread.sleep(forTimeInterval: 1.5)
        let started = Date()
        let second = try f.run("hd-sync", "--json")
        #expect(Date().timeIntervalSince(started) < 1.0)
        #expect(second.status == 0)
        #expect(second.stdout.contains("\"backfilled\":0,\"events_applied\":0,\"bodies_hydrated\":0"), "\(second)")
        #expect(first.finish().status == 0)
    }

    @Test("widening the window with --lookback-days fetches only the older range")
    func widening() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
        let before = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines)
        try fake.clearRequests()
        #expect(try f.run("hd-sync", "--catch-up", "--lookback-days", "365", "--prefetch-days", "1").status == 0)
        let after = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines)
        #expect(after.isSuperset(of: before) && after.count > before.count)
        let fetched = try fake.requests().filter { $0.method == "GET" && $0.path.contains("/messages/") }.map { "message:" + ($0.path.split(separator: "/").last.map(String.init) ?? "") }
        #expect(Set(fetched).isDisjoint(with: before), "a stored message was fetched again")
    }

    /// Starts `hd-sync --watch --verbose`, killed after `limit` seconds if it still runs.
    func watch(_ f: CLIFixture, limit: Double = 90) throws -> ChildProcess {
        try ChildProcess(BuiltProducts.executable("hd-sync"), ["--watch", "--verbose"], environment: f.environment,
                         replaceEnvironment: true, limit: limit)
    }

    /// Reads standard error until a line contains `text`.
    func awaitError(_ watch: ChildProcess, containing text: String) -> String? {
        while let line = watch.readErrorLine() {
            if line.contains(text) { return line }
        }
        return nil
    }

    @Test("r10_watch_survives_a_garbled_response: a pass that fails with a temporary error is reported and the watch goes on")
    func r10_watch_survives_a_garbled_response() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
        try fake.faults([["path": "/history$", "mode": "invalid_json", "times": 1]])
        let watch = try watch(f)
        let warning = awaitError(watch, containing: "retrying")
        #expect(warning == "hd-sync: demo@hudson.test: gmail: invalid response from Gmail: body is not valid JSON; retrying")
        #expect(watch.readLine()?.hasPrefix("demo@hudson.test\t") == true)  // the next pass
        kill(watch.process.processIdentifier, SIGINT)
        let result = watch.finish()
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("r10_watch_survives_a_busy_store: another process holding the write lock past the timeout does not end the watch")
    func r10_watch_survives_a_busy_store() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
        let holder = try ChildProcess(BuiltProducts.executable("hudson-store-helper"), ["hold-write", f.storePath, "7000"])
        #expect(holder.readLine() == "locked")
        let watch = try watch(f)
        let warning = awaitError(watch, containing: "retrying")
        #expect(warning?.contains("store: busy") == true, "\(warning ?? "no warning")")
        #expect(holder.finish().status == 0)
        #expect(watch.readLine()?.hasPrefix("demo@hudson.test\t") == true)  // a pass once the lock is free
        kill(watch.process.processIdentifier, SIGINT)
        #expect(watch.finish().status == 0)
    }
}

extension SyncCommandTests {
    @Test("r8_hd-auth add on an existing account widens the window when --lookback-days asks; list honours --account")
    func repeatedAddWidens() throws {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        let again = try f.run("hd-auth", "add", fake.email, "--client-secret", f.dir.path("client_secret.json"),
                              "--refresh-token-file", f.dir.path("refresh_token"), "--lookback-days", "365")
        #expect(again.status == 0, "\(again)")
        #expect(again.stderr.contains("backfill window widened to 365 days"))
        #expect(try f.run("hd-auth", "list").stdout.hasPrefix("demo@hudson.test\tok\t365d\t"))
        #expect(try f.run("hd-auth", "list", "--account", "DEMO@hudson.test").lines.count == 1)
        #expect(try f.run("hd-auth", "list", "--account", "nobody@example.com").status == 77)
    }

    @Test("hd-sync --watch stops cleanly between passes on SIGINT and SIGTERM")
    func watchStops() throws {
        for signal in [SIGINT, SIGTERM] {
            let f = CLIFixture()
            let fake = try demoFake()
            try f.connect(fake)
            let watch = try ChildProcess(BuiltProducts.executable("hd-sync"), ["--watch"], environment: f.environment,
                                         replaceEnvironment: true)
            Thread.sleep(forTimeInterval: 2)
            kill(watch.process.processIdentifier, signal)
            let result = watch.finish()
            #expect(result.status == 0, "signal \(signal): \(result)")
            #expect(try f.run("hd-ls", "--ids").status == 0)
            let check = try f.shell("sqlite3 '\(f.storePath)' 'PRAGMA integrity_check'")
            #expect(check.stdout == "ok\n" || check.status == 127, "\(check)")
        }
    }
}

enum Paths {
    static func ensure(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}
