// Generated input for every surface of hd-send and hd-drafts (issue 37, "Done when"):
// arguments, standard input (sendmail mode, -t, --raw), files (--body-file, --attach: FIFO,
// directory, missing, huge, symlinks, odd names), the environment ($EDITOR returning junk)
// and Gmail's answers to sends and drafts (invalid JSON, wrong shapes and types, oversized).
// Each run is bounded in time, with a fixed seed printed on failure (HUDSON_TEST_SEED picks
// another), and must end with a documented status and at most one diagnostic line, send
// nothing that was not asked for, and lose nothing without a word.
import Foundation
import Glibc
import HudsonTestSupport
import Testing

@Suite("hd-send and hd-drafts under generated input: arguments, standard input, files, editor, server answers", .serialized)
struct SendInputSurfaceTests {
    static let documented: Set<Int32> = [0, 1, 64, 65, 75, 77, 78]

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

    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "10", "--demo-span-days", "30"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        return (f, fake)
    }

    /// Runs a command with `stdin` as bytes, at most `timeout` seconds.
    func run(_ f: CLIFixture, _ command: String, _ arguments: [String], stdin: [UInt8] = Array("Body.\n".utf8),
             environment: [String: String] = [:], timeout: TimeInterval = 30) throws -> CommandResult {
        let input = f.dir.path("stdin-\(UUID().uuidString)")
        try Data(stdin).write(to: URL(fileURLWithPath: input))
        defer { unlink(input) }
        // The shell only connects the file: the arguments go through "$@" untouched.
        return try CommandRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \"$0\" \"$@\" < '\(input)'",
                                                                       BuiltProducts.executable(command).path] + arguments,
                                     environment: f.environment.merging(environment) { $1 }, timeout: timeout)
    }

    /// A documented status, and at most one diagnostic line (a usage error adds its usage line).
    func expectWellBehaved(_ result: CommandResult, _ context: @autoclosure () -> String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Self.documented.contains(result.status), "\(context()): \(result)", sourceLocation: sourceLocation)
        let diagnostics = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("usage: ") }
        #expect(diagnostics.count <= 1 && (result.status == 0 || diagnostics.count == 1), "\(context()): \(result)",
                sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\r"), "\(context()): \(result)",
                sourceLocation: sourceLocation)
    }

    /// The outbox entries: (recipients, state).
    func outbox(_ f: CLIFixture) throws -> [(recipients: String, state: String)] {
        let result = try f.shell("sqlite3 -separator '\t' \"$HUDSON_DB\" 'SELECT recipients, state FROM outbox ORDER BY id'")
        return result.stdout.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            return (String(fields.first ?? ""), String(fields.last ?? ""))
        }
    }

    func integrityOK(_ f: CLIFixture) throws -> Bool {
        try f.shell("sqlite3 \"$HUDSON_DB\" 'PRAGMA integrity_check'").stdout == "ok\n"
    }

    // MARK: - Arguments

    @Test("generated command lines: documented status, one line, and only the recipients asked for are queued")
    func generatedArguments() throws {
        let (f, fake) = try synced()
        let seed = Seeded.seed
        var random = Seeded(state: seed)
        let directory = f.dir.path("a-directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fifo = f.dir.path("a-fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let file = f.dir.path("note.txt")
        try "attached\n".write(toFile: file, atomically: true, encoding: .utf8)
        let options = ["--to", "--cc", "--bcc", "--subject", "--body-file", "--attach", "--raw", "--reply-to", "--reply-all",
                       "--forward", "--forward-as-attachment", "--quote", "--edit", "--from", "-f", "--delay", "--no-send",
                       "--dry-run", "--draft", "--update-draft", "-t", "-i", "-oi", "-F", "-b", "-bs", "--", "--account", "--db",
                       "--bogus", "-", "-x"]
        let values = ["ada@example.org", "Ada <ada@example.org>", "a@b", "", " ", "ada@example.org\nBcc: eve@example.net",
                      "\u{1B}[2J", "\u{202E}txt.exe", String(repeating: "x", count: 100_000), "-1", "99999999999999999999",
                      "1e3", "message:", "message:zz", "thread:0", "draft:..", "draft:.", "draft:r-1", "outbox:-1", "outbox:1",
                      "/nonexistent", directory, fifo, file, "/dev/zero", "m", "s", "demo@hudson.test", "nobody@example.org",
                      "ü@example.org", "\"a,b\" <c@example.org>", "g: a@example.org;", "%s%n", "../../etc/passwd"]
        for round in 0..<90 {
            var arguments: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                if Bool.random(using: &random) { arguments.append(options.randomElement(using: &random)!) }
                arguments.append(values.randomElement(using: &random)!)
            }
            let before = try outbox(f).count
            let result = try run(f, "hd-send", arguments, timeout: 20)
            let context = "seed \(seed) round \(round): \(arguments.map { $0.prefix(60) })"
            expectWellBehaved(result, context)
            // Nothing sent that was not asked for: whatever was queued names only recipients
            // the command line gave.
            for entry in try outbox(f).dropFirst(before) {
                for recipient in entry.recipients.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    #expect(arguments.contains { $0.lowercased().contains(recipient.lowercased()) }, "\(context): queued \(recipient)")
                }
            }
        }
        #expect(try integrityOK(f))
        _ = fake
    }

    @Test("generated hd-drafts command lines: documented status and one line")
    func generatedDraftArguments() throws {
        let (f, _) = try synced()
        let seed = Seeded.seed
        var random = Seeded(state: seed &+ 7)
        let words = ["list", "show", "send", "delete", "--json", "--ids", "-0", "--account", "demo@hudson.test", "nobody@example.org",
                     "draft:", "draft:r-1", "draft:\u{1B}]0;x\u{7}", "draft:a/b", "draft:%2e%2e", String(repeating: "d", count: 50_000),
                     "message:1", "--bogus", "-", "--", "draft:r-\(UInt64.max)"]
        for round in 0..<50 {
            let arguments = (0..<Int.random(in: 0...4, using: &random)).map { _ in words.randomElement(using: &random)! }
            let result = try run(f, "hd-drafts", arguments, timeout: 20)
            expectWellBehaved(result, "seed \(seed) round \(round): \(arguments.map { $0.prefix(60) })")
        }
        #expect(try integrityOK(f))
    }

    // MARK: - Standard input

    /// A message mutated at random: bytes inserted (NUL, CR, LF, ESC, 0xFF, specials),
    /// headers repeated or dropped, the blank line removed, huge or many header lines.
    func mutatedMessage(_ random: inout Seeded, index: Int) -> [UInt8] {
        var lines = ["From: demo@hudson.test", "To: Bob <bob@example.org>", "Cc: carol@example.net",
                     "Subject: generated \(index)", "Message-ID: <gen.\(index)@hudson.test>", "", "Body line.", "."]
        var bytes: [UInt8] = []
        switch Int.random(in: 0..<8, using: &random) {
        case 0: lines.insert(lines[Int.random(in: 1...2, using: &random)], at: 3)
        case 1: lines.remove(at: 5)
        case 2: lines.insert("X-Long: " + String(repeating: "y", count: 200_000), at: 2)
        case 3: lines.insert(contentsOf: (0..<5000).map { "X-Many-\($0): z" }, at: 2)
        case 4: lines[1] = "To: " + ["friends: eve@example.net;", "bob@example.org,,eve@example.net", "<>", "undisclosed-recipients:;",
                                     "bob@example.org (Bob", "=?UTF-8?Q?a=0D=0AB?= <bob@example.org>"].randomElement(using: &random)!
        case 5: lines.insert(" continuation first", at: 0)
        case 6: lines = []
        default: break
        }
        bytes = Array(lines.joined(separator: ["\n", "\r\n", "\r"].randomElement(using: &random)!).utf8)
        for _ in 0..<Int.random(in: 0...3, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0...bytes.count, using: &random)
            bytes.insert(contentsOf: [[0], [13], [10], [0x1B], [0xFF, 0xFE], Array(":;,<>\"".utf8), [10, 10]].randomElement(using: &random)!, at: at)
        }
        return bytes
    }

    @Test("generated messages on standard input (sendmail operands, -t, --raw): documented status, one line, no stranger reached")
    func generatedStandardInput() throws {
        let (f, fake) = try synced()
        let seed = Seeded.seed
        var random = Seeded(state: seed &+ 11)
        let modes: [[String]] = [["-t"], ["--raw"], ["-i", "bob@example.org"], ["-t", "-i", "dan@example.com"], ["--raw", "--no-send"]]
        for round in 0..<60 {
            let message = mutatedMessage(&random, index: round)
            let arguments = modes.randomElement(using: &random)!
            let before = try outbox(f).count
            let result = try run(f, "hd-send", arguments, stdin: message, timeout: 20)
            let context = "seed \(seed) round \(round): \(arguments) \(String(decoding: message.prefix(300), as: UTF8.self).debugDescription)"
            expectWellBehaved(result, context)
            let allowed = ["bob@example.org", "carol@example.net", "dan@example.com", "eve@example.net"]
            for entry in try outbox(f).dropFirst(before) {
                for recipient in entry.recipients.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
                    where !recipient.isEmpty {
                    #expect(allowed.contains(recipient) && String(decoding: message, as: UTF8.self).lowercased().contains(recipient)
                            || arguments.contains(recipient), "\(context): queued \(recipient)")
                }
            }
        }
        // Every message Gmail got was sent once.
        let state = try fake.admin("GET", "state") as? [String: Any]
        let ids = (state?["messages"] as? [[String: Any]] ?? []).compactMap { $0["messageId"] as? String }.filter { $0.hasPrefix("<gen.") }
        #expect(Set(ids).count == ids.count, "seed \(seed): \(ids)")
        #expect(try integrityOK(f))
    }

    // MARK: - Files

    @Test("--body-file and --attach: FIFO, directory, device, missing, dangling or looping symlink, huge: refused at once, one line")
    func files() throws {
        let (f, fake) = try synced()
        let fifo = f.dir.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let directory = f.dir.path("dir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let huge = f.dir.path("huge.bin")
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 40 << 20) == 0)  // sparse: 40 MB read as zeros
        let dangling = f.dir.path("dangling")
        #expect(symlink(f.dir.path("nothing-here"), dangling) == 0)
        let loop = f.dir.path("loop")
        #expect(symlink(loop, loop) == 0)
        let cases: [(String, Int32)] = [(fifo, 64), (directory, 64), ("/dev/zero", 64), (f.dir.path("missing"), 64), (dangling, 64),
                                        (loop, 64), (huge, 65)]
        for option in ["--body-file", "--attach"] {
            for (path, status) in cases {
                let result = try run(f, "hd-send", ["--to", "bob@example.org", "--subject", "f", option, path], timeout: 20)
                expectWellBehaved(result, "\(option) \(path)")
                #expect(result.status == status, "\(option) \(path): \(result)")
            }
        }
        #expect(try outbox(f).isEmpty)
        try fake.clearRequests()
        // A symlink to a regular file is that file; a name with a line break is sent encoded.
        let real = f.dir.path("real.txt")
        try "Body from a file.\n".write(toFile: real, atomically: true, encoding: .utf8)
        let link = f.dir.path("link.txt")
        #expect(symlink(real, link) == 0)
        let odd = f.dir.path("odd\nname\u{1B}.txt")
        try "attached\n".write(toFile: odd, atomically: true, encoding: .utf8)
        let sent = try run(f, "hd-send", ["--to", "bob@example.org", "--subject", "links", "--body-file", link, "--attach", odd])
        #expect(sent.status == 0 && sent.lines.count == 2, "\(sent)")
        #expect(try outbox(f).count == 1)
    }

    @Test("an unreadable file: refused with one line (not as root, who reads everything)",
          .enabled(if: getuid() != 0, "skipped as root: permissions do not stop root"))
    func unreadableFile() throws {
        let (f, _) = try synced()
        let path = f.dir.path("secret.txt")
        try "x\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0)
        let result = try run(f, "hd-send", ["--to", "bob@example.org", "--subject", "u", "--attach", path])
        expectWellBehaved(result, "unreadable")
        #expect(result.status == 64 && result.stderr.contains("permission denied"), "\(result)")
    }

    @Test("standard input larger than Gmail takes: refused (65) without reading it all into memory")
    func hugeStandardInput() throws {
        let (f, _) = try synced()
        let result = try f.shell("head -c 60000000 /dev/zero 2>/dev/null | \"$HD_SEND\" --to bob@example.org --subject big".replacingOccurrences(
            of: "$HD_SEND", with: BuiltProducts.executable("hd-send").path))
        expectWellBehaved(result, "huge stdin")
        #expect(result.status == 65 && result.stderr.contains("larger than"), "\(result)")
        #expect(try outbox(f).isEmpty)
    }

    // MARK: - The editor

    @Test("$EDITOR returning junk: binary, NUL, a group, a FIFO or a directory in place of the file, nothing, a huge file, failure",
          .enabled(if: ManPages.tool("script") != nil, "skipped: script(1) from util-linux gives the editor a terminal"))
    func editorJunk() throws {
        let (f, fake) = try synced()
        let editors: [(String, String)] = [
            ("binary", "printf '\\377\\376\\000junk' > \"$1\""),
            ("NUL in the subject", "printf 'To: bob@example.org\\nSubject: a\\000b\\n\\nbody\\n' > \"$1\""),
            ("a group", "printf 'To: friends: eve@example.net;\\nSubject: s\\n\\nbody\\n' > \"$1\""),
            ("an unknown header", "printf 'To: bob@example.org\\nX-Evil: 1\\n\\nbody\\n' > \"$1\""),
            ("a FIFO", "rm -f \"$1\"; mkfifo \"$1\""),
            ("a directory", "rm -f \"$1\"; mkdir \"$1\""),
            ("deleted", "rm -f \"$1\""),
            ("huge", "head -c 40000000 /dev/zero | tr '\\0' x >> \"$1\""),
            ("failing", "exit 3"),
            ("not a command", "exec /nonexistent/editor"),
        ]
        for (name, editor) in editors {
            let path = f.dir.path("editor.sh")
            try ("#!/bin/sh\n" + editor + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
            let command = "VISUAL= EDITOR='\(path)' timeout 30 script -qec '\(BuiltProducts.executable("hd-send").path) --edit --to bob@example.org --subject s' /dev/null </dev/null"
            let result = try f.shell(command)
            // script(1) carries the command's status and its output on the terminal.
            #expect(result.status == 65, "\(name): \(result)")
            let lines = result.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n").filter { $0.hasPrefix("hd-send: ") }
            #expect(lines.count == 1 && lines[0].contains("nothing sent"), "\(name): \(result)")
        }
        #expect(try outbox(f).isEmpty)
        #expect(try fake.requests().filter { $0.path.contains("/messages/send") || $0.path.contains("/drafts") }.isEmpty)
    }

    // MARK: - Gmail's answers

    @Test("Gmail answering sends and drafts with invalid JSON, wrong shapes or types, or too much: queued or refused in one line, then delivered once")
    func serverAnswers() throws {
        let (f, fake) = try synced()
        let modes: [[String: Any]] = [["mode": "invalid_json"], ["mode": "wrong_shape"], ["mode": "wrong_type"],
                                      ["mode": "oversized", "size": 8 << 20], ["mode": "truncate"]]
        var round = 0
        for mode in modes {
            for (method, path, arguments) in [("POST", "/messages/send$", ["--to", "bob@example.org"]),
                                              ("POST", "/drafts$", ["--draft", "--to", "bob@example.org"])] {
                round += 1
                var rule = mode
                rule["method"] = method
                rule["path"] = path
                try fake.faults([rule])
                let subject = "answer \(round)"
                let result = try run(f, "hd-send", arguments + ["--subject", subject], timeout: 40)
                expectWellBehaved(result, "\(rule)")
                #expect(result.status == 0, "\(rule): \(result)")
                try fake.admin("DELETE", "faults")
                #expect(try f.shell("sqlite3 \"$HUDSON_DB\" 'UPDATE outbox SET next_attempt_at = NULL'").status == 0)
                let sync = try f.run("hd-sync")
                #expect(sync.status == 0, "\(rule): \(sync)")
                let state = try fake.admin("GET", "state") as? [String: Any]
                let copies = try (state?["messages"] as? [[String: Any]] ?? []).filter { message in
                    let raw = try #require(try fake.admin("GET", "message/\(message["id"] as? String ?? "")") as? [String: Any])["raw"] as? String ?? ""
                    var text = raw.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                    while text.count % 4 != 0 { text += "=" }
                    return String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self).contains("Subject: \(subject)\r\n")
                }
                #expect(copies.count == 1, "\(rule): \(copies.count) copies")
            }
        }
        // hd-drafts send reads the draft first: a broken answer there queues nothing.
        let saved = try run(f, "hd-send", ["--draft", "--to", "bob@example.org", "--subject", "to send"])
        let reference = try #require(saved.lines.last, "\(saved)")
        let before = try outbox(f).count
        for mode in modes {
            var rule = mode
            rule["method"] = "GET"
            rule["path"] = "/drafts/[^/]+$"
            rule["times"] = -1
            try fake.faults([rule])
            let result = try run(f, "hd-drafts", ["send", reference], timeout: 60)
            expectWellBehaved(result, "hd-drafts send, \(rule)")
            #expect(result.status == 75 || result.status == 65, "\(rule): \(result)")
            #expect(try outbox(f).count == before, "\(rule): nothing queued")
        }
        try fake.admin("DELETE", "faults")
        #expect(try integrityOK(f))
    }
}
