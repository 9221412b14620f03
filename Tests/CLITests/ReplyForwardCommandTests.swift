// hd-send --reply-all, --forward (inline and as an attachment), --quote and --edit (issue 22,
// part 2), end to end against the fake Gmail. What Gmail received is read back from the
// fake's stored bytes and taken apart with Python's email package, an independent MIME
// reader, so an attachment is checked byte for byte by a parser that is not Hudson's.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-send: reply to all, forward, quote and edit against the fake Gmail", .serialized)
struct ReplyForwardCommandTests {
    /// Every byte value, twice: an attachment that survives only an exact round trip.
    static let binary: [UInt8] = (0..<512).map { UInt8($0 % 256) }

    /// A synced account whose mailbox has one message to answer: from Alice, with a
    /// Reply-To, to the user and Bob, Cc Carol and the user again, with a binary attachment.
    func mailbox() throws -> (CLIFixture, FakeGmail, original: String) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "10", "--demo-span-days", "30"])
        let boundary = "b0undary"
        let raw = "From: Alice Example <alice@example.org>\r\nTo: demo@hudson.test, Bob <bob@example.org>\r\n"
            + "Cc: Carol <carol@example.net>, DEMO@hudson.test\r\nReply-To: Team List <team@example.org>\r\n"
            + "Subject: Quarterly numbers\r\nDate: Wed, 02 Dec 2026 09:30:00 +0000\r\nMessage-ID: <orig.1@example.org>\r\n"
            + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"\(boundary)\"\r\n\r\n"
            + "--\(boundary)\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            + "Here are the numbers.\r\n\r\n> an old quote\r\nGrüße, Alice\r\n"
            + "--\(boundary)\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"data.bin\"\r\n"
            + "Content-Transfer-Encoding: base64\r\n\r\n" + Data(Self.binary).base64EncodedString(options: .lineLength76Characters)
            + "\r\n--\(boundary)--\r\n"
        let inserted = try #require(try fake.admin("POST", "insert", ["raw_b64": Data(raw.utf8).base64EncodedString()]) as? [String: Any])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake, try #require(inserted["id"] as? String))
    }

    func send(_ f: CLIFixture, _ arguments: [String], body: String = "My answer.\n") throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), arguments, environment: f.environment, stdin: body)
    }

    func sentID(_ result: CommandResult) throws -> String {
        let line = try #require(result.lines.first { $0.hasPrefix("message:") }, "\(result)")
        return String(line.dropFirst("message:".count))
    }

    /// What Python's email package makes of the message Gmail stores: headers, the text,
    /// and the attachments (name, type, sha256 of the bytes).
    func parsed(_ f: CLIFixture, _ fake: FakeGmail, _ id: String) throws -> [String: Any] {
        let message = try #require(try fake.admin("GET", "message/\(id)") as? [String: Any])
        let raw = try #require(message["raw"] as? String)
        let path = f.dir.path("stored-\(id).b64")
        try raw.write(toFile: path, atomically: true, encoding: .utf8)
        let script = """
            import base64, email, email.policy, hashlib, json, sys
            data = open(sys.argv[1]).read().strip()
            raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
            m = email.message_from_bytes(raw, policy=email.policy.default)
            out = {k: str(m[k]) for k in ("From", "To", "Cc", "Bcc", "Subject", "In-Reply-To") if m[k] is not None}
            body = m.get_body(preferencelist=("plain",))
            out["text"] = body.get_content() if body is not None else ""
            atts = []
            for part in m.iter_attachments():
                if part.get_content_type() == "message/rfc822":
                    payload = part.get_payload()[0].as_bytes() if part.is_multipart() else part.get_payload(decode=True)
                    inner = part.get_payload()[0]
                    atts.append({"type": "message/rfc822", "subject": str(inner["Subject"]), "messageId": str(inner["Message-ID"])})
                else:
                    atts.append({"type": part.get_content_type(), "name": part.get_filename(),
                                 "sha256": hashlib.sha256(part.get_payload(decode=True)).hexdigest()})
            out["attachments"] = atts
            print(json.dumps(out))
            """
        try script.write(toFile: f.dir.path("parse.py"), atomically: true, encoding: .utf8)
        let result = try f.shell("python3 '\(f.dir.path("parse.py"))' '\(path)'")
        #expect(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    var binarySHA256: String {
        get throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-binary-\(getpid()).bin").path
            try Data(Self.binary).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/sha256sum"), [path], environment: [:])
            return String(result.stdout.prefix(64))
        }
    }

    @Test("--reply-all: To the Reply-To, Cc everyone else the original was addressed to, never the user; in the thread")
    func replyAll() throws {
        let (f, fake, original) = try mailbox()
        let result = try send(f, ["--reply-to", "message:\(original)", "--reply-all"])
        #expect(result.status == 0, "\(result)")
        let id = try sentID(result)
        let stored = try parsed(f, fake, id)
        #expect(stored["To"] as? String == "Team List <team@example.org>")
        #expect(stored["Cc"] as? String == "Bob <bob@example.org>, Carol <carol@example.net>")
        #expect(stored["Subject"] as? String == "Re: Quarterly numbers")
        #expect(stored["In-Reply-To"] as? String == "<orig.1@example.org>")
        #expect(try fake.messages()[id]?.thread == fake.messages()[original]?.thread)
        let alone = try send(f, ["--reply-all"])
        #expect(alone.status == 64 && alone.stderr.contains("--reply-all needs --reply-to"), "\(alone)")
    }

    @Test("--quote: the original's text under an attribution line, each line quoted with \"> \"")
    func quote() throws {
        let (f, fake, original) = try mailbox()
        let result = try send(f, ["--reply-to", "message:\(original)", "--quote"], body: "Thanks!\n")
        #expect(result.status == 0, "\(result)")
        let text = try #require(try parsed(f, fake, try sentID(result))["text"] as? String)
        #expect(text.replacingOccurrences(of: "\r\n", with: "\n") == """
            Thanks!

            On Wed, 02 Dec 2026 09:30:00 +0000, Alice Example <alice@example.org> wrote:
            > Here are the numbers.
            >
            >> an old quote
            > Grüße, Alice

            """, "\(text)")
    }

    @Test("--forward: Fwd: subject, the Forwarded message block, and the original's attachment byte for byte")
    func forwardInline() throws {
        let (f, fake, original) = try mailbox()
        let result = try send(f, ["--forward", "message:\(original)", "--to", "dave@example.com"], body: "FYI.\n")
        #expect(result.status == 0, "\(result)")
        let stored = try parsed(f, fake, try sentID(result))
        #expect(stored["Subject"] as? String == "Fwd: Quarterly numbers" && stored["To"] as? String == "dave@example.com")
        let text = try #require(stored["text"] as? String).replacingOccurrences(of: "\r\n", with: "\n")
        #expect(text.hasPrefix("FYI.\n\n---------- Forwarded message ---------\nFrom: Alice Example <alice@example.org>\n"), "\(text)")
        #expect(text.contains("Subject: Quarterly numbers\n") && text.contains("Here are the numbers."), "\(text)")
        let attachments = try #require(stored["attachments"] as? [[String: Any]])
        #expect(attachments.count == 1)
        #expect(attachments.first?["name"] as? String == "data.bin")
        #expect(attachments.first?["sha256"] as? String == (try binarySHA256))
        #expect(try fake.messages()[try sentID(result)]?.thread != fake.messages()[original]?.thread)
    }

    @Test("--forward-as-attachment: the original whole, as a message/rfc822 part")
    func forwardAsAttachment() throws {
        let (f, fake, original) = try mailbox()
        let result = try send(f, ["--forward", "message:\(original)", "--forward-as-attachment", "--to", "dave@example.com"])
        #expect(result.status == 0, "\(result)")
        let attachments = try #require(try parsed(f, fake, try sentID(result))["attachments"] as? [[String: Any]])
        #expect(attachments.count == 1)
        #expect(attachments.first?["type"] as? String == "message/rfc822")
        #expect(attachments.first?["messageId"] as? String == "<orig.1@example.org>")
        let bad = try send(f, ["--forward-as-attachment", "--to", "dave@example.com"])
        #expect(bad.status == 64, "\(bad)")
        let both = try send(f, ["--forward", "message:\(original)", "--reply-to", "message:\(original)"])
        #expect(both.status == 64 && both.stderr.contains("cannot be used together"), "\(both)")
    }

    // MARK: - --edit

    /// Runs hd-send under `script`, which gives it a terminal, with EDITOR set to `editor`.
    func edited(_ f: CLIFixture, _ arguments: String, editor: String) throws -> CommandResult {
        let path = f.dir.path("editor.sh")
        try ("#!/bin/sh\n" + editor + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return try f.shell("VISUAL= EDITOR='\(path)' script -qec 'hd-send \(arguments)' /dev/null </dev/null")
    }

    @Test("--edit: the editor gets headers and body (with the quote), and what is saved is sent",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the editor a terminal"))
    func editSends() throws {
        let (f, fake, original) = try mailbox()
        let editor = """
            cp "$1" '\(f.dir.path("seen.txt"))'
            sed -i 's/^To: .*/To: erin@example.com/; s/^Subject: .*/Subject: Edited subject/' "$1"
            printf 'Written in the editor.\\n' >> "$1"
            """
        let result = try edited(f, "--edit --reply-to message:\(original) --quote", editor: editor)
        #expect(result.status == 0, "\(result)")
        let seen = try String(contentsOfFile: f.dir.path("seen.txt"), encoding: .utf8)
        #expect(seen.hasPrefix("To: Team List <team@example.org>\nCc: \nBcc: \nSubject: Re: Quarterly numbers\n\n"), "\(seen)")
        #expect(seen.contains("\n> Here are the numbers.\n"), "\(seen)")
        let line = try #require(result.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
            .first { $0.hasPrefix("message:") }, "\(result)")
        let stored = try parsed(f, fake, String(line.dropFirst("message:".count)))
        #expect(stored["To"] as? String == "erin@example.com" && stored["Subject"] as? String == "Edited subject", "\(stored)")
        let text = try #require(stored["text"] as? String)
        #expect(text.contains("> Here are the numbers.") && text.contains("Written in the editor."), "\(text)")
    }

    @Test("--edit: a file saved unchanged or emptied cancels (65) and nothing is queued; without a terminal, a usage error",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the editor a terminal"))
    func editCancels() throws {
        let (f, _, _) = try mailbox()
        let unchanged = try edited(f, "--edit --to bob@example.org", editor: "exit 0")
        #expect(unchanged.status == 65 && unchanged.stdout.contains("cancelled"), "\(unchanged)")
        let emptied = try edited(f, "--edit --to bob@example.org --subject Hi", editor: ": > \"$1\"")
        #expect(emptied.status == 65 && emptied.stdout.contains("cancelled"), "\(emptied)")
        let failed = try edited(f, "--edit --to bob@example.org", editor: "exit 3")
        #expect(failed.status == 65 && failed.stdout.contains("nothing sent"), "\(failed)")
        let noTerminal = try send(f, ["--edit", "--to", "bob@example.org"])
        #expect(noTerminal.status == 64 && noTerminal.stderr.contains("--edit needs a terminal"), "\(noTerminal)")
        let pending = try f.run("hd-pending", "--count")
        #expect(pending.stdout == "0\n", "\(pending)")
    }
}
