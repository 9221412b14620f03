import Foundation
import HudsonTestSupport
import Testing

@Suite("Held changes through the commands against the fake Gmail: held → nothing sent; approved → sent once", .serialized)
struct HeldCommandTests {
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try demoFake([])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "90")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func firstThread(_ f: CLIFixture) throws -> String {
        try #require(try f.run("hd-ls", "-n", "1").stdout.split(separator: "\n").first.map { String($0.split(separator: "\t")[0]) })
    }

    /// The label writes Gmail received since the last clear.
    func writes(_ fake: FakeGmail) throws -> Int {
        try fake.requests().filter { $0.path.hasSuffix("/modify") || $0.path.hasSuffix("/batchModify") }.count
    }

    func inInbox(_ fake: FakeGmail, thread: String) throws -> Bool {
        let id = String(thread.dropFirst("thread:".count))
        return try fake.messages().values.contains { $0.thread == id && $0.labels.contains("INBOX") }
    }

    func actionID(_ f: CLIFixture) throws -> String {
        let line = try #require(try f.run("hd-pending", "--held", "--json").lines.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return "action:\(try #require(object["action"] as? Int))"
    }

    @Test("hd-mark --hold: the inbox changes at once, hd-pending --held lists it, hd-sync sends nothing; approve sends it once")
    func holdThenApprove() throws {
        let (f, fake) = try synced()
        let target = try firstThread(f)
        try fake.clearRequests()
        let mark = try f.run("hd-mark", "--hold", "archive", target)
        #expect(mark.status == 0, "\(mark)")
        #expect(mark.stderr.contains("held; hd-pending --approve action:"), "\(mark)")
        #expect(try !f.run("hd-ls", "-n", "0").stdout.contains(target))
        let held = try f.run("hd-pending", "--held")
        #expect(!held.lines.isEmpty && held.lines.allSatisfy { $0.contains("\t-INBOX\theld\t") && $0.contains("\tuser\t") }, "\(held)")
        #expect(try f.run("hd-sync").status == 0)
        // A held change never keeps a sync from catching up, nor a push from finishing.
        let catchUp = try f.run("hd-sync", "--catch-up")
        #expect(catchUp.status == 0, "\(catchUp)")
        let push = try f.run("hd-sync", "--push")
        #expect(push.status == 0, "\(push)")
        #expect(try writes(fake) == 0)
        #expect(try inInbox(fake, thread: target))

        let approve = try f.run("hd-pending", "--approve", try actionID(f))
        #expect(approve.status == 0, "\(approve)")
        #expect(try !inInbox(fake, thread: target))
        #expect(try writes(fake) == 1)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 1)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        // Approving again names nothing held: 2, one line.
        let again = try f.run("hd-pending", "--approve", "action:999999")
        #expect(again.status == 2 && again.stderr == "hd-pending: action:999999: nothing held\n", "\(again)")
    }

    @Test("every reading command marks a held change: hd-ls, hd-search (threads and messages), hd-show, text and JSON; approval or undo clears the mark")
    func readersMarkHeld() throws {
        let (f, _) = try synced()
        let target = try firstThread(f)
        let other = try #require(try f.run("hd-ls", "-n", "2").lines.last.map { String($0.split(separator: "\t")[0]) })
        #expect(other != target)
        let mark = try f.run("hd-mark", "--hold", "star", target)
        #expect(mark.status == 0, "\(mark)")
        // A pending (not held) change elsewhere marks nothing.
        #expect(try f.run("hd-mark", "read", other).status == 0)

        func threadLine(_ output: CommandResult, _ thread: String) -> String? { output.lines.first { $0.hasPrefix(thread + "\t") } }
        func json(_ output: CommandResult, _ id: String) throws -> [String: Any]? {
            try output.lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0["id"] as? String == id || $0["thread"] as? String == id }
        }
        func expectMarked(_ held: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let list = try f.run("hd-ls", "-n", "0")
            #expect(threadLine(list, target)?.hasSuffix(" [held]") == held, "\(list)", sourceLocation: sourceLocation)
            #expect(threadLine(list, other)?.contains("[held]") == false, "\(list)", sourceLocation: sourceLocation)
            #expect(try json(f.run("hd-ls", "--json", "-n", "0"), target)?["held"] as? Bool == held, sourceLocation: sourceLocation)
            #expect(try json(f.run("hd-ls", "--json", "-n", "0"), other)?["held"] as? Bool == false, sourceLocation: sourceLocation)
            let search = try f.run("hd-search", "-n", "0", "in:anywhere")
            #expect(threadLine(search, target)?.hasSuffix(" [held]") == held, "\(search)", sourceLocation: sourceLocation)
            #expect(try json(f.run("hd-search", "--json", "-n", "0", "in:anywhere"), target)?["held"] as? Bool == held,
                    sourceLocation: sourceLocation)
            let messages = try f.run("hd-search", "--messages", "--json", "-n", "0", "in:anywhere")
            let own = try messages.lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            // Marked: only messages of the target thread, at least one of them while held.
            let marked = own.filter { $0["held"] as? Bool == true }
            #expect(!own.isEmpty && own.allSatisfy { $0["held"] is Bool }, "\(messages)", sourceLocation: sourceLocation)
            #expect(marked.allSatisfy { $0["thread"] as? String == target } && marked.isEmpty == !held, "\(messages)",
                    sourceLocation: sourceLocation)
            let text = try f.run("hd-search", "--messages", "-n", "0", "in:anywhere")
            #expect(text.lines.filter { $0.hasSuffix(" [held]") }.count == marked.count, "\(text)", sourceLocation: sourceLocation)
            let show = try f.run("hd-show", target)
            let labels = show.lines.filter { $0.hasPrefix("Labels: ") || $0 == "Labels:" }
            #expect(labels.filter { $0.hasSuffix(" [held]") }.count == marked.count, "\(show)", sourceLocation: sourceLocation)
            let showJSON = try f.run("hd-show", "--json", target)
            #expect(showJSON.lines.filter { $0.contains(#""held":true"#) }.count == marked.count, "\(showJSON)",
                    sourceLocation: sourceLocation)
        }
        try expectMarked(true)
        #expect(try f.run("hd-pending", "--approve", try actionID(f)).status == 0)
        try expectMarked(false)

        // Held again, then discarded by hd-undo: no mark either.
        #expect(try f.run("hd-mark", "--hold", "unstar", target).status == 0)
        try expectMarked(true)
        #expect(try f.run("hd-undo").status == 0)
        try expectMarked(false)
    }

    @Test("killed right after the hold commits, and right after the approval commits: nothing sent before approval, sent once after")
    func killedBetweenHoldAndApprove() throws {
        let (f, fake) = try synced()
        let target = try firstThread(f)
        try fake.clearRequests()
        let killed = try f.run("hd-mark", "--hold", "archive", target, environment: ["HUDSON_TEST_CRASH_AFTER_COMMIT": "1"])
        #expect(killed.status != 0)
        #expect(try !f.run("hd-pending", "--held").lines.isEmpty)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 0)
        let action = try actionID(f)
        let approveKilled = try f.run("hd-pending", "--approve", action, environment: ["HUDSON_TEST_CRASH_AFTER_COMMIT": "1"])
        #expect(approveKilled.status != 0)
        #expect(try f.run("hd-pending", "--held").lines.isEmpty)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 1)
        #expect(try !inInbox(fake, thread: target))
    }

    @Test("approve while offline: released, kept queued with a note, sent by the next hd-sync")
    func approveOffline() throws {
        let (f, fake) = try synced()
        let target = try firstThread(f)
        #expect(try f.run("hd-mark", "--hold", "archive", target).status == 0)
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        let approve = try f.run("hd-pending", "--approve", "--all")
        #expect(approve.status == 0, "\(approve)")
        #expect(approve.stderr == "hd-pending: queued; the next hd-sync will send it\n", "\(approve)")
        #expect(try f.run("hd-pending", "--held").lines.isEmpty)
        #expect(try inInbox(fake, thread: target))
        try fake.admin("DELETE", "faults")
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 1)
        #expect(try !inInbox(fake, thread: target))
    }

    @Test("the user's opposite change while held cancels it: nothing pending, nothing sent")
    func oppositeWhileHeld() throws {
        let (f, fake) = try synced()
        let target = try firstThread(f)
        try fake.clearRequests()
        #expect(try f.run("hd-mark", "--hold", "star", target).status == 0)
        #expect(try f.run("hd-pending", "--held", "--count").stdout == "1\n")
        #expect(try f.run("hd-mark", "unstar", target).status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 0)
    }

    @Test("hd-undo discards a held action; hd-undo --list says who made each action and what is held")
    func undoDiscards() throws {
        let (f, fake) = try synced()
        let target = try firstThread(f)
        try fake.clearRequests()
        #expect(try f.run("hd-mark", "--hold", "read", "star", target).status == 0)
        let action = try actionID(f)
        let list = try f.run("hd-undo", "--list")
        #expect(list.lines.first?.contains("\tuser\tread star\t") == true && list.lines.first?.contains("held") == true, "\(list)")
        #expect(try f.run("hd-undo", action).status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake) == 0)
    }

    @Test("hd-pending --approve's bad input: one line, 64")
    func approveUsage() throws {
        let f = CLIFixture()
        for arguments in [["--approve"], ["--approve", "--all", "action:1"], ["--approve", "thread:abc"], ["--approve", "action:0"],
                          ["--all"], ["--approve", "--held", "--all"], ["--held", "--parked"]] {
            let run = try CommandRunner.run(BuiltProducts.executable("hd-pending"), arguments, environment: f.environment)
            #expect(run.status == 64 && run.stderr.hasPrefix("hd-pending: ") && run.stdout.isEmpty, "\(arguments): \(run)")
        }
    }

    @Test("generated --approve operands: 0, 2 or 64, each diagnostic one line with no control, held rows left held unless named")
    func generatedApproveOperands() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let f = CLIFixture()
        _ = try f.standardMailbox()
        let thread = try #require(try f.run("hd-ls", "-n", "1").stdout.split(separator: "\t").first.map(String.init))
        #expect(try f.run("hd-mark", "--hold", "star", thread).status == 0)
        let held = try f.run("hd-pending", "--held", "--count").stdout
        let words = ["action:1", "action:2", "action:0", "action:-1", "action:99999999999999999999", "outbox:1", "outbox:x", "thread:a",
                     "--all", "--no-flush", "--held", "-", "\u{1B}[2J", "action:1\u{202E}", "", "--json"]
        for _ in 0..<30 {
            var arguments = ["--approve"]
            for _ in 0..<Int(random.next() % 4) { arguments.append(words[Int(random.next() % UInt64(words.count))]) }
            arguments.removeAll { $0 == "action:1" }  // the held action stays held, to check nothing else released it
            let result = try CommandRunner.run(BuiltProducts.executable("hd-pending"), arguments, environment: f.environment,
                                               stdin: "action:7\n", timeout: 60)
            #expect([0, 2, 64].contains(result.status), "seed \(seed): \(arguments): \(result)")
            #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{202E}"), "seed \(seed): \(arguments): \(result)")
            if result.status != 0 { #expect(result.stderr.hasPrefix("hd-pending: "), "seed \(seed): \(arguments): \(result)") }
            if !arguments.contains("--all") {
                #expect(try f.run("hd-pending", "--held", "--count").stdout == held, "seed \(seed): \(arguments)")
            } else if result.status == 0 {
                #expect(try f.run("hd-mark", "--hold", "--no-flush", "unstar", thread).status == 0)
                #expect(try f.run("hd-mark", "--hold", "--no-flush", "star", thread).status == 0)
            }
        }
    }
}
