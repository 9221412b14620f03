import Foundation
import HudsonTestSupport
import Testing

/// Issue 41: snooze and reminders, end to end: the built hd-mark, hd-snooze, hd-sync,
/// hd-search and hd-undo against the fake Gmail over HTTP, with the clock seam
/// (`HUDSON_TEST_NOW`) standing in for the hours that pass.
@Suite("hd-mark snooze=WHEN and remind=WHEN, hd-snooze, and the wake check in hd-sync", .serialized)
struct SnoozeCommandTests {
    /// The test's "now": the real time, so the fake's new messages are newer than the demo's.
    let start = Int64(Date().timeIntervalSince1970)

    func at(_ offsetSeconds: Int64) -> [String: String] { ["HUDSON_TEST_NOW": String(start + offsetSeconds)] }

    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// A thread in the inbox, with its Gmail thread id.
    func inboxThread(_ f: CLIFixture, index: Int = 0) throws -> (ref: String, id: String) {
        let lines = try f.run("hd-ls", "-n", "5").lines
        let ref = String(try #require(lines.dropFirst(index).first).split(separator: "\t")[0])
        return (ref, String(ref.dropFirst("thread:".count)))
    }

    /// The fake's label id for a name.
    func labelID(_ fake: FakeGmail, named name: String) throws -> String? {
        let state = try fake.admin("GET", "state") as? [String: Any]
        let labels = state?["labels"] as? [[String: Any]] ?? []
        return labels.first { $0["name"] as? String == name }?["id"] as? String
    }

    func labelCount(_ fake: FakeGmail, named name: String) throws -> Int {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["labels"] as? [[String: Any]] ?? []).filter { ($0["name"] as? String)?.lowercased() == name.lowercased() }.count
    }

    /// The thread's messages at the fake.
    func serverThread(_ fake: FakeGmail, _ id: String) throws -> [(id: String, labels: Set<String>)] {
        try fake.messages().filter { $0.value.thread == id }.map { ($0.key, $0.value.labels) }
    }

    func snoozedThreads(_ f: CLIFixture) throws -> [String] {
        try f.run("hd-snooze", "list").lines.map { String($0.split(separator: "\t")[0]) }
    }

    /// The lines of an error output that are the command's own (a usage error adds the usage line).
    func errorLines(_ stderr: String, _ command: String) -> Int {
        stderr.split(separator: "\n").filter { !$0.hasPrefix("usage: ") && !$0.hasPrefix("       ") }.count
    }

    func wakeActions(_ f: CLIFixture) throws -> Int {
        try f.run("hd-undo", "--list", "--json").lines.filter { $0.contains("\"wake snoozed threads\"") }.count
    }

