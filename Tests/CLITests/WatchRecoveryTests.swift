// hd-sync --watch outlives what keeps an account from syncing (issue 37 §5): another
// process holding the account's sync lock (a second watch, a one-shot hd-sync, any
// process), killed with -9, stopped with SIGTERM or SIGINT, idle or mid-pass; a lock file
// removed or replaced; a grant revoked and given again by hd-auth login in another
// terminal; credentials removed, too open or corrupt; the token endpoint down; a scope
// taken back. Each reason is said once on standard error; the account syncs again by
// itself once it is gone; SIGINT still ends the watch with 0.
//
// No timed assertion: a watch whose pause is ten minutes must take over within the
// ChildProcess limit, which it can only do by asking for the lock during its pause.
import Foundation
import HudsonTestSupport
import Testing

/// A running `hd-sync --watch`, with everything read from its outputs kept.
final class Watch {
    let child: ChildProcess
    private(set) var errors: [String] = []
    private(set) var outputs: [String] = []

    /// `hd-sync --watch ARGS`, pausing `pause` seconds between caught-up passes.
    init(_ f: CLIFixture, _ arguments: [String] = [], pause: Int = 1, environment extra: [String: String] = [:],
         limit: Double = 150) throws {
        var environment = f.environment.merging(extra) { $1 }
        environment["HUDSON_TEST_WATCH_PAUSE"] = String(pause)
        child = try ChildProcess(BuiltProducts.executable("hd-sync"), ["--watch"] + arguments, environment: environment,
                                 replaceEnvironment: true, limit: limit)
    }

    var pid: Int32 { child.process.processIdentifier }

    /// Reads standard error until a line contains `text`; nil when the watch ended first.
    @discardableResult
    func awaitError(_ text: String) -> String? {
        while let line = child.readErrorLine() {
            errors.append(line)
            if line.contains(text) { return line }
        }
        return nil
    }

    /// Reads standard output until `done` holds after a line; false when the watch ended first.
    func awaitOutput(until done: () throws -> Bool) rethrows -> Bool {
        while let line = child.readLine() {
            outputs.append(line)
            if try done() { return true }
        }
        return false
    }

    /// Reads `count` more lines of standard output (with --verbose, one a pass).
    func passes(_ count: Int) -> Bool {
        for _ in 0..<count {
            guard let line = child.readLine() else { return false }
            outputs.append(line)
        }
        return true
    }

    /// Sends `signal` and waits: the exit status, and all standard error told (`notes`).
    func stop(_ signal: Int32 = SIGINT) -> (status: Int32, stderr: [String]) {
        kill(pid, signal)
        let rest = child.finish()
        outputs += rest.stdout.split(separator: "\n").map(String.init)
        errors += rest.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
        return (rest.status, notes)
    }

    /// What standard error told, less the progress lines of --verbose.
    var notes: [String] { errors.filter { !$0.contains(": listed ") } }
}

extension CLIFixture {
    /// Mail delivered now, with `subject`; its Gmail id.
    @discardableResult
    func deliver(_ fake: FakeGmail, subject: String) throws -> String {
        let answer = try fake.admin("POST", "insert", ["raw": "From: Ada <ada@example.org>\r\nTo: \(fake.email)\r\nSubject: \(subject)\r\n"
                                                        + "Message-ID: <\(subject)@example.org>\r\n\r\nhello\r\n"])
        return try #require((answer as? [String: Any])?["id"] as? String)
    }

    /// Whether the store has mail with `subject` (hd-search).
    func stores(_ subject: String, account: String? = nil) throws -> Bool {
        let arguments = (account.map { ["--account", $0] } ?? []) + ["--ids", "subject:\(subject)"]
        return try CommandRunner.run(BuiltProducts.executable("hd-search"), arguments, environment: environment).lines.count == 1
    }

