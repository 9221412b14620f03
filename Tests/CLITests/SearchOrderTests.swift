// hd-search --sort oldest (issue 38 §4): the order a patch series was written in, for
// `git am`; paging with --before continues in that order.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-search --sort oldest: the reverse of newest, paged in the same order", .serialized)
struct SearchOrderTests {
    func search(_ f: CLIFixture, _ arguments: [String]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-search"), arguments, environment: f.environment)
    }

    func synced() throws -> CLIFixture {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "40", "--demo-span-days", "60"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "60")
        #expect(sync.status == 0, "\(sync)")
        return f
    }

    /// Every page of `arguments`, `size` results at a time, joined.
    func paged(_ f: CLIFixture, _ arguments: [String], size: Int) throws -> [String] {
        var all: [String] = []
        while true {
            var page = ["-n", String(size)] + arguments
            if let last = all.last { page = ["--before", last] + page }
            let result = try CommandRunner.run(BuiltProducts.executable("hd-search"), page, environment: f.environment)
            #expect(result.status == 0 || result.status == 1, "\(result)")
            all += result.lines
            if result.lines.count < size { return all }
        }
    }

    @Test("messages and threads, with a full-text, an address and a plain query: oldest is newest reversed, and pages join up")
    func oldestFirst() throws {
        let f = try synced()
        for query in ["in:anywhere", "the", "from:ada@analytical.example OR to:demo@hudson.test"] {
            for kind in [["--messages"], []] {
                let base = kind + ["--ids", query]
                let newest = try search(f, base)
                let oldest = try search(f, ["--sort", "oldest"] + base)
                #expect(newest.status == 0 && oldest.status == 0, "\(newest) \(oldest)")
                #expect(newest.lines.count > 5, "\(query): too few results to order: \(newest)")
                if kind.isEmpty {
                    // A thread is placed by its newest match one way and its oldest the other:
                    // the same threads, each once.
                    #expect(Set(oldest.lines) == Set(newest.lines) && oldest.lines.count == Set(oldest.lines).count,
                            "\(query)\n\(oldest.lines)\n\(newest.lines)")
                } else {
                    #expect(oldest.lines == Array(newest.lines.reversed()), "\(query)\n\(oldest.lines)\n\(newest.lines)")
                }
                #expect(try paged(f, ["--sort", "oldest"] + base, size: 4) == oldest.lines, "\(query) \(kind)")
            }
        }
        let wrong = try f.run("hd-search", "--sort", "oldest-first", "in:inbox")
        #expect(wrong.status == 64, "\(wrong)")
    }
}
