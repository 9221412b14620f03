// Issue 37 §1: every id that goes into a URL path has the shape of a Gmail id, checked in
// one place (GmailIDShape) before anything is sent. `hd-drafts delete draft:..` sent
// `DELETE /gmail/v1/users/me/` and reported "Gmail no longer has it"; now a user's bad id
// is a one-line usage error (64) and the fake's request log shows that no request left.
// The neighbours: hd-send --update-draft (the same draft:ID), hd-filters by id, a label
// and an attachment whose stored id is hostile (a store written before the rule, or by
// hand), and the references hd-mark and hd-show take.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Gmail ids: nothing of another shape goes into a request", .serialized)
struct GmailIDCommandTests {
    /// Ids no Gmail draft, message or label has: dot-segments, separators, encodings of
    /// them, empty, too long, non-ASCII, spaces and terminal controls.
    static let hostile = ["..", ".", "", "a/b", "../..", "%2e", "%2E%2E", "%2F", "a?b", "a#b", "a%00", "r-1/../..",
                          String(repeating: "a", count: 300), "ü", "a b", "\u{1B}[31mred", "a\u{202E}b", "a\tb"]

    func connected() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "12", "--demo-span-days", "30"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        try fake.clearRequests()
        return (f, fake)
    }

    /// One line of error on standard error, naming the command, with no control character
    /// in it (a usage error is followed by the usage line, as every one is: CONTRACT.md).
    func expectOneSafeLine(_ result: CommandResult, _ command: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .filter { !(result.status == 64 && $0.hasPrefix("usage: ")) }
        #expect(lines.count == 1 && result.stderr.hasPrefix("\(command): "), "\(result)", sourceLocation: sourceLocation)
        #expect(!lines.joined().unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x202E },
                "\(result.stderr.debugDescription)", sourceLocation: sourceLocation)
    }

    @Test("hd-drafts send, delete and show of a draft id of another shape: 64, one line, no request sent")
    func draftIDs() throws {
        let (f, fake) = try connected()
        for id in Self.hostile {
            for operand in ["draft:" + id, id] where !(operand == id && id.isEmpty) {
                for subcommand in ["delete", "send", "show"] {
                    let result = try f.run("hd-drafts", subcommand, operand)
                    #expect(result.status == 64, "\(subcommand) \(operand.debugDescription): \(result)")
                    expectOneSafeLine(result, "hd-drafts")
                    #expect(!result.stderr.contains("no longer has it"))
                }
            }
        }
        let sent = try fake.requests().map(\.path)
        #expect(sent.isEmpty, "\(sent.prefix(5))")
        // A well-formed id still reaches Gmail: one that it does not have is a 404, done.
        let gone = try f.run("hd-drafts", "delete", "draft:r-123")
        #expect(gone.status == 0 && gone.stderr.contains("no longer has it"), "\(gone)")
        #expect(try fake.requests().map(\.path) == ["/gmail/v1/users/me/drafts/r-123"])
    }

    @Test("hd-send --update-draft with a draft id of another shape: 64 before anything is queued or sent")
    func updateDraftID() throws {
        let (f, fake) = try connected()
        for id in ["..", "a/b", "%2e", ""] {
            let result = try CommandRunner.run(BuiltProducts.executable("hd-send"),
                                               ["--update-draft", "draft:" + id, "--to", "bob@example.org", "--subject", "x"],
                                               environment: f.environment, stdin: "text\n")
            #expect(result.status == 64, "\(id): \(result)")
            expectOneSafeLine(result, "hd-send")
        }
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try fake.requests().isEmpty)
    }

    @Test("references of another shape are refused by hd-mark and hd-show before the store or Gmail is asked")
    func references() throws {
        let (f, fake) = try connected()
        for id in ["..", "a/b", "%2e", String(repeating: "b", count: 300)] {
            let mark = try f.run("hd-mark", "star", "message:" + id)
            #expect(mark.status == 2 && mark.stderr.contains("not a reference"), "\(mark)")
            let show = try f.run("hd-show", "message:" + id)
            #expect(show.status != 0 && show.stderr.contains("not a reference"), "\(show)")
        }
        #expect(try fake.requests().isEmpty)
    }

    @Test("hd-filters apply names a filter by an id of another shape: Gmail is only asked for its filter list")
    func filterIDs() throws {
        let (f, fake) = try connected()
        for id in ["..", "a/b", "%2e"] {
            let result = try f.run("hd-filters", "apply", "filter:" + id)
            #expect(result.status != 0, "\(result)")
        }
        let sent = try fake.requests().map(\.path)
        #expect(sent.allSatisfy { $0 == "/gmail/v1/users/me/settings/filters" }, "\(sent)")
    }

    @Test("a label whose stored id is hostile: renaming and deleting it sends nothing to a path it names; the change is refused, not retried")
    func storedLabelID() throws {
        let (f, fake) = try connected()
        // A label as a store written by hand (or before the rule) could hold it.
        let sql = "UPDATE labels SET id = '../../x' WHERE name = 'Work'"
        #expect(try f.shell("sqlite3 \"$HUDSON_DB\" \"\(sql)\"").status == 0)
        #expect(try f.run("hd-labels", "rename", "Work", "Jobs", "--no-flush").status == 0)
        let sync = try f.run("hd-sync", "--prefetch-days", "0")
        #expect([0, 65].contains(sync.status), "\(sync)")
        let sent = try fake.requests().map(\.path)
        #expect(sent.allSatisfy { !$0.contains("/labels/") }, "\(sent)")
        let rejected = try f.run("hd-pending", "--rejected")
        #expect(rejected.stdout.contains("not sent: label id"), "\(rejected)")
    }

    @Test("hd-show --save-attachments of an attachment whose stored id is hostile: 65, one line, and no request for it")
    func storedAttachmentID() throws {
        let (f, fake) = try connected()
        let ids = try f.run("hd-search", "--messages", "--ids", "has:attachment")
        let message = try #require(ids.lines.first, "\(ids)")
        for hostile in ["../../x", "a/b", "%2e%2e"] {
            let sql = "UPDATE attachments SET attachment_id = '\(hostile)' WHERE message_id = (SELECT id FROM messages WHERE gmail_id = '\(message.dropFirst("message:".count))')"
            #expect(try f.shell("sqlite3 \"$HUDSON_DB\" \"\(sql)\"").status == 0)
            let save = try f.run("hd-show", "--save-attachments", f.dir.path("saved"), message)
            #expect(save.status == 65, "\(save)")
            expectOneSafeLine(save, "hd-show")
            #expect(save.stderr.contains("not sent: attachment id"), "\(save)")
        }
        let sent = try fake.requests().map(\.path)
        #expect(sent.allSatisfy { !$0.contains("/attachments/") }, "\(sent)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: f.dir.path("saved")))?.isEmpty ?? true)
    }
}
