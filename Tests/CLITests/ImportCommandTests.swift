// hd-import (issue 24 §3), end to end: the built command against a temporary store and the
// fake Gmail's messages.import. An mbox as Takeout writes it (X-Gmail-Labels), a Maildir, .eml
// files; labels created; a dry run; and the import, which is not idempotent, with its answer
// lost after Gmail stored the message, with 5xx, 429, a dropped connection, a kill -9 before
// and after Gmail answered, and one message Gmail refuses for ever: the fake's own mailbox
// must then hold each message exactly once.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-import: mbox, Takeout, Maildir and .eml into the fake Gmail, once", .serialized)
struct ImportCommandTests {
    func connected(demo: Int = 10) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", String(demo), "--demo-span-days", "30"])
        try f.connect(fake, lookbackDays: 3_650)   // the imported mail is from 2018
        return (f, fake)
    }

    /// The fake's messages with this Message-ID (angle brackets optional): their label ids.
    func copies(_ fake: FakeGmail, _ messageID: String) throws -> [[String]] {
        var bare = messageID.trimmingCharacters(in: CharacterSet(charactersIn: "<>"))
        if !bare.contains("@") { bare += "@old.example" }
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["messages"] as? [[String: Any]] ?? []).filter {
            ($0["messageId"] as? String ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "<> ")) == bare
        }.map { ($0["labelIds"] as? [String] ?? []).sorted() }
    }

    func messageCount(_ fake: FakeGmail) throws -> Int {
        ((try fake.admin("GET", "state") as? [String: Any])?["messages"] as? [[String: Any]] ?? []).count
    }

    func labelID(_ fake: FakeGmail, named name: String) throws -> String? {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["labels"] as? [[String: Any]] ?? []).first { $0["name"] as? String == name }?["id"] as? String
    }

    func imports(_ fake: FakeGmail) throws -> Int {
        try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/import") }.count
    }

    static func message(_ id: String, subject: String, headers: String = "", body: String = "Text of the message.\n") -> String {
        "From: Alice <alice@old.example>\nTo: demo@hudson.test\nSubject: \(subject)\nDate: Tue, 02 Jan 2018 10:00:00 +0000\n"
            + (id.isEmpty ? "" : "Message-ID: <\(id)@old.example>\n") + headers + "\n" + body
    }

    /// An mbox as Takeout writes it: "From " lines, X-Gmail-Labels, mboxrd quoting.
    func takeout(_ f: CLIFixture, count: Int = 4) throws -> String {
        var parts = [
            Self.message("t1", subject: "In the inbox", headers: "X-Gmail-Labels: Inbox,Unread,Work\n"),
            Self.message("t2", subject: "Archived trip", headers: "X-Gmail-Labels: Archived,\"Trips, 2019\",Starred,Opened\n",
                         body: "Plans.\n>From the airport we take the train.\n>>From here it is quoted twice.\n"),
            Self.message("t3", subject: "Sent by me", headers: "X-Gmail-Labels: Sent,Category Personal\n"),
            Self.message("t4", subject: "Spam it was", headers: "X-Gmail-Labels: Spam\n"),
        ]
        for index in parts.count..<max(parts.count, count) {
            parts.append(Self.message("more\(index)", subject: "More \(index)", headers: "X-Gmail-Labels: Old mail\n"))
        }
        let path = f.dir.path("takeout-\(count).mbox")
        let text = parts.prefix(count).map { "From 1590000000000000000@xxx Tue Jan 02 10:00:00 +0000 2018\n" + $0 + "\n" }.joined()
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a Takeout mbox: labels carried over and created, archived unless Inbox, quoting undone; a second run imports nothing")
    func takeoutMbox() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f)
        let result = try f.run("hd-import", mbox)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("4 read: imported 4"), "\(result)")
        let work = try #require(try labelID(fake, named: "Work"))
        let trips = try #require(try labelID(fake, named: "Trips, 2019"))
        #expect(try copies(fake, "t1") == [["INBOX", "UNREAD", work].sorted()])
        #expect(try copies(fake, "t2") == [["STARRED", trips].sorted()])
        #expect(try copies(fake, "t3") == [["CATEGORY_PERSONAL", "SENT"]])
        #expect(try copies(fake, "t4") == [["SPAM"]])

        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let found = try f.run("hd-search", "--ids", "rfc822msgid:t2@old.example")
        #expect(found.lines.count == 1, "\(found)")
        let shown = try f.run("hd-show", "--raw", try #require(found.lines.first))
        #expect(shown.stdout.contains("\nFrom the airport we take the train.") && shown.stdout.contains("\n>From here it is quoted twice."),
                "\(shown)")
        #expect(try f.run("hd-search", "--ids", "label:Trips,-2019").lines == found.lines)

        // Again: nothing is sent.
        try fake.clearRequests()
        let again = try f.run("hd-import", mbox)
        #expect(again.status == 0 && again.stderr.contains("imported 0") && again.stderr.contains("already imported 4"), "\(again)")
        #expect(try imports(fake) == 0)
    }

    @Test("a Maildir and .eml files: flags, --label, no Message-ID keyed by content, mail the store holds skipped")
    func maildirAndEml() throws {
        let (f, fake) = try connected()
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        // A demo message the store holds: it is in Gmail already.
        let state = try fake.admin("GET", "state") as? [String: Any]
        let existing = try #require((state?["messages"] as? [[String: Any]])?.first?["messageId"] as? String)
        let maildir = f.dir.path("Mail/old")
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: maildir + "/" + sub, withIntermediateDirectories: true)
        }
        try Self.message("m1", subject: "Seen").write(toFile: maildir + "/cur/1.host:2,S", atomically: true, encoding: .utf8)
        try Self.message("m2", subject: "Fresh").write(toFile: maildir + "/new/2.host", atomically: true, encoding: .utf8)
        try Self.message("m3", subject: "Flagged").write(toFile: maildir + "/cur/3.host:2,FS", atomically: true, encoding: .utf8)
        try Self.message("m4", subject: "Trashed").write(toFile: maildir + "/cur/4.host:2,ST", atomically: true, encoding: .utf8)
        try Self.message("tmp1", subject: "Half written").write(toFile: maildir + "/tmp/5.host", atomically: true, encoding: .utf8)
        let emls = f.dir.path("eml")
        try FileManager.default.createDirectory(atPath: emls + "/sub", withIntermediateDirectories: true)
        try Self.message("", subject: "No Message-ID at all").write(toFile: emls + "/a.eml", atomically: true, encoding: .utf8)
        try ("From: x@old.example\nSubject: copy of demo\nMessage-ID: \(existing)\n\nbody\n")
            .write(toFile: emls + "/sub/b.eml", atomically: true, encoding: .utf8)
        try "not mail".write(toFile: emls + "/notes.txt", atomically: true, encoding: .utf8)

        let result = try f.run("hd-import", "--label", "Imported", maildir, emls)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("6 read: imported 5") && result.stderr.contains("already in Gmail 1"), "\(result)")
        let imported = try #require(try labelID(fake, named: "Imported"))
        #expect(try copies(fake, "m1") == [[imported]])
        #expect(try copies(fake, "m2") == [[imported, "UNREAD"].sorted()])
        #expect(try copies(fake, "m3") == [[imported, "STARRED"].sorted()])
        #expect(try copies(fake, "m4") == [[imported, "TRASH"].sorted()])
        #expect(try copies(fake, "tmp1").isEmpty)
        #expect(try copies(fake, existing).count == 1)

        let before = try messageCount(fake)
        let again = try f.run("hd-import", "--label", "Imported", maildir, emls)
        #expect(again.status == 0 && again.stderr.contains("already imported 5"), "\(again)")
        #expect(try messageCount(fake) == before)
    }

    @Test("--dry-run reads, counts and names the labels it would create, with no request to Gmail")
    func dryRun() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f)
        try fake.clearRequests()
        let result = try f.run("hd-import", "--dry-run", "--label", "From the old server", mbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("would import 4"), "\(result)")
        // One label one field: "Trips, 2019" is one label, not two (issue 37 §3).
        #expect(result.stderr.contains("would create labels: Work, From the old server, \"Trips, 2019\""), "\(result)")
        #expect(try fake.requests().isEmpty)
        #expect(try messageCount(fake) == 10)
    }

    @Test("answers lost after Gmail stored the message, 5xx, 429, a dropped connection, a timeout: each message once")
    func faults() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f, count: 8)
        try fake.faults([
            ["path": "messages/import", "mode": "apply_then_drop", "every": 2, "times": 1],
            ["path": "messages/import", "mode": "apply_then_status", "status": 503, "every": 3, "times": 1],
            ["path": "messages/import", "status": 500, "every": 4, "times": 1],
            ["path": "messages/import", "status": 429, "retry_after": 0, "every": 5, "times": 1],
            ["path": "messages/import", "mode": "drop", "every": 6, "times": 1],
            ["path": "messages/import", "mode": "hang", "every": 2, "times": 1],   // a timeout
        ])
        let result = try CommandRunner.run(BuiltProducts.executable("hd-import"), [mbox], environment: f.environment, timeout: 300)
        #expect(result.status == 0 && result.stderr.contains("8 read: imported 8"), "\(result)")
        for id in ["t1", "t2", "t3", "t4", "more4", "more5", "more6", "more7"] {
            #expect(try copies(fake, id).count == 1, "\(id)")
        }
        #expect(try messageCount(fake) == 18)
        let rules = try #require(try fake.admin("GET", "faults") as? [String: Any])["rules"] as? [[String: Any]] ?? []
        #expect(rules.count == 6 && rules.allSatisfy { $0["fired"] as? Int == 1 }, "\(rules)")
        // Every import that reached the fake was one the command sent: libcurl resends a
        // request on its own when a reused connection dies (HTTPTransport), which arrived
        // as a POST with part of its body (400). An import goes on a connection of its own.
        let imports = try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/import") }
        #expect(!imports.contains { $0.status == 400 }, "\(imports)")
    }

    @Test("labels.create with its answer lost after Gmail made the label, or a 5xx after it: one label, used")
    func labelCreationFaults() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f)
        try fake.faults([
            ["method": "POST", "path": "/labels$", "mode": "apply_then_drop", "times": 1],
            ["method": "POST", "path": "/labels$", "mode": "apply_then_status", "status": 503, "times": 1],
        ])
        let result = try f.run("hd-import", "--label", "Imported twice?", mbox)
        #expect(result.status == 0 && result.stderr.contains("4 read: imported 4"), "\(result)")
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        let names = (state["labels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.filter { $0 == "Imported twice?" }.count == 1 && names.filter { $0 == "Trips, 2019" }.count == 1, "\(names)")
        let imported = try #require(try labelID(fake, named: "Imported twice?"))
        let trips = try #require(try labelID(fake, named: "Trips, 2019"))
        #expect(try copies(fake, "t2") == [["STARRED", trips, imported].sorted()])
        let rules = try #require(try fake.admin("GET", "faults") as? [String: Any])["rules"] as? [[String: Any]] ?? []
        #expect(rules.allSatisfy { $0["fired"] as? Int == 1 }, "\(rules)")
    }

    @Test("Gmail down: stops after five failures in a row (75); the same command then finishes, nothing twice")
    func serverDown() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f, count: 8)
        try fake.faults([["path": "messages/import", "mode": "apply_then_status", "status": 503, "times": -1],
                         ["path": "/messages$", "status": 503, "times": -1]])
        let down = try f.run("hd-import", mbox)
        #expect(down.status == 75 && down.stderr.contains("run the same command again"), "\(down)")
        try fake.faults([])
        let after = try f.run("hd-import", mbox)
        #expect(after.status == 0, "\(after)")
        for id in ["t1", "t2", "t3", "t4", "more4", "more5", "more6", "more7"] {
            #expect(try copies(fake, id).count == 1, "\(id)")
        }
    }

    @Test("kill -9 after Gmail answered, and before the request left: the re-run finds the one and sends the other, once")
    func killed() throws {
        let (f, fake) = try connected()
        let mbox = try takeout(f, count: 6)
        let answered = try f.run("hd-import", mbox, environment: ["HUDSON_TEST_CRASH_AT": "import-answered:3"])
        #expect(answered.status != 0, "\(answered)")
        #expect(try copies(fake, "t3").count == 1)
        #expect(try copies(fake, "t4").isEmpty)
        let resumed = try f.run("hd-import", mbox)
        #expect(resumed.status == 0 && resumed.stderr.contains("imported 4 (1 found in Gmail from an interrupted run)")
                && resumed.stderr.contains("already imported 2"), "\(resumed)")

        let second = try takeout(f, count: 9)
        let sending = try f.run("hd-import", second, environment: ["HUDSON_TEST_CRASH_AT": "import-sending:2"])
        #expect(sending.status != 0, "\(sending)")
        #expect(try copies(fake, "more6").count == 1 && copies(fake, "more7").isEmpty)
        let finished = try f.run("hd-import", second)
        #expect(finished.status == 0 && finished.stderr.contains("imported 2,") && finished.stderr.contains("already imported 7"),
                "\(finished)")
        for id in ["t1", "t2", "t3", "t4", "more4", "more5", "more6", "more7", "more8"] {
            #expect(try copies(fake, id).count == 1, "\(id)")
        }
        #expect(try messageCount(fake) == 19)
    }

    @Test("one message Gmail refuses for ever is reported (exit 2) and the rest are imported; a file that is no message is not sent")
    func refusedForEver() throws {
        let (f, fake) = try connected()
        let dir = f.dir.path("eml")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.message("r1", subject: "Fine").write(toFile: dir + "/1.eml", atomically: true, encoding: .utf8)
        try Self.message("r2", subject: "Refused", headers: "X-Refuse: yes\n").write(toFile: dir + "/2.eml", atomically: true, encoding: .utf8)
        try Self.message("r3", subject: "Fine too").write(toFile: dir + "/3.eml", atomically: true, encoding: .utf8)
        try "this is not a message, it has no header at all\n".write(toFile: dir + "/4.eml", atomically: true, encoding: .utf8)
        // Gmail refuses the second import it gets (400: it stored nothing), every time.
        try fake.faults([["path": "messages/import", "status": 400, "message": "Invalid raw message", "every": 2, "times": 1]])
        let result = try f.run("hd-import", dir)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("2.eml") && result.stderr.contains("refused") && result.stderr.contains("failed 2"), "\(result)")
        #expect(result.stderr.contains("4.eml: not an RFC 822 message"), "\(result)")
        #expect(try copies(fake, "r1").count == 1 && copies(fake, "r3").count == 1 && copies(fake, "r2").isEmpty)
        #expect(try imports(fake) == 3)   // the file that is no message never went to Gmail
        try fake.faults([["path": "messages/import", "status": 400, "message": "Invalid raw message", "times": -1]])
        let again = try f.run("hd-import", "--json", dir)
        #expect(again.status == 2 && again.stderr.contains("already imported 2"), "\(again)")
        let records = again.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == 4 && records.allSatisfy { $0["type"] as? String == "import" }, "\(again)")
        #expect(records.map { ($0["id"] as? String ?? "").components(separatedBy: "/").last ?? "" } == ["1.eml", "2.eml", "3.eml", "4.eml"])
        #expect(records.map { $0["status"] as? String ?? "" } == ["already_imported", "refused", "already_imported", "unreadable"])
        #expect((records[0]["message"] as? String ?? "").hasPrefix("message:") && records[0]["rfc822_message_id"] as? String == "<r1@old.example>")
        #expect((records[1]["error"] as? String ?? "").contains("Invalid raw message") && records[1]["message"] is NSNull)
    }

    @Test("bad input: a missing source, stdin twice, a label Gmail does not let an import set; a second import of the account at once")
    func badInput() throws {
        let (f, fake) = try connected()
        defer { withExtendedLifetime(fake) {} }
        // A source that cannot be read is reported; the next one is imported all the same.
        let good = f.dir.path("good.eml")
        try Self.message("g1", subject: "Readable").write(toFile: good, atomically: true, encoding: .utf8)
        let missing = try f.run("hd-import", f.dir.path("nowhere.mbox"), good)
        #expect(missing.status == 2 && missing.stderr.contains("nowhere.mbox: No such file or directory")
                && missing.stderr.contains("1 read: imported 1"), "\(missing)")
        #expect(try copies(fake, "g1").count == 1)
        #expect(try f.run("hd-import", "-", "-", stdin: "").status == 64)
        #expect(try f.run("hd-import", "--label", "Draft", "x").status == 64)
        #expect(try f.run("hd-import").status == 64)
        // Another hd-import of the account holds its lock: this one sends nothing.
        let one = f.dir.path("one.eml")
        try Self.message("l1", subject: "Locked out").write(toFile: one, atomically: true, encoding: .utf8)
        let locked = try f.shell("flock \"$HUDSON_DB.import-demo@hudson.test.lock\" hd-import '\(one)'")
        #expect(locked.status == 75 && locked.stderr.contains("another hd-import of demo@hudson.test is running"), "\(locked)")
        #expect(try copies(fake, "l1").isEmpty)
        let piped = try f.run("hd-import", "-", stdin: "From x Tue Jan 02 10:00:00 2018\n" + Self.message("s1", subject: "Piped"))
        #expect(piped.status == 0 && piped.stderr.contains("1 read: imported 1"), "\(piped)")
    }
}
