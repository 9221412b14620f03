// Where a message goes (issue 37 §1), end to end against the fake Gmail: a line break in an
// address argument turned it into a group and the message went to someone else; now every
// path that decides recipients (--to/--cc/--bcc, sendmail operands, -t and --raw headers,
// replies, --subject and -F) goes through the one strict rule, refusing what it cannot read
// one way with one line and 64 (65 for a message on standard input), with nothing queued and
// nothing sent. --dry-run shows the recipients as Gmail will read them, and generated lists
// (fixed seed, printed on failure) must reach Gmail exactly as written.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Where a message goes: recipients decided once, by one strict rule (issue 37 §1)", .serialized)
struct RecipientTests {
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "10", "--demo-span-days", "30"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        try fake.clearRequests()
        return (f, fake)
    }

    func send(_ f: CLIFixture, _ arguments: [String], stdin: String = "Body.\n") throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), arguments, environment: f.environment, stdin: stdin)
    }

    /// Nothing in the outbox, and no request that could have sent or saved anything.
    func expectNothingQueuedOrSent(_ f: CLIFixture, _ fake: FakeGmail, _ context: String,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let pending = try f.shell("sqlite3 \"$HUDSON_DB\" 'SELECT count(*) FROM outbox'")
        #expect(pending.stdout == "0\n", "\(context): \(pending)", sourceLocation: sourceLocation)
        let changing = try fake.requests().filter { $0.method == "POST" || $0.method == "PUT" }
        #expect(changing.isEmpty, "\(context): \(changing)", sourceLocation: sourceLocation)
    }

    /// One diagnostic line on standard error, naming the command (a usage error adds the
    /// usage line, as every command does for 64).
    func expectOneLine(_ result: CommandResult, status: Int32, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, "\(context): \(result)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        let diagnostic = lines.filter { !$0.hasPrefix("usage: ") && !$0.isEmpty }
        #expect(diagnostic.count == 1 && diagnostic[0].hasPrefix("hd-send: ") && result.stderr.hasSuffix("\n")
                && !result.stderr.contains("\r") && (status == 64 || lines.count == 2), "\(context): \(result)", sourceLocation: sourceLocation)
    }

    /// The To, Cc and Bcc of a stored message as Python's email package reads them:
    /// [[field, address], …] in order.
    func recipientsGmailGot(_ f: CLIFixture, _ fake: FakeGmail, _ id: String) throws -> [[String]] {
        let message = try #require(try fake.admin("GET", "message/\(id)") as? [String: Any])
        let raw = try #require(message["raw"] as? String)
        let path = f.dir.path("stored-\(id).b64")
        try raw.write(toFile: path, atomically: true, encoding: .utf8)
        let script = """
            import base64, email, email.policy, json, sys
            data = open(sys.argv[1]).read().strip()
            m = email.message_from_bytes(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)), policy=email.policy.default)
            print(json.dumps([[k, a.addr_spec] for k in ("To", "Cc", "Bcc") if m[k] is not None for a in m[k].addresses]))
            """
        try script.write(toFile: f.dir.path("recipients.py"), atomically: true, encoding: .utf8)
        let result = try f.shell("python3 '\(f.dir.path("recipients.py"))' '\(path)'")
        #expect(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String]])
    }

    @Test("a line break in --to, --cc, --bcc, an operand, --subject or -F is refused (64): one line, nothing queued or sent")
    func lineBreaksInArguments() throws {
        let (f, fake) = try synced()
        for option in ["--to", "--cc", "--bcc"] {
            for lineBreak in ["\r\n", "\n", "\r"] {
                let value = "ada@example.org\(lineBreak)Bcc: eve@example.net"
                let arguments = option == "--to" ? ["--to", value] : ["--to", "bob@example.org", option, value]
                let result = try send(f, arguments + ["--subject", "x"])
                expectOneLine(result, status: 64, "\(option) \(lineBreak.debugDescription)")
                #expect(result.stderr.contains(option) && result.stderr.contains("line break"), "\(result)")
            }
        }
        // Sendmail mode: the operand, the reported form.
        let message = "From: demo@hudson.test\nSubject: x\n\nbody\n"
        for operands in [["--", "ada@example.org", "bob@example.org\r\nBcc: eve@example.net"],
                         ["-i", "ada@example.org\nBcc: eve@example.net"], ["-t", "-i", "ada@example.org\rBcc: eve@example.net"]] {
            expectOneLine(try send(f, operands, stdin: message), status: 64, "\(operands)")
        }
        expectOneLine(try send(f, ["--to", "ada@example.org", "--subject", "x\r\nBcc: eve@example.net"]), status: 64, "--subject")
        expectOneLine(try send(f, ["--to", "ada@example.org", "--subject", "x\u{1B}[2Jy"]), status: 64, "--subject ESC")
        expectOneLine(try send(f, ["-F", "Demo\r\nBcc: eve@example.net", "-i", "ada@example.org"], stdin: "Subject: x\n\nbody\n"),
                      status: 64, "-F")
        try expectNothingQueuedOrSent(f, fake, "arguments")
    }

    @Test("what the strict rule refuses in an argument: a group, an empty element, <>, a route, a non-ASCII domain (64)")
    func refusedArguments() throws {
        let (f, fake) = try synced()
        for value in ["friends: ada@example.org, eve@example.net;", "Bcc: eve@example.net", "ada@example.org,,bob@example.org",
                      "ada@example.org,", "<>", " ", "<@relay.example:ada@example.org>", "ada@bücher.example", "ada@[127.0.0.1]",
                      "ceo@bank.example <eve@example.net>", "\"unterminated <ada@example.org>"] {
            let result = try send(f, ["--to", value, "--subject", "x"])
            expectOneLine(result, status: 64, value)
        }
        try expectNothingQueuedOrSent(f, fake, "refused arguments")
    }

    @Test("-f, -r and --account of hd-send and hd-drafts are read by the strict rule before any account is looked up (64)")
    func accountOptions() throws {
        let (f, fake) = try synced()
        let broken = "demo@hudson.test\r\nBcc: eve@example.net"
        for arguments in [["-f", broken, "--to", "ada@example.org", "--subject", "x"],
                          ["--from", "demo@hudson.test\nBcc: eve@example.net", "--to", "ada@example.org", "--subject", "x"],
                          ["-r", broken, "-i", "ada@example.org"], ["--account", broken, "--to", "ada@example.org", "--subject", "x"]] {
            let result = try send(f, arguments, stdin: "From: demo@hudson.test\nSubject: x\n\nbody\n")
            expectOneLine(result, status: 64, "\(arguments)")
            #expect(result.stderr.contains("contains a line break") && !result.stderr.contains("no such account"), "\(result)")
        }
        // Not one bare address: refused as such, not looked up.
        for value in ["Demo <demo@hudson.test>", "demo@hudson.test, eve@example.net", "friends: demo@hudson.test;"] {
            expectOneLine(try send(f, ["-f", value, "--to", "ada@example.org", "--subject", "x"]), status: 64, value)
        }
        let drafts = try CommandRunner.run(BuiltProducts.executable("hd-drafts"), ["list", "--account", broken], environment: f.environment)
        #expect(drafts.status == 64 && drafts.stderr.contains("contains a line break") && !drafts.stderr.contains("no such account"),
                "\(drafts)")
        // A well-formed address that is no account is still that (77).
        #expect(try send(f, ["-f", "nobody@example.org", "--to", "ada@example.org", "--subject", "x"]).status == 77)
        // The route's refusal reads as English.
        let route = try send(f, ["--to", "<@relay.example:ada@example.org>", "--subject", "x"])
        #expect(route.stderr.contains("unexpected source route"), "\(route)")
        try expectNothingQueuedOrSent(f, fake, "account options")
    }

    @Test("a message on standard input whose header reads two ways is refused (65): group, second To, NUL, stray line")
    func refusedStandardInput() throws {
        let (f, fake) = try synced()
        let cases: [(String, [String])] = [
            ("From: demo@hudson.test\nTo: ada@example.org, friends: eve@example.net;\nSubject: g\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org\nTo: eve@example.net\nSubject: two\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org\nSubject: n\0ul\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org\nthis is no field\nBcc: eve@example.net\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org\n \nBcc: eve@example.net\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo : eve@example.net\nCc: ada@example.org\n\nx\n", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org,,bob@example.org\n\nx\n", ["--raw"]),
            ("From: demo@hudson.test\nTo: <>\n\nx\n", ["--raw"]),
            ("From: demo@hudson.test\nCc: ada@example.org\nBcc: a@example.org\nbcc: eve@example.net\n\nx\n", ["-i", "ada@example.org"]),
            ("From: demo@hudson.test\nTo: ada@example.org\nMessage-ID: <a@hudson.test>\nMessage-Id: <b@hudson.test>\n\nx\n", ["--raw"]),
        ]
        for (message, arguments) in cases {
            let result = try send(f, arguments, stdin: message)
            expectOneLine(result, status: 65, message.debugDescription)
        }
        try expectNothingQueuedOrSent(f, fake, "standard input")
    }

    @Test("a CR not followed by LF in the header of -t or --raw input is refused (65), never read as a new field; CRLF is sent")
    func bareCRInStandardInput() throws {
        let (f, fake) = try synced()
        for (message, arguments) in [
            ("From: demo@hudson.test\nTo: ada@example.org\nSubject: hi\rBcc: eve@example.net\n\nb\n", ["-t"]),
            ("From: demo@hudson.test\r\nTo: ada@example.org\r\nSubject: hi\rBcc: eve@example.net\r\n\r\nb\r\n", ["--raw"]),
            ("From: demo@hudson.test\rTo: ada@example.org\rBcc: eve@example.net\r\rb\r", ["-t"]),
            ("From: demo@hudson.test\nTo: ada@example.org\r\rBcc: eve@example.net\n\nb\n", ["-i", "ada@example.org"]),
            ("From: demo@hudson.test\nTo: ada@example.org\nSubject: a\0b\n\nb\n", ["--raw"]),
        ] {
            for dryRun in [[], ["--dry-run"]] {
                let result = try send(f, dryRun + arguments, stdin: message)
                expectOneLine(result, status: 65, message.debugDescription)
                #expect(!result.stdout.contains("eve@"), "\(message.debugDescription): \(result)")
            }
        }
        try expectNothingQueuedOrSent(f, fake, "bare CR")
        // CRLF throughout, and a bare CR in the body (the header is what is judged): sent.
        let sent = try send(f, ["-t"], stdin: "From: demo@hudson.test\r\nTo: ada@example.org\r\nSubject: crlf\r\n"
                                + "Message-ID: <crlf.1@hudson.test>\r\n\r\nline\rmore\r\n")
        #expect(sent.status == 0 && sent.stderr.isEmpty, "\(sent)")
        let id = try #require(((try fake.admin("GET", "state") as? [String: Any])?["messages"] as? [[String: Any]] ?? [])
            .first { $0["messageId"] as? String == "<crlf.1@hudson.test>" }?["id"] as? String)
        #expect(try recipientsGmailGot(f, fake, id) == [["To", "ada@example.org"]])
    }

    @Test("an empty group (undisclosed-recipients:;) names nobody and is sent as written; a Bcc added by an operand merges")
    func emptyGroupAndMergedBcc() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\nTo: undisclosed-recipients:;\nBcc: hidden@example.org\nSubject: u\nMessage-ID: <u.1@hudson.test>\n\nx\n"
        let sent = try send(f, ["-t"], stdin: message)
        #expect(sent.status == 0 && sent.stderr.isEmpty, "\(sent)")
        let state = try fake.admin("GET", "state") as? [String: Any]
        let id = try #require((state?["messages"] as? [[String: Any]] ?? []).first { $0["messageId"] as? String == "<u.1@hudson.test>" }?["id"] as? String)
        #expect(try recipientsGmailGot(f, fake, id) == [["Bcc", "hidden@example.org"]])
        let merged = message.replacingOccurrences(of: "<u.1@", with: "<u.2@")
        #expect(try send(f, ["-t", "extra@example.net"], stdin: merged).status == 0)
        let second = try #require(((try fake.admin("GET", "state") as? [String: Any])?["messages"] as? [[String: Any]] ?? [])
            .first { $0["messageId"] as? String == "<u.2@hudson.test>" }?["id"] as? String)
        #expect(try recipientsGmailGot(f, fake, second) == [["Bcc", "hidden@example.org"], ["Bcc", "extra@example.net"]])
    }

    @Test("--dry-run prints From, To, Cc and Bcc as Gmail will read them, one address a line; nothing is queued or sent")
    func dryRun() throws {
        let (f, fake) = try synced()
        let result = try send(f, ["--dry-run", "--to", "Ada Lovelace <ada@example.org>, \"Doe, John\" <john@example.net>",
                                  "--cc", "=?UTF-8?Q?Gr=C3=BC=C3=9Fe?= <g@example.com>", "--bcc", "eve@example.net (Eve)",
                                  "--subject", "Plan"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        // Each address as the header holds it: the quoted name quoted, the non-ASCII one encoded.
        #expect(result.lines == ["From: demo@hudson.test", "To: Ada Lovelace <ada@example.org>", "To: \"Doe, John\" <john@example.net>",
                                 "Cc: =?UTF-8?B?R3LDvMOfZQ==?= <g@example.com>", "Bcc: Eve <eve@example.net>", "Subject: Plan"]
                + result.lines.suffix(1) && result.lines.last?.hasPrefix("Size: ") == true, "\(result)")
        let raw = try send(f, ["--dry-run", "-t"], stdin: "From: demo@hudson.test\nTo: a@example.org\nSubject: s\n\nx\n")
        #expect(raw.status == 0 && raw.lines.contains("To: a@example.org") && raw.lines.first == "From: demo@hudson.test", "\(raw)")
        try expectNothingQueuedOrSent(f, fake, "--dry-run")
        #expect(try fake.requests().isEmpty)
    }

    @Test("--reply-all and --reply-to take recipients from the original only when its fields read one way; else 65, naming the field")
    func hostileReplyHeaders() throws {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "5", "--demo-span-days", "30"])
        let hostile = "From: Mallory <mallory@evil.example>\r\nTo: demo@hudson.test\r\nCc: demo@hudson.test, Bcc: eve@evil.example\r\n"
            + "Subject: Hello\r\nMessage-ID: <hostile.1@evil.example>\r\n\r\nhi\r\n"
        let tricky = "From: \"ceo@bank.example\" <thief@evil.example>\r\nTo: demo@hudson.test\r\nReply-To: friends: a@evil.example, b@evil.example;\r\n"
            + "Subject: Invoice\r\nMessage-ID: <tricky.1@evil.example>\r\n\r\npay\r\n"
        let masked = "From: \"ceo@bank.example\" <thief@evil.example>\r\nTo: demo@hudson.test\r\nSubject: Invoice 2\r\n"
            + "Message-ID: <masked.1@evil.example>\r\n\r\npay\r\n"
        var ids: [String] = []
        for raw in [hostile, tricky, masked] {
            let inserted = try #require(try fake.admin("POST", "insert", ["raw_b64": Data(raw.utf8).base64EncodedString()]) as? [String: Any])
            ids.append(try #require(inserted["id"] as? String))
        }
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        try fake.clearRequests()
        let all = try send(f, ["--reply-to", "message:\(ids[0])", "--reply-all"])
        expectOneLine(all, status: 65, "reply-all")
        #expect(all.stderr.contains("Cc") && all.stderr.contains("--to"), "\(all)")
        let reply = try send(f, ["--reply-to", "message:\(ids[1])"])
        expectOneLine(reply, status: 65, "reply to a group Reply-To")
        #expect(reply.stderr.contains("Reply-To"), "\(reply)")
        try expectNothingQueuedOrSent(f, fake, "hostile replies")
        // A display name that looks like an address: the reply goes to the real address, and says so.
        let shown = try send(f, ["--reply-to", "message:\(ids[2])", "--dry-run"])
        #expect(shown.status == 0 && shown.lines.contains("To: \"ceo@bank.example\" <thief@evil.example>"), "\(shown)")
        // The user's own recipients replace the unreadable ones.
        let explicit = try send(f, ["--reply-to", "message:\(ids[1])", "--to", "ada@example.org", "--dry-run"])
        #expect(explicit.status == 0 && explicit.lines.contains("To: ada@example.org"), "\(explicit)")
    }

    /// The unfolded value of the header field `name` of a message Gmail stores.
    func headerGmailGot(_ fake: FakeGmail, _ id: String, _ name: String) throws -> String? {
        let message = try #require(try fake.admin("GET", "message/\(id)") as? [String: Any])
        var text = try #require(message["raw"] as? String).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        let raw = String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self)
        let header = raw.components(separatedBy: "\r\n\r\n")[0].replacingOccurrences(of: "\r\n ", with: " ")
            .replacingOccurrences(of: "\r\n\t", with: "\t")
        return header.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1).drop { $0 == " " }) }
    }

    @Test("generated names (commas, quotes, brackets, encoded words, bidi controls): --dry-run prints each address as the message holds it")
    func dryRunShowsTheHeaderForm() throws {
        let (f, fake) = try synced()
        var random = Seeded(state: Seeded.seed)
        let pieces = ["Eve, ", "<eve@example.net>", "\"", "=?UTF-8?Q?Eve?=", "\u{202E}", "Zoë", "\\", "plain", " ", "(x)", "@", ";:"]
        for round in 0..<12 {
            var written: [String] = []
            for index in 0..<Int.random(in: 1...3, using: &random) {
                var name = ""
                for _ in 0..<Int.random(in: 1...4, using: &random) { name += pieces.randomElement(using: &random)! }
                let quoted = name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                written.append("\"\(quoted)\" <r\(round)x\(index)@example.org>")
            }
            let arguments = ["--to", written.joined(separator: ", "), "--subject", "names \(round)"]
            let shown = try send(f, ["--dry-run"] + arguments)
            #expect(shown.status == 0 && !shown.stdout.contains("\u{202E}"), "seed \(Seeded.seed) round \(round): \(shown)")
            let toLines = shown.lines.filter { $0.hasPrefix("To: ") }.map { String($0.dropFirst(4)) }
            #expect(toLines.count == written.count, "seed \(Seeded.seed) round \(round): \(shown)")
            // Exactly what Gmail gets: the sent message's To, address by address.
            let sent = try send(f, arguments)
            let id = try #require(sent.lines.first { $0.hasPrefix("message:") }, "\(sent)").dropFirst("message:".count)
            #expect(try headerGmailGot(fake, String(id), "To") == toLines.joined(separator: ", "),
                    "seed \(Seeded.seed) round \(round): \(shown)")
        }
        // The examples of the report: never printed so as to read as another recipient.
        let tricky = try send(f, ["--dry-run", "--to", "\"Eve, <eve@example.net>\" <ada@example.org>", "--subject", "x"])
        #expect(tricky.lines.contains("To: \"Eve, <eve@example.net>\" <ada@example.org>"), "\(tricky)")
        let encoded = try send(f, ["--dry-run", "--to", "\"=?UTF-8?Q?Eve?=\" <ada@example.org>", "--subject", "x"])
        #expect(!encoded.lines.contains("To: =?UTF-8?Q?Eve?= <ada@example.org>") && encoded.lines.contains { $0.hasPrefix("To: =?UTF-8?") },
                "\(encoded)")
    }

    // MARK: - Generated lists

    /// SplitMix64, seeded: HUDSON_TEST_SEED, else a fixed seed.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        static var seed: UInt64 { ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 3_720_211 }
    }

    /// A list as written, with the addresses it names.
    func generatedList(_ random: inout Seeded) -> (written: String, addresses: [String]) {
        let names = ["", "Ada Lovelace", "\"Doe, John\"", "\"a;b:c <d@e>\"", "Zoë Ünlü", "=?UTF-8?Q?Gr=C3=BC=C3=9Fe?=", "J. R. Smith",
                     "\"x\\\"y\""]
        let locals = ["ada", "bob.smith", "c+tag", "d_e", "o'brien", "x!#$%&*=?^`{|}~"]
        let domains = ["example.org", "mail.example.net", "xn--bcher-kva.example"]
        var parts: [String] = []
        var addresses: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let address = "\(locals.randomElement(using: &random)!)\(Int.random(in: 0...99, using: &random))@\(domains.randomElement(using: &random)!)"
            let name = names.randomElement(using: &random)!
            parts.append(name.isEmpty ? (Bool.random(using: &random) ? address : "<\(address)>") : "\(name) <\(address)>")
            addresses.append(address)
        }
        return (parts.joined(separator: [",", ", ", " , "].randomElement(using: &random)!), addresses)
    }

    @Test("generated lists: --dry-run shows exactly the addresses written, Gmail gets exactly them, and a break anywhere is refused")
    func generatedLists() throws {
        let (f, fake) = try synced()
        let seed = Seeded.seed
        var random = Seeded(state: seed)
        for round in 0..<24 {
            let to = generatedList(&random)
            let cc = generatedList(&random)
            let arguments = ["--to", to.written, "--cc", cc.written, "--subject", "round \(round)"]
            let shown = try send(f, ["--dry-run"] + arguments)
            #expect(shown.status == 0, "seed \(seed) round \(round): \(shown)")
            let listed = shown.lines.filter { $0.hasPrefix("To: ") || $0.hasPrefix("Cc: ") }.map { line -> String in
                let field = String(line.prefix(2))
                let address = line.hasSuffix(">") ? String(line[line.index(after: line.lastIndex(of: "<")!)...].dropLast()) : String(line.dropFirst(4))
                return "\(field) \(address)"
            }
            #expect(listed == to.addresses.map { "To \($0)" } + cc.addresses.map { "Cc \($0)" }, "seed \(seed) round \(round): \(shown)")
            if round % 6 == 0 {
                let sent = try send(f, arguments)
                let id = try #require(sent.lines.first { $0.hasPrefix("message:") }, "seed \(seed): \(sent)").dropFirst("message:".count)
                #expect(try recipientsGmailGot(f, fake, String(id)) == to.addresses.map { ["To", $0] } + cc.addresses.map { ["Cc", $0] },
                        "seed \(seed) round \(round)")
            }
            // The same list with a line break (or a stray header) put anywhere: refused.
            var scalars = Array(to.written.unicodeScalars)
            let at = Int.random(in: 0...scalars.count, using: &random)
            scalars.insert(contentsOf: ["\r\n", "\n", "\r"].randomElement(using: &random)!.unicodeScalars, at: at)
            let broken = String(String.UnicodeScalarView(scalars)) + "\nBcc: eve@example.net"
            let refused = try send(f, ["--to", broken, "--subject", "broken"])
            expectOneLine(refused, status: 64, "seed \(seed) round \(round): \(broken.debugDescription)")
        }
        let sentAnything = try fake.requests().filter { $0.method == "POST" }.count
        #expect(sentAnything == 4, "seed \(seed)")
    }
}
