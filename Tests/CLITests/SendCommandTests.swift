// hd-send, its outbox and the probe protocol, end to end: the built commands against the
// project's fake Gmail over HTTP. "Sent twice" is counted as copies of one Message-ID in
// the fake's own state, so every test checks the one property that matters: exactly one.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-send: the outbox and the probe protocol against the fake Gmail over HTTP", .serialized)
struct SendCommandTests {
    /// A small synced demo account.
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "40", "--demo-span-days", "60"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// How many messages on the server carry this Message-ID.
    func copies(_ fake: FakeGmail, _ messageID: String) throws -> Int {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["messages"] as? [[String: Any]] ?? []).filter { $0["messageId"] as? String == messageID }.count
    }

    /// The outbox entries hd-pending shows, as JSON objects.
    func outbox(_ f: CLIFixture) throws -> [[String: Any]] {
        try f.run("hd-pending", "--json").lines.filter { !$0.isEmpty }.compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["type"] as? String == "outbox" }
    }

    /// Once the faults end, the next hd-sync sends the queued message exactly once, and the
    /// one after finds the outbox empty.
    func expectDeliveredOnceFaultsEnd(_ f: CLIFixture, _ fake: FakeGmail, messageID id: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        try fake.admin("DELETE", "faults")
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)", sourceLocation: sourceLocation)
        #expect(try copies(fake, id) == 1, sourceLocation: sourceLocation)
        #expect(try f.run("hd-sync").status == 0, sourceLocation: sourceLocation)
        #expect(try outbox(f).isEmpty, sourceLocation: sourceLocation)
    }

    func messageID(_ f: CLIFixture, _ reference: String) throws -> String {
        try #require(try outbox(f).first { $0["id"] as? String == reference }?["rfc822_message_id"] as? String)
    }

    func sendRequests(_ fake: FakeGmail) throws -> Int {
        try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/send") }.count
    }

    func send(_ f: CLIFixture, _ arguments: String..., body: String = "Hello from Hudson.\n",
              environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--to", "Bob <bob@example.org>", "--subject", "Hudson"] + arguments,
                              environment: f.environment.merging(environment) { $1 }, stdin: body)
    }

    @Test("a send while online prints its outbox id and Gmail's id, and the echo brings it into the store labelled SENT")
    func sendOnline() throws {
        let (f, fake) = try synced()
        let result = try send(f, body: "Grüße aus Zürich!\n")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(result.lines.count == 2 && result.lines[0].hasPrefix("outbox:") && result.lines[1].hasPrefix("message:"), "\(result)")
        let id = String(result.lines[1].dropFirst("message:".count))
        #expect(try fake.messages()[id]?.labels == ["SENT"])
        #expect(try f.run("hd-pending", "--count").stdout == "1\n")  // sent, until the echo is stored
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        let shown = try f.run("hd-show", "--no-fetch", result.lines[1])
        #expect(shown.stdout.contains("Labels: SENT") && shown.stdout.contains("Subject: Hudson"), "\(shown)")
    }

    @Test("offline (every request dropped) the message stays queued with exit 0, and the next hd-sync delivers it once")
    func offlineThenSync() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        let result = try send(f)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "outbox:1\n" && result.stderr == "hd-send: queued; the next hd-sync will send it\n", "\(result)")
        let id = try messageID(f, "outbox:1")
        #expect(try copies(fake, id) == 0)
        try expectDeliveredOnceFaultsEnd(f, fake, messageID: id)
    }

    @Test("an answer lost after Gmail stored the message is probed by the next hd-sync and not sent again")
    func lostAnswerIsProbed() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "apply_then_drop", "path": "/messages/send$"]])
        let result = try send(f)
        #expect(result.status == 0 && result.stdout == "outbox:1\n", "\(result)")
        let id = try messageID(f, "outbox:1")
        #expect(try outbox(f).first?["outcome_unknown"] as? Bool == true)
        #expect(try f.run("hd-pending").stdout.contains("outbox:1\tsend\tunknown\t"))
        #expect(try copies(fake, id) == 1)
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try sendRequests(fake) == 0)
        #expect(try copies(fake, id) == 1)
        #expect(try outbox(f).isEmpty)
    }

    @Test("a crash between queueing and sending (--no-send), then hd-sync: exactly one copy on the server")
    func crashBeforeSend() throws {
        let (f, fake) = try synced()
        let result = try send(f, "--no-send")
        #expect(result.status == 0 && result.stdout == "outbox:1\n", "\(result)")
        let id = try messageID(f, "outbox:1")
        #expect(try copies(fake, id) == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try copies(fake, id) == 1)
        #expect(try sendRequests(fake) == 1)
    }

    @Test("a crash between Gmail's answer and recording it: the next hd-sync finds the message and sends nothing")
    func crashAfterSend() throws {
        let (f, fake) = try synced()
        let result = try send(f, environment: ["HUDSON_TEST_CRASH_AFTER_SEND": "1"])
        #expect(result.status != 0 && result.stdout == "outbox:1\n", "\(result)")
        let id = try messageID(f, "outbox:1")
        #expect(try outbox(f).first?["state"] as? String == "sending")
        #expect(try copies(fake, id) == 1)
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try sendRequests(fake) == 0)
        #expect(try copies(fake, id) == 1)
        #expect(try outbox(f).isEmpty)
    }

    @Test("a 400 from Gmail fails the entry with its reason, shown by hd-pending, and it is never retried")
    func rejectedFails() throws {
        let (f, fake) = try synced()
        try fake.faults([["path": "/messages/send$", "status": 400, "message": "Invalid To header", "times": -1]])
        let result = try send(f)
        #expect(result.status == 65, "\(result)")
        #expect(result.stdout == "outbox:1\n" && result.stderr == "hd-send: outbox:1: rejected by Gmail: Invalid To header\n")
        let pending = try f.run("hd-pending")
        #expect(pending.stdout.contains("outbox:1\tsend\tfailed\t") && pending.stdout.contains("rejected by Gmail: Invalid To header"),
                "\(pending)")
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try sendRequests(fake) == 0)
        #expect(try f.run("hd-undo", "outbox:1").status == 0)  // dismissed
        #expect(try outbox(f).isEmpty)
    }

    @Test("a 403 that is not a rate limit is the account's: the message stays queued, not failed, with the reason said, and goes once the account is put right",
          arguments: ["dailyLimitExceeded", "domainPolicy", "insufficientPermissions"])
    func accountWideRefusalKeepsTheMessage(reason: String) throws {
        let (f, fake) = try synced()
        try fake.faults([["path": "/messages/send$", "status": 403, "reason": reason, "times": -1]])
        // Queued is accepted, as a mail transfer agent's queue is, so a caller such as mutt or
        // git send-email does not send it again (CONTRACT.md, "Sending": exit 0 when sent
        // or safely queued).
        let result = try send(f)
        #expect(result.status == 0 && result.stdout == "outbox:1\n", "\(result)")
        let advice = reason == "insufficientPermissions" ? "hd-auth login" : reason
        #expect(result.stderr.contains(advice) && result.stderr.hasSuffix("hd-send: queued; the next hd-sync will send it\n")
                && !result.stderr.contains("rejected"), "\(result.stderr)")
        let id = try messageID(f, "outbox:1")
        let pending = try f.run("hd-pending")
        #expect(pending.stdout.contains("outbox:1\tsend\t") && !pending.stdout.contains("\tfailed\t"), "\(pending)")
        let again = try f.run("hd-sync")
        #expect(again.status == (reason == "dailyLimitExceeded" ? 75 : 77), "\(again)")
        #expect(try copies(fake, id) == 0)
        try expectDeliveredOnceFaultsEnd(f, fake, messageID: id)
    }

    @Test("a send undone inside its --delay window never reaches the server; a sent one cannot be undone (65)")
    func undoWithinDelay() throws {
        let (f, fake) = try synced()
        let held = try send(f, "--delay", "60")
        #expect(held.status == 0 && held.stdout == "outbox:1\n", "\(held)")
        let id = try messageID(f, "outbox:1")
        #expect(try f.run("hd-sync").status == 0)  // still inside the window: nothing sent
        #expect(try copies(fake, id) == 0)
        let undo = try f.run("hd-undo", "outbox:1")
        #expect(undo.status == 0, "\(undo)")
        #expect(try outbox(f).isEmpty)
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try sendRequests(fake) == 0 && copies(fake, id) == 0)

        let sent = try send(f)
        #expect(sent.status == 0 && sent.lines.count == 2, "\(sent)")
        let refused = try f.run("hd-undo", "outbox:2")
        #expect(refused.status == 65 && refused.stderr == "hd-undo: outbox:2: already sent; a sent message cannot be undone\n")
        #expect(try f.run("hd-undo", "outbox:99").status == 65)
    }

    @Test("a reply with --reply-to lands in the same thread, labelled SENT, after hd-sync")
    func replyJoinsThread() throws {
        let (f, fake) = try synced()
        let thread = try #require(try f.run("hd-ls", "-n", "1", "--ids").lines.first)
        let result = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--reply-to", thread],
                                           environment: f.environment, stdin: "Sounds good.\n")
        #expect(result.status == 0 && result.lines.count == 2, "\(result)")
        let id = String(result.lines[1].dropFirst("message:".count))
        #expect(try fake.messages()[id]?.thread == String(thread.dropFirst("thread:".count)))
        #expect(try f.run("hd-sync").status == 0)
        let shown = try f.run("hd-show", "--no-fetch", "--json", thread).lines
        let last = try #require(try shown.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(last["id"] as? String == "message:\(id)")
        #expect((last["labels"] as? [String]) == ["SENT"])
        #expect((last["subject"] as? String)?.hasPrefix("Re: ") == true)
    }

    @Test("--raw sends a complete message as given, adding a Message-ID only when it has none")
    func rawMessages() throws {
        let (f, fake) = try synced()
        let given = "From: demo@hudson.test\nTo: bob@example.org\nSubject: raw\nMessage-ID: <given.1@hudson.test>\n\nAs is.\n"
        let first = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--raw"], environment: f.environment, stdin: given)
        #expect(first.status == 0 && first.lines.count == 2, "\(first)")
        #expect(try copies(fake, "<given.1@hudson.test>") == 1)
        let again = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--raw"], environment: f.environment, stdin: given)
        #expect(again.status == 65 && again.stderr.contains("already in the outbox as outbox:1"), "\(again)")

        let bare = "From: demo@hudson.test\nTo: bob@example.org\nSubject: raw\n\nNo id.\n"
        let second = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--raw"], environment: f.environment, stdin: bare)
        #expect(second.status == 0 && second.lines.count == 2, "\(second)")
        let id = String(second.lines[1].dropFirst("message:".count))
        let stored = try fake.admin("GET", "message/\(id)") as? [String: Any]
        #expect((stored?["messageId"] as? String)?.hasSuffix("@hudson.test>") == true)
    }

    @Test("usage: no recipients, and --raw with composing options, are usage errors that queue nothing")
    func usageErrors() throws {
        let (f, _) = try synced()
        let none = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--subject", "x"], environment: f.environment, stdin: "x")
        #expect(none.status == 64 && none.stderr.hasPrefix("hd-send: no recipients: give --to, --cc or --bcc\n"), "\(none)")
        let mixed = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--raw", "--to", "a@example.org"],
                                          environment: f.environment, stdin: "x")
        #expect(mixed.status == 64, "\(mixed)")
        let bad = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--to", "not an address"], environment: f.environment, stdin: "x")
        #expect(bad.status == 64, "\(bad)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }
}
