// hd-sync --watch --exec (issue 23 §3): a command run after each pass that stored new
// mail, with the new references on its standard input, each message once.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-sync --watch --exec: a hook on new mail")
struct NewMailHookTests {
    @Test("new mail is handed to the hook once, with its account; mail from before the watch is not; a failing hook is told and the watch goes on")
    func handsNewMailOnce() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "10"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let handed = f.dir.path("handed"), accounts = f.dir.path("accounts"), failing = f.dir.path("fail")
        let hook = """
            printf '%s %s\\n' "$HUDSON_ACCOUNT" "$HUDSON_DB" >>'\(accounts)'
            echo "printed by the hook"
            cat >>'\(handed)'
            [ ! -e '\(failing)' ]
            """
        try hook.write(toFile: f.dir.path("hook.sh"), atomically: true, encoding: .utf8)
        var environment = f.environment
        environment["HUDSON_TEST_WATCH_PAUSE"] = "1"
        // The store named by --db only: the hook is told it through HUDSON_DB.
        environment["HUDSON_DB"] = nil
        let watch = try ChildProcess(BuiltProducts.executable("hd-sync"),
                                     ["--db", f.storePath, "--watch", "--verbose", "--exec", "sh '\(f.dir.path("hook.sh"))'"],
                                     environment: environment, replaceEnvironment: true, limit: 120)
        func lines(_ path: String) -> [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        /// Reads passes (one line each with --verbose) until `done`, at most 30.
        func passes(until done: () -> Bool) -> Bool {
            for _ in 0..<30 {
                guard let line = watch.readLine() else { return false }
                // Standard output is the watch's records only: the hook's goes to stderr.
                #expect(line.hasPrefix(fake.email + "\t"), "\(line)")
                if done() { return true }
            }
            return false
        }

        #expect(passes { true }, "no first pass")
        #expect(passes { true } && lines(handed).isEmpty, "mail stored before the watch was handed: \(lines(handed))")

        let first = try deliver(fake, subject: "First new one")
        #expect(passes { lines(handed) == ["message:\(first)"] }, "\(lines(handed))")
        #expect(lines(accounts) == ["\(fake.email) \(f.storePath)"])

        // A change to it is not new mail: after more passes it was still handed once.
        try fake.modify(first, remove: ["UNREAD"])
        var more = 0
        #expect(passes { more += 1; return more == 3 })
        #expect(lines(handed) == ["message:\(first)"])

        // A hook that fails is told on standard error; the next new message still comes.
        #expect(FileManager.default.createFile(atPath: failing, contents: nil))
        let second = try deliver(fake, subject: "Second new one")
        var told: String?
        while let line = watch.readErrorLine() {
            if line.contains("--exec:") { told = line; break }
        }
        #expect(told == "hd-sync: \(fake.email): --exec: exited 1", "\(String(describing: told))")
        #expect(lines(handed) == ["message:\(first)", "message:\(second)"])
        try FileManager.default.removeItem(atPath: failing)
        let third = try deliver(fake, subject: "Third new one")
        #expect(passes { lines(handed).count == 3 }, "the watch stopped after a failing hook: \(lines(handed))")
        #expect(lines(handed).last == "message:\(third)")

        kill(watch.process.processIdentifier, SIGINT)
        let result = watch.finish()
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("--exec without --watch is a usage error")
    func needsWatch() throws {
        let f = CLIFixture()
        let result = try f.run("hd-sync", "--exec", "true")
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("hd-sync: --exec needs --watch\n"))
    }

    /// Gmail receives a message now; its Gmail id.
    private func deliver(_ fake: FakeGmail, subject: String) throws -> String {
        let raw = "From: Ada <ada@example.org>\r\nTo: demo@hudson.test\r\nSubject: \(subject)\r\n"
            + "Message-ID: <\(UUID().uuidString)@hook.test>\r\n\r\n\(subject).\r\n"
        let answer = try #require(try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"]]) as? [String: Any])
        return try #require(answer["id"] as? String)
    }
}
