import Foundation
import HudsonTestSupport
import Testing

/// A demo mailbox fixed in time (and synced whole), so output is the same on every run.
let fixedNow = "1790000000"  // 2026-09-21T13:33:20Z
func fixedFake(_ extra: [String] = []) throws -> FakeGmail {
    try FakeGmail(["--demo", "--demo-count", "120", "--demo-span-days", "200", "--now", fixedNow] + extra)
}

@Suite("hd-show against the fake Gmail over HTTP", .serialized)
struct ShowCommandTests {
    func synced(prefetch: String = "0", _ extra: [String] = []) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try fixedFake(extra)
        try f.connect(fake, lookbackDays: 0)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", prefetch)
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// The longest thread of the mailbox.
    func longestThread(_ f: CLIFixture) throws -> String {
        // Rows: id, date, [unread/total] or [total], ...
        func total(_ row: [String]) -> Int {
            Int(row[2].filter { $0 != "[" && $0 != "]" }.split(separator: "/").last.map(String.init) ?? "") ?? 0
        }
        let rows = try f.run("hd-search", "in:anywhere").lines.map { $0.split(separator: "\t").map(String.init) }
        let best = rows.max { total($0) < total($1) }
        return try #require(best?.first)
    }

    @Test("hd-show prints a thread's messages oldest first: headers, labels, attachments, body (golden)")
    func showThread() throws {
        let (f, fake) = try synced()
        defer { withExtendedLifetime(fake) {} }
        let thread = try longestThread(f)
        let text = try f.run("hd-show", thread)
        #expect(text.status == 0, "\(text)")
        f.expectSnapshot(text.stdout, "hd-show")
        let json = try f.run("hd-show", "--json", thread)
        f.expectSnapshot(json.stdout, "hd-show-json")
        let dates = json.lines.compactMap { line -> Int? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["timestamp"] as? Int
        }
        #expect(dates.count > 1 && dates == dates.sorted())
    }

    @Test("goldens: hd-search, hd-labels and hd-ls on the fixed demo mailbox, text and JSON")
    func goldens() throws {
        let (f, fake) = try synced()
        defer { withExtendedLifetime(fake) {} }
        f.expectSnapshot(try f.run("hd-search", "-n", "8", "in:anywhere").stdout, "hd-search")
        f.expectSnapshot(try f.run("hd-search", "--json", "--messages", "-n", "4", "in:anywhere").stdout, "hd-search-messages-json")
        f.expectSnapshot(try f.run("hd-labels").stdout, "hd-labels")
        f.expectSnapshot(try f.run("hd-labels", "--json").stdout, "hd-labels-json")
        f.expectSnapshot(try f.run("hd-ls", "-n", "5").stdout, "hd-ls-demo")
        // Streamed lines are written straight into bytes (MessageLine, ChangeLine): the
        // text is pinned, and each change's line says what its JSON record says.
        f.expectSnapshot(try f.run("hd-search", "--messages", "-n", "6", "in:anywhere").stdout, "hd-search-messages")
        let changes = try f.run("hd-ls", "--changed-since", "0", "-n", "0").lines
        let records = try f.run("hd-ls", "--changed-since", "0", "-n", "0", "--json").lines.compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(changes.count > 10 && changes.count == records.count)
        for (line, record) in zip(changes, records) {
            let expected = [record["id"] as? String ?? "?", String(record["seq"] as? Int ?? -1), record["thread"] as? String ?? "?",
                            record["deleted"] as? Bool == true ? "deleted" : "changed"].joined(separator: "\t")
            #expect(line == expected)
        }
    }

