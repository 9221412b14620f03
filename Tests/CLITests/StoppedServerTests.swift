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
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "6", "--demo-span-days", "10"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
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
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "6", "--demo-span-days", "10"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        fake.stop()
        let started = ContinuousClock.now
        for _ in 0..<3 {
            let result = try f.run("hd-sync")
            #expect(result.status == 75 && result.stderr.contains("nothing answers at \(fake.url)"), "\(result)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(9), "three hd-sync runs took \(elapsed)")
    }
}
