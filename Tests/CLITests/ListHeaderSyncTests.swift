// Sync keeps List-Unsubscribe, List-Unsubscribe-Post, Gmail's Authentication-Results and the
// DKIM signatures' d/s/h for every message, from the metadata it already fetches (issue 42),
// so hd-senders can say which lists offer one-click, against the fake Gmail.
import Foundation
import HudsonTestSupport
import Testing

@Suite("List headers through sync")
struct ListHeaderSyncTests {
    @Test("a message's list headers arrive with its metadata; hd-senders then offers one-click, and none for unsigned ones")
    func keptBySync() throws {
        let fake = try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "10"])
        let f = CLIFixture()
        try f.connect(fake)
        let signed = """
            Authentication-Results: mx.google.com;
                   dkim=pass header.i=@news.example.org header.s=s1 header.b=abc
            DKIM-Signature: v=1; a=rsa-sha256; d=news.example.org; s=s1;
                   h=from:to:subject:list-unsubscribe:list-unsubscribe-post; bh=x; b=y
            From: News <news@news.example.org>
            To: demo@hudson.test
            Subject: weekly
            List-Id: Example News <news.example.org>
            List-Unsubscribe: <https://news.example.org/u/1>,
             <mailto:leave@news.example.org?subject=leave>
            List-Unsubscribe-Post: List-Unsubscribe=One-Click
            Message-ID: <weekly@news.example.org>

            text
            """
        // The same offer without a signature: anyone could have written it.
        let unsigned = """
            From: Shop <deals@shop.example>
            To: demo@hudson.test
            Subject: deals
            List-Unsubscribe: <https://shop.example/u>
            List-Unsubscribe-Post: List-Unsubscribe=One-Click
            Message-ID: <deals@shop.example>

            text
            """
        for raw in [signed, unsigned] { _ = try fake.admin("POST", "insert", ["raw": raw]) }
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        let stored = try f.shell("""
            sqlite3 "$HUDSON_DB" "SELECT list_unsubscribe, list_unsubscribe_post, dkim_signatures FROM messages WHERE message_id_header = '<weekly@news.example.org>'"
            """)
        #expect(stored.stdout == "<https://news.example.org/u/1>, <mailto:leave@news.example.org?subject=leave>|List-Unsubscribe=One-Click|d=news.example.org; s=s1; h=from:to:subject:list-unsubscribe:list-unsubscribe-post\n",
                "\(stored)")
        let senders = try f.run("hd-senders", "--json", "newer_than:1d")
        let records = senders.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let news = records.first { $0["id"] as? String == "list:news.example.org" }
        let shop = records.first { $0["id"] as? String == "from:deals@shop.example" }
        #expect(news?["unsubscribe"] as? [String] == ["one-click", "https", "mailto"], "\(senders)")
        // Not even its page: an offer no one signed is not the sender's (SenderReport).
        #expect(shop?["unsubscribe"] as? [String] == ["none"], "\(senders)")
        // Every message the sync stored has its list headers known.
        let unknown = try f.shell("sqlite3 \"$HUDSON_DB\" 'SELECT count(*) FROM messages WHERE list_headers_known = 0'")
        #expect(unknown.stdout == "0\n")
    }

    @Test("the upgrade that fills list headers from kept sources says on a terminal how many it could not, once; not to a script (hd-sync, a writer, upgrades)",
          .enabled(if: ManPages.tool("script") != nil && ManPages.tool("sqlite3") != nil, "script(1) and sqlite3 are needed"))
    func upgradeSaysUnknown() throws {
        for terminal in [true, false] {
            let f = CLIFixture()
            let fake = try FakeGmail(["--demo", "--demo-count", "12", "--demo-span-days", "10"])
            try f.connect(fake)
            let sync = try f.run("hd-sync", "--catch-up")
            #expect(sync.status == 0, "\(sync)")
            let messages = try #require(Int(try f.run("hd-search", "--count", "--messages", "in:anywhere").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            // Back to a store as a Hudson before migration 035 left it (no source kept).
            let rolledBack = try f.shell("""
                sqlite3 "$HUDSON_DB" "DROP TABLE unsubscribes;
                  ALTER TABLE messages DROP COLUMN list_unsubscribe; ALTER TABLE messages DROP COLUMN list_unsubscribe_post;
                  ALTER TABLE messages DROP COLUMN authentication_results; ALTER TABLE messages DROP COLUMN dkim_signatures;
                  ALTER TABLE messages DROP COLUMN list_headers_known;
                  DELETE FROM hudson_migrations WHERE id = '035_list_headers';"
                """)
            #expect(rolledBack.status == 0, "\(rolledBack)")
            let note = "hd-sync: \(messages) stored message(s) have no kept source to read List-Unsubscribe from: hd-senders shows their senders' methods as unknown"
            if terminal {
                let upgraded = try f.shell("script -qec 'hd-sync' /dev/null </dev/null")
                #expect(upgraded.status == 0 && upgraded.stdout.contains(note), "\(upgraded)")
                let again = try f.shell("script -qec 'hd-sync' /dev/null </dev/null")
                #expect(again.status == 0 && !again.stdout.contains("no kept source"), "once: \(again)")
            } else {
                let upgraded = try f.run("hd-sync")
                #expect(upgraded.status == 0 && !upgraded.stderr.contains("no kept source"), "\(upgraded)")
            }
        }
    }
}
