// hd-ls --follow (issue 23 §3): the change feed kept open, woken by another process's
// commit, ended by its reader going away.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-ls --follow: changes as other processes commit them")
struct FollowTests {
    /// Longer than any wait this machine makes under load, shorter than the follower's
    /// 30-second safety read: a line that arrives before it was woken by the commit.
    static let wokenWithin: TimeInterval = 20

    private func follow(_ f: CLIFixture, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(BuiltProducts.executable("hd-ls"), arguments, environment: f.environment, limit: 120)
    }

    @Test("after the changes since SEQ, a change committed by another process is printed at once, as NDJSON")
    func printsCommittedChange() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let child = try follow(f, ["--changed-since", "0", "--follow", "--json"])
        var backlog: [[String: Any]] = []
        for _ in 0..<6 {
            let line = try #require(child.readLine())
            backlog.append(try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
        }
        #expect(Set(backlog.compactMap { $0["id"] as? String })
                == ["message:a1", "message:a2", "message:b1", "message:c1", "message:s1", "message:h1"])
        let newest = backlog.compactMap { $0["seq"] as? Int }.max() ?? 0

        // Past the follower's settling reads (100 ms and 1 s after its last read), so only
        // being woken by the commit prints the change before the 30-second safety read.
        Thread.sleep(forTimeInterval: 2)
        #expect(try f.run("hd-mark", "star", "message:c1").status == 0)
        let started = Date()
        let line = try #require(child.readLine(), "the follower ended instead of printing the change")
        let elapsed = Date().timeIntervalSince(started)
        let change = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(change["type"] as? String == "change")
        #expect(change["id"] as? String == "message:c1")
        #expect((change["seq"] as? Int ?? 0) > newest)
        #expect(elapsed < Self.wokenWithin, "printed after \(elapsed) s: by the safety read, not woken by the commit")

        // A second change, after the follower went back to waiting: printed too.
        #expect(try f.run("hd-mark", "archive", "thread:ta").status == 0)
        let next = Set([try #require(child.readLine()), try #require(child.readLine())])
        #expect(next.allSatisfy { $0.contains("\"type\":\"change\"") })
        #expect(next.contains { $0.contains("message:a1") } && next.contains { $0.contains("message:a2") })
        // Ended as a reader that stops ends it (a test runner may leave SIGTERM ignored
        // in its children).
        child.closeOutput()
        child.process.waitUntilExit()
    }

    @Test("without --changed-since it starts at the store's newest point, as tail -f starts at the end")
    func startsAtNow() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let child = try follow(f, ["--follow", "--ids"])
        // Nothing is printed until a change: the first line is one made after the start.
        // The follower may not have read its starting point yet when a change is made, so
        // b1 is starred and unstarred until a line comes (every change of b1 is new).
        let seen = Flag()
        let environment = f.environment
        DispatchQueue.global().async {
            for round in 0..<60 where !seen.isSet {
                _ = try? CommandRunner.run(BuiltProducts.executable("hd-mark"), [round % 2 == 0 ? "star" : "unstar", "message:b1"],
                                           environment: environment)
                Thread.sleep(forTimeInterval: 1)
            }
        }
        let first = child.readLine()
        seen.set()
        #expect(first == "message:b1")
        // Ended as a reader that stops ends it (a test runner may leave SIGTERM ignored
        // in its children).
        child.closeOutput()
        child.process.waitUntilExit()
    }

    @Test("it ends with status 0 when the reader of its output goes away, with no new change needed")
    func endsWhenReaderGoes() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let child = try follow(f, ["--changed-since", "0", "--follow", "--ids"])
        #expect(child.readLine() != nil)
        child.closeOutput()
        child.process.waitUntilExit()
        // Killed by the test's guard instead (SIGKILL) if it never noticed.
        #expect(child.process.terminationReason == .exit)
        #expect(child.process.terminationStatus == 0)
    }

    @Test("--follow refuses what would cut or narrow the feed", arguments: [
        ["--follow", "--limit", "5"], ["--follow", "--label", "Work"], ["--follow", "budget"],
        ["--follow", "--before", "thread:ta"],
    ])
    func refusesNarrowing(arguments: [String]) throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let result = try CommandRunner.run(BuiltProducts.executable("hd-ls"), arguments, environment: f.environment, stdin: nil)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("hd-ls: --follow"))
        #expect(result.stdout.isEmpty)
    }
}

/// Set once, read from another thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
