// Trust under real faults (issue 17), against the built commands and the project's fake
// Gmail over HTTP: a Gmail that answers modify with only the fields it documents, drops
// connections after applying a request, answers an error after committing, is slow, fails
// one message for good, and forgets history. The criteria: a change made with hd-mark or
// hd-undo ends up on Gmail exactly as the user last asked; no single message, missing
// field or lost answer stops mail from arriving; a refusal costs only the change Gmail
// refused; nothing the user did not ask for is ever shown.
import Foundation
import HudsonTestSupport
import Testing

/// How the answer to a request that changed Gmail is lost (issue 17 §1).
struct LostAnswer: CustomTestStringConvertible, Sendable {
    var name: String
    /// Fault rules (JSON) in force while `hd-mark` sends the change.
    var rules: String
    /// The change is sent with `modify` (one message) rather than `batchModify`.
    var oneMessage = false
    /// `HUDSON_TEST_CRASH_AT` for hd-mark's `hd-sync --push`.
    var crashAt: String?
    /// Gmail applies the change only after the client gave up: wait for it.
    var appliedLate = false
    var testDescription: String { name }

    var ruleObjects: [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(rules.utf8)) as? [[String: Any]]) ?? []
    }
}

/// A message Gmail fails for good, and how (issue 17 §2).
struct FailingMessage: CustomTestStringConvertible, Sendable {
    var name: String
    var rule: String
    var testDescription: String { name }

    func ruleObject(for id: String) -> [String: Any] {
        var rule = (try? JSONSerialization.jsonObject(with: Data(self.rule.utf8)) as? [String: Any]) ?? [:]
        rule["method"] = "GET"
        rule["path"] = "/messages/\(id)$"
        rule["times"] = -1
        return rule
    }
}

@Suite("Trust under real faults (issue 17): the last intent reaches Gmail, one bad message never stalls the account", .serialized)
struct TrustUnderFaultsTests {
    typealias ServerState = [String: (thread: String, labels: Set<String>, internalDate: Int64)]

