// hd-import under hostile input and lost answers (issue 37 §2, §3), end to end against the
// fake Gmail: a lone message on standard input, input that is no mail, an mbox cut short, a
// From_ line in a body, CRLF; a message without a Message-ID whose answer was lost, and one
// whose Message-ID Gmail already holds twice; label names that would drive a terminal; and
// files that are not files: a FIFO, a device, a link out of the tree. Every run is bounded
// by a timeout: a hang fails the test, it does not stall the suite.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

@Suite("hd-import: hostile sources, lost answers without a Message-ID, label names, files", .serialized)
struct ImportHostileInputTests {
    func connected() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "30"])
        try f.connect(fake, lookbackDays: 3_650)
        return (f, fake)
    }

    /// The fake's messages: Message-ID (as stored) and raw text.
    func stored(_ fake: FakeGmail) throws -> [(messageID: String, raw: String, labels: [String])] {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return try (state?["messages"] as? [[String: Any]] ?? []).map { message in
            let id = message["id"] as? String ?? ""
            let full = try fake.admin("GET", "message/\(id)") as? [String: Any]
            return (message["messageId"] as? String ?? "", Self.decode(full?["raw"] as? String ?? ""), message["labelIds"] as? [String] ?? [])
        }
    }

    /// The admin API's `raw`: base64url.
    static func decode(_ base64url: String) -> String {
        var text = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self)
    }

    func withSubject(_ fake: FakeGmail, _ subject: String) throws -> [(messageID: String, raw: String, labels: [String])] {
        try stored(fake).filter { $0.raw.contains("Subject: \(subject)\n") || $0.raw.contains("Subject: \(subject)\r\n") }
    }

    func requests(_ fake: FakeGmail, _ suffix: String, method: String = "POST") throws -> Int {
        try fake.requests().filter { $0.method == method && $0.path.hasSuffix(suffix) }.count
    }

    func importRun(_ f: CLIFixture, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-import"), arguments, environment: f.environment.merging(environment) { $1 },
                              stdin: stdin, timeout: 60)
    }

    /// Every line of standard error is one of the command's own (no stray output, no dump).
    func ownLines(_ result: CommandResult) -> Bool {
        result.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("hd-import: ") || $0.hasPrefix("usage: ") }
    }

    @Test("a lone RFC 822 message on standard input is imported as one message (it was read as an empty mbox)")
    func loneMessageOnStandardInput() throws {
        let (f, fake) = try connected()
        let result = try importRun(f, ["-"], stdin: "From: a@x\nSubject: lone on stdin\n\nb\n")
        #expect(result.status == 0 && result.stderr.contains("1 read: imported 1"), "\(result)")
        #expect(try withSubject(fake, "lone on stdin").count == 1)
        // A message of only headers is a message too.
        let headers = try importRun(f, ["-"], stdin: "From: a@x\nSubject: only headers\n")
        #expect(headers.status == 0 && headers.stderr.contains("1 read: imported 1"), "\(headers)")
    }

    @Test("standard input that is neither an mbox nor a message is refused (65) with one line, nothing sent; empty input is no mail")
    func notMailOnStandardInput() throws {
        let (f, fake) = try connected()
        try fake.clearRequests()
        // Text shaped like a header but with no field of a message (issue 37: "would import 1").
        for text in ["hello world\nthis is not mail\n", "\nSubject: a blank line first\n\nx\n", ": no field name\n",
                     "key: value\n", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
                     "X-Mailer: a\nContent-Type: text/plain\n\nbody\n"] {
            let result = try importRun(f, ["-"], stdin: text)
            #expect(result.status == 65 && result.stderr == "hd-import: standard input: neither an mbox (From_ lines) nor an RFC 822 message "
                        + "(a header with From, Date or another field of a message)\n", "\(text.debugDescription): \(result)")
            let dry = try importRun(f, ["-n", "-"], stdin: text)
            #expect(dry.status == 65 && !dry.stderr.contains("would import"), "\(text.debugDescription): \(dry)")
        }
        // A field of a message anywhere in the header, in any case, makes it one.
        for text in ["X-Note: a\nmessage-id: <k1@old.example>\n\nbody\n", "Received: from a by b; Tue, 2 Jan 2018 10:00:00 +0000\n\nx\n"] {
            let dry = try importRun(f, ["-n", "-"], stdin: text)
            #expect(dry.status == 0 && dry.stderr.contains("would import 1"), "\(text.debugDescription): \(dry)")
        }
        try "root:x:0:0:root:/root:/bin/bash\n".write(toFile: f.dir.path("passwd"), atomically: true, encoding: .utf8)
        let passwd = try importRun(f, ["-n", f.dir.path("passwd")])
        #expect(passwd.status == 65 && passwd.stderr.contains("passwd: neither an mbox") && ownLines(passwd), "\(passwd)")
        // An .eml in a tree is judged by the same rule.
        try FileManager.default.createDirectory(atPath: f.dir.path("tree"), withIntermediateDirectories: true)
        try "key: value\n".write(toFile: f.dir.path("tree/a.eml"), atomically: true, encoding: .utf8)
        let tree = try importRun(f, ["-n", f.dir.path("tree")])
        #expect(tree.status == 65 && tree.stderr.contains("a.eml: not an RFC 822 message"), "\(tree)")
        let bytes = f.dir.path("binary")
        _ = FileManager.default.createFile(atPath: bytes, contents: Data([0x7F, 0x45, 0x4C, 0x46, 0, 1, 2, 0xFF, 10, 0, 0]))
        let binary = try f.shell("hd-import - < '\(bytes)'")
        #expect(binary.status == 65 && binary.stderr.split(separator: "\n").count == 1, "\(binary)")
        let nul = f.dir.path("nul")
        _ = FileManager.default.createFile(atPath: nul, contents: Data("Subject: x\nX-Bad: a\u{0}b\n\nbody\n".utf8))
        let withNul = try f.shell("hd-import - < '\(nul)'")
        #expect(withNul.status == 65, "\(withNul)")
        #expect(try requests(fake, "/messages/import") == 0)
        let empty = try importRun(f, ["-"], stdin: "")
        #expect(empty.status == 0 && empty.stderr.contains("0 read: imported 0"), "\(empty)")
        // A file that is no mail is refused the same way, by its name.
        try "just some notes\n".write(toFile: f.dir.path("notes"), atomically: true, encoding: .utf8)
        let file = try importRun(f, [f.dir.path("notes")])
        #expect(file.status == 65 && file.stderr.contains("notes: neither an mbox") && ownLines(file), "\(file)")
    }

    @Test("an mbox whose last message is cut short: said (the count, and which), not imported; the whole file later imports it")
    func truncatedLastMessage() throws {
        let (f, fake) = try connected()
        let whole = "From a Tue Jan  2 10:00:00 2018\nSubject: first whole\nMessage-ID: <w1@old.example>\n\nbody one\n\n"
            + "From b Tue Jan  2 10:00:00 2018\nSubject: second cut\nMessage-ID: <w2@old.example>\n"
            + "Content-Type: multipart/mixed; boundary=\"XX\"\n\n--XX\nContent-Type: text/plain\n\nthe text\n--XX\n"
            + "Content-Type: application/pdf\nContent-Transfer-Encoding: base64\n\nJVBERi0xLjQK\n--XX--\n\n"
        let path = f.dir.path("cut.mbox")
        let close = whole.distance(from: whole.startIndex, to: try #require(whole.range(of: "--XX--")).lowerBound)
        for (cut, why) in [(whole.count - 12, "inside a line"), (close, "no closing delimiter")] {
            try String(whole.prefix(cut)).write(toFile: path, atomically: true, encoding: .utf8)
            let result = try importRun(f, [path])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("cut.mbox:2: <w2@old.example>: truncated") && result.stderr.contains(why)
                    && result.stderr.contains("truncated 1"), "\(result)")
            #expect(try withSubject(fake, "second cut").isEmpty)
        }
        #expect(try withSubject(fake, "first whole").count == 1)
        try whole.write(toFile: path, atomically: true, encoding: .utf8)
        let finished = try importRun(f, [path])
        #expect(finished.status == 0 && finished.stderr.contains("imported 1,") && finished.stderr.contains("already imported 1"), "\(finished)")
        #expect(try withSubject(fake, "second cut").count == 1 && withSubject(fake, "first whole").count == 1)
    }

    @Test("an unquoted From_ line in a body (mboxo) stays in its message; a CRLF mbox splits as an LF one")
    func mboxoAndCRLF() throws {
        let (f, fake) = try connected()
        let mboxo = "From a Tue Jan  2 10:00:00 2018\nSubject: minutes\nMessage-ID: <mo1@old.example>\n\nDear all,\n\n"
            + "From the minutes of Tuesday: nothing.\n\nBye\n\nFrom b Tue Jan  2 10:00:00 2018\nSubject: after minutes\n\nz\n\n"
        try mboxo.write(toFile: f.dir.path("o.mbox"), atomically: true, encoding: .utf8)
        let result = try importRun(f, [f.dir.path("o.mbox")])
        #expect(result.status == 0 && result.stderr.contains("2 read: imported 2"), "\(result)")
        let minutes = try withSubject(fake, "minutes")
        #expect(minutes.count == 1 && minutes[0].raw.contains("\nFrom the minutes of Tuesday: nothing.\n\nBye"), "\(minutes)")
        let crlf = "From a Tue\r\nSubject: crlf one\r\n\r\nx\r\n\r\nFrom b Tue\r\nSubject: crlf two\r\n\r\ny\r\n\r\n"
        try crlf.write(toFile: f.dir.path("crlf.mbox"), atomically: true, encoding: .utf8)
        let second = try importRun(f, [f.dir.path("crlf.mbox")])
        #expect(second.status == 0 && second.stderr.contains("2 read: imported 2"), "\(second)")
        #expect(try withSubject(fake, "crlf one").count == 1 && withSubject(fake, "crlf two").count == 1)
    }

    @Test("no Message-ID, the answer lost (kill -9 after Gmail stored it): the re-run finds it and finishes (it stayed at 75); never twice")
    func lostAnswerWithoutMessageID() throws {
        let (f, fake) = try connected()
        let path = f.dir.path("noid.eml")
        try "From: a@old.example\nSubject: no id at all\n\nbody\n".write(toFile: path, atomically: true, encoding: .utf8)
        let killed = try importRun(f, [path], environment: ["HUDSON_TEST_CRASH_AT": "import-answered"])
        #expect(killed.status != 0, "\(killed)")
        #expect(try withSubject(fake, "no id at all").count == 1)
        let rerun = try importRun(f, [path])
        #expect(rerun.status == 0 && rerun.stderr.contains("imported 1 (1 found in Gmail from an interrupted run)"), "\(rerun)")
        let third = try importRun(f, [path])
        #expect(third.status == 0 && third.stderr.contains("already imported 1"), "\(third)")
        let copies = try withSubject(fake, "no id at all")
        #expect(copies.count == 1, "\(copies)")
        // What Hudson added, and nothing else: a Message-ID of its own, first.
        #expect(copies.first?.raw.hasPrefix("Message-ID: <") == true && copies.first?.raw.hasSuffix("@import.hudson.invalid>\nFrom: a@old.example\nSubject: no id at all\n\nbody\n") == true,
                "\(copies)")
        // Killed after the record said "sending", before the request left: the re-run looks,
        // finds nothing, and sends it once.
        let second = f.dir.path("noid2.eml")
        try "From: a@old.example\nSubject: no id, never sent\n\nbody\n".write(toFile: second, atomically: true, encoding: .utf8)
        let early = try importRun(f, [second], environment: ["HUDSON_TEST_CRASH_AT": "import-sending"])
        #expect(early.status != 0, "\(early)")
        #expect(try withSubject(fake, "no id, never sent").isEmpty)
        let resumed = try importRun(f, [second])
        #expect(resumed.status == 0 && resumed.stderr.contains("1 read: imported 1,"), "\(resumed)")
        #expect(try withSubject(fake, "no id, never sent").count == 1)
    }

    @Test("every answer lost (apply_then_drop), no Message-ID or one the search cannot take: the run decides by search or history; once each")
    func everyAnswerLost() throws {
        let (f, fake) = try connected()
        let dir = f.dir.path("lost")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "From: a@old.example\nSubject: lost no id\n\nx\n".write(toFile: dir + "/1.eml", atomically: true, encoding: .utf8)
        try "From: a@old.example\nSubject: lost odd id\nMessage-ID: <no-at-sign>\n\nx\n".write(toFile: dir + "/2.eml", atomically: true, encoding: .utf8)
        try "From: a@old.example\nSubject: lost with id\nMessage-ID: <lw@old.example>\n\nx\n".write(toFile: dir + "/3.eml", atomically: true, encoding: .utf8)
        try fake.faults([["path": "messages/import", "mode": "apply_then_drop", "times": -1]])
        let result = try CommandRunner.run(BuiltProducts.executable("hd-import"), [dir], environment: f.environment, timeout: 120)
        #expect(result.status == 0 && result.stderr.contains("3 read: imported 3 (3 found in Gmail from an interrupted run)"), "\(result)")
        for subject in ["lost no id", "lost odd id", "lost with id"] {
            #expect(try withSubject(fake, subject).count == 1, "\(subject)")
        }
        try fake.faults([])
        let again = try importRun(f, [dir])
        #expect(again.status == 0 && again.stderr.contains("already imported 3"), "\(again)")
    }

    @Test("a lost answer for a message whose Message-ID Gmail holds twice already: found, no third copy")
    func messageIDTwiceInGmail() throws {
        let (f, fake) = try connected()
        let raw = "From: a@old.example\nSubject: twice already\nMessage-ID: <twice@old.example>\nDate: Tue, 02 Jan 2018 10:00:00 +0000\n\nx\n"
        for _ in 0..<2 { try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX"]]) }
        let path = f.dir.path("twice.eml")
        try raw.write(toFile: path, atomically: true, encoding: .utf8)
        // Killed after the record said "sending" (the store has not synced: it cannot know).
        let killed = try importRun(f, [path], environment: ["HUDSON_TEST_CRASH_AT": "import-sending"])
        #expect(killed.status != 0, "\(killed)")
        let rerun = try importRun(f, [path])
        #expect(rerun.status == 0 && rerun.stderr.contains("1 found in Gmail"), "\(rerun)")
        #expect(try withSubject(fake, "twice already").count == 2)
    }

    @Test("a record an older hd-import left sending for a message without a Message-ID: not sent again, said so (75)")
    func olderRecordWithoutMessageID() throws {
        let (f, fake) = try connected()
        let path = f.dir.path("legacy.eml")
        let text = "From: a@old.example\nSubject: legacy attempt\n\nbody\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        // What an older hd-import left: the key by digest, state sending, no Message-ID.
        let store = try f.openStore()
        let account = try #require(try store.accounts().first)
        let digest = try #require(try f.shell("printf '%s' '\(text)' | sha256sum").stdout.split(separator: " ").first)
        #expect(try store.beginImport(accountID: account.id, sourceKey: "sha256:\(digest)", messageID: nil, origin: path))
        try fake.clearRequests()
        let result = try importRun(f, [path])
        #expect(result.status == 75 && result.stderr.contains("may have imported it") && result.stderr.contains("unknown 1")
                && result.stderr.contains("--settle-unknown"), "\(result)")
        #expect(try requests(fake, "/messages/import") == 0)
        // The user checked Gmail. "It is there": never sent again, and every later run is done.
        let settled = try importRun(f, ["--settle-unknown", "in-gmail", path])
        #expect(settled.status == 0 && settled.stderr.contains("already imported 1"), "\(settled)")
        let again = try importRun(f, [path])
        #expect(again.status == 0 && again.stderr.contains("already imported 1"), "\(again)")
        #expect(try requests(fake, "/messages/import") == 0)
        // Another such record, and "it is not there": imported now, once.
        let other = f.dir.path("legacy2.eml")
        let otherText = "From: a@old.example\nSubject: legacy attempt two\n\nbody two\n"
        try otherText.write(toFile: other, atomically: true, encoding: .utf8)
        let otherDigest = try #require(try f.shell("printf '%s' '\(otherText)' | sha256sum").stdout.split(separator: " ").first)
        #expect(try store.beginImport(accountID: account.id, sourceKey: "sha256:\(otherDigest)", messageID: nil, origin: other))
        let imported = try importRun(f, ["--settle-unknown", "not-in-gmail", other])
        #expect(imported.status == 0 && imported.stderr.contains("imported 1"), "\(imported)")
        #expect(try requests(fake, "/messages/import") == 1)
        #expect(try importRun(f, [other]).status == 0)
        #expect(try requests(fake, "/messages/import") == 1)
        let bad = try importRun(f, ["--settle-unknown", "maybe", other])
        #expect(bad.status == 64, "\(bad)")
    }

    @Test("label names with ESC, BEL, DEL, U+202E or decoded CR/LF are refused, shown escaped; nothing of them reaches Gmail")
    func hostileLabelNames() throws {
        let (f, fake) = try connected()
        let good = f.dir.path("good.eml")
        try "From: a@old.example\nSubject: fine\nMessage-ID: <fine@old.example>\n\nx\n".write(toFile: good, atomically: true, encoding: .utf8)
        try fake.clearRequests()
        for label in ["Bad\u{1B}[31m", "Bell\u{07}", "Del\u{7F}", "Flip\u{202E}txt", "Two\nLines", "Tab\there"] {
            let result = try importRun(f, ["--label", label, good])
            #expect(result.status == 64 && result.stderr.contains("--label ") && result.stderr.contains("a label name cannot hold")
                    && !result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{202E}") && !result.stderr.contains("\u{07}"),
                    "\(result)")
        }
        #expect(try fake.requests().filter { $0.method == "POST" }.isEmpty)
        let dir = f.dir.path("labels")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let hostile = [("esc", "=?UTF-8?Q?Evil=1B[2J?="), ("crlf", "=?UTF-8?Q?Two=0D=0ALines?="), ("bidi", "=?UTF-8?B?5paH4oCu?="),
                       ("del", "=?UTF-8?Q?Del=7F?=")]
        for (name, encoded) in hostile {
            try "From: a@old.example\nSubject: labelled \(name)\nMessage-ID: <\(name)@old.example>\nX-Gmail-Labels: Inbox,\(encoded)\n\nx\n"
                .write(toFile: dir + "/\(name).eml", atomically: true, encoding: .utf8)
        }
        try "From: a@old.example\nSubject: labelled fine\nMessage-ID: <lf@old.example>\nX-Gmail-Labels: Inbox,\"Work, Projects\"\n\nx\n"
            .write(toFile: dir + "/ok.eml", atomically: true, encoding: .utf8)
        let result = try importRun(f, [dir])
        #expect(result.status == 2 && result.stderr.contains("5 read: imported 1") && result.stderr.contains("failed 4"), "\(result)")
        #expect(result.stderr.contains("label Evil\\e[2J: a label name cannot hold control characters; not imported")
                && result.stderr.contains("label Two\\r\\nLines: a label name cannot hold a tab or a line break")
                && result.stderr.contains("\\u{202E}") && result.stderr.contains("Del\\u{7F}") && ownLines(result), "\(result)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E || $0.value == 0x7F || $0.value == 0x0D })
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        let names = (state["labels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.contains("Work, Projects") && !names.contains { $0.unicodeScalars.contains { TerminalSafetyProbe.unsafe($0) } }, "\(names)")
        for (name, _) in hostile { #expect(try withSubject(fake, "labelled \(name)").isEmpty, "\(name)") }
    }

    @Test("files that are not files: a FIFO and a device are refused at once (no hang), a link out of the tree is not followed")
    func notFiles() throws {
        let (f, fake) = try connected()
        let fifo = f.dir.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let fromFifo = try importRun(f, [fifo])
        #expect(fromFifo.status == 65 && fromFifo.stderr == "hd-import: \(fifo): a FIFO, not a regular file\n", "\(fromFifo)")
        let fromDevice = try importRun(f, ["/dev/zero"])
        #expect(fromDevice.status == 65 && fromDevice.stderr == "hd-import: /dev/zero: a character device, not a regular file\n", "\(fromDevice)")
        let tree = f.dir.path("tree")
        try FileManager.default.createDirectory(atPath: tree + "/sub", withIntermediateDirectories: true)
        try "root:x:0:0:root:/root:/bin/bash\n".write(toFile: f.dir.path("shadow-like"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: tree + "/x.eml", withDestinationPath: f.dir.path("shadow-like"))
        try FileManager.default.createSymbolicLink(atPath: tree + "/passwd.eml", withDestinationPath: "/etc/passwd")
        try FileManager.default.createSymbolicLink(atPath: tree + "/sub/loop", withDestinationPath: "..")
        #expect(mkfifo(tree + "/pipe.eml", 0o600) == 0)
        try "From: a@old.example\nSubject: in the tree\n\nx\n".write(toFile: tree + "/sub/in.eml", atomically: true, encoding: .utf8)
        try fake.clearRequests()
        let result = try importRun(f, [tree])
        #expect(result.status == 2 && result.stderr.contains("1 read: imported 1") && result.stderr.contains("failed 3"), "\(result)")
        #expect(result.stderr.contains("x.eml: a symbolic link out of") && result.stderr.contains("passwd.eml: a symbolic link out of")
                && result.stderr.contains("pipe.eml: a FIFO, not a regular file") && ownLines(result), "\(result)")
        #expect(try requests(fake, "/messages/import") == 1)
        #expect(try stored(fake).allSatisfy { !$0.raw.contains("root:x:0:0") })
    }
}

/// The characters text output never shows (HudsonOutput's TerminalSafety, restated here so
/// the test does not trust the code it checks).
enum TerminalSafetyProbe {
    static func unsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFFF9...0xFFFB: return true
        default: return false
        }
    }
}
