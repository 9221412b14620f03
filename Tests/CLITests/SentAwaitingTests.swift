// What Gmail already has is said as sent (issue 38 §4): a label change Gmail applied waits
// only for the history that confirms it, and a message Gmail stored waits only for the
// sync that brings it into the store; neither is still "to send".
import Foundation
import HudsonTestSupport
import Testing

@Suite("a change or a message Gmail has is shown as sent, awaiting the sync that confirms it", .serialized)
struct SentAwaitingTests {
    @Test("hd-pending after hd-sync --push; hd-auth status after hd-send; then a sync confirms both")
    func sentAwaiting() throws {
        let (f, fake) = try CLIFixture.syncedDemo(count: 12, spanDays: 20)
        defer { withExtendedLifetime(fake) {} }  // the fake serves while the test runs
        let thread = try #require(try f.run("hd-search", "--ids", "-n", "1", "in:inbox").lines.first)
        #expect(try f.run("hd-mark", "--no-flush", "archive", thread).status == 0)
        #expect(try f.run("hd-sync", "--push").status == 0)

        let pending = try f.run("hd-pending")
        #expect(pending.status == 0 && !pending.lines.isEmpty, "\(pending)")
        #expect(pending.lines.allSatisfy { $0.split(separator: "\t").dropFirst(2).first == "sent" }, "\(pending)")
        let json = try f.run("hd-pending", "--json")
        #expect(json.stdout.contains("\"state\":\"in_flight\""), "\(json)")

        let sent = try f.run("hd-send", "--to", "bob@example.org", "--subject", "Hello", stdin: "Hi Bob\n")
        #expect(sent.status == 0, "\(sent)")
        let status = try f.run("hd-auth", "status")
        #expect(status.stdout.contains("0 to send, 1 sent (awaiting sync)"), "\(status)")
        // The label changes Gmail applied are said as sent too, not as queued.
        #expect(status.stdout.contains("\t0 queued, \(pending.lines.count) sent (awaiting sync)\t"), "\(status)")

        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending").lines.isEmpty)
        let after = try f.run("hd-auth", "status")
        #expect(after.stdout.contains("\t0 queued\t0 to send\t"), "\(after)")
    }
}
