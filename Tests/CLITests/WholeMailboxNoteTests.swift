// A whole mailbox stores the bodies of recent mail only (issue 38 §4): hd-auth says so
// when it adds one, and hd-sync --catch-up says how many bodies are missing and what
// storing them costs, instead of leaving it to a search that quietly misses words.
import Foundation
import HudsonTestSupport
import Testing

@Suite("a whole mailbox is told what storing every body costs", .serialized)
struct WholeMailboxNoteTests {
    @Test("hd-auth add --lookback-days 0, then a catch-up with a short prefetch window, then one storing every body")
    func wholeMailbox() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "30", "--demo-span-days", "120"])
        let added = try f.connect(fake, lookbackDays: 0)
        #expect(added.stderr.contains("the whole mailbox: hd-sync stores the bodies of the last 90 days")
                && added.stderr.contains("hd-sync --catch-up --prefetch-days 0 stores every body: 5 units"), "\(added)")

        let recent = try f.run("hd-sync", "--catch-up", "--prefetch-days", "7")
        #expect(recent.status == 0, "\(recent)")
        let missing = try #require(recent.stderr.firstMatch(of: /demo@hudson.test: (\d+) message\(s\) have no stored body/),
                                   "\(recent)")
        #expect(Int(missing.1)! > 0 && recent.stderr.contains("(here at least 1 minute(s)"), "\(recent)")

        let all = try f.run("hd-sync", "--catch-up", "--prefetch-days", "0")
        #expect(all.status == 0 && !all.stderr.contains("no stored body"), "\(all)")

        // An account with a window is not told (its bodies are stored within it).
        let g = CLIFixture()
        let windowed = try g.connect(try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "10"]))
        #expect(!windowed.stderr.contains("whole mailbox"), "\(windowed)")
    }

    @Test("a login that widens an account to the whole mailbox says what storing every body costs; a repeated login does not")
    func widened() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "10"])
        try f.connect(fake, lookbackDays: 30)
        let login = { (days: [String]) in
            try CommandRunner.run(BuiltProducts.executable("hd-auth"),
                                  ["add", fake.email, "--client-secret", f.dir.path("client_secret.json"),
                                   "--refresh-token-file", f.dir.path("refresh_token")] + days, environment: f.environment)
        }
        let again = try login([])
        #expect(again.status == 0 && !again.stderr.contains("whole mailbox"), "\(again)")
        let widened = try login(["--lookback-days", "0"])
        #expect(widened.status == 0, "\(widened)")
        #expect(widened.stderr.contains("backfill window widened to the whole mailbox")
                && widened.stderr.contains("the whole mailbox: hd-sync stores the bodies of the last 90 days")
                && widened.stderr.contains("hd-sync --catch-up --prefetch-days 0 stores every body"), "\(widened)")
    }
}
