import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-mark, hd-pending and hd-undo against the fake Gmail over HTTP", .serialized)
struct TriageCommandTests {
    /// A synced demo account.
    func synced(_ extra: [String] = [], lookbackDays: Int = 90, prefetch: String = "90") throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try demoFake(extra)
        try f.connect(fake, lookbackDays: lookbackDays)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", prefetch)
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// Every Gmail network call fails (connections dropped): Hudson is offline.
    func goOffline(_ fake: FakeGmail) throws {
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
    }

    func threads(_ output: String) -> [String] {
        output.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    @Test("offline, hd-search | hd-mark archive exits 0 with a note; hd-ls drops the threads and hd-pending shows the rows")
    func offlineArchiveThenSync() throws {
        let (f, fake) = try synced()
        let targets = threads(try f.run("hd-search", "in:inbox", "is:unread").stdout)
        #expect(targets.count >= 2)
        try goOffline(fake)
        let mark = try f.shell("hd-search in:inbox is:unread | hd-mark archive")
        #expect(mark.status == 0, "\(mark)")
        #expect(mark.stderr == "hd-mark: queued; the next hd-sync will send it\n")
        let inbox = Set(threads(try f.run("hd-ls", "-n", "0").stdout))
        #expect(inbox.isDisjoint(with: targets))
        let pending = try f.run("hd-pending")
        #expect(pending.lines.count >= targets.count && pending.lines.allSatisfy { $0.contains("\t-INBOX\tpending\t") }, "\(pending)")

        // The server is back: one hd-sync sends everything. (Every stored message: a thread
        // that reaches back before the backfill window has older messages Hudson never saw.)
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        let server = try fake.messages()
        let stored = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
        for thread in targets {
            let id = String(thread.dropFirst("thread:".count))
            let left = server.filter { $0.value.thread == id && stored.contains($0.key) && $0.value.labels.contains("INBOX") }
            #expect(left.isEmpty, "\(thread) still in the inbox: \(left.map(\.key))")
        }
        // After the echo, nothing is pending and the threads stay out of the inbox.
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(Set(threads(try f.run("hd-ls", "-n", "0").stdout)).isDisjoint(with: targets))
    }

    @Test("undo while pending sends nothing")
    func undoPending() throws {
        let (f, fake) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        #expect(try f.run("hd-mark", "--no-flush", "archive", target).status == 0)
        #expect(try f.run("hd-pending", "--count").stdout != "0\n")
        #expect(try f.run("hd-undo", "--no-flush").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        let writes = try fake.requests().filter { $0.path.hasSuffix("/modify") || $0.path.hasSuffix("/batchModify") }
        #expect(writes.isEmpty)
        #expect(threads(try f.run("hd-ls", "-n", "1").stdout).first == target)
    }

    @Test("undo after sending restores INBOX on the server")
    func undoAfterSending() throws {
        let (f, fake) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let id = String(target.dropFirst("thread:".count))
        #expect(try f.run("hd-mark", "archive", target).status == 0)  // sent at once
        #expect(try fake.messages().values.filter { $0.thread == id }.allSatisfy { !$0.labels.contains("INBOX") })
        #expect(try f.run("hd-undo").status == 0)
        #expect(try fake.messages().values.filter { $0.thread == id }.contains { $0.labels.contains("INBOX") })
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(threads(try f.run("hd-ls", "-n", "1").stdout).first == target)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("hd-sync --push sends the queue and nothing else; offline it exits 75 with the note; pass options are refused")
    func push() throws {
        let (f, fake) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let id = String(target.dropFirst("thread:".count))
        #expect(try f.run("hd-mark", "--no-flush", "archive", target).status == 0)
        try fake.clearRequests()
        let push = try f.run("hd-sync", "--push")
        #expect(push.status == 0 && push.stdout.isEmpty && push.stderr.isEmpty, "\(push)")
        let paths = try fake.requests().map(\.path)
        #expect(paths.contains { $0.hasSuffix("/modify") || $0.hasSuffix("/batchModify") }, "\(paths)")
        #expect(!paths.contains { $0.hasSuffix("/history") || $0.hasSuffix("/messages") }, "no poll, no listing: \(paths)")
        #expect(try fake.messages().values.filter { $0.thread == id }.allSatisfy { !$0.labels.contains("INBOX") })

        #expect(try f.run("hd-mark", "--no-flush", "star", target).status == 0)
        try goOffline(fake)
        let offline = try f.run("hd-sync", "--push")
        #expect(offline.status == 75 && offline.stdout.isEmpty, "\(offline)")
        #expect(offline.stderr == "hd-sync: queued; the next hd-sync will send it\n", "\(offline)")
        let pending = try f.run("hd-pending")
        #expect(pending.lines.filter { $0.contains("\tpending\t") }.map { $0.contains("\t+STARRED\t") } == [true], "\(pending)")
        #expect(try f.run("hd-sync", "--push", "--watch").status == 64)
        #expect(try f.run("hd-sync", "--push", "--catch-up").status == 64)
        #expect(try f.run("hd-sync", "--push", "--json").status == 64)
        #expect(try f.run("hd-sync", "--push", "--max-pages", "2").status == 64)
    }

    @Test("unknown references are reported one per line and the rest are done: exit 2")
    func unknownReferences() throws {
        let (f, _) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let result = try f.run("hd-mark", "--no-flush", "star", "message:0000000000000000", target, "not/a/ref")
        #expect(result.status == 2)
        #expect(result.stderr == "hd-mark: not/a/ref: not a reference\nhd-mark: message:0000000000000000: no such message\n")
        #expect(try f.run("hd-pending", "--count").stdout == "1\n")
    }

    @Test("an unknown label name is a usage error before anything is queued")
    func unknownLabel() throws {
        let (f, _) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let result = try f.run("hd-mark", "archive", "+NoSuchLabel", target)
        #expect(result.status == 64 && result.stderr.hasPrefix("hd-mark: NoSuchLabel: no such label\nusage: hd-mark "))
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-mark", "--no-flush", "+work", "-Family", target).status == 0)
    }

    @Test("--verbose reports the action, its changes and threads and the transaction's time; without it a pipe gets nothing")
    func verbose() throws {
        let (f, _) = try synced()
        let targets = threads(try f.run("hd-ls", "-n", "2").stdout)
        #expect(targets.count == 2)
        let quiet = try f.run("hd-mark", "--no-flush", "star", targets[0])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty)
        let result = try f.run("hd-mark", "--no-flush", "--verbose", "archive", stdin: targets.joined(separator: "\n") + "\n")
        let changes = try f.run("hd-pending", "--count").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let pattern = #/hd-mark: action (\d+): (\d+) change\(s\) on 2 thread\(s\), committed in \d+\.\d ms\n/#
        let match = try #require(result.stderr.wholeMatch(of: pattern), "\(result)")
        #expect(result.status == 0 && result.stdout.isEmpty)
        // Every queued change but the star is the archive's.
        #expect(Int(match.output.2) == Int(changes).map { $0 - 1 })
        let again = try f.run("hd-mark", "--no-flush", "--verbose", "archive", targets[0])
        #expect(again.status == 0 && again.stderr.wholeMatch(of: #/hd-mark: nothing to change, in \d+\.\d ms\n/#) != nil, "\(again)")
        #expect(try f.run("hd-undo", "--no-flush").status == 0)
    }

    @Test("--dry-run prints what would be queued and queues nothing; marking twice queues nothing the second time")
    func dryRunAndIdempotence() throws {
        let (f, _) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let dry = try f.run("hd-mark", "--dry-run", "archive", target)
        #expect(dry.status == 0 && !dry.stdout.isEmpty && dry.lines.allSatisfy { $0.contains("\t-INBOX\t") })
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-mark", "--no-flush", "archive", target).status == 0)
        let count = try f.run("hd-pending", "--count").stdout
        #expect(try f.run("hd-mark", "--no-flush", "archive", target).status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == count)
    }

    @Test("archiving 1000 threads costs a handful of requests")
    func thousandThreads() throws {
        let (f, fake) = try synced(["--demo-count", "4000"], lookbackDays: 0, prefetch: "1")
        let targets = try f.run("hd-search", "--ids", "-n", "1000", "in:anywhere")
        #expect(targets.lines.count == 1000)
        try fake.clearRequests()
        let mark = try f.run("hd-mark", "archive", stdin: targets.stdout)
        #expect(mark.status == 0, "\(mark)")
        let requests = try fake.requests()
        #expect(requests.count <= 5, "\(requests.map(\.path))")
        #expect(requests.reduce(0) { $0 + $1.units } <= 5 * 50)
        #expect(try f.run("hd-sync").status == 0)
        let server = try fake.messages()
        let archived = Set(targets.lines.map { String($0.dropFirst("thread:".count)) })
        #expect(server.values.filter { archived.contains($0.thread) }.allSatisfy { !$0.labels.contains("INBOX") })
    }
}