    @Test("a body not stored yet is fetched on demand and stored")
    func onDemand() throws {
        let (f, fake) = try synced(prefetch: "1")
        defer { withExtendedLifetime(fake) {} }  // the server must outlive the fetches
        let message = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "older_than:30d").lines.first)
        let offline = try f.run("hd-show", "--no-fetch", "--json", message)
        #expect(offline.stdout.contains("\"body_stored\":false"))
        let shown = try f.run("hd-show", "--json", message)
        #expect(shown.status == 0 && shown.stdout.contains("\"body_stored\":true"), "\(shown.stderr)")
        #expect(try f.run("hd-show", "--no-fetch", "--json", message).stdout.contains("\"body_stored\":true"))
    }

    @Test("hd-show links no network code: what it must fetch, hd-sync --fetch fetches in a child process")
    func linksNoNetworkCode() throws {
        let f = CLIFixture()
        let libraries = try f.shell("ldd '\(BuiltProducts.executable("hd-show").path)'")
        #expect(libraries.status == 0, "\(libraries)")
        #expect(!libraries.stdout.contains("FoundationNetworking") && !libraries.stdout.contains("libcurl"), "\(libraries.stdout)")
    }

    @Test("offline, a message without a body shows its headers and snippet with a note")
    func offline() throws {
        let (f, fake) = try synced(prefetch: "1")
        let message = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "older_than:30d").lines.first)
        fake.stop()
        let shown = try f.run("hd-show", message)
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("[body not stored; Gmail could not be reached; snippet:]"), "\(shown.stdout)")
        #expect(shown.stderr.hasPrefix("hd-show: \(message): body not stored and not fetched: "))
    }

    @Test("--raw prints Gmail's source: one message as is, several as mboxrd")
    func raw() throws {
        let (f, fake) = try synced()
        let thread = try longestThread(f)
        let messages = try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines
        let one = try #require(messages.first)
        let source = try f.run("hd-show", "--raw", one)
        let expected = try #require((try fake.admin("GET", "message/\(one.dropFirst("message:".count))") as? [String: Any])?["raw"] as? String)
        #expect(source.status == 0 && source.stdout.contains("Message-ID:"))
        #expect(Data(source.stdout.utf8).count > 100 && !expected.isEmpty)
        let mbox = try f.run("hd-show", "--raw", thread)
        let count = try f.run("hd-show", "--json", thread).lines.count
        #expect(mbox.lines.filter { $0.hasPrefix("From ") }.count == count)
    }

    @Test("hostile mail: escapes and bidi never reach the terminal; an attachment name cannot leave the directory")
    func hostileMail() throws {
        let (f, fake) = try synced()
        let longHeader = String(repeating: "x", count: 100_000)
        var nested = "Content-Type: text/plain\r\n\r\ndeep inside\r\n"
        for depth in 0..<100 {
            nested = "Content-Type: multipart/mixed; boundary=\"b\(depth)\"\r\n\r\n--b\(depth)\r\n\(nested)\r\n--b\(depth)--\r\n"
        }
        let raw = """
            From: \u{1B}[2JEvil \u{202E}gnp.exe <evil@example.com>\r
            To: demo@hudson.test\r
            Subject: Invoice \u{1B}]52;c;ZXZpbA==\u{07}paid\u{1B}[31m now\r
            Message-ID: <hostile@example.com>\r
            X-Long: \(longHeader)\r
            MIME-Version: 1.0\r
            Content-Type: multipart/mixed; boundary="outer"\r
            \r
            --outer\r
            Content-Type: text/plain; charset=utf-8\r
            \r
            Click \u{1B}[8mhidden\u{1B}[0m here \u{07}\u{07}\r
            --outer\r
            Content-Type: application/octet-stream\r
            Content-Disposition: attachment; filename="../../.bashrc"\r
            Content-Transfer-Encoding: base64\r
            \r
            ZWNobyBwd25lZAo=\r
            --outer\r
            \(nested)\r
            --outer--\r
            """
        try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"]])
        #expect(try f.run("hd-sync").status == 0)
        let id = try #require(try f.run("hd-search", "--messages", "--ids", "rfc822msgid:hostile@example.com").lines.first)
        let shown = try f.run("hd-show", id)
        #expect(shown.status == 0, "\(shown.stderr)")
        for forbidden: Unicode.Scalar in ["\u{1B}", "\u{07}", "\u{202E}", "\u{9B}"] {
            #expect(!shown.stdout.unicodeScalars.contains(forbidden))
        }
        #expect(shown.stdout.contains("Subject: Invoice paid now"))
        #expect(shown.stdout.contains("Attachment: ") && shown.stdout.contains(".bashrc"))
        let directory = f.dir.path("saved")
        let saved = try f.run("hd-show", "--save-attachments", directory, id)
        #expect(saved.status == 0, "\(saved)")
        let again = try f.run("hd-show", "--save-attachments", directory, id)
        #expect(again.status == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        // Saved without its leading dot: a mail cannot plant a hidden file (issue 18).
        #expect(files == ["bashrc", "bashrc (1)"], "\(files)")
        #expect(!FileManager.default.fileExists(atPath: f.dir.path(".bashrc")))
        #expect(try String(contentsOfFile: directory + "/bashrc", encoding: .utf8) == "echo pwned\n")
    }

    @Test("r10_attachment_names_lose_every_bidi_control: isolates and marks, not only U+202E, are dropped from saved names")
    func r10_attachment_names_lose_every_bidi_control() throws {
        let (f, fake) = try synced()
        let name = "invoice\u{2066}gpj.exe\u{2069}\u{200F}\u{202A}\u{061C}.pdf"
        let encoded = "=?utf-8?b?" + Data(name.utf8).base64EncodedString() + "?="
        let raw = """
            From: a@example.org\r
            Subject: Disguised\r
            Message-ID: <disguised@example.com>\r
            Content-Type: multipart/mixed; boundary=b\r
            \r
            --b\r
            Content-Type: application/octet-stream\r
            Content-Disposition: attachment; filename="\(encoded)"\r
            \r
            bytes\r
            --b--\r
            """
        try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX"]])
        #expect(try f.run("hd-sync").status == 0)
        let id = try #require(try f.run("hd-search", "--messages", "--ids", "rfc822msgid:disguised@example.com").lines.first)
        let directory = f.dir.path("saved")
        #expect(try f.run("hd-show", "--save-attachments", directory, id).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["invoicegpj.exe.pdf"])
    }

    @Test("unknown references are reported and the rest shown: exit 2")
    func unknown() throws {
        let (f, fake) = try synced()
        defer { withExtendedLifetime(fake) {} }
        let message = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "in:anywhere").lines.first)
        let result = try f.run("hd-show", "--no-fetch", "thread:ffffffffffffffff", message)
        #expect(result.status == 2)
        #expect(result.stderr == "hd-show: thread:ffffffffffffffff: no such thread\n")
        #expect(result.stdout.hasPrefix(message + "\t"))
    }
}
