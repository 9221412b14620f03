// A Gmail on this machine that is not running (issue 38 §4): the demo's fake stopped, the
// environment still naming it. Commands say what happened and how the demo's starts again,
// in one line, instead of "connection refused".
import Foundation
import HudsonTestSupport
import Testing

@Suite("a stopped local Gmail is named, with how to start the demo's again", .serialized)
struct StoppedServerTests {
    @Test("hd-sync and hd-auth status against a stopped fake")
    func stoppedFake() throws {
        let (f, fake) = try CLIFixture.syncedDemo(count: 6, spanDays: 10)
        fake.stop()
        let expected = "nothing answers at \(fake.url)"
        for arguments in [["hd-sync"], ["hd-auth", "status"]] {
            let result = try CommandRunner.run(BuiltProducts.executable(arguments[0]), Array(arguments.dropFirst()),
                                               environment: f.environment)
            #expect(result.status == 75, "\(arguments): \(result)")
            #expect(result.stderr.contains(expected) && result.stderr.contains("scripts/demo --serve"), "\(arguments): \(result)")
            #expect(!result.stderr.contains("connection refused"), "\(arguments): \(result)")
        }
    }

    /// Nothing listens at a stopped fake's port: the connection is refused and not retried
    /// with backoff (RetryPolicy), so the line comes at once. With Gmail's backoff (5
    /// attempts, 1 s doubling, full jitter) one run took 6–15 s and about 7.5 on average;
    /// three runs within 9 s together would have happened about once in 1,500.
    @Test("hd-sync against a stopped fake says so at once: no backoff")
    func stoppedFakeAtOnce() throws {
        let (f, fake) = try CLIFixture.syncedDemo(count: 6, spanDays: 10)
        fake.stop()
        let started = ContinuousClock.now
        for _ in 0..<3 {
            let result = try f.run("hd-sync")
            #expect(result.status == 75 && result.stderr.contains("nothing answers at \(fake.url)"), "\(result)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(9), "three hd-sync runs took \(elapsed)")
    }

    @Test("hd-mark and hd-undo against a stopped fake: the change stays queued, and the line says why")
    func markAndUndoName() throws {
        let (f, fake) = try CLIFixture.syncedDemo(count: 30, spanDays: 60)
        let thread = try #require(try f.run("hd-ls", "--ids", "-n", "1").lines.first)
        fake.stop()
        let expected = "nothing answers at \(fake.url)"
        let mark = try f.run("hd-mark", "archive", thread)
        #expect(mark.status == 0, "\(mark)")
        #expect(mark.stderr.hasPrefix("hd-mark: demo@hudson.test: gmail: \(expected)") && mark.stderr.contains("scripts/demo --serve)\n"),
                "\(mark)")
        #expect(mark.stderr.hasSuffix("\nhd-mark: queued; the next hd-sync will send it\n"), "\(mark)")
        #expect(mark.stderr.split(separator: "\n").count == 2, "\(mark)")
        let pending = try f.run("hd-pending")
        #expect(pending.lines.contains { $0.contains("\t-INBOX\tpending\t") }, "\(pending)")

        let undo = try f.run("hd-undo")
        #expect(undo.status == 0, "\(undo)")
        #expect(undo.stderr.contains("hd-undo: demo@hudson.test: gmail: \(expected)") && undo.stderr.contains("scripts/demo --serve"),
                "\(undo)")
        #expect(undo.stderr.hasSuffix("hd-undo: queued; the next hd-sync will send it\n"), "\(undo)")
    }
}
