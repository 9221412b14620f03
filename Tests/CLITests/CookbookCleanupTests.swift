// The "Cleaning up a mailbox" recipe of docs/scripting.md (issue 42): a list never read is
// left by its mailto address (one message, sent once) and its mail archived.
import Foundation
import HudsonTestSupport
import Testing

extension CookbookTests {
    func cleanup(_ recipe: Recipe, _ k: Kitchen) throws {
        func deliverList(_ subject: String) throws {
            let raw = """
                From: Digest <digest@lists.example.org>\r
                Authentication-Results: mx.google.com; dkim=pass header.i=@lists.example.org header.s=s1\r
                To: Robin Hudson <demo@hudson.test>\r
                Subject: \(subject)\r
                List-Id: Daily Digest <digest.lists.example.org>\r
                List-Unsubscribe: <mailto:leave-digest@lists.example.org?subject=unsubscribe%20me>\r
                Message-ID: <\(UUID().uuidString.lowercased())@lists.example.org>\r
                \r
                Today's digest.\r

                """
            _ = try k.fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"]])
        }
        // Never read, and more of it than any list of the demo mailbox: the least read.
        for day in 1...6 { try deliverList("Digest \(day)") }
        try k.sync()
        let result = try k.cook(recipe)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("list:digest.lists.example.org\tmailto\twould-send\tleave-digest@lists.example.org"), "\(result)")
        #expect(result.stdout.contains("list:digest.lists.example.org\tmailto\tqueued\tleave-digest@lists.example.org"), "\(result)")
        #expect(try k.lines("hd-search", "--ids", "list:digest.lists.example.org in:inbox", status: 1).isEmpty)
        try k.sync()
        // One message to the list's address, with the URI's subject, whatever runs after.
        try k.sync()
        let sent = try k.lines("hd-search", "--messages", "--ids", "in:sent to:leave-digest@lists.example.org")
        #expect(sent.count == 1, "\(sent)")
        // The record says what its outbox entry did: sent.
        #expect(try k.lines("hd-unsubscribe", "list:digest.lists.example.org").first?.contains("already-sent") == true)
        try k.sync()
        #expect(try k.lines("hd-search", "--messages", "--ids", "in:sent to:leave-digest@lists.example.org").count == 1)
    }
}