    /// `hd-auth login` in another terminal: hd-auth prints the consent URL, the person
    /// consents (the fake does), the browser follows the redirect to hd-auth's listener.
    func login(_ fake: FakeGmail) throws -> (status: Int32, stdout: String, stderr: String) {
        try Paths.ensure(dir.path("config"))
        try fake.clientSecretJSON.write(toFile: dir.path("config/client_secret.json"), atomically: true, encoding: .utf8)
        let child = try ChildProcess(BuiltProducts.executable("hd-auth"), ["login", "--no-browser"], environment: environment,
                                     replaceEnvironment: true, limit: 60)
        var consent: String?
        while consent == nil, let line = child.readErrorLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("http") { consent = trimmed }
        }
        if let consent, let redirect = try FakeGmail.getWithoutRedirect(consent).location {
            _ = try FakeGmail.getWithoutRedirect(redirect)
        }
        return child.finish()
    }

    /// A process that is not Hudson holding `<store>.<purpose>-<email>.lock` (an flock, as
    /// flock(1) takes it), until killed. One process: a lock shared with a child would
    /// outlive a kill -9 of the parent.
    func holdLock(_ purpose: String, email: String = "demo@hudson.test") throws -> ChildProcess {
        let script = """
            import fcntl, os, sys, time
            fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print("locked", flush=True)
            time.sleep(300)
            """
        let holder = try ChildProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                      ["python3", "-c", script, "\(storePath).\(purpose)-\(email).lock"], limit: 200)
        #expect(holder.readLine() == "locked")
        return holder
    }

    /// Queues `action` on the newest thread without sending it (hd-mark --no-flush).
    func queue(_ action: String) throws -> String {
        let thread = try #require(try run("hd-ls", "--ids", "-n", "1").lines.first)
        let marked = try run("hd-mark", "--no-flush", action, thread)
        #expect(marked.status == 0, "\(marked)")
        return String(thread.dropFirst("thread:".count))
    }
}

/// Replaces `path` with `data` at once (a new 0600 file renamed over it), as an editor or a
/// login does: no reader sees it half written.
func replace(_ path: String, with data: Data) throws {
    #expect(FileManager.default.createFile(atPath: path + ".new", contents: data, attributes: [.posixPermissions: 0o600]))
    #expect(rename(path + ".new", path) == 0)
}

/// The processes holding an flock on `path`, from /proc/locks (`N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ...`).
func lockHolders(_ path: String) -> [Int32] {
    var status = stat()
    guard stat(path, &status) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
    return table.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 6, fields[1] == "FLOCK", let inode = fields[5].split(separator: ":").last,
              UInt64(inode) == UInt64(status.st_ino) else { return nil }
        return Int32(fields[4])
    }
}

/// Whether the fake has `label` on a message of `thread`.
func fakeHas(_ fake: FakeGmail, _ label: String, thread: String) throws -> Bool {
    try fake.messages().values.contains { $0.thread == thread && $0.labels.contains(label) }
}

@Suite("hd-sync --watch: two processes on one store, and credentials that change under a watch", .serialized)
struct WatchRecoveryTests {
    static let taken = "another hd-sync is syncing this account"