    /// A reply from someone else, delivered to the thread at the fake.
    func reply(_ fake: FakeGmail, thread: String) throws {
        let raw = "From: Someone Else <else@example.org>\r\nTo: demo@hudson.test\r\nSubject: Re: it\r\n"
            + "Message-ID: <reply-\(UUID().uuidString)@example.org>\r\n\r\nanswer\r\n"
        try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"], "threadId": thread,
                                          "internalDate": Int64(Date().timeIntervalSince1970 * 1000) + 60_000])
    }

    @Test("snooze: out of the inbox at once with a Snoozed label at Gmail; back (inbox, unread, label off) at the time, once")
    func snoozeAndWake() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        let mark = try f.run("hd-mark", "snooze=+2h", thread.ref, environment: at(0))
        #expect(mark.status == 0, "\(mark)")
        #expect(!(try f.run("hd-ls", "-n", "0").stdout.contains(thread.ref)))
        let snoozed = try #require(try labelID(fake, named: "Snoozed"), "the label is created at Gmail on first use")
        #expect(try serverThread(fake, thread.id).allSatisfy { !$0.labels.contains("INBOX") && $0.labels.contains(snoozed) })
        #expect(try snoozedThreads(f) == [thread.ref])
        let listed = try f.run("hd-ls", "--snoozed")
        #expect(listed.lines.count == 1 && listed.lines[0].hasPrefix(thread.ref + "\t") && listed.lines[0].contains("\tsnooze\t"), "\(listed)")
        #expect(try f.run("hd-ls", "--snoozed", "--label", "INBOX").status == 64)
        #expect(try f.run("hd-search", "--ids", "is:snoozed").lines == [thread.ref])
        #expect(try f.run("hd-search", "--messages", "--ids", "in:snoozed").lines.count == serverThread(fake, thread.id).count)
        let day = String(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(start + 3 * 86_400))).prefix(10))
        #expect(try f.run("hd-search", "--ids", "snoozed:before:\(day)").lines == [thread.ref])
        #expect(try f.run("hd-search", "--ids", "snoozed:before:2001-01-01").lines.isEmpty)

        // An hour later nothing is due; a second snooze of another thread is not touched.
        #expect(try f.run("hd-sync", environment: at(3600)).status == 0)
        #expect(try snoozedThreads(f) == [thread.ref])
        #expect(try wakeActions(f) == 0)

        // Asleep past the time: the next run wakes it, once.
        let sync = try f.run("hd-sync", environment: at(7200 + 86_400))
        #expect(sync.status == 0, "\(sync)")
        #expect(sync.stderr.contains("snoozed threads: action"), "\(sync)")
        let server = try serverThread(fake, thread.id)
        #expect(server.contains { $0.labels.contains("INBOX") } && server.contains { $0.labels.contains("UNREAD") })
        #expect(server.allSatisfy { !$0.labels.contains(snoozed) })
        #expect(try f.run("hd-ls", "-n", "0").stdout.contains(thread.ref))
        #expect(try snoozedThreads(f).isEmpty)
        #expect(try f.run("hd-search", "--ids", "is:snoozed").lines.isEmpty)
        #expect(try f.run("hd-sync", environment: at(7200 + 86_400)).status == 0)
        #expect(try f.run("hd-snooze", "wake", environment: at(7200 + 86_400)).stdout.isEmpty)
        #expect(try wakeActions(f) == 1)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("a reply from someone else wakes a snooze early; a reply cancels a reminder (label off, nothing else)")
    func replyWakesEarly() throws {
        let (f, fake) = try synced()
        let first = try inboxThread(f, index: 0), second = try inboxThread(f, index: 1)
        #expect(try f.run("hd-mark", "snooze=+1d", first.ref, environment: at(0)).status == 0)
        #expect(try f.run("hd-mark", "remind=+1d", second.ref, environment: at(0)).status == 0)
        #expect(Set(try snoozedThreads(f)) == [first.ref, second.ref])
        let snoozed = try #require(try labelID(fake, named: "Snoozed"))
        try reply(fake, thread: first.id)
        try reply(fake, thread: second.id)
        let sync = try f.run("hd-sync", environment: at(60))
        #expect(sync.status == 0, "\(sync)")
        #expect(try snoozedThreads(f).isEmpty)
        for thread in [first, second] {
            let server = try serverThread(fake, thread.id)
            #expect(server.allSatisfy { !$0.labels.contains(snoozed) }, "\(thread.ref): \(server)")
            #expect(server.contains { $0.labels.contains("INBOX") })
        }
        // Nothing comes back a second time at the original wake time.
        #expect(try f.run("hd-sync", environment: at(2 * 86_400)).status == 0)
        #expect(try wakeActions(f) == 1)
    }

    @Test("another device removing Snoozed, or moving the thread to the inbox, cancels; a rename keeps the wake time")
    func otherDevice() throws {
        let (f, fake) = try synced()
        let removed = try inboxThread(f, index: 0), moved = try inboxThread(f, index: 1), renamed = try inboxThread(f, index: 2)
        #expect(try f.run("hd-mark", "snooze=+1d", removed.ref, moved.ref, renamed.ref, environment: at(0)).status == 0)
        let snoozed = try #require(try labelID(fake, named: "Snoozed"))
        for message in try serverThread(fake, removed.id) { try fake.modify(message.id, remove: [snoozed]) }
        for message in try serverThread(fake, moved.id) { try fake.modify(message.id, add: ["INBOX"]) }
        try fake.admin("POST", "rename-label", ["id": snoozed, "name": "Later"])
        #expect(try f.run("hd-sync", environment: at(60)).status == 0)
        #expect(try snoozedThreads(f) == [renamed.ref])
        #expect(try serverThread(fake, moved.id).allSatisfy { !$0.labels.contains(snoozed) }, "the label goes with a cancel by move")
        // At the time, only the renamed one wakes; the one whose label was removed stays archived.
        #expect(try f.run("hd-sync", environment: at(2 * 86_400)).status == 0)
        #expect(try serverThread(fake, renamed.id).contains { $0.labels.contains("INBOX") })
        #expect(try serverThread(fake, renamed.id).allSatisfy { !$0.labels.contains(snoozed) })
        #expect(try serverThread(fake, removed.id).allSatisfy { !$0.labels.contains("INBOX") })
        #expect(try labelCount(fake, named: "Snoozed") == 0 && labelCount(fake, named: "Later") == 1, "the renamed label is reused")
        #expect(try f.run("hd-mark", "snooze=+1d", removed.ref, environment: at(2 * 86_400)).status == 0)
        #expect(try serverThread(fake, removed.id).allSatisfy { $0.labels.contains(snoozed) })
    }

    @Test("hd-undo of the snooze brings the thread back at once and nothing wakes later")
    func undo() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=tomorrow", thread.ref, environment: at(0)).status == 0)
        #expect(try f.run("hd-undo").status == 0)
        #expect(try f.run("hd-ls", "-n", "0").stdout.contains(thread.ref))
        #expect(try snoozedThreads(f).isEmpty)
        #expect(try f.run("hd-sync", environment: at(3 * 86_400)).status == 0)
        #expect(try wakeActions(f) == 0)
        #expect(try serverThread(fake, thread.id).contains { $0.labels.contains("INBOX") })
    }

    @Test("bad WHEN: exit 64, one line, nothing queued; a skipped daylight-saving time is refused; +1d keeps the wall time")
    func badWhen() throws {
        let (f, _) = try synced()
        let thread = try inboxThread(f)
        for when in ["", "soon", "+0d", "+3x", "+-1d", "2026-02-30T09:00", "2026-12-08T25:00", "2001-01-01T09:00",
                     "+99999999999999999999d", "\u{1b}[31m", "tonight\u{7}"] {
            let result = try f.run("hd-mark", "snooze=\(when)", thread.ref, environment: at(0))
            #expect(result.status == 64, "\(when): \(result)")
            #expect(errorLines(result.stderr, "hd-mark") == 1 && !result.stderr.contains("\u{1b}"), "\(when): \(result)")
        }
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        // Europe/Berlin moves from 02:00 to 03:00 on 2026-03-29.
        let berlin = ["TZ": "Europe/Berlin", "HUDSON_TEST_NOW": "1774699200"]  // 2026-03-28T12:00:00Z, 13:00 CET
        let gap = try f.run("hd-mark", "snooze=2026-03-29T02:30", thread.ref, environment: berlin)
        #expect(gap.status == 64 && gap.stderr.contains("daylight saving"), "\(gap)")
        #expect(try f.run("hd-mark", "--no-flush", "snooze=+1d", thread.ref, environment: berlin).status == 0)
        let list = try f.run("hd-snooze", "list", "--json")
        #expect(list.stdout.contains("\"wake\":\"2026-03-29T11:00:00Z\""), "13:00 the next day is 11:00 UTC in summer time: \(list)")
        #expect(try f.run("hd-undo", "--list").stdout.contains("snooze until 2026-03-29 13:00 +0200"))
    }

    @Test("kill -9 after each commit of the snooze, the wake and hd-sync's pass: one snooze, one wake, Gmail agrees")
    func killedAtEachStep() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        let crashed = try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0).merging(["HUDSON_TEST_CRASH_AFTER_COMMIT": "1"]) { $1 })
        #expect(crashed.status != 0)
        #expect(try snoozedThreads(f) == [thread.ref], "the snooze committed whole")
        #expect(!(try f.run("hd-ls", "-n", "0").stdout.contains(thread.ref)))
        for commit in 1...8 {
            _ = try f.run("hd-sync", environment: at(7200).merging(["HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)]) { $1 })
        }
        #expect(try f.run("hd-sync", environment: at(7200)).status == 0)
        #expect(try f.run("hd-sync", environment: at(7200)).status == 0)
        #expect(try wakeActions(f) == 1)
        let snoozed = try #require(try labelID(fake, named: "Snoozed"))
        let server = try serverThread(fake, thread.id)
        #expect(server.contains { $0.labels.contains("INBOX") } && server.allSatisfy { !$0.labels.contains(snoozed) }, "\(server)")
        #expect(try labelCount(fake, named: "Snoozed") == 1)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("lost answers after Gmail applied them (the label's creation, the snooze, the wake): one label, right labels")
    func lostAnswers() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        try fake.faults([["mode": "apply_then_drop", "times": 1, "method": "POST", "path": "/labels$"],
                         ["mode": "apply_then_drop", "times": 1, "path": "(batchModify|/modify)$"]])
        _ = try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0))
        for _ in 0..<3 { #expect(try f.run("hd-sync", environment: at(60)).status == 0) }
        #expect(try labelCount(fake, named: "Snoozed") == 1)
        let snoozed = try #require(try labelID(fake, named: "Snoozed"))
        #expect(try serverThread(fake, thread.id).allSatisfy { !$0.labels.contains("INBOX") && $0.labels.contains(snoozed) })
        try fake.faults([["mode": "apply_then_drop", "times": 1, "path": "(batchModify|/modify)$"]])
        for _ in 0..<3 { _ = try f.run("hd-sync", environment: at(7200)) }
        #expect(try wakeActions(f) == 1)
        let server = try serverThread(fake, thread.id)
        #expect(server.contains { $0.labels.contains("INBOX") } && server.allSatisfy { !$0.labels.contains(snoozed) }, "\(server)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("is:awaiting-reply: threads whose newest message the account sent; a reply takes one out; awaiting-reply:AGE bounds it")
    func awaitingReply() throws {
        let (f, fake) = try synced()
        let found = try f.run("hd-search", "--messages", "--json", "is:awaiting-reply").lines
        #expect(!found.isEmpty, "the demo has threads whose newest message is sent")
        let server = try fake.messages()
        var threads: [String] = []
        for line in found {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let id = String(try #require(record["id"] as? String).dropFirst("message:".count))
            let message = try #require(server[id])
            #expect(message.labels.contains("SENT"))
            let newest = server.filter { $0.value.thread == message.thread }.map(\.value.internalDate).max()
            #expect(newest == message.internalDate, "\(id) is its thread's newest")
            threads.append(message.thread)
        }
        #expect(Set(threads).count == threads.count, "one message per thread")
        // awaiting-reply:AGE is the subset sent longer ago than AGE.
        let older = try f.run("hd-search", "--messages", "--ids", "awaiting-reply:30d").lines
        #expect(Set(older).isSubset(of: Set(try f.run("hd-search", "--messages", "--ids", "is:awaiting-reply").lines)))
        #expect(try f.run("hd-search", "--messages", "--ids", "awaiting-reply:100000d").status == 1)
        // A reply arrives in one of them: it is no longer awaiting a reply.
        let answered = try #require(threads.first)
        try reply(fake, thread: answered)
        #expect(try f.run("hd-sync").status == 0)
        let after = try f.run("hd-search", "--messages", "--ids", "is:awaiting-reply").lines
        #expect(after.count == found.count - 1, "\(after.count) vs \(found.count)")
    }

    @Test("hd-sync --watch wakes a thread whose time came, in one of its passes")
    func watchWakes() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0)).status == 0)
        let watch = try Watch(f, ["--verbose"], pause: 1, environment: at(7200))
        #expect(watch.awaitError("snoozed threads: action") != nil, "\(watch.errors)")
        #expect(try watch.awaitOutput { try serverThread(fake, thread.id).contains { $0.labels.contains("INBOX") } })
        #expect(watch.stop().status == 0)
        #expect(try wakeActions(f) == 1)
    }

    @Test("the snooze outlives a resync after Gmail's history expired, and still wakes once")
    func survivesExpiredHistory() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0)).status == 0)
        try fake.admin("POST", "expire-history", [String: Any]())
        for _ in 0..<2 { #expect(try f.run("hd-sync", "--catch-up", environment: at(60)).status == 0) }
        #expect(try snoozedThreads(f) == [thread.ref])
        #expect(try f.run("hd-sync", environment: at(7200)).status == 0)
        #expect(try serverThread(fake, thread.id).contains { $0.labels.contains("INBOX") })
        #expect(try wakeActions(f) == 1)
    }

    @Test("hd-export of a snoozed mailbox leaves the snooze as it was; the thread wakes at its time after")
    func survivesExport() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0)).status == 0)
        let export = try f.run("hd-export", f.dir.path("Mail"), environment: at(60))
        #expect(export.status == 0, "\(export)")
        #expect(try snoozedThreads(f) == [thread.ref])
        #expect(try f.run("hd-sync", environment: at(7200)).status == 0)
        #expect(try serverThread(fake, thread.id).contains { $0.labels.contains("INBOX") })
    }

    @Test("hd-snooze wake (for cron) wakes what is due, pushes it to Gmail, and sends a scheduled message whose time came")
    func cronWake() throws {
        let (f, fake) = try synced()
        let thread = try inboxThread(f)
        #expect(try f.run("hd-mark", "snooze=+1h", thread.ref, environment: at(0)).status == 0)
        let send = try f.run("hd-send", "--to", "friend@example.org", "--subject", "cron-later", "--at", "+1h",
                             stdin: "hello\n", environment: at(0))
        #expect(send.status == 0, "\(send)")
        #expect(try f.run("hd-snooze", "wake", environment: at(60)).stdout.isEmpty, "nothing due yet")
        let wake = try f.run("hd-snooze", "wake", environment: at(3700))
        #expect(wake.status == 0, "\(wake)")
        #expect(wake.lines.count == 1 && wake.lines[0].hasPrefix("\(thread.ref)\twoke\taction:"), "\(wake)")
        #expect(try serverThread(fake, thread.id).contains { $0.labels.contains("INBOX") })
        let sentCount = try fake.messages().values.filter { $0.labels.contains("SENT") }.count
        #expect(try f.run("hd-snooze", "wake", environment: at(3800)).stdout.isEmpty, "once")
        #expect(try fake.messages().values.filter { $0.labels.contains("SENT") }.count == sentCount)
        let drafts = try fake.admin("GET", "drafts") as? [String: Any]
        #expect((drafts?["drafts"] as? [Any])?.isEmpty == true, "the scheduled draft was sent")
    }

    @Test("each WHEN form: the wake time hd-snooze lists, in the local zone")
    func whenForms() throws {
        let (f, _) = try synced()
        let threads = try f.run("hd-ls", "-n", "10").lines.map { String($0.split(separator: "\t")[0]) }
        // Wednesday 2026-12-09 10:30 in New York (15:30 UTC).
        let newYork = ["TZ": "America/New_York", "HUDSON_TEST_NOW": "1796830200"]
        let cases: [(String, String)] = [
            ("2026-12-10T07:15", "2026-12-10T12:15:00Z"), ("2026-12-10 07:15", "2026-12-10T12:15:00Z"),
            ("2026-12-11", "2026-12-11T13:00:00Z"), ("+90m", "2026-12-09T17:00:00Z"), ("+2h", "2026-12-09T17:30:00Z"),
            ("+1d", "2026-12-10T15:30:00Z"), ("+1w", "2026-12-16T15:30:00Z"), ("tomorrow", "2026-12-10T13:00:00Z"),
            ("tonight", "2026-12-10T01:00:00Z"), ("monday", "2026-12-14T13:00:00Z"), ("wednesday", "2026-12-16T13:00:00Z"),
        ]
        for ((when, expected), thread) in zip(cases, threads) {
            let mark = try f.run("hd-mark", "--no-flush", "snooze=\(when)", thread, environment: newYork)
            #expect(mark.status == 0, "\(when): \(mark)")
            let listed = try f.run("hd-snooze", "list", "--json").lines.first { $0.contains("\"\(thread)\"") } ?? ""
            #expect(listed.contains("\"wake\":\"\(expected)\""), "\(when): \(listed)")
        }
    }

    @Test("generated arguments to hd-mark snooze=/remind= and hd-snooze: no crash, one line on stderr, a documented status")
    func generatedArguments() throws {
        let (f, _) = try synced()
        let thread = try inboxThread(f)
        var generator = SplitMix(seed: 41)
        let pieces = ["snooze=", "remind=", "+", "-", "1", "9999", "d", "h", "w", "m", "T", ":", "2026-", "12-08", "tomorrow",
                      "tonight", "monday", "\u{1b}]0;x\u{7}", "\u{202e}", " ", "=", "\n", "é", "--json", "list", "wake"]
        for round in 0..<60 {
            var text = ""
            for _ in 0..<Int(generator.next() % 6 + 1) { text += pieces[Int(generator.next() % UInt64(pieces.count))] }
            let result = round % 3 == 0
                ? try f.run("hd-snooze", text, environment: at(0))
                : try f.run("hd-mark", "--no-flush", text, thread.ref, environment: at(0))
            #expect([0, 2, 64].contains(result.status), "seed 41 round \(round): \(text.debugDescription): \(result)")
            #expect(errorLines(result.stderr, round % 3 == 0 ? "hd-snooze" : "hd-mark") <= 1
                    && !result.stderr.contains("\u{1b}") && !result.stderr.contains("\u{7}"),
                    "seed 41 round \(round): \(text.debugDescription): \(result)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failure names its seed and replays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
