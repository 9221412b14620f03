import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

@Suite("hd-ls, hd-search and hd-labels against a temporary store")
struct ReadCommandTests {
    @Test("hd-ls prints the inbox newest first, one TAB-separated record per thread, id first")
    func inboxText() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let result = try f.run("hd-ls")
        #expect(result.status == 0, "\(result)")
        f.expectSnapshot(result.stdout, "hd-ls")
        #expect(result.lines.map { $0.split(separator: "\t")[0] } == ["thread:th", "thread:tb", "thread:ta"])
    }

    @Test("hd-ls --json prints NDJSON with type and id first, dates in RFC 3339 UTC")
    func inboxJSON() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let result = try f.run("hd-ls", "--json")
        #expect(result.status == 0)
        f.expectSnapshot(result.stdout, "hd-ls-json")
        for line in result.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["type"] as? String == "thread")
            #expect((object["date"] as? String)?.hasSuffix("Z") == true)
            #expect(line.hasPrefix(#"{"type":"thread","id":"thread:"#))
        }
    }

    @Test("--ids -0 prints NUL-terminated ids only")
    func idsNul() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "-0").stdout == "thread:th\0thread:tb\0thread:ta\0")
    }

    @Test("hd-ls --label lists a label's threads; an unknown label is a usage error")
    func labels() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "--label", "work").lines == ["thread:ta", "thread:tc"])
        let unknown = try f.run("hd-ls", "--label", "Nope")
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("hd-ls: Nope: no such label"))
    }

    @Test("keyset paging: --before continues after the last thread of the previous page")
    func paging() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "-n", "2").lines == ["thread:th", "thread:tb"])
        #expect(try f.run("hd-ls", "--ids", "-n", "2", "--before", "thread:tb").lines == ["thread:ta"])
    }

    @Test("hd-ls with a query narrows the inbox and exits 1 when nothing matches")
    func lsQuery() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "budget").lines == ["thread:ta"])
        #expect(try f.run("hd-ls", "projector").status == 1)
    }

    @Test("hd-ls --changed-since lists changed messages and prints the new point on standard error")
    func changedSince() throws {
        let f = CLIFixture()
        let store = try f.standardMailbox()
        let first = try f.run("hd-ls", "--changed-since", "0", "--ids")
        #expect(first.status == 0)
        #expect(Set(first.lines) == ["message:a1", "message:a2", "message:b1", "message:c1", "message:s1", "message:h1"])
        let point = try #require(Int(first.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))
        _ = try store.perform([.star], on: [.message("c1")])
        let second = try f.run("hd-ls", "--changed-since", String(point), "--ids")
        #expect(second.lines == ["message:c1"])
        #expect(Int(second.stderr.trimmingCharacters(in: .whitespacesAndNewlines))! > point)
        // A limited listing continues where it stopped: nothing is skipped.
        var seen: [String] = []
        var next = "0"
        for _ in 0..<10 {
            let page = try f.run("hd-ls", "--changed-since", next, "--ids", "-n", "4")
            seen += page.lines
            next = page.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            if page.lines.isEmpty { break }
        }
        #expect(Set(seen).count == 6 && seen.count == 6, "\(seen)")
    }

    @Test("an archive queued locally is gone from hd-ls at once")
    func overlayShowsAtOnce() throws {
        let f = CLIFixture()
        let store = try f.standardMailbox()
        _ = try store.perform([.archive], on: [.thread("ta")])
        #expect(try f.run("hd-ls", "--ids").lines == ["thread:th", "thread:tb"])
        #expect(try f.run("hd-search", "--ids", "in:inbox", "budget").status == 1)
    }

    @Test("hd-search: words match word starts and accents fold, phrases match exactly")
    func fullText() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-search", "--ids", "zurich").lines == ["thread:tb"])
        #expect(try f.run("hd-search", "--ids", "cafe").lines == ["thread:tb"])
        #expect(try f.run("hd-search", "--ids", "--messages", "meet").lines == ["message:a2", "message:a1"])
        #expect(try f.run("hd-search", "--ids", "\"meeting confirmed\"").lines == ["thread:ta"])
        #expect(try f.run("hd-search", "--ids", "\"confirmed meeting\"").status == 1)
        #expect(try f.run("hd-search", "--ids", "proj").lines == ["thread:tc"])
    }

    @Test("hd-search: spam and trash are left out unless the query names them")
    func defaultScope() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-search", "--ids", "budget").lines == ["thread:ta"])
        #expect(try f.run("hd-search", "--ids", "budget", "in:anywhere").lines == ["thread:ts", "thread:ta"])
        #expect(try f.run("hd-search", "--ids", "in:spam").lines == ["thread:ts"])
    }

    @Test("hd-search: operators read addresses, labels, flags and dates")
    func operators() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-search", "--ids", "from:alice@example.org").lines == ["thread:ta"])
        #expect(try f.run("hd-search", "--ids", "from:alice").lines == ["thread:ta"])
        #expect(try f.run("hd-search", "--ids", "label:travel-2026").lines == ["thread:tb"])
        #expect(try f.run("hd-search", "--ids", "is:starred").lines == ["thread:tb"])
        #expect(try f.run("hd-search", "--ids", "--messages", "is:unread", "-label:travel/2026").lines == ["message:a1"])
        #expect(try f.run("hd-search", "--ids", "--messages", "after:2026/01/01", "before:1767226500").lines
                    == ["message:a1", "message:c1"])
        #expect(try f.run("hd-search", "--ids", "{zurich projector}").lines == ["thread:tb", "thread:tc"])
        #expect(try f.run("hd-search", "--ids", "rfc822msgid:b1@example.org").lines == ["thread:tb"])
        #expect(try f.run("hd-search", "--count", "label:work").stdout == "2\n")
    }

    @Test("hd-search exits 1 when nothing matches and 65 with the column when the query does not parse")
    func exitStatuses() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-search", "nothingmatchesthis").status == 1)
        let bad = try f.run("hd-search", "budget", "(from:alice")
        #expect(bad.status == 65)
        #expect(bad.stderr == "hd-search: query: column 8: unclosed parenthesis\n")
    }

    @Test("hostile queries give results or exit 65, never a SQL error")
    func hostileQueries() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        for query in ["NEAR(budget review)", "subject:*", "\"", "'); DROP TABLE messages; --", "budget*", "^budget",
                      "subject:budget:review", "{", "a\u{1}b", String(repeating: "budget ", count: 1500), "\"\"", "***"] {
            let result = try f.run("hd-search", "--ids", query)
            #expect([0, 1, 65].contains(result.status), "\(query.prefix(40)): \(result)")
            #expect(!result.stderr.contains("SQL") && !result.stderr.contains("fts5"), "\(query.prefix(40)): \(result.stderr)")
        }
        // NEAR is a word to Hudson, as to Gmail, not FTS5's proximity operator.
        #expect(try f.run("hd-search", "--ids", "NEAR(budget review)").status == 1)
        #expect(try f.run("hd-search", "--ids", "near", "budget").status == 1)
        #expect(try f.run("hd-search", "--count", "in:anywhere").stdout == "5\n")
    }

    @Test("hostile headers never reach the terminal: text drops control and bidi characters, JSON escapes them")
    func hostileMail() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let text = try f.run("hd-search", "hostile")
        #expect(text.status == 0)
        for forbidden: Unicode.Scalar in ["\u{1B}", "\u{07}", "\u{202E}"] {
            #expect(!text.stdout.unicodeScalars.contains(forbidden))
        }
        #expect(text.stdout.contains("Invoice paidfdp.exe"))
        let json = try f.run("hd-search", "--json", "hostile")
        #expect(json.stdout.contains(#"\u001b]52;c;"#) && json.stdout.contains(#"\u202e"#))
    }

    @Test("a closed pipe ends the command quietly with status 0")
    func closedPipe() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let result = try f.shell("set -o pipefail; hd-search --messages in:anywhere | head -1 >/dev/null; echo ${PIPESTATUS[0]}")
        #expect(result.stdout == "0\n" && result.stderr.isEmpty, "\(result)")
    }

    @Test("read commands never create a store: no store is exit 78 with a hint")
    func noStore() throws {
        let f = CLIFixture()
        for command in ["hd-ls", "hd-labels"] {
            let result = try f.run(command)
            #expect(result.status == 78)
            #expect(result.stderr == "\(command): no store at \(f.storePath); run hd-auth\n")
        }
        #expect(!FileManager.default.fileExists(atPath: f.storePath))
    }

    @Test("--help goes to standard output with exit 0; a usage error prints the usage line and exits 64")
    func helpAndUsage() throws {
        let f = CLIFixture()
        let help = try f.run("hd-search", "--help")
        #expect(help.status == 0 && help.stdout.contains("usage: hd-search [options] QUERY...") && help.stderr.isEmpty)
        let usage = try f.run("hd-search", "--limt", "3", "x")
        #expect(usage.status == 64)
        #expect(usage.stderr == "hd-search: --limt: unknown option\nusage: hd-search [options] QUERY...\n")
        let version = try f.run("hd-ls", "--version")
        #expect(version.stdout.hasPrefix("hd-ls (Hudson) ") && version.status == 0)
    }

    @Test("--account selects one account; an unknown one is exit 77")
    func accountSelection() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "--account", "ANN@example.com").lines.count == 3)
        let unknown = try f.run("hd-ls", "--account", "zed@example.com")
        #expect(unknown.status == 77 && unknown.stderr == "hd-ls: zed@example.com: no such account\n")
    }

    @Test("hd-labels counts messages and threads from effective labels")
    func labelCounts() throws {
        let f = CLIFixture()
        let store = try f.standardMailbox()
        _ = try store.perform([.addLabel("Work")], on: [.thread("tb")])
        let result = try f.run("hd-labels")
        #expect(result.status == 0)
        #expect(result.lines.contains("label:Work\t3\t3\t2\tann@example.com"), "\(result.stdout)")
        #expect(result.lines.contains("label:Travel/2026\t1\t1\t1\tann@example.com"))
        #expect(try f.run("hd-labels", "--ids").lines.first == "label:INBOX")
    }
}

