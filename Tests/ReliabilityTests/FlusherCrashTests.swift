// Crash and resume for the write path (optimistic-mutations.md "Crash safety"): the
// flusher stopped after the send and before markInFlight, after markInFlight, and
// after the echo before retirement (HUDSON_TEST_CRASH_AT), from hd-sync and from
// hd-mark's flush (hd-sync --push). Each change must reach Gmail exactly as intended, nothing else
// may change there, and no row may stay stuck: the next `hd-sync --catch-up` drains
// the queue at once.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Crash and resume: the flusher stopped at each of its steps", .serialized)
struct FlusherCrashTests {
    /// The marks and what Gmail must hold afterwards for the messages they touch.
    struct Plan {
        var marks: [[String]] = []
        /// message id -> labels it must carry (true) or not carry (false) on the server.
        var intended: [String: [String: Bool]] = [:]
    }

    /// Four kinds of change on distinct messages: archive a thread (every message),
    /// star one message, label one, mark a thread read.
    func plan(_ fake: FakeGmail) throws -> Plan {
        let server = try fake.messages()
        let byThread = Dictionary(grouping: server.keys.sorted()) { server[$0]!.thread }
        let inboxThreads = byThread.keys.sorted().filter { thread in
            byThread[thread]!.contains { server[$0]!.labels.contains("INBOX") }
        }
        let unreadThreads = byThread.keys.sorted().filter { thread in
            byThread[thread]!.contains { server[$0]!.labels.contains("UNREAD") } && !inboxThreads.prefix(1).contains(thread)
        }
        let archived = try #require(inboxThreads.first)
        let read = try #require(unreadThreads.first { $0 != archived })
        let loose = server.keys.sorted().filter { server[$0]!.thread != archived && server[$0]!.thread != read }
        let starred = try #require(loose.first { !server[$0]!.labels.contains("STARRED") })
        let labelled = try #require(loose.first { !server[$0]!.labels.contains("Label_1") && $0 != starred })
        var plan = Plan()
        plan.marks = [["archive", "thread:\(archived)"], ["star", "message:\(starred)"],
                      ["+Work", "message:\(labelled)"], ["read", "thread:\(read)"]]
        for id in byThread[archived]! { plan.intended[id, default: [:]]["INBOX"] = false }
        for id in byThread[read]! { plan.intended[id, default: [:]]["UNREAD"] = false }
        plan.intended[starred, default: [:]]["STARRED"] = true
        plan.intended[labelled, default: [:]]["Label_1"] = true
        return plan
    }

    /// Gmail holds every intended change, and every other label of every message is as
    /// it was before.
    func expectExactlyIntended(_ fake: FakeGmail, before: [String: (thread: String, labels: Set<String>, internalDate: Int64)],
                               _ plan: Plan, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let after = try fake.messages()
        for (id, was) in before {
            var expected = was.labels
            for (label, present) in plan.intended[id] ?? [:] {
                if present { expected.insert(label) } else { expected.remove(label) }
            }
            #expect(after[id]?.labels == expected, "\(id): \(after[id]?.labels.sorted() ?? []) instead of \(expected.sorted())",
                    sourceLocation: sourceLocation)
        }
    }

    func prepared() throws -> (Rig, FakeGmail, Plan, [String: (thread: String, labels: Set<String>, internalDate: Int64)]) {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 80))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let plan = try plan(fake)
        return (rig, fake, plan, try fake.messages())
    }

    /// After the stop, one `hd-sync --catch-up` must drain the queue promptly: a row
    /// left claimed or in flight by the dead process must not wait out any lease.
    func expectResumes(_ rig: Rig, _ fake: FakeGmail, _ plan: Plan,
                       before: [String: (thread: String, labels: Set<String>, internalDate: Int64)],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let started = Date()
        let resume = try rig.run("hd-sync", catchUp, timeout: 90)
        #expect(resume.status == 0, "\(resume)", sourceLocation: sourceLocation)
        #expect(Date().timeIntervalSince(started) < 20, "the resume took \(Int(Date().timeIntervalSince(started))) s",
                sourceLocation: sourceLocation)
        let left = try rig.queue()
        #expect(left.isEmpty, "rows left in the queue: \(left)", sourceLocation: sourceLocation)
        try expectExactlyIntended(fake, before: before, plan, sourceLocation: sourceLocation)
        try rig.expectMatchesServer(sourceLocation: sourceLocation)
        try StoreDump.expectSound(rig.storePath, sourceLocation: sourceLocation)
        try rig.expectNoSecretsLeaked(sourceLocation: sourceLocation)
    }

    @Test("hd-sync stopped at a flusher step: every command shows the change, the next catch-up finishes it at once",
          arguments: ["after-send", "after-mark-in-flight", "before-retirement"])
    func hdSyncStopped(at point: String) throws {
        let (rig, fake, plan, before) = try prepared()
        for mark in plan.marks {
            #expect(try rig.run("hd-mark", ["--no-flush"] + mark).status == 0)
        }
        let stopped = rig.finish(try rig.start("hd-sync", ["--prefetch-days", "0"], environment: ["HUDSON_TEST_CRASH_AT": point]))
        #expect(stopped.killed, "hd-sync did not reach \(point): \(stopped)")
        let states = Set(try rig.queue().map(\.state))
        switch point {
        case "after-send": #expect(states.contains("pending"))
        default: #expect(states.contains("in_flight"))
        }
        // Whatever the state, every command already shows the change (the overlay).
        let inbox = try rig.run("hd-ls", "--ids", "-n", "0")
        #expect(!inbox.stdout.contains(plan.marks[0][1]), "the archived thread is back in the inbox")
        try expectResumes(rig, fake, plan, before: before)
    }

    @Test("hd-mark's flush (hd-sync --push) stopped at each step: the change is not lost and the next hd-sync finishes it",
          arguments: ["after-send", "after-mark-in-flight"])
    func hdMarkStopped(at point: String) throws {
        let (rig, fake, plan, before) = try prepared()
        for (index, mark) in plan.marks.enumerated() {
            let run = rig.finish(try rig.start("hd-mark", mark, environment: index == 0 ? ["HUDSON_TEST_CRASH_AT": point] : [:]))
            // The flush runs in `hd-sync --push`, which the hook kills; hd-mark itself has
            // committed and says the change stays queued.
            #expect(run.status == 0, "\(run)")
            #expect(index != 0 || run.stderr.hasSuffix("queued; the next hd-sync will send it\n"), "\(run)")
        }
        try expectResumes(rig, fake, plan, before: before)
    }
}
