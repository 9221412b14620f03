// The first hour (issue 38 §4): a command that found nothing to list or change says so
// when a person reads its output on a terminal, and stays silent in a pipe, where the
// exit status is what a script reads. script(1) gives the command a terminal.
import Foundation
import HudsonTestSupport
import Testing

@Suite("nothing to list or change: said on a terminal, silent in a pipe", .serialized)
struct TerminalNotesTests {
    func connected() throws -> (CLIFixture, FakeGmail) { try CLIFixture.syncedDemo(count: 8, spanDays: 20) }

    /// `command` run with a terminal on its standard output and error (script's output
    /// is the terminal's: both streams, CRLF line ends).
    func onTerminal(_ f: CLIFixture, _ command: String) throws -> CommandResult {
        try f.shell("script -qec '\(command)' /dev/null </dev/null")
    }

    @Test("hd-drafts list, hd-filters list and hd-filters apply --dry-run with nothing to show",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the command a terminal"))
    func emptyResults() throws {
        let (f, fake) = try connected()
        let cases: [(command: String, note: String, status: Int32)] = [
            ("hd-drafts list", "hd-drafts: no drafts", 1),
            ("hd-filters list", "hd-filters: no filters in Gmail", 1),
        ]
        for item in cases {
            let shown = try onTerminal(f, item.command)
            #expect(shown.status == item.status && shown.stdout.contains(item.note), "\(item.command): \(shown)")
            let piped = try f.shell(item.command)
            #expect(piped.status == item.status && piped.stdout.isEmpty && piped.stderr.isEmpty, "\(item.command): \(piped)")
        }
        // A filter that matches no mail: its dry run would change nothing.
        try fake.admin("POST", "filters", ["filter": [
            ["id": "none", "criteria": ["from": "nobody@nowhere.example"], "action": ["addLabelIds": ["STARRED"]]],
        ]])
        let shown = try onTerminal(f, "hd-filters apply --dry-run")
        #expect(shown.status == 0 && shown.stdout.contains("hd-filters: nothing would change"), "\(shown)")
        let piped = try f.shell("hd-filters apply --dry-run")
        #expect(piped.status == 0 && piped.stdout.isEmpty && piped.stderr.isEmpty, "\(piped)")
        // A filter that would change something prints its changes and no such note.
        try fake.admin("POST", "filters", ["filter": [
            ["id": "all", "criteria": ["subject": "performance"], "action": ["addLabelIds": ["STARRED"]]],
        ]])
        let changes = try onTerminal(f, "hd-filters apply --dry-run")
        #expect(changes.status == 0 && !changes.stdout.contains("nothing would change") && changes.stdout.contains("message:"),
                "\(changes)")
    }

    @Test("hd-sync --watch says once, on a terminal, that it is watching; a pipe gets nothing until a pass does something",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the command a terminal"))
    func watchSaysItIsWatching() throws {
        let (f, _) = try connected()
        let shown = try f.shell("timeout -k 5 -s INT 4 script -qec 'hd-sync --watch' /dev/null </dev/null")
        #expect(shown.stdout.contains("hd-sync: watching demo@hudson.test"), "\(shown)")
        let piped = try f.shell("timeout -k 5 -s INT 4 hd-sync --watch 2>&1 </dev/null")
        #expect(!piped.stdout.contains("watching"), "\(piped)")
    }

    @Test("hd-pending and hd-auth list: a heading over the columns on a terminal, none in a pipe; an empty queue said on a terminal",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the command a terminal"))
    func headingsAndEmptyQueue() throws {
        let (f, _) = try connected()
        for (command, note) in [("hd-pending", "hd-pending: nothing waiting for Gmail"), ("hd-pending --held", "hd-pending: nothing held"),
                                ("hd-pending --parked", "hd-pending: nothing parked"),
                                ("hd-pending --rejected", "hd-pending: nothing rejected in the last week")] {
            let shown = try onTerminal(f, command)
            #expect(shown.status == 0 && shown.stdout.contains(note), "\(command): \(shown)")
            let piped = try f.shell(command)
            #expect(piped.status == 0 && piped.stdout.isEmpty && piped.stderr.isEmpty, "\(command): \(piped)")
        }
        let listed = try f.run("hd-search", "--ids", "-n", "1", "in:anywhere")
        let thread = try #require(listed.lines.first, "\(listed)")
        #expect(try f.run("hd-mark", "--no-flush", "star", thread).status == 0)
        // A wide terminal, so that no column is cut; the heading is dimmed (escapes dropped here).
        let pending = try onTerminal(f, "stty cols 250; hd-pending")
        let lines = pending.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let heading = try #require(lines.first { $0.hasPrefix("REF") }, "\(pending)")
        #expect(["CHANGE", "STATE", "AGE/TIME", "ATTEMPTS", "ACTION", "BY", "ACCOUNT"].allSatisfy(heading.contains), "\(heading)")
        #expect(lines.contains { $0.contains("message:") && $0.contains("+STARRED") }, "\(pending)")
        let piped = try f.run("hd-pending")
        #expect(!piped.stdout.contains("REF") && piped.lines.allSatisfy { $0.hasPrefix("message:") }, "\(piped)")
        let accounts = try onTerminal(f, "stty cols 250; hd-auth list")
        #expect(accounts.stdout.contains("ACCOUNT") && accounts.stdout.contains("CREDENTIALS") && accounts.stdout.contains("demo@hudson.test"),
                "\(accounts)")
        #expect(try !f.run("hd-auth", "list").stdout.contains("CREDENTIALS"))
    }
}
