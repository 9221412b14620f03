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
}