    func prepared(count: Int = 60) throws -> (Rig, FakeGmail) {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: count))
        try rig.connect()
        let sync = try rig.run("hd-sync", catchUp)
        #expect(sync.status == 0, "\(sync)")
        return (rig, fake)
    }

    /// Threads whose every message is in the inbox, with exactly `messages` messages.
    func inboxThreads(_ server: ServerState, messages: Int) -> [String] {
        let byThread = Dictionary(grouping: server.keys) { server[$0]!.thread }
        return byThread.keys.sorted().filter { thread in
            byThread[thread]!.count == messages && byThread[thread]!.allSatisfy { server[$0]!.labels.contains("INBOX") }
        }
    }

    /// New mail on the server (a messageAdded record); returns its id.
    func deliver(_ fake: FakeGmail, _ tag: String) throws -> String {
        let answer = try fake.admin("POST", "insert", ["raw": """
            From: Someone <someone@example.org>\r
            To: demo@hudson.test\r
            Subject: Arrived: \(tag)\r
            Message-ID: <\(tag)@example.org>\r
            \r
            Body of \(tag).\r
            """]) as? [String: Any]
        return try #require(answer?["id"] as? String)
    }

    func stored(_ rig: Rig, _ id: String) throws -> Bool {
        try rig.scalar("SELECT count(*) FROM messages WHERE gmail_id = '\(id)'") == 1
    }

    func json(_ line: Substring) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    // MARK: §0

    @Test("r17_one_message_change_never_jams_sync: a star on one message is sent by modify, gated, retired, and mail keeps arriving")
    func r17_one_message_change_never_jams_sync() throws {
        let (rig, fake) = try prepared()
        let server = try fake.messages()
        let id = try #require(server.keys.sorted().first { !server[$0]!.labels.contains("STARRED") && server[$0]!.labels.contains("INBOX") })
        try fake.clearRequests()
        let mark = try rig.run("hd-mark", "star", "message:\(id)")
        #expect(mark.status == 0 && mark.stderr.isEmpty, "\(mark)")
        #expect(try fake.requests().contains { $0.path.hasSuffix("/messages/\(id)/modify") })
        #expect(try fake.messages()[id]?.labels.contains("STARRED") == true)
        #expect(try rig.queue().map(\.state) == ["in_flight"])
        let sync = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        #expect(try rig.queue().isEmpty, "the star was not retired on its echo")
        let new = try deliver(fake, "after-star")
        let again = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(again.status == 0, "\(again)")
        #expect(try stored(rig, new), "new mail did not arrive")
        // And an undo of that star reaches Gmail too.
        #expect(try rig.run("hd-undo").status == 0)
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        #expect(try fake.messages()[id]?.labels.contains("STARRED") == false)
        try rig.expectMatchesServer()
        try rig.expectNoSecretsLeaked()
    }

    @Test("r17_no_missing_field_stops_polling: a getProfile Gmail answers unreadably leaves the change queued, and new mail still arrives",
          arguments: ["wrong_shape", "invalid_json"])
    func r17_no_missing_field_stops_polling(_ mode: String) throws {
        let (rig, fake) = try prepared()
        let server = try fake.messages()
        let id = try #require(server.keys.sorted().first { !server[$0]!.labels.contains("STARRED") && server[$0]!.labels.contains("INBOX") })
        #expect(try rig.run("hd-mark", "--no-flush", "star", "message:\(id)").status == 0)
        let new = try deliver(fake, "while-profile-fails-\(mode)")
        try fake.faults([["path": "/profile$", "mode": mode, "times": -1]])
        let sync = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        #expect(try stored(rig, new), "history polling stopped")
        let pending = try rig.run("hd-pending", "--json")
        let row = json(try #require(pending.stdout.split(separator: "\n").first))
        #expect(row["state"] as? String == "pending" && row["attempted"] is String, "\(pending.stdout)")
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        #expect(try rig.queue().isEmpty)
        #expect(try fake.messages()[id]?.labels.contains("STARRED") == true)
        try rig.expectMatchesServer()
    }

    // MARK: §1

    static let lostAnswers: [LostAnswer] = [
        LostAnswer(name: "batchModify applied, then the connection dropped",
                   rules: #"[{"path": "/batchModify$", "mode": "apply_then_drop", "times": -1}]"#),
        LostAnswer(name: "modify applied, then the connection dropped",
                   rules: #"[{"path": "/modify$", "mode": "apply_then_drop", "times": -1}]"#, oneMessage: true),
        LostAnswer(name: "a 5xx after Gmail applied it",
                   rules: #"[{"path": "/batchModify$", "mode": "apply_then_status", "status": 503, "times": -1}]"#),
        LostAnswer(name: "a 429 after Gmail applied it",
                   rules: #"[{"path": "/batchModify$", "mode": "apply_then_status", "status": 429, "times": -1}]"#),
        LostAnswer(name: "the getProfile that gates retirement lost",
                   rules: #"[{"path": "/profile$", "mode": "drop", "times": -1}]"#),
        LostAnswer(name: "the 4 s push timed out and Gmail applied it later",
                   rules: #"[{"path": "/batchModify$", "mode": "delay", "delay_ms": 6000, "times": 1}]"#, appliedLate: true),
        LostAnswer(name: "hd-mark's push killed after Gmail answered", rules: "[]", crashAt: "after-send"),
        LostAnswer(name: "hd-mark's push killed after marking, before its request", rules: "[]", crashAt: "after-mark-attempted"),
    ]

    @Test("r17_a_change_that_may_have_reached_gmail_is_never_treated_as_unsent: archive, answer lost, undo: Gmail ends as the user last asked",
          arguments: lostAnswers)
    func r17_a_change_that_may_have_reached_gmail_is_never_treated_as_unsent(_ lost: LostAnswer) throws {
        let (rig, fake) = try prepared()
        let before = try fake.messages()
        // One thread goes out as modify; two (one message each) as one batchModify.
        let threads = Array(inboxThreads(before, messages: 1).prefix(lost.oneMessage ? 1 : 2))
        #expect(threads.count == (lost.oneMessage ? 1 : 2))
        let members = before.keys.filter { threads.contains(before[$0]!.thread) }
        try fake.faults(lost.ruleObjects)
        let mark = rig.finish(try rig.start("hd-mark", ["archive"] + threads.map { "thread:\($0)" },
                                            environment: lost.crashAt.map { ["HUDSON_TEST_CRASH_AT": $0] } ?? [:]))
        #expect(mark.status == 0, "\(mark)")
        try fake.admin("DELETE", "faults")
        if lost.appliedLate {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline, try fake.messages()[members[0]]?.labels.contains("INBOX") == true {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        if lost.crashAt != "after-mark-attempted" {
            #expect(try members.allSatisfy { try fake.messages()[$0]?.labels.contains("INBOX") == false }, "Gmail did not apply it")
        }
        let queued = try rig.queue()
        #expect(!queued.isEmpty && queued.allSatisfy { $0.state == "pending" }, "\(queued)")
        // The user changes their mind: the undo must reach Gmail, not vanish locally.
        let undo = try rig.run("hd-undo")
        #expect(undo.status == 0, "\(undo)")
        let sync = try rig.run("hd-sync", catchUp)
        #expect(sync.status == 0, "\(sync)")
        let after = try fake.messages()
        for id in members {
            #expect(after[id]?.labels == before[id]?.labels, "\(id): \(after[id]?.labels.sorted() ?? []) on Gmail, not the user's last intent")
        }
        let inbox = try rig.run("hd-ls", "--ids", "-n", "0")
        for thread in threads { #expect(inbox.stdout.contains("thread:\(thread)"), "thread:\(thread) is not back in the inbox") }
        #expect(try rig.queue().isEmpty)
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
        try rig.expectNoSecretsLeaked()
    }

    // MARK: §2

    // A 400 ("Invalid id value") is not here: issue 37 made an id Gmail calls invalid a
    // message confirmed gone, not parked (ServerAnswerCommandTests.invalidIDsInTheListing).
    static let failingMessages: [FailingMessage] = [
        FailingMessage(name: "500 every time", rule: #"{"status": 500}"#),
        FailingMessage(name: "an answer that is not JSON", rule: #"{"mode": "invalid_json"}"#),
    ]

    @Test("r17_one_bad_message_never_stalls_the_account: a new message Gmail fails for good is parked and told once; later mail arrives",
          arguments: failingMessages)
    func r17_one_bad_message_never_stalls_the_account(_ failing: FailingMessage) throws {
        let (rig, fake) = try prepared()
        let bad = try deliver(fake, "bad-\(failing.name.count)")
        let good = try deliver(fake, "good-\(failing.name.count)")
        try fake.faults([failing.ruleObject(for: bad)])
        let first = try rig.run("hd-sync", "--prefetch-days", "0", "--json")
        #expect(first.status == 0, "\(first)")
        #expect(try stored(rig, good) && !stored(rig, bad))
        let report = json(try #require(first.stdout.split(separator: "\n").first))
        #expect(report["parked"] as? Int == 1, "\(first.stdout)")
        let listed = (report["parked_messages"] as? [[String: Any]])?.first
        #expect(listed?["id"] as? String == "message:\(bad)" && listed?["stage"] as? String == "message")
        #expect(first.stderr.contains("message:\(bad): parked"), "\(first.stderr)")
        let parked = try rig.run("hd-pending", "--parked")
        #expect(parked.status == 0 && parked.stdout.hasPrefix("message:\(bad)\tparked\tmessage\t1\t"), "\(parked.stdout)")
        // The account is not stalled: the cursor moved on and later mail arrives.
        let later = try deliver(fake, "later-\(failing.name.count)")
        let second = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(second.status == 0, "\(second)")
        #expect(try stored(rig, later), "mail after the bad message did not arrive")
        #expect(!second.stderr.contains("message:\(bad)"), "told twice: \(second.stderr)")
        // Gmail serves it again: fetched now on request (or after its back-off).
        try fake.admin("DELETE", "faults")
        let retry = try rig.run("hd-sync", "--prefetch-days", "0", "--retry-parked")
        #expect(retry.status == 0, "\(retry)")
        #expect(try stored(rig, bad))
        #expect(try rig.run("hd-pending", "--parked", "--count").stdout == "0\n")
        try rig.expectMatchesServer()
        try rig.expectNoSecretsLeaked()
    }

    @Test("r17_a_message_failing_in_backfill_is_parked: the catch-up stores the rest, says what is parked, and converges once Gmail serves it")
    func r17_a_message_failing_in_backfill_is_parked() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 40))
        try rig.connect()
        let server = try fake.messages()
        let bad = try #require(server.keys.sorted().first { server[$0]!.labels.isDisjoint(with: ["SPAM", "TRASH"]) })
        try fake.faults([["method": "GET", "path": "/messages/\(bad)$", "status": 500, "times": -1]])
        let faulted = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(faulted.status == 75, "\(faulted)")
        #expect(faulted.stderr.contains("not caught up: 1 message(s)"), "\(faulted.stderr)")
        let stored = Set(try rig.run("hd-search", "--messages", "--ids", "-n", "0", "in:anywhere").lines)
        let listed = server.keys.filter { server[$0]!.labels.isDisjoint(with: ["SPAM", "TRASH"]) }
        #expect(stored.count == listed.count - 1, "the rest of the window was not stored")
        #expect(try rig.run("hd-pending", "--parked", "--ids").stdout == "message:\(bad)\n")
        try fake.admin("DELETE", "faults")
        let converged = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(converged.status == 0, "\(converged)")
        try rig.expectMatchesServer()
    }

    // MARK: §3

    @Test("r17_a_refused_label_drops_only_its_change: a label deleted at Gmail costs only its change; the archive sent with it goes through")
    func r17_a_refused_label_drops_only_its_change() throws {
        let (rig, fake) = try prepared()
        let before = try fake.messages()
        let threads = Array(inboxThreads(before, messages: 1).filter { thread in
            before.values.allSatisfy { $0.thread != thread || !$0.labels.contains("Label_1") }
        }.prefix(3))
        #expect(threads.count == 3)
        let mark = try rig.run("hd-mark", ["--no-flush", "archive", "+Work"] + threads.map { "thread:\($0)" })
        #expect(mark.status == 0, "\(mark)")
        try fake.admin("POST", "delete-label", ["id": "Label_1"])
        try fake.clearRequests()
        let sync = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        let after = try fake.messages()
        for id in before.keys where threads.contains(before[id]!.thread) {
            #expect(after[id]?.labels.contains("INBOX") == false, "\(id): the archive sent with the refused label was lost")
        }
        let writes = try fake.requests().filter { $0.method == "POST" && ($0.path.hasSuffix("/modify") || $0.path.hasSuffix("/batchModify")) }
        #expect(writes.count <= 3, "narrowing took \(writes.count) write requests")
        #expect(sync.stderr.contains("3 change(s) refused by Gmail") && sync.stderr.contains("hd-pending --rejected"), "\(sync.stderr)")
        let pending = try rig.run("hd-pending", "--rejected")
        let rejected = pending.stdout.split(separator: "\n")
        #expect(rejected.count == 3 && rejected.allSatisfy { $0.contains("\trejected\t") && $0.contains("Invalid label: Label_1") },
                "\(pending.stdout)")
        #expect(try rig.run("hd-pending", "--ids").stdout.isEmpty, "refused changes are not queued changes")
        let history = try rig.run("hd-undo", "--list", "--json")
        let action = json(try #require(history.stdout.split(separator: "\n").first))
        #expect(action["rejected"] as? Int == 3 && (action["rejection"] as? String)?.contains("Invalid label") == true, "\(history.stdout)")
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        #expect(try rig.queue().isEmpty)
        try rig.expectMatchesServer()
    }

    // MARK: §4

    @Test("r17_no_flicker_after_history_expiry: an archived thread stays out of the inbox in every pass of the re-list")
    func r17_no_flicker_after_history_expiry() throws {
        let (rig, fake) = try prepared()
        let threads = Array(inboxThreads(try fake.messages(), messages: 1).prefix(2))
        #expect(threads.count == 2)
        #expect(try rig.run("hd-mark", ["archive"] + threads.map { "thread:\($0)" }).status == 0)
        let queued = try rig.queue()
        #expect(!queued.isEmpty && queued.allSatisfy { $0.state == "in_flight" }, "\(queued)")
        try fake.admin("POST", "expire-history", [:])
        for pass in 0..<8 {
            let sync = try rig.run("hd-sync", "--prefetch-days", "0")
            #expect(sync.status == 0, "\(sync)")
            let inbox = try rig.run("hd-ls", "--ids", "-n", "0")
            for thread in threads {
                #expect(!inbox.stdout.contains("thread:\(thread)"), "pass \(pass): an archived thread is back in the inbox")
            }
            if try rig.queue().isEmpty { break }
        }
        #expect(try rig.queue().isEmpty)
        try rig.expectMatchesServer()
    }
}
