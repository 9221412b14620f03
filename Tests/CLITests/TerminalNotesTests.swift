// The first hour (issue 38 §4): a command that found nothing to list or change says so
// when a person reads its output on a terminal, and stays silent in a pipe, where the
// exit status is what a script reads. script(1) gives the command a terminal.
import Foundation
import HudsonTestSupport
import Testing

@Suite("nothing to list or change: said on a terminal, silent in a pipe", .serialized)
struct TerminalNotesTests {
    func connected() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "8", "--demo-span-days", "20"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

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
}
