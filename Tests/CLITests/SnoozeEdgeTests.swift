import Foundation
import HudsonTestSupport
import Testing

/// Issue 41, the edges SnoozeCommandTests and SendLaterCommandTests leave out: kill -9 of
/// `hd-snooze wake`, `hd-snooze release` and `hd-undo outbox:N` after each of their
/// commits (their own and their children's: `HUDSON_TEST_CRASH_AFTER_COMMIT` is inherited
/// by the `hd-sync` and `hd-drafts` they run); a scheduled send sent by `hd-sync --watch`;
/// a held-late message dropped; `hd-undo` of a wake; a reminder whose reply came first.
@Suite(.serialized)
struct SnoozeEdgeTests {
    /// SnoozeCommandTests' fixture: its clock (`start`, `at`), synced store, inbox threads,
    /// label ids and snooze list.
    let snooze = SnoozeCommandTests()

    func at(_ offsetSeconds: Int64) -> [String: String] { snooze.at(offsetSeconds) }

    /// `at(offset)`, killed (SIGKILL) right after the process's `commit`th write commit.
    func killed(_ offsetSeconds: Int64, afterCommit commit: Int) -> [String: String] {
        at(offsetSeconds).merging(["HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)]) { $1 }
    }

    func synced() throws -> (CLIFixture, FakeGmail) { try snooze.synced() }

    func inboxThread(_ f: CLIFixture, index: Int = 0) throws -> (ref: String, id: String) {
        try snooze.inboxThread(f, index: index)
    }

    func labelID(_ fake: FakeGmail, named name: String) throws -> String? { try snooze.labelID(fake, named: name) }

    /// The thread's messages at the fake: id → labels.
    func serverThread(_ fake: FakeGmail, _ id: String) throws -> [String: Set<String>] {
        try fake.messages().filter { $0.value.thread == id }.mapValues(\.labels)
    }

    func inInbox(_ f: CLIFixture, _ ref: String) throws -> Bool {
        try f.run("hd-ls", "-n", "0").lines.contains { $0.hasPrefix(ref + "\t") }
    }

    func snoozedThreads(_ f: CLIFixture) throws -> [String] { try snooze.snoozedThreads(f) }

    /// The recorded wake actions (`action:N`), newest first.
    func wakeActions(_ f: CLIFixture) throws -> [String] {
        try f.run("hd-undo", "--list", "--json", "-n", "1000").lines.filter { $0.contains("\"wake snoozed threads\"") }.map { line in
            let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return record?["id"] as? String ?? ""
        }
    }

    /// The fake's drafts whose raw text contains `marker`.
    func drafts(_ fake: FakeGmail, containing marker: String) throws -> Int {
        let answer = try fake.admin("GET", "drafts") as? [String: Any]
        return (answer?["drafts"] as? [[String: Any]] ?? []).filter {
            let raw = ($0["raw"] as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            let padded = raw.padding(toLength: (raw.count + 3) / 4 * 4, withPad: "=", startingAt: 0)
            return String(decoding: Data(base64Encoded: padded) ?? Data(), as: UTF8.self).contains(marker)
        }.count
    }

    /// The Sent messages at the fake whose raw text contains `marker`.
    func sent(_ fake: FakeGmail, containing marker: String) throws -> [(id: String, thread: String)] {
        var found: [(id: String, thread: String)] = []
        for (id, message) in try fake.messages() where message.labels.contains("SENT") {
            let full = try fake.admin("GET", "message/\(id)") as? [String: Any]
            if let raw = full?["raw"] as? String {
                let base64 = raw.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                let text = String(decoding: Data(base64Encoded: base64.padding(toLength: (base64.count + 3) / 4 * 4, withPad: "=",
                                                                               startingAt: 0)) ?? Data(), as: UTF8.self)
                if text.contains(marker) { found.append((id, message.thread)) }
            }
        }
        return found
    }

    /// Every drafts.send Gmail answered with success, since the fake started.
    func draftSends(_ fake: FakeGmail) throws -> Int {
        try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/drafts/send") && (200..<300).contains($0.status) }.count
    }

    /// `hd-send --to friend@example.org --subject MARKER EXTRA` at `offset`: its `outbox:N`.
    @discardableResult
    func schedule(_ f: CLIFixture, _ marker: String, _ extra: [String] = ["--at", "+1h"], offset: Int64 = 0) throws -> String {
        let result = try f.run(["hd-send", "--to", "friend@example.org", "--subject", marker] + extra,
                               stdin: "body of \(marker)\n", environment: at(offset))
        #expect(result.status == 0, "\(result)")
        return try #require(result.lines.first { $0.hasPrefix("outbox:") }, "\(result)")
    }

    // MARK: - kill -9 at each step

    @Test("kill -9 of hd-snooze wake after each commit (its own, its hd-sync pass's, its push's): the next wake and sync wake the thread once and send the due message once")
    func wakeKilledAtEachStep() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        var kills = 0
        for commit in 1...10 {
            let base = Int64(commit) * 20_000, marker = "wake-kill-\(commit)-"
            #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(base)).status == 0)
            try schedule(f, marker, offset: base)
            #expect(try drafts(fake, containing: marker) == 1, "step \(commit): saved as a draft")
            let sendsBefore = try draftSends(fake)
            let crashed = try f.run("hd-snooze", "wake", environment: killed(base + 3700, afterCommit: commit))
            if crashed.status != 0 || crashed.stderr.contains("queued") { kills += 1 }
            let again = try f.run("hd-snooze", "wake", environment: at(base + 3700))
            #expect(again.status == 0, "step \(commit): \(again)")
            #expect(try wakeActions(f).count == commit, "step \(commit): woken once")
            #expect(try inInbox(f, thread.ref) && snoozedThreads(f).isEmpty, "step \(commit)")
            #expect(try sent(fake, containing: marker).count == 1, "step \(commit): sent by the next wake")
            #expect(try draftSends(fake) == sendsBefore + 1, "step \(commit): one drafts.send")
            #expect(try drafts(fake, containing: marker) == 0, "step \(commit)")
            let snoozed = try #require(try labelID(fake, named: "Snoozed"))
            let server = try serverThread(fake, thread.id)
            #expect(server.values.contains { $0.contains("INBOX") } && server.values.allSatisfy { !$0.contains(snoozed) },
                    "step \(commit): Gmail agrees after the next wake: \(server)")
            // Nothing more happens later.
            #expect(try f.run("hd-sync", environment: at(base + 7200)).status == 0)
            let pending = try f.run("hd-pending")
            #expect(pending.stdout.isEmpty, "step \(commit): \(pending)")
            #expect(try wakeActions(f).count == commit && sent(fake, containing: marker).count == 1, "step \(commit)")
        }
        #expect(kills >= 5, "the hook killed something at most steps (\(kills))")
    }

    @Test("kill -9 of hd-snooze release outbox:N after each commit: the next release and wake check send the held message exactly once")
    func releaseKilledAtEachStep() throws {
        let (f, fake) = try synced()
        var kills = 0
        for commit in 1...8 {
            let base = Int64(commit) * 20_000, marker = "release-kill-\(commit)-"
            let outbox = try schedule(f, marker, offset: base)
            let late = try f.run("hd-sync", environment: at(base + 3 * 3600))
            #expect(late.stderr.contains("\(outbox): over an hour late, held"), "step \(commit): \(late)")
            let sendsBefore = try draftSends(fake)
            let crashed = try f.run("hd-snooze", "release", outbox, environment: killed(base + 3 * 3600, afterCommit: commit))
            if crashed.status != 0 || crashed.stderr.contains("queued") { kills += 1 }
            let again = try f.run("hd-snooze", "release", outbox, environment: at(base + 3 * 3600))
            // Released already (65: not held any more), or not: then sent by this run.
            #expect([0, 65].contains(again.status), "step \(commit): \(again)")
            // A released message left unsent is sent by the next wake check (a cron job's).
            #expect(try f.run("hd-snooze", "wake", environment: at(base + 3 * 3600)).status == 0)
            #expect(try sent(fake, containing: marker).count == 1, "step \(commit): sent by the next run: \(again)")
            for _ in 0..<2 { #expect(try f.run("hd-sync", environment: at(base + 4 * 3600)).status == 0) }
            #expect(try sent(fake, containing: marker).count == 1, "step \(commit): once")
            #expect(try draftSends(fake) == sendsBefore + 1, "step \(commit): one drafts.send")
            #expect(try drafts(fake, containing: marker) == 0, "step \(commit)")
            #expect(!(try f.run("hd-pending").stdout.contains(marker)), "step \(commit)")
        }
        // A child hd-sync killed after Gmail took the message leaves it sent, and release
        // says so: only its own kill and the child's before the send show here.
        #expect(kills >= 2, "the hook killed something at several steps (\(kills))")
    }

    @Test("kill -9 of hd-undo outbox:N (a scheduled send) after each commit: the next undo deletes its draft; it is never sent")
    func undoOutboxKilledAtEachStep() throws {
        let (f, fake) = try synced()
        var kills = 0
        for commit in 1...6 {
            let base = Int64(commit) * 20_000, marker = "undo-kill-\(commit)-"
            let outbox = try schedule(f, marker, offset: base)
            #expect(try drafts(fake, containing: marker) == 1)
            let crashed = try f.run("hd-undo", outbox, environment: killed(base, afterCommit: commit))
            if crashed.status != 0 { kills += 1 }
            let again = try f.run("hd-undo", outbox, environment: at(base))
            #expect(again.status == 0, "step \(commit): \(again)")
            #expect(try drafts(fake, containing: marker) == 0, "step \(commit): its Gmail draft deleted by the next undo: \(again)")
            for _ in 0..<2 { #expect(try f.run("hd-sync", environment: at(base + 3660)).status == 0) }
            #expect(try sent(fake, containing: marker).isEmpty, "step \(commit): never sent")
            #expect(!(try f.run("hd-pending").stdout.contains(marker)), "step \(commit)")
        }
        #expect(try draftSends(fake) == 0)
        #expect(kills >= 1)
    }

    // MARK: - hd-sync --watch sends at the time

    @Test("hd-sync --watch sends a scheduled message when its time comes during the watch, once")
    func watchSendsAtTheTime() throws {
        let (f, fake) = try synced()
        // Due 25 s from now on the real clock: scheduled "+1h" from a clock an hour behind.
        let dueAt = Int64(Date().timeIntervalSince1970) + 25
        let result = try f.run("hd-send", "--to", "friend@example.org", "--subject", "watch-later", "--at", "+1h",
                               stdin: "hello\n", environment: ["HUDSON_TEST_NOW": String(dueAt - 3600)])
        #expect(result.status == 0, "\(result)")
        #expect(try drafts(fake, containing: "watch-later") == 1)
        let watch = try Watch(f, ["--verbose"], pause: 1)
        #expect(watch.passes(3), "\(watch.errors)")
        #expect(Int64(Date().timeIntervalSince1970) < dueAt - 2, "the passes ran before the time (slow machine?)")
        #expect(try sent(fake, containing: "watch-later").isEmpty, "not before its time")
        #expect(try watch.awaitOutput { try !sent(fake, containing: "watch-later").isEmpty })
        #expect(Int64(Date().timeIntervalSince1970) >= dueAt, "not before its time")
        #expect(watch.passes(3))
        #expect(watch.stop().status == 0)
        #expect(try sent(fake, containing: "watch-later").count == 1)
        #expect(try draftSends(fake) == 1)
        #expect(try drafts(fake, containing: "watch-later") == 0)
    }

    // MARK: - a held-late message dropped

    @Test("held for being late, then hd-undo outbox:N: its Gmail draft deleted, never sent, release refused after")
    func heldLateDropped() throws {
        let (f, fake) = try synced()
        let outbox = try schedule(f, "held-drop", ["--at", "+1h", "--if-late", "hold"])
        let late = try f.run("hd-sync", environment: at(3 * 3600))
        #expect(late.stderr.contains("\(outbox): over an hour late, held"), "\(late)")
        #expect(try f.run("hd-pending").lines.contains { $0.hasPrefix("\(outbox)\tsend\theld-late\t") })
        #expect(try drafts(fake, containing: "held-drop") == 1, "held: the draft waits in Gmail")
        let undo = try f.run("hd-undo", outbox, environment: at(3 * 3600))
        #expect(undo.status == 0, "\(undo)")
        #expect(try drafts(fake, containing: "held-drop") == 0, "the draft is deleted (hd-undo(1))")
        #expect(!(try f.run("hd-pending").stdout.contains(outbox + "\t")))
        for hours: Int64 in [4, 30] { #expect(try f.run("hd-sync", environment: at(hours * 3600)).status == 0) }
        #expect(try f.run("hd-snooze", "wake", environment: at(40 * 3600)).status == 0)
        #expect(try sent(fake, containing: "held-drop").isEmpty)
        #expect(try draftSends(fake) == 0)
        #expect(try f.run("hd-snooze", "release", outbox, environment: at(40 * 3600)).status == 65)
        #expect(try f.run("hd-undo", outbox).status == 0, "a second undo says it was already cancelled")
        #expect(try sent(fake, containing: "held-drop").isEmpty)
    }

    // MARK: - hd-undo of a wake

    @Test("hd-undo of a wake: the thread archived and labelled again as before the wake, with no wake time; a new snooze wakes it")
    func undoWake() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0)).status == 0)
        let snoozed = try #require(try labelID(fake, named: "Snoozed"))
        let asleep = try serverThread(fake, thread.id)
        #expect(asleep.values.allSatisfy { !$0.contains("INBOX") && $0.contains(snoozed) })
        #expect(try f.run("hd-sync", environment: at(7200)).status == 0)
        let action = try #require(try wakeActions(f).first)
        #expect(try serverThread(fake, thread.id).values.contains { $0.contains("INBOX") }, "woken")
        let undo = try f.run("hd-undo", action, environment: at(7300))
        #expect(undo.status == 0, "\(undo)")
        #expect(try serverThread(fake, thread.id) == asleep, "Gmail: as before the wake, read state included")
        #expect(!(try inInbox(f, thread.ref)))
        #expect(try f.run("hd-search", "--ids", "label:Snoozed").lines == [thread.ref], "still labelled")
        #expect(try snoozedThreads(f).isEmpty, "no wake time")
        #expect(try f.run("hd-search", "--ids", "is:snoozed").lines.isEmpty)
        // Nothing wakes it later.
        for days: Int64 in [1, 10] { #expect(try f.run("hd-sync", environment: at(days * 86_400)).status == 0) }
        #expect(try f.run("hd-snooze", "wake", environment: at(11 * 86_400)).stdout.isEmpty)
        #expect(try wakeActions(f) == [action])
        #expect(try serverThread(fake, thread.id) == asleep)
        // Snoozed again, it has a wake time and wakes at it.
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(12 * 86_400)).status == 0)
        #expect(try snoozedThreads(f) == [thread.ref])
        #expect(try f.run("hd-sync", environment: at(12 * 86_400 + 7200)).status == 0)
        #expect(try wakeActions(f).count == 2)
        #expect(try inInbox(f, thread.ref))
        let woken = try serverThread(fake, thread.id)
        #expect(woken.values.contains { $0.contains("INBOX") } && woken.values.allSatisfy { !$0.contains(snoozed) })
    }

    // MARK: - a reminder whose reply came first

    @Test("hd-send --remind: a reply already there when sync first stores the thread cancels the reminder; the reply stays in the inbox")
    func remindAnsweredBeforeStored() throws {
        let (f, fake) = try synced()
        try schedule(f, "remind-answered", ["--remind", "+3d"])
        let sentMessage = try #require(try sent(fake, containing: "remind-answered").first, "sent at once")
        let raw = "From: Friend <friend@example.org>\r\nTo: demo@hudson.test\r\nSubject: Re: remind-answered\r\n"
            + "Message-ID: <answer-\(UUID().uuidString)@example.org>\r\n\r\nanswered\r\n"
        let inserted = try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"], "threadId": sentMessage.thread,
                                                         "internalDate": Int64(Date().timeIntervalSince1970 * 1000) + 60_000])
        let reply = try #require((inserted as? [String: Any])?["id"] as? String)
        #expect(try f.run("hd-sync", environment: at(120)).status == 0)
        let ref = "thread:\(sentMessage.thread)"
        #expect(try snoozedThreads(f).isEmpty, "no reminder: it was answered")
        #expect(try inInbox(f, ref), "the reply is in the inbox")
        #expect(try serverThread(fake, sentMessage.thread)[reply]?.contains("INBOX") == true)
        let snoozedLabel = try labelID(fake, named: "Snoozed")
        #expect(try serverThread(fake, sentMessage.thread).values.allSatisfy { snoozedLabel == nil || !$0.contains(snoozedLabel!) })
        // At the reminder's time: nothing to bring back, nothing done.
        #expect(try f.run("hd-sync", environment: at(4 * 86_400)).status == 0)
        #expect(try wakeActions(f).isEmpty)
        #expect(!(try f.run("hd-undo", "--list").stdout.contains("remind until")), "no reminder action was recorded")
        #expect(try inInbox(f, ref))
    }
}

extension CLIFixture {
    /// Runs a built command, its arguments given as an array.
    func run(_ command: [String], stdin: String? = nil, environment extra: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable(command[0]), Array(command.dropFirst()),
                              environment: environment.merging(extra) { $1 }, stdin: stdin)
    }
}