    /// A connected, caught-up store on a small fake.
    func connected(_ extra: [String] = []) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "40", "--demo-span-days", "60"] + extra)
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        return (f, fake)
    }

    // MARK: - The sync lock

    @Test("a second watch takes the account over when the first ends (kill -9, SIGTERM, SIGINT): new mail arrives, queued marks go out",
          arguments: [SIGKILL, SIGTERM, SIGINT])
    func takeOver(signal: Int32) throws {
        let (f, fake) = try connected()
        let first = try Watch(f, ["--verbose"])
        #expect(first.passes(1))
        let second = try Watch(f, pause: 2)
        #expect(second.awaitError(Self.taken) != nil)
        // The first still syncs while the second waits.
        try f.deliver(fake, subject: "before")
        #expect(try first.awaitOutput { try f.stores("before") })
        let status = first.stop(signal).status
        #expect(signal == SIGKILL ? first.child.process.terminationReason == .uncaughtSignal : status == 0)
        let thread = try f.queue("star")
        try f.deliver(fake, subject: "after")
        #expect(second.awaitError("syncing now") != nil)
        #expect(try second.awaitOutput { try f.stores("after") && fakeHas(fake, "STARRED", thread: thread) })
        let (exit, errors) = second.stop()
        #expect(exit == 0)
        #expect(errors == ["hd-sync: demo@hudson.test: \(Self.taken); this watch takes over when it stops",
                           "hd-sync: demo@hudson.test: syncing now"], "\(errors)")
    }

    @Test("a watch pausing ten minutes takes over within a second of the holder's kill -9, not at its next pass")
    func takeOverDuringPause() throws {
        let (f, fake) = try connected()
        let first = try Watch(f, ["--verbose"])
        #expect(first.passes(1))
        // Idle: between passes. Stopped, it cannot fetch the mail delivered from now on.
        kill(first.pid, SIGSTOP)
        let second = try Watch(f, pause: 600)
        #expect(second.awaitError(Self.taken) != nil)
        try f.deliver(fake, subject: "frozen")
        _ = first.stop(SIGKILL)
        #expect(second.awaitError("syncing now") != nil)
        #expect(try second.awaitOutput { try f.stores("frozen") })
        #expect(second.stop().status == 0)
    }

    @Test("a watch takes over from one killed with -9 in the middle of a pass (a slow backfill)")
    func takeOverMidPass() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "2000", "--demo-span-days", "2000", "--latency-ms", "30"])
        try f.connect(fake, lookbackDays: 0)
        let first = try Watch(f, ["--verbose", "--prefetch-days", "0", "--max-pages", "3"])
        // Its progress: a page is listed and the pass goes on; stopped there, it holds the
        // lock mid-pass, and cannot fetch the mail delivered from now on.
        #expect(first.awaitError(": listed ") != nil)
        kill(first.pid, SIGSTOP)
        let second = try Watch(f, ["--prefetch-days", "0"], pause: 600)
        #expect(second.awaitError(Self.taken) != nil)
        try f.deliver(fake, subject: "midpass")
        _ = first.stop(SIGKILL)
        #expect(first.child.process.terminationReason == .uncaughtSignal)
        #expect(second.awaitError("syncing now") != nil)
        #expect(try second.awaitOutput { try f.stores("midpass") })
        #expect(second.stop().status == 0)
        #expect(try f.run("hd-ls", "--ids").status == 0)
    }

    @Test("a one-shot hd-sync holding the lock: the watch waits, says so once, then syncs once it is done")
    func oneShotHolder() throws {
        let (f, fake) = try connected()
        // The one-shot holds the lock for as long as its history poll takes: 20 s.
        try fake.faults([["path": "/history$", "mode": "delay", "delay_ms": 20_000, "times": 1]])
        try fake.clearRequests()
        let oneShot = try ChildProcess(BuiltProducts.executable("hd-sync"), ["--catch-up", "--prefetch-days", "0"],
                                       environment: f.environment, replaceEnvironment: true, limit: 120)
        // Its lock, as the kernel lists it (asking for the lock ourselves could take it from the one-shot).
        var holding = false
        for _ in 0..<600 where !holding {
            holding = lockHolders("\(f.storePath).sync-demo@hudson.test.lock").contains(oneShot.process.processIdentifier)
            if !holding { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(holding)
        let watch = try Watch(f, pause: 2)
        #expect(watch.awaitError(Self.taken) != nil)
        #expect(oneShot.finish().status == 0)
        try f.deliver(fake, subject: "later")
        #expect(watch.awaitError("syncing now") != nil)
        #expect(try watch.awaitOutput { try f.stores("later") })
        #expect(watch.stop().status == 0)
    }

    @Test("any process holding the flush lock (hd-mark's hd-sync --push) delays only the queue: new mail still arrives, the mark goes out after")
    func flushLockHolder() throws {
        let (f, fake) = try connected()
        let holder = try f.holdLock("flush")
        let thread = try f.queue("star")
        let watch = try Watch(f, ["--verbose"])
        try f.deliver(fake, subject: "meanwhile")
        #expect(try watch.awaitOutput { try f.stores("meanwhile") })
        #expect(try !fakeHas(fake, "STARRED", thread: thread))
        kill(holder.process.processIdentifier, SIGKILL)
        holder.finish()
        #expect(try watch.awaitOutput { try fakeHas(fake, "STARRED", thread: thread) })
        let (status, errors) = watch.stop()
        #expect(status == 0 && errors.isEmpty, "\(errors)")
    }

    @Test("a lock file removed while a watch holds it: a second watch takes the new one and the first stands down, saying so once")
    func lockFileRemoved() throws {
        let (f, fake) = try connected()
        let first = try Watch(f, ["--verbose"])
        #expect(first.passes(1))
        // The first is held between passes while the file goes and the second starts.
        kill(first.pid, SIGSTOP)
        try FileManager.default.removeItem(atPath: "\(f.storePath).sync-demo@hudson.test.lock")
        let second = try Watch(f, ["--verbose"])
        try f.deliver(fake, subject: "removed")
        #expect(try second.awaitOutput { try f.stores("removed") })
        kill(first.pid, SIGCONT)
        #expect(first.awaitError(Self.taken) != nil)
        #expect(second.stop().status == 0)
        let (status, errors) = first.stop()
        #expect(status == 0 && errors.filter { $0.contains(Self.taken) }.count == 1, "\(errors)")
    }

    @Test("a lock file replaced while a watch holds it: the watch locks the new file, so a second watch still waits")
    func lockFileReplaced() throws {
        let (f, fake) = try connected()
        defer { withExtendedLifetime(fake) {} }
        let first = try Watch(f, ["--verbose"])
        #expect(first.passes(1))
        let path = "\(f.storePath).sync-demo@hudson.test.lock"
        #expect(FileManager.default.createFile(atPath: path + ".new", contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(rename(path + ".new", path) == 0)
        #expect(first.passes(2))  // a pass that found its file replaced, and one more
        let second = try Watch(f, ["--verbose"])
        #expect(second.awaitError(Self.taken) != nil)
        #expect(second.stop().status == 0)
        let (status, errors) = first.stop()
        #expect(status == 0 && errors.isEmpty, "\(errors)")
    }

    @Test("a lock file that is a symbolic link, a FIFO or a directory is refused (78, one line); nothing is created at the link's target")
    func lockFileNotRegular() throws {
        let (f, fake) = try connected()
        defer { withExtendedLifetime(fake) {} }
        let path = "\(f.storePath).sync-demo@hudson.test.lock"
        let target = f.dir.path("elsewhere")
        for make in ["symlink", "fifo", "directory"] {
            try? FileManager.default.removeItem(atPath: path)
            switch make {
            case "symlink": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            case "fifo": #expect(mkfifo(path, 0o600) == 0)
            default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            }
            let result = try f.run("hd-sync")
            #expect(result.status == 78, "\(make): \(result)")
            #expect(result.stderr.hasPrefix("hd-sync: \(path): cannot open lock file: ") && result.stderr.split(separator: "\n").count == 1,
                    "\(make): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target), "\(make): the link's target was created")
        }
        // A watch says it once and goes on trying; the account syncs once the file is fixed.
        let watch = try Watch(f, ["--verbose"])
        #expect(watch.awaitError("cannot open lock file") != nil)
        #expect(watch.passes(2))
        try FileManager.default.removeItem(atPath: path)
        #expect(watch.awaitError("syncing now") != nil)
        let (status, errors) = watch.stop()
        #expect(status == 0 && errors.filter { $0.contains("cannot open lock file") }.count == 1, "\(errors)")
    }

    @Test("several accounts, one locked by another process: the other syncs, the locked one is told once and synced once free; --json stays one record per account and pass")
    func severalAccounts() throws {
        let (f, fake) = try connected()
        // A second account on the same fake mailbox: its own credentials file and store account.
        let second = "second@hudson.test"
        var credential = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: f.credentialsPath))) as? [String: Any])
        credential["email"] = second
        let path = f.dir.path("config/credentials/\(second).json")
        try JSONSerialization.data(withJSONObject: credential).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let store = try f.openStore()
        _ = try store.addAccount(email: second, consentedAt: Int64(Date().timeIntervalSince1970), lookbackDays: 90)
        let holder = try f.holdLock("sync")
        let watch = try Watch(f, ["--json", "--verbose"], pause: 2)
        #expect(watch.awaitError(Self.taken)?.hasPrefix("hd-sync: demo@hudson.test: ") == true)
        try f.deliver(fake, subject: "both")
        // The second account syncs meanwhile; the locked one's records are all-zero.
        #expect(try watch.awaitOutput { try f.stores("both", account: second) })
        #expect(try !f.stores("both", account: fake.email))
        kill(holder.process.processIdentifier, SIGKILL)
        holder.finish()
        #expect(watch.awaitError("syncing now")?.hasPrefix("hd-sync: demo@hudson.test: ") == true)
        #expect(try watch.awaitOutput { try f.stores("both", account: fake.email) })
        let (status, errors) = watch.stop()
        #expect(status == 0)
        #expect(errors.count == 2, "\(errors)")
        let records = try watch.outputs.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(records.allSatisfy { $0["type"] as? String == "sync" && $0["backfill_complete"] is Bool })
        #expect(Set(records.compactMap { $0["id"] as? String }) == [fake.email, second])
        // While it waited, the locked account's record is the all-zero one of an empty pass.
        #expect(records.contains { record in
            record["id"] as? String == fake.email
                && ["backfilled", "events_applied", "bodies_hydrated", "flushed", "retired", "dropped", "sent", "parked"]
                    .allSatisfy { (record[$0] as? Int) == 0 }
        })
    }

    // MARK: - Credentials

    @Test("a revoked grant: the watch says so once, waits, and syncs again by itself after hd-auth login in another terminal")
    func revokedThenLogin() throws {
        let (f, fake) = try connected()
        let watch = try Watch(f, ["--verbose"])
        try fake.admin("POST", "revoke", ["refresh_token": fake.refreshToken])
        try fake.admin("POST", "expire-access-tokens")
        let told = watch.awaitError("invalid_grant")
        #expect(told?.hasSuffix("; this watch syncs the account again once its credentials change") == true, "\(told ?? "ended")")
        // Idle: the refused grant is not tried again on each pass.
        try fake.clearRequests()
        #expect(watch.passes(3))
        let requests = try fake.requests()
        #expect(requests.isEmpty, "\(requests)")
        let login = try f.login(fake)
        #expect(login.status == 0, "\(login)")
        #expect(watch.awaitError("syncing now") != nil)
        try f.deliver(fake, subject: "relogged")
        #expect(try watch.awaitOutput { try f.stores("relogged") })
        let (status, errors) = watch.stop()
        #expect(status == 0)
        #expect(errors.filter { $0.contains("invalid_grant") }.count == 1, "\(errors)")
    }

    @Test("credentials removed, made 0644 or corrupt under a running watch: it stops using them at once, says why once, and resumes when they are fixed",
          arguments: ["removed", "too open", "corrupt"])
    func credentialsChanged(change: String) throws {
        let (f, fake) = try connected()
        let watch = try Watch(f, ["--verbose"])
        #expect(watch.passes(1))
        let saved = try Data(contentsOf: URL(fileURLWithPath: f.credentialsPath))
        let expected: String
        switch change {
        case "removed":
            #expect(try f.run("hd-auth", "remove", fake.email).status == 0)
            expected = "no credentials for demo@hudson.test"
        case "too open":
            chmod(f.credentialsPath, 0o644)
            expected = "chmod 600"
        default:
            try replace(f.credentialsPath, with: Data("{\"email\": ".utf8))
            expected = "credentials/demo@hudson.test.json"
        }
        #expect(watch.awaitError(expected)?.hasSuffix("this watch syncs the account again once its credentials can be used") == true,
                "\(watch.errors)")
        try fake.clearRequests()
        #expect(watch.passes(3))
        // Nothing reached Gmail with the tokens it held before.
        let requests = try fake.requests()
        #expect(requests.isEmpty, "\(requests)")
        if change == "removed" {
            try f.connect(fake)
        } else {
            try replace(f.credentialsPath, with: saved)
        }
        #expect(watch.awaitError("syncing now") != nil)
        try f.deliver(fake, subject: "fixed")
        #expect(try watch.awaitOutput { try f.stores("fixed") })
        let (status, errors) = watch.stop()
        #expect(status == 0 && errors.count == 2, "\(errors)")
    }

    @Test("the token endpoint down (503) is temporary: told as a retry, and the watch goes on by itself without a login")
    func tokenEndpointDown() throws {
        let (f, fake) = try connected()
        try fake.admin("POST", "expire-access-tokens")
        try fake.faults([["path": "^/token$", "status": 503, "times": -1]])
        let watch = try Watch(f)
        #expect(watch.awaitError("retrying") != nil)
        try fake.faults([])
        try f.deliver(fake, subject: "backup")
        #expect(try watch.awaitOutput { try f.stores("backup") })
        let (status, errors) = watch.stop()
        #expect(status == 0)
        #expect(!errors.contains { $0.contains("credentials") }, "\(errors)")
    }

    @Test("a scope taken back: the queue waits, said once; new mail still arrives; the mark goes out once the scope is back")
    func scopeNarrowed() throws {
        let (f, fake) = try connected()
        // The access tokens already issued carry the narrower scope too (the fake's /_admin/scope).
        try fake.admin("POST", "scope", ["refresh_token": fake.refreshToken, "scope": AuthStatusTests.readonly])
        let thread = try f.queue("star")
        let watch = try Watch(f)
        let told = watch.awaitError("gmail.modify")
        #expect(told?.hasSuffix("queued changes and messages wait, new mail still arrives") == true, "\(told ?? "ended")")
        try f.deliver(fake, subject: "readable")
        #expect(try watch.awaitOutput { try f.stores("readable") })
        #expect(try !fakeHas(fake, "STARRED", thread: thread))
        // Refused again after its back-off (5 s), and not told again.
        var attempts = 0
        for _ in 0..<240 where attempts < 2 {
            attempts = try f.run("hd-pending").lines.first.flatMap { Int($0.split(separator: "\t")[4]) } ?? 0
            if attempts < 2 { Thread.sleep(forTimeInterval: 0.25) }
        }
        #expect(attempts >= 2)
        try fake.admin("POST", "scope", ["refresh_token": fake.refreshToken, "scope": AuthStatusTests.modify])
        #expect(try watch.awaitOutput { try fakeHas(fake, "STARRED", thread: thread) })
        let (status, errors) = watch.stop()
        #expect(status == 0)
        #expect(errors.filter { $0.contains("gmail.modify") }.count == 1, "\(errors)")
    }

    @Test("the account removed from the store (hd-auth remove --purge) under a watch: told once, the watch stays up and ends 0 on SIGINT",
          arguments: [false, true])
    func accountRemoved(selected: Bool) throws {
        let (f, fake) = try connected()
        let watch = try Watch(f, ["--verbose"] + (selected ? ["--account", fake.email] : []))
        #expect(watch.passes(1))
        #expect(try f.run("hd-auth", "remove", "--purge", fake.email).status == 0)
        #expect(watch.awaitError("no longer in the store") != nil)
        try fake.clearRequests()
        Thread.sleep(forTimeInterval: 3)  // time for a few passes, were any made
        #expect(try fake.requests().isEmpty)
        let (status, errors) = watch.stop()
        #expect(status == 0, "\(errors)")
        #expect(errors.filter { $0.contains("no longer in the store") }.count == 1, "\(errors)")
        #expect(errors.allSatisfy { $0.hasPrefix("hd-sync: demo@hudson.test: ") }, "\(errors)")
    }
}
