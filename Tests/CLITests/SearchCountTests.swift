import HudsonStore
import HudsonTestSupport
import Testing

@Suite("hd-search --count: threads counted from the matches' keys, spam and trash left out, queued changes seen")
struct SearchCountTests {
    /// Three threads mention "quorum": t1 twice (one of them from bob), t2 once, t3 only in
    /// a message in spam; t4 is from bob without the word. One more thread, t5, has the
    /// word in a message that `mailbox` leaves for the test to trash.
    func mailbox() throws -> CLIFixture {
        let f = CLIFixture()
        let store = try f.openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        func message(_ id: String, thread: String, minute: Int64, subject: String, from: String = "Carol <carol@example.org>",
                     labels: [String] = ["INBOX"]) -> MessageSnapshot {
            MessageSnapshot(
                id: id, threadID: thread, historyID: 1000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
                labelIDs: labels, snippet: subject, sizeEstimate: 1000,
                headers: MessageHeaders(subject: subject, from: from, to: "Ann <ann@example.com>"))
        }
        _ = try store.applySnapshots([
            message("m1", thread: "t1", minute: 1, subject: "quorum for Tuesday"),
            message("m2", thread: "t1", minute: 2, subject: "Re: quorum for Tuesday", from: "Bob <bob@example.org>"),
            message("m3", thread: "t2", minute: 3, subject: "no quorum yet"),
            message("m4", thread: "t3", minute: 4, subject: "cheap quorum pills", labels: ["SPAM"]),
            message("m5", thread: "t4", minute: 5, subject: "lunch", from: "Bob <bob@example.org>"),
            message("m6", thread: "t5", minute: 6, subject: "quorum minutes"),
        ], accountID: account.id)
        return f
    }

    func count(_ f: CLIFixture, _ arguments: String...) throws -> String {
        let result = try CommandRunner.run(BuiltProducts.executable("hd-search"), ["--count"] + arguments,
                                           environment: f.environment, stdin: nil)
        // The words are searched in subjects and snippets (no body is stored): stderr says so.
        #expect(result.status == 0 && !result.stderr.contains("error"), "\(result)")
        return result.stdout
    }

    @Test("threads and messages of a word, of an address, of a label, and with spam asked for")
    func counts() throws {
        let f = try mailbox()
        #expect(try count(f, "quorum") == "3\n")
        #expect(try count(f, "--messages", "quorum") == "4\n")
        #expect(try count(f, "in:anywhere", "quorum") == "4\n")
        #expect(try count(f, "in:spam", "quorum") == "1\n")
        #expect(try count(f, "from:bob@example.org") == "2\n")
        #expect(try count(f, "from:bob@example.org", "quorum") == "1\n")
        #expect(try count(f, "-quorum") == "1\n")
        #expect(try count(f, "in:inbox") == "4\n")
        #expect(try count(f, "quorum", "OR", "lunch") == "4\n")
    }

    @Test("a thread whose only match is trashed (queued, not yet sent) is no longer counted, and is under in:trash")
    func queuedTrash() throws {
        let f = try mailbox()
        let trashed = try f.run("hd-mark", "--no-flush", "trash", "message:m6")
        #expect(trashed.status == 0, "\(trashed)")
        #expect(try count(f, "quorum") == "2\n")
        #expect(try count(f, "--messages", "quorum") == "3\n")
        #expect(try count(f, "in:trash", "quorum") == "1\n")
        #expect(try count(f, "from:carol@example.org") == "2\n")
    }

    @Test("--explain --count shows the count's plan: the threads of a word's or an address's matches come from the narrow index of each message's thread")
    func countPlan() throws {
        let f = try mailbox()
        for query in ["quorum", "from:bob@example.org"] {
            let explained = try f.run("hd-search", "--explain", "--count", query)
            #expect(explained.status == 0, "\(explained)")
            let plan = explained.stdout.components(separatedBy: "count plan:\n").last ?? ""
            #expect(explained.stdout.contains("count plan:\n") && plan.contains("messages_thread_by_key"), "\(explained.stdout)")
        }
    }
}
