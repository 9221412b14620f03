// hd-send as a sendmail program (issue 22, part 1): what mutt, aerc and git send-email pass
// to one, against the project's fake Gmail over HTTP — the real git send-email and mutt
// included. What Gmail received is read back from the fake's own state: the raw bytes it
// stores, its threads, and how many copies of a Message-ID it holds.
import Foundation
import HudsonTestSupport
import Testing

/// The real mail programs on this machine. Under CI they must be there (scripts/lib.sh's
/// ensure_mail_clients installs them), so their tests fail rather than skip without them.
enum MailClients {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    static let git = ManPages.tool("git")
    /// git send-email is a separate Debian package (git-email).
    static let gitSendEmail: String? = {
        guard let git else { return nil }
        let result = try? CommandRunner.run(URL(fileURLWithPath: git), ["send-email", "--help"],
                                            environment: ["PATH": "/usr/bin:/bin", "MANPAGER": "cat", "PAGER": "cat"])
        return result.map { $0.status == 0 || !$0.stderr.contains("is not a git command") } == true ? git : nil
    }()
    static let mutt = ManPages.tool("mutt") ?? ManPages.tool("neomutt")
}

@Suite("hd-send as a sendmail program: operands, -t, Bcc, threading, git send-email and mutt", .serialized)
struct SendmailTests {
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "30", "--demo-span-days", "60"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func sendmail(_ f: CLIFixture, _ arguments: [String], message: String,
                  environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), arguments,
                              environment: f.environment.merging(environment) { $1 }, stdin: message)
    }

    /// The fake's messages carrying this Message-ID: (id, threadId).
    func stored(_ fake: FakeGmail, _ messageID: String) throws -> [(id: String, thread: String)] {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["messages"] as? [[String: Any]] ?? []).filter { $0["messageId"] as? String == messageID }
            .map { ($0["id"] as? String ?? "", $0["threadId"] as? String ?? "") }
    }

    /// The exact bytes Gmail stores for a message.
    func raw(_ fake: FakeGmail, _ id: String) throws -> [UInt8] {
        let message = try #require(try fake.admin("GET", "message/\(id)") as? [String: Any])
        var text = try #require(message["raw"] as? String).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return [UInt8](try #require(Data(base64Encoded: text)))
    }

    func headerBlock(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text[..<(text.range(of: "\r\n\r\n")?.lowerBound ?? text.endIndex)])
    }

    func outboxCount(_ f: CLIFixture) throws -> Int {
        try f.run("hd-pending", "--json").lines.filter { $0.contains("\"type\":\"outbox\"") }.count
    }

    // MARK: - Recipients

    @Test("recipients only as operands (with --): each reaches Gmail in a Bcc header; nothing on stdout; From added")
    func operandsOnly() throws {
        let (f, fake) = try synced()
        let message = "Subject: operands only\nMessage-ID: <ops.1@hudson.test>\n\nHello.\n"
        let result = try sendmail(f, ["-oi", "-F", "Demo User", "--", "bob@example.org", "carol@example.net, dave@example.com"],
                                  message: message)
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
        let copies = try stored(fake, "<ops.1@hudson.test>")
        #expect(copies.count == 1)
        let headers = headerBlock(try raw(fake, try #require(copies.first).id))
        #expect(headers.contains("Bcc: bob@example.org, carol@example.net, dave@example.com"), "\(headers)")
        #expect(headers.contains("From: Demo User <demo@hudson.test>"), "\(headers)")
    }

    @Test("an operand no header names (git's --bcc) is added as Bcc; the message is otherwise sent byte for byte")
    func operandBecomesBcc() throws {
        let (f, fake) = try synced()
        // CRLF already, a header that is folded, trailing blanks, a long line, 8-bit UTF-8, tabs.
        let message = "From: Demo <demo@hudson.test>\r\nTo: Bob <bob@example.org>\r\nCc: carol@example.net\r\n"
            + "Subject: byte for byte\r\nMessage-ID: <bytes.1@hudson.test>\r\nDate: Thu, 03 Dec 2026 10:00:00 +0000\r\n"
            + "X-Folded: one\r\n two\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            + "Grüße \t \r\n" + String(repeating: "x", count: 300) + "\r\n.\r\nFrom the start\r\n"
        let result = try sendmail(f, ["-i", "bob@example.org", "CAROL@example.net", "dave@example.com"], message: message)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        let id = try #require(try stored(fake, "<bytes.1@hudson.test>").first).id
        #expect(try raw(fake, id) == Array(("Bcc: dave@example.com\r\n" + message).utf8))
    }

    @Test("-t takes the recipients from the headers; with operands too, the new ones are added to its one Bcc field")
    func readRecipients() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\nTo: bob@example.org\nBcc: secret@example.org\nSubject: -t\nMessage-ID: <t.1@hudson.test>\n\nBody.\n"
        #expect(try sendmail(f, ["-t", "-oi"], message: message).status == 0)
        let first = try raw(fake, try #require(try stored(fake, "<t.1@hudson.test>").first).id)
        #expect(headerBlock(first).contains("Bcc: secret@example.org") && !headerBlock(first).contains("Bcc: bob"))
        let second = message.replacingOccurrences(of: "<t.1@", with: "<t.2@")
        #expect(try sendmail(f, ["-t", "extra@example.net"], message: second).status == 0)
        let headers = headerBlock(try raw(fake, try #require(try stored(fake, "<t.2@hudson.test>").first).id))
        // One Bcc field, not two: readers disagree on which of two they take (RFC 5322 §3.6 allows one).
        #expect(headers.hasPrefix("Bcc: secret@example.org, extra@example.net\r\n")
                && headers.components(separatedBy: "Bcc:").count == 2, "\(headers)")
    }

    @Test("without -t, a header recipient no operand names is refused (65) and nothing is queued or sent")
    func unrequestedRecipientRefused() throws {
        let (f, fake) = try synced()
        // A bounce: mutt names only the new recipient, but Gmail would deliver to the To header.
        let message = "From: demo@hudson.test\nTo: original@example.org\nResent-To: new@example.net\nSubject: b\nMessage-ID: <b.1@hudson.test>\n\nx\n"
        let result = try sendmail(f, ["-oi", "--", "new@example.net"], message: message)
        #expect(result.status == 65 && result.stderr.contains("original@example.org is a recipient in the headers") && result.stderr.contains("-t"), "\(result)")
        #expect(try stored(fake, "<b.1@hudson.test>").isEmpty)
        #expect(try outboxCount(f) == 0)
        let none = try sendmail(f, ["-i"], message: "Subject: x\n\nno one\n")
        #expect(none.status == 64 && none.stderr.contains("no recipients"), "\(none)")
        let bad = try sendmail(f, ["-i", "not an address"], message: "Subject: x\n\ny\n")
        #expect(bad.status == 64 && bad.stderr.contains("not an email address"), "\(bad)")
        let composing = try sendmail(f, ["-i", "--subject", "s", "bob@example.org"], message: "Subject: x\n\ny\n")
        #expect(composing.status == 64 && composing.stderr.contains("--subject cannot be used"), "\(composing)")
    }

    @Test("the options sendmail programs pass and ignore are accepted; -bs (SMTP mode) is refused")
    func ignoredOptions() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\nTo: bob@example.org\nSubject: ignored\nMessage-ID: <ign.1@hudson.test>\n\nx\n"
        let result = try sendmail(f, ["-oem", "-odb", "-B8BITMIME", "-N", "never", "-R", "hdrs", "-V", "env1", "-bm", "-v",
                                      "-f", "demo@hudson.test", "-i", "--", "bob@example.org"], message: message)
        #expect(result.status == 0, "\(result)")
        #expect(try stored(fake, "<ign.1@hudson.test>").count == 1)
        let smtp = try sendmail(f, ["-bs"], message: "")
        #expect(smtp.status == 64 && smtp.stderr.contains("only -bm"), "\(smtp)")
        let unknown = try sendmail(f, ["-f", "stranger@example.org", "bob@example.org"], message: message)
        #expect(unknown.status != 0 && unknown.stderr.contains("stranger@example.org"), "\(unknown)")
    }

    // MARK: - Faults and exit statuses

    /// Time passes: the outbox's backoff after a 5xx or 429 is over (the store is edited, as
    /// the clock would have it, instead of the test waiting minutes).
    func backoffOver(_ f: CLIFixture) throws {
        let result = try f.shell("sqlite3 \"$HUDSON_DB\" 'UPDATE outbox SET next_attempt_at = NULL'")
        #expect(result.status == 0, "\(result)")
    }

    @Test("an answer lost after Gmail stored it, 5xx before and after applying, and 429: exit 0 (queued), then exactly one copy")
    func faultsExitZeroAndSendOnce() throws {
        let (f, fake) = try synced()
        let rules: [[String: Any]] = [["mode": "apply_then_drop"], ["status": 503], ["mode": "apply_then_status", "status": 500],
                                      ["status": 429, "retry_after": 3600, "times": -1], ["mode": "hang", "times": -1]]
        for (index, rule) in rules.enumerated() {
            var rule = rule
            rule["path"] = "/messages/send$"
            try fake.faults([rule])
            let id = "<fault.\(index)@hudson.test>"
            let message = "From: demo@hudson.test\nTo: bob@example.org\nSubject: fault \(index)\nMessage-ID: \(id)\n\nx\n"
            let result = try sendmail(f, ["-oi", "bob@example.org"], message: message)
            #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.contains("queued"), "\(rule): \(result)")
            #expect(try stored(fake, id).count <= 1)
            try fake.admin("DELETE", "faults")
            try backoffOver(f)
            let sync = try f.run("hd-sync")
            #expect(sync.status == 0, "\(sync)")
            #expect(try stored(fake, id).count == 1, "\(rule)")
        }
        #expect(try f.run("hd-sync").status == 0)
        #expect(try outboxCount(f) == 0)
    }

    @Test("killed (-9 as a crash would) between Gmail's answer and recording it: hd-sync finds the message, sends nothing")
    func crashAfterSend() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\nTo: bob@example.org\nSubject: crash\nMessage-ID: <crash.1@hudson.test>\n\nx\n"
        let result = try sendmail(f, ["-oi", "bob@example.org"], message: message, environment: ["HUDSON_TEST_CRASH_AFTER_SEND": "1"])
        #expect(result.status != 0, "\(result)")
        #expect(try stored(fake, "<crash.1@hudson.test>").count == 1)
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/send") }.isEmpty)
        #expect(try stored(fake, "<crash.1@hudson.test>").count == 1)
        #expect(try outboxCount(f) == 0)
    }

    @Test("the store cannot be opened for queueing: a failure status that is not 0, and nothing sent")
    func cannotQueue() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\nTo: bob@example.org\nSubject: nq\nMessage-ID: <nq.1@hudson.test>\n\nx\n"
        let result = try sendmail(f, ["-i", "bob@example.org"], message: message,
                                  environment: ["HUDSON_DB": f.dir.path("missing/none.sqlite3")])
        #expect(result.status == 78, "\(result)")
        #expect(try stored(fake, "<nq.1@hudson.test>").isEmpty)
    }

    // MARK: - Threading

    @Test("a reply sent a moment after the message it answers, before any sync, joins its thread through the outbox")
    func replyThroughOutbox() throws {
        let (f, fake) = try synced()
        let first = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Plans\nMessage-ID: <plans.1@hudson.test>\n\nFirst.\n"
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: first).status == 0)
        let reply = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Re: Plans\nMessage-ID: <plans.2@hudson.test>\n"
            + "In-Reply-To: <plans.1@hudson.test>\nReferences: <plans.1@hudson.test>\n\nSecond.\n"
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: reply).status == 0)
        let parent = try #require(try stored(fake, "<plans.1@hudson.test>").first)
        let child = try #require(try stored(fake, "<plans.2@hudson.test>").first)
        #expect(child.thread == parent.thread && child.id != parent.thread)
    }

    @Test("a reply to a synced message (found in the store by its Message-ID) joins that thread")
    func replyThroughStore() throws {
        let (f, fake) = try synced()
        let shown = try f.run("hd-show", "--no-fetch", "--json", try #require(try f.run("hd-ls", "-n", "1", "--ids").lines.first))
        let newest = try #require(try shown.lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let thread = try #require((newest["thread"] as? String)?.replacingOccurrences(of: "thread:", with: ""))
        let parentID = try #require(newest["rfc822_message_id"] as? String)
        let subject = try #require(newest["subject"] as? String)
        let reply = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Re: \(subject)\nMessage-ID: <st.1@hudson.test>\n"
            + "In-Reply-To: \(parentID)\nReferences: \(parentID)\n\nAgreed.\n"
        let result = try sendmail(f, ["-t"], message: reply)
        #expect(result.status == 0, "\(result)")
        #expect(try stored(fake, "<st.1@hudson.test>").first?.thread == thread)
    }

    @Test("offline, a message and its reply are both queued; the next hd-sync sends them in order, the reply in the thread")
    func queuedParentThenReply() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        let first = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Offline\nMessage-ID: <off.1@hudson.test>\n\nFirst.\n"
        let reply = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Re: Offline\nMessage-ID: <off.2@hudson.test>\n"
            + "In-Reply-To: <off.1@hudson.test>\nReferences: <off.1@hudson.test>\n\nSecond.\n"
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: first).status == 0)
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: reply).status == 0)
        #expect(try stored(fake, "<off.1@hudson.test>").isEmpty)
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        let parent = try #require(try stored(fake, "<off.1@hudson.test>").first)
        let child = try #require(try stored(fake, "<off.2@hudson.test>").first)
        #expect(child.thread == parent.thread)
    }

    @Test("a reply whose parent's send has an unknown outcome waits for it, then joins its thread once the probe finds it")
    func replyWaitsForUncertainParent() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "apply_then_drop", "path": "/messages/send$"]])
        let first = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Lost\nMessage-ID: <lost.1@hudson.test>\n\nFirst.\n"
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: first).status == 0)
        try fake.admin("DELETE", "faults")
        let reply = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Re: Lost\nMessage-ID: <lost.2@hudson.test>\n"
            + "In-Reply-To: <lost.1@hudson.test>\n\nSecond.\n"
        let result = try sendmail(f, ["-i", "bob@example.org"], message: reply)
        #expect(result.status == 0 && result.stderr.contains("queued"), "\(result)")
        #expect(try stored(fake, "<lost.2@hudson.test>").isEmpty)  // waits for its parent
        #expect(try f.run("hd-sync").status == 0)
        let parents = try stored(fake, "<lost.1@hudson.test>")
        #expect(parents.count == 1)
        #expect(try stored(fake, "<lost.2@hudson.test>").map(\.thread) == parents.map(\.thread))
    }

    // MARK: - The real programs

    /// A repository with a three-commit series whose patches are hard to carry: tabs,
    /// trailing blanks, lines longer than 78 characters, UTF-8.
    func seriesRepository(_ f: CLIFixture, git: String) throws -> String {
        let repo = f.dir.path("repo")
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        let script = """
            set -e
            cd '\(repo)'
            git init -q
            git config user.name 'Demo User'
            git config user.email demo@hudson.test
            printf 'line one\\n' > a.txt
            git add a.txt
            git commit -qm initial
            for i in 1 2 3; do
                printf 'change %s\\twith a tab and trailing blanks  \\nGrüße, ünïcödé %s\\n%s\\n' $i $i "$(printf 'x%.0s' $(seq 1 120))" >> a.txt
                printf 'binary-ish\\r line %s\\n' $i >> b.txt
                git add a.txt b.txt
                git commit -qm "Change number $i: a line

            Body of change $i, a description long enough to go past seventy-eight characters on one line."
            done
            """
        let result = try f.shell(script)
        #expect(result.status == 0, "\(result)")
        return repo
    }

    @Test("git send-email --sendmail-cmd=hd-send: three patches reach Gmail intact, threaded, and git am reproduces the series",
          .enabled(if: MailClients.gitSendEmail != nil || MailClients.isCI,
                   "skipped: git send-email is not installed (apt-get install git-email; scripts/test installs it)"))
    func gitSendEmailSeries() throws {
        let git = try #require(MailClients.gitSendEmail, "git send-email is required under CI=true")
        let (f, fake) = try synced()
        let repo = try seriesRepository(f, git: git)
        let send = try f.shell("""
            cd '\(repo)' && git send-email --sendmail-cmd=hd-send --to=bob@example.org --cc=carol@example.net \
                --bcc=dave@example.com --confirm=never --suppress-cc=self --8bit-encoding=UTF-8 --quiet HEAD~3
            """)
        #expect(send.status == 0, "\(send)")

        // The three patches as Gmail stores them, by their git Message-IDs.
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        var patches: [Int: (id: String, thread: String, raw: [UInt8])] = [:]
        for message in state["messages"] as? [[String: Any]] ?? [] {
            guard let id = message["id"] as? String, let thread = message["threadId"] as? String else { continue }
            let bytes = try raw(fake, id)
            let headers = headerBlock(bytes)
            guard headers.contains("X-Mailer: git-send-email"),
                  let number = (1...3).first(where: { headers.contains("[PATCH \($0)/3]") }) else { continue }
            #expect(patches[number] == nil, "patch \(number) was sent twice")
            patches[number] = (id, thread, bytes)
        }
        #expect(patches.count == 3)
        let first = try #require(patches[1])
        let firstID = try #require(headerBlock(first.raw).split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("message-id:") }?.split(separator: " ").last.map(String.init))
        for number in [2, 3] {
            let headers = headerBlock(try #require(patches[number]).raw)
            #expect(headers.contains("In-Reply-To: \(firstID)") && headers.contains("References: \(firstID)"), "\(headers)")
        }
        // git's --bcc is on no header git wrote: it reaches Gmail as an added Bcc.
        #expect(patches.values.allSatisfy { headerBlock($0.raw).hasPrefix("Bcc: dave@example.com\r\n") })

        // git am of the stored messages, in a clone at the series' base.
        for (number, patch) in patches {
            try Data(patch.raw).write(to: URL(fileURLWithPath: f.dir.path("patch-\(number).eml")))
        }
        let am = try f.shell("""
            set -e
            git clone -q '\(repo)' '\(f.dir.path("clone"))'
            cd '\(f.dir.path("clone"))'
            git reset -q --hard HEAD~3
            git -c user.name=Applier -c user.email=applier@example.org am -q \
                '\(f.dir.path("patch-1.eml"))' '\(f.dir.path("patch-2.eml"))' '\(f.dir.path("patch-3.eml"))'
            """)
        #expect(am.status == 0, "\(am)")
        let format = "--format=%T %an <%ae>%n%B"
        let applied = try f.shell("git -C '\(f.dir.path("clone"))' log -3 '\(format)'")
        let original = try f.shell("git -C '\(repo)' log -3 '\(format)'")
        #expect(applied.status == 0 && !applied.stdout.isEmpty && applied.stdout == original.stdout,
                "applied:\n\(applied.stdout)\noriginal:\n\(original.stdout)")

        // A reply to the first patch from mutt in batch mode, at once, before any sync.
        if let mutt = MailClients.mutt {
            try muttReply(f, fake, mutt: mutt, to: firstID, subject: "Re: [PATCH 1/3] Change number 1: a line", thread: first.thread)
        } else {
            #expect(!MailClients.isCI, "mutt is required under CI=true")
        }
    }

    func muttReply(_ f: CLIFixture, _ fake: FakeGmail, mutt: String, to parent: String, subject: String, thread: String) throws {
        let muttrc = f.dir.path("muttrc")
        try """
            set sendmail="hd-send"
            set from="demo@hudson.test"
            set realname="Demo User"
            set use_from=yes
            set record=""
            set folder="\(f.dir.path("Mail"))"
            set spoolfile="\(f.dir.path("Mail/inbox"))"
            set charset="utf-8"
            set send_charset="utf-8"
            """.write(toFile: muttrc, atomically: true, encoding: .utf8)
        let reply = try f.shell("""
            printf 'Reviewed-by: Demo User <demo@hudson.test>\\n' | \(mutt) -n -F '\(muttrc)' -s '\(subject)' \
                -e 'my_hdr In-Reply-To: \(parent)' -e 'my_hdr References: \(parent)' -e 'my_hdr Message-ID: <mutt.1@hudson.test>' \
                -- bob@example.org
            """)
        #expect(reply.status == 0, "\(reply)")
        let stored = try stored(fake, "<mutt.1@hudson.test>")
        #expect(stored.count == 1 && stored.first?.thread == thread, "\(stored)")
    }

    @Test("mutt in batch mode with set sendmail=\"hd-send\": a reply to a message sent a moment before joins its thread",
          .enabled(if: MailClients.mutt != nil || MailClients.isCI,
                   "skipped: mutt is not installed (apt-get install mutt; scripts/test installs it)"))
    func muttReplyJoinsThread() throws {
        let mutt = try #require(MailClients.mutt, "mutt is required under CI=true")
        let (f, fake) = try synced()
        let first = "From: demo@hudson.test\nTo: bob@example.org\nSubject: Lunch\nMessage-ID: <lunch.1@hudson.test>\n\nNoon?\n"
        #expect(try sendmail(f, ["-i", "bob@example.org"], message: first).status == 0)
        let parent = try #require(try stored(fake, "<lunch.1@hudson.test>").first)
        try muttReply(f, fake, mutt: mutt, to: "<lunch.1@hudson.test>", subject: "Re: Lunch", thread: parent.thread)
    }
}