@Suite("Regressions found while documenting the commands")
struct DocumentationRegressionTests {
    @Test("r8_label names match the way label: does in every command: case, '-', '/', ' ' and '_' alike")
    func labelNamesEverywhere() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        #expect(try f.run("hd-ls", "--ids", "--label", "travel-2026").lines == ["thread:tb"])
        #expect(try f.run("hd-mark", "--dry-run", "-travel_2026", "thread:tb").lines.first?.contains("\t-Travel/2026\t") == true)
        #expect(try f.run("hd-search", "--ids", "label:TRAVEL 2026").status == 1)  // two terms: label:TRAVEL and 2026
        #expect(try f.run("hd-search", "--ids", "label:\"travel 2026\"").lines == ["thread:tb"])
    }

    @Test("r8_every usage error is printed with the usage line")
    func usageLines() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let label = try f.run("hd-ls", "--label", "Nope")
        #expect(label.status == 64 && label.stderr == "hd-ls: Nope: no such label\nusage: hd-ls [options] [QUERY...]\n")
        let before = try f.run("hd-search", "--before", "thread:nope", "budget")
        #expect(before.status == 64 && before.stderr.hasPrefix("hd-search: --before: thread:nope: not a thread in the store\nusage: "))
        let json = try f.run("hd-mark", "--json", "archive", "thread:ta")
        #expect(json.status == 64 && json.stderr.hasPrefix("hd-mark: --json goes with --dry-run\nusage: "))
        let fetch = try f.run("hd-show", "--no-fetch", "--save-attachments", f.dir.path("saved"), "thread:ta")
        #expect(fetch.status == 64 && fetch.stderr.hasPrefix("hd-show: --no-fetch: the attachments are only at Gmail\n"))
        // A source not stored is one failed message, not a usage error (issue 24 §1).
        let raw = try f.run("hd-show", "--no-fetch", "--raw", "thread:ta")
        #expect(raw.status == 2 && raw.stdout.isEmpty && raw.stderr.contains(": source not stored (--no-fetch)\n"))
    }
}
