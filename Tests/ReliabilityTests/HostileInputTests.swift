// Hostile input, the second round (issue 18): what the user, the mail and the store path
// give Hudson must never drive the terminal, mislead the reader or change a file Hudson
// then refuses. Each test feeds a class of input, generated here (never a committed blob),
// through the built commands against the fake Gmail, on a pipe and, where the output
// differs, on a real terminal (a pty made by script(1)). docs/reliability.md, "Hostile
// input", says what each command prints and why.
import Foundation
import HudsonTestSupport
import SQLite
import Testing

/// The hostile pieces every class is fed: an OSC 52 clipboard write, a screen clear, a
/// colour, BEL, C1 CSI and NEL, bidi override and isolates, a NUL, DEL.
enum Hostile {
    static let controls = "\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J\u{1B}[31mRED\u{9B}1m\u{85}\u{7F}\u{07}"
    static let bidi = "\u{202E}fdp.exe\u{2066}iso\u{2069}\u{200F}"
    static let everything = controls + bidi + "\u{0}"

    static func encodedWord(_ text: String) -> String {
        "=?utf-8?b?" + Data(text.utf8).base64EncodedString() + "?="
    }

    /// CRLF mail from LF text.
    static func mail(_ text: String) -> [UInt8] { Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8) }
}

extension Rig {
    /// Runs a built command on a terminal: a pty of `columns` columns made by script(1),
    /// standard output and standard error both on it (as a user sees them), without colour
    /// so that any ESC in the output came from the input.
    func runOnTerminal(_ command: String, _ arguments: [String], columns: Int = 120) throws -> CommandResult {
        let quoted = ([BuiltProducts.executable(command).path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var result = try run("/usr/bin/script", ["-qec", "stty cols \(columns) rows 50; exec " + quoted.joined(separator: " "), "/dev/null"],
                             environment: ["NO_COLOR": "1", "TERM": "xterm"])
        result.stdout = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        return result
    }

    /// Inserts raw mail into the fake and returns its Gmail id.
    @discardableResult
    func insert(_ fake: FakeGmail, _ bytes: [UInt8], labels: [String] = ["INBOX", "UNREAD"]) throws -> String {
        let answer = try fake.admin("POST", "insert", ["raw_b64": Data(bytes).base64EncodedString(), "labelIds": labels])
        return try #require((answer as? [String: Any])?["id"] as? String)
    }
}

/// Terminal cells of a line, as a terminal counts them (wide East Asian and emoji two,
/// combining and zero-width none): an independent count, not Hudson's own.
func terminalCells(_ line: String) -> Int {
    line.unicodeScalars.reduce(0) { total, scalar in
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return total
        default: break
        }
        if scalar.value == 0x200B { return total }
        if properties.isEmojiPresentation { return total + 2 }
        let v = scalar.value
        let wide = (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
        return total + (wide ? 2 : 1)
    }
}

@Suite("Hostile input: arguments, mail and files never drive the terminal, mislead, or get changed", .serialized)
struct HostileInputTests {
    func unsafe(_ text: String) -> [Unicode.Scalar] { text.unicodeScalars.filter(isUnsafeForTerminal) }

    // MARK: - Error messages

    @Test("every diagnostic quotes what it was given scrubbed and cut short: references, action ids, labels, queries, NDJSON")
    func diagnosticsAreScrubbed() throws {
        let rig = Rig()
        try rig.startFake(pinnedMailbox(count: 5))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let real = try rig.run("hd-search", "--ids", "-n", "1", "in:anywhere").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let hostile = "thread:" + Hostile.controls + Hostile.bidi
        let huge = "thread:" + String(repeating: "\u{1B}[2J", count: 250_000)  // a 1 MB line
        let ndjson = #"{"id":"thread:\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u202e"}"#
        let cases: [(String, [String], String?, [Int32])] = [
            ("hd-mark", ["--no-flush", "archive", hostile], nil, [2]),
            ("hd-mark", ["--no-flush", "archive"], hostile + "\n" + ndjson + "\n", [2]),
            ("hd-mark", ["--no-flush", "archive"], huge + "\n", [2]),
            ("hd-mark", ["--no-flush", "archive", "-"], "thread:a\u{0}\u{1B}[2Jb\n", [2]),
            ("hd-mark", ["--no-flush", "+" + Hostile.everything, real], nil, [64]),
            ("hd-mark", ["--no-flush", "+" + String(repeating: "\u{202E}L", count: 20_000), real], nil, [64]),
            ("hd-show", ["--no-fetch", hostile], nil, [2]),
            ("hd-show", ["--no-fetch"], huge + "\n", [2]),
            ("hd-undo", ["action:" + Hostile.everything], nil, [64, 65]),
            ("hd-undo", ["action:" + String(repeating: "\u{9B}2J", count: 20_000)], nil, [64, 65]),
            ("hd-search", ["label:" + Hostile.everything], nil, [0, 1, 65]),
            ("hd-search", ["from:(" + Hostile.everything], nil, [65]),
            ("hd-ls", ["--account", Hostile.everything], nil, [77]),
            ("hd-pending", ["--account", "x" + Hostile.controls], nil, [77]),
        ]
        for (command, arguments, stdin, statuses) in cases {
            let what = "\(command) \(arguments.joined(separator: " ").prefix(30).debugDescription)"
            let result = try rig.run(command, arguments, stdin: stdin)
            #expect(statuses.contains(result.status), "\(what): exit \(result.status): \(result.stderr.prefix(300))")
            #expect(unsafe(result.stderr).isEmpty, "\(what): unsafe characters on standard error: \(result.stderr.prefix(200).debugDescription)")
            #expect(unsafe(result.stdout).isEmpty, "\(what): unsafe characters on standard output")
            let longest = result.stderr.split(separator: "\n").map(\.count).max() ?? 0
            #expect(longest <= 500, "\(what): a diagnostic line of \(longest) characters")
            #expect(!result.stderr.isEmpty, "\(what): no diagnostic at all")
        }
        // A line past LineReader's bound (64 MiB) is refused, not buffered without end.
        let endless = try rig.run("hd-mark", ["--no-flush", "archive"], stdin: String(repeating: "x", count: 65 << 20))
        #expect(endless.status == 65 && endless.stderr == "hd-mark: standard input: a line longer than 64 MiB\n", "\(endless.status) \(endless.stderr)")
        // The quote shows what was there, visibly: the user can see why it is not a reference.
        #expect(!real.isEmpty)
        let shown = try rig.run("hd-mark", "--no-flush", "archive", "thread:a\u{1B}[31mb")
        #expect(shown.stderr.contains(#"\e[31m"#) || shown.stderr.contains(#"\u{1B}[31m"#), "\(shown.stderr.debugDescription)")
        try StoreDump.expectSound(rig.storePath)
    }

    @Test("hd-search --explain never prints the query's controls or bidi, on a pipe or a terminal")
    func explainIsScrubbed() throws {
        let rig = Rig()
        try rig.startFake(pinnedMailbox(count: 5))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let query = "subject:\"\(Hostile.controls)\" \(Hostile.bidi) OR from:\u{202E}evil"
        let piped = try rig.run("hd-search", "--explain", "--", query)
        #expect([0, 1].contains(piped.status), "\(piped)")
        #expect(unsafe(piped.stdout + piped.stderr).isEmpty, "\(piped.stdout.debugDescription)")
        let shown = try rig.runOnTerminal("hd-search", ["--explain", "--", query])
        #expect(unsafe(shown.stdout).isEmpty, "\(shown.stdout.debugDescription)")
    }

    // MARK: - Mail shown on purpose: --html and --raw

    static func htmlMail() -> [UInt8] {
        Hostile.mail("""
            From: Html <html@evil.example>
            Subject: Hostile HTML
            Date: Mon, 1 Dec 2025 10:00:00 +0000
            Message-ID: <html@evil.example>
            MIME-Version: 1.0
            Content-Type: multipart/alternative; boundary=h

            --h
            Content-Type: text/plain; charset=utf-8

            Plain part.
            --h
            Content-Type: text/html; charset=utf-8

            <p>Pay \(Hostile.controls)now\(Hostile.bidi)</p>
            --h--

            """)
    }

    @Test("hd-show --html: never a control character, on a pipe or a terminal; bidi only to a pipe, never to a terminal")
    func htmlIsScrubbed() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 3))
        let id = try rig.insert(fake, Self.htmlMail())
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let piped = try rig.run("hd-show", "--html", "message:\(id)")
        #expect(piped.status == 0, "\(piped)")
        let controls = piped.stdout.unicodeScalars.filter { isUnsafeForTerminal($0) && !(0x200E...0x206F).contains($0.value) }
        #expect(controls.isEmpty, "controls in --html to a pipe: \(piped.stdout.debugDescription)")
        #expect(piped.stdout.contains("<p>Pay ") && piped.stdout.contains("now"), "\(piped.stdout)")
        #expect(piped.stdout.contains("\u{202E}"), "bidi characters are text to the program reading the pipe")
        let shown = try rig.runOnTerminal("hd-show", ["--html", "message:\(id)"])
        #expect(unsafe(shown.stdout).isEmpty, "--html on a terminal: \(shown.stdout.debugDescription)")
        #expect(shown.stdout.contains("<p>Pay "), "\(shown.stdout)")
    }

    @Test("hd-show --raw: byte for byte to a pipe, scrubbed on a terminal")
    func rawOnATerminal() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 3))
        let source = Hostile.mail("From: Raw <raw@evil.example>\nSubject: \(Hostile.controls)\nMessage-ID: <raw@evil.example>\n\nBody \(Hostile.controls)\(Hostile.bidi)\n")
        let id = try rig.insert(fake, source)
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let piped = try rig.run("hd-show", "--raw", "message:\(id)")
        #expect(piped.status == 0, "\(piped)")
        #expect(piped.stdout == String(decoding: source, as: UTF8.self), "--raw to a pipe is not the source as Gmail has it")
        let shown = try rig.runOnTerminal("hd-show", ["--raw", "message:\(id)"])
        #expect(unsafe(shown.stdout.replacingOccurrences(of: "\r", with: "")).isEmpty, "--raw on a terminal: \(shown.stdout.debugDescription)")
        #expect(shown.stdout.contains("\nMessage-ID: <raw@evil.example>\n"), "the source's lines are kept: \(shown.stdout.debugDescription)")
    }

    // MARK: - The index holds what is shown

    @Test("words shown in a subject or body are found: escape sequences and bidi isolates do not glue to them")
    func indexedAsShown() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 3))
        let id = try rig.insert(fake, Hostile.mail("""
            From: Index <index@evil.example>
            Subject: \(Hostile.encodedWord("Invoice \u{1B}[5mURGENT \u{2066}quarterly\u{2069} \u{1B}]0;title\u{07}zebra"))
            Message-ID: <index@evil.example>
            Content-Type: text/plain; charset=utf-8

            Body with \u{1B}[31mcrimson\u{1B}[0m and \u{2067}mirrored\u{2069} words.

            """))
        try rig.connect()
        #expect(try rig.run("hd-sync", ["--catch-up", "--prefetch-days", "36500"]).status == 0)
        for word in ["urgent", "quarterly", "zebra", "subject:urgent", "crimson", "mirrored"] {
            let found = try rig.run("hd-search", "--messages", "--ids", word)
            #expect(found.stdout == "message:\(id)\n", "\(word): \(found)")
        }
        for glued in ["5murgent", "title"] {
            #expect(try rig.run("hd-search", "--messages", "--count", glued).stdout == "0\n", "\(glued) is not shown, so not found")
        }
    }

    // MARK: - Files Hudson refuses are left as they were

    @Test("another program's SQLite file is refused unchanged; a directory or a device as the store is a configuration error (78)")
    func foreignStoreUntouched() throws {
        let rig = Rig()
        try rig.startFake(pinnedMailbox(count: 3))
        try rig.connect()
        let foreign = rig.dir.path("other.sqlite")
        do {
            let db = try Connection(path: foreign, options: ConnectionOptions(access: .readWriteCreate))
            try db.execute("PRAGMA journal_mode = DELETE")
            try db.execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: foreign))
        #expect(before[18] == 1 && before[19] == 1, "the foreign file starts in rollback-journal mode")
        for command in [["hd-mark", "--no-flush", "archive", "thread:x"], ["hd-undo"], ["hd-ls"], ["hd-sync"], ["hd-labels"]] {
            let result = try rig.run(command[0], ["--db", foreign] + command.dropFirst())
            #expect(result.status == 78, "\(command[0]) on another program's database: \(result)")
            let after = try Data(contentsOf: URL(fileURLWithPath: foreign))
            #expect(after == before, "\(command[0]) changed the file it refused (header bytes 18-19: \(after[18]), \(after[19]))")
            #expect(!FileManager.default.fileExists(atPath: foreign + "-wal"), "\(command[0]) left a WAL beside it")
        }
        let directory = rig.dir.path("a-directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for path in [directory, "/dev/null", "/dev/zero"] {
            for command in [["hd-ls"], ["hd-mark", "--no-flush", "archive", "thread:x"], ["hd-sync"], ["hd-pending"]] {
                let result = try rig.run(command[0], ["--db", path] + command.dropFirst(), timeout: 60)
                #expect(result.status == 78, "\(command[0]) --db \(path): \(result)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            }
        }
    }

    // MARK: - Attachment names

    @Test("saved attachment names: no hidden files, no Windows device names or streams, the extension kept; no phantom attachments")
    func attachmentNamesAreSafe() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 3))
        let long = String(repeating: "é", count: 5_000) + ".pdf"
        let names = [".bashrc", ".profile", "...hidden", "CON", "aux.txt", "Com1.log", "lpt9", "file:stream",
                     "trailing. . ", long, "a<b>c|d?e*f\"g.txt", "nul", " .ssh"]
        var mail = "From: Names <names@example.org>\nSubject: More attachment names\nMessage-ID: <names2@example.org>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=n\n\n--n\nContent-Type: text/plain\n\nSee attached.\n"
        for (index, name) in names.enumerated() {
            mail += "--n\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename=\"\(Hostile.encodedWord(name))\"\nContent-Transfer-Encoding: base64\n\n\(Data("attachment \(index)\n".utf8).base64EncodedString())\n"
        }
        mail += "--n--\n"
        let id = try rig.insert(fake, Hostile.mail(mail))
        let bare = try rig.insert(fake, Hostile.mail("From: Bare <bare@example.org>\nSubject: Headers only\nMessage-ID: <bare@example.org>\n\n"))
        let empty = try rig.insert(fake, Hostile.mail("From: Empty <empty@example.org>\nSubject: Empty multipart\nMessage-ID: <empty@example.org>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=z\n\n--z--\n"))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let target = rig.dir.path("saved")
        let saved = try rig.run("hd-show", "--save-attachments", target, "message:\(id)")
        #expect(saved.status == 0, "\(saved)")
        let files = try FileManager.default.contentsOfDirectory(atPath: target)
        #expect(files.count == names.count, "\(files.sorted())")
        let devices = Set(["con", "prn", "aux", "nul"] + (1...9).flatMap { ["com\($0)", "lpt\($0)"] })
        for file in files {
            #expect(!file.hasPrefix("."), "a hidden file: \(file.debugDescription)")
            #expect(!file.hasPrefix(" ") && !file.hasSuffix(" ") && !file.hasSuffix("."), "\(file.debugDescription)")
            let stem = file.split(separator: ".", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            #expect(!devices.contains(stem.trimmingCharacters(in: .whitespaces)), "a Windows device name: \(file)")
            #expect(!file.contains(where: { "<>:\"|?*\\/".contains($0) }), "\(file.debugDescription)")
            #expect(file.utf8.count <= 255, "\(file.utf8.count) bytes")
        }
        let longSaved = try #require(files.first { $0.hasPrefix("éé") })
        #expect(longSaved.hasSuffix(".pdf"), "the long name lost its extension: …\(longSaved.suffix(10))")
        #expect(files.contains("bashrc") && files.contains("profile"), "\(files.sorted())")

        for message in [bare, empty] {
            let shown = try rig.run("hd-show", "message:\(message)")
            #expect(shown.status == 0 && !shown.stdout.contains("Attachment:"), "\(shown)")
            let json = try rig.run("hd-show", "--json", "message:\(message)")
            #expect(json.stdout.contains("\"attachments\":[]"), "\(json.stdout)")
            let none = rig.dir.path("none-\(message)")
            let result = try rig.run("hd-show", "--save-attachments", none, "message:\(message)")
            #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: none))?.isEmpty ?? true, "a phantom attachment was written")
        }
        #expect(try rig.run("hd-search", "--messages", "--count", "has:attachment").stdout == "1\n")
    }

    // MARK: - What is shown does not mislead

    @Test("display: placeholders for a missing sender and subject, the real address behind an address-like name, charset and nesting notes")
    func displayDoesNotMislead() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 2))
        let nothing = try rig.insert(fake, Hostile.mail("Message-ID: <nothing@example.org>\nDate: Mon, 1 Dec 2025 10:00:00 +0000\n\nNo sender, no subject.\n"))
        let spoof = try rig.insert(fake, Hostile.mail("From: \"ceo@bank.example\" <thief@evil.example>\nSubject: Wire the money\nMessage-ID: <spoof@evil.example>\nDate: Mon, 1 Dec 2025 10:01:00 +0000\n\nNow.\n"))
        let unknown = try rig.insert(fake, Hostile.mail("From: Charset <cs@example.org>\nSubject: Unknown charset\nMessage-ID: <cs@example.org>\nDate: Mon, 1 Dec 2025 10:02:00 +0000\nContent-Type: text/plain; charset=x-no-such-charset\n\nCaf\u{E9} au lait\n"))
        var invalid = Hostile.mail("From: Bytes <bytes@example.org>\nSubject: Invalid UTF-8\nMessage-ID: <bytes@example.org>\nDate: Mon, 1 Dec 2025 10:03:00 +0000\nContent-Type: text/plain; charset=utf-8\n\nbefore ")
        invalid += [0xC3, 0x28, 0x20, 0xE9, 0x74, 0xE9] + Hostile.mail(" after\n")
        let bytes = try rig.insert(fake, invalid)
        var nested = "From: Deep <deep@example.org>\nSubject: Deep nesting\nDate: Mon, 1 Dec 2025 10:04:00 +0000\nMessage-ID: <deep2@example.org>\nMIME-Version: 1.0\n"
        for level in 0..<300 { nested += "Content-Type: multipart/mixed; boundary=d\(level)\n\n--d\(level)\n" }
        nested += "Content-Type: text/plain\n\nThe innermost part.\n"
        for level in (0..<300).reversed() { nested += "--d\(level)--\n" }
        let deep = try rig.insert(fake, Hostile.mail(nested))
        try rig.connect()
        let synced = try rig.run("hd-sync", ["--catch-up", "--prefetch-days", "36500"])
        #expect(synced.status == 0, "\(synced)")

        let listed = try rig.run("hd-search", "--messages", "in:anywhere")
        let line = try #require(listed.lines.first { $0.hasPrefix("message:\(nothing)") }, "\(listed)")
        #expect(line.contains("(no sender)") && line.contains("(no subject)"), "\(line)")
        let threads = try rig.run("hd-ls", "-n", "0")
        #expect(threads.lines.contains { $0.contains("(no sender)") && $0.contains("(no subject)") }, "\(threads)")
        let shownNothing = try rig.run("hd-show", "message:\(nothing)")
        #expect(shownNothing.stdout.contains("From: (no sender)") && shownNothing.stdout.contains("Subject: (no subject)"), "\(shownNothing.stdout)")
        let json = try rig.run("hd-show", "--json", "message:\(nothing)")
        #expect(json.stdout.contains("\"from\":null") && json.stdout.contains("\"subject\":null"), "JSON keeps the truth: \(json.stdout)")

        let spoofLine = try #require(threads.lines.first { $0.contains("Wire the money") })
        #expect(spoofLine.contains("thief@evil.example"), "the real address is hidden behind an address-like name: \(spoofLine)")
        let spoofMessage = try #require(listed.lines.first { $0.hasPrefix("message:\(spoof)") })
        #expect(spoofMessage.contains("thief@evil.example"), "\(spoofMessage)")

        let shownUnknown = try rig.run("hd-show", "message:\(unknown)")
        #expect(shownUnknown.stdout.contains("x-no-such-charset"), "no note about the unknown charset: \(shownUnknown.stdout)")
        #expect(shownUnknown.stdout.contains("au lait"))

        let shownBytes = try rig.run("hd-show", "message:\(bytes)")
        #expect(shownBytes.stdout.contains("before \u{FFFD}( \u{FFFD}t\u{FFFD} after"), "invalid UTF-8 is not U+FFFD: \(shownBytes.stdout.debugDescription)")
        #expect(!shownBytes.stdout.contains("Ã"), "Windows-1252 mojibake")

        let shownDeep = try rig.run("hd-show", "message:\(deep)")
        #expect(shownDeep.status == 0, "\(shownDeep.status): \(shownDeep.stderr)")
        #expect(shownDeep.stdout.contains("nested too deeply"), "no note: \(shownDeep.stdout.prefix(300))")
        #expect(shownDeep.lines.count < 100, "\(shownDeep.lines.count) lines of raw markup")
        #expect(!shownDeep.stdout.contains("--d299"), "raw MIME markup is shown")
    }

    @Test("hd-ls and hd-search lines fit the terminal, whatever the subjects and names hold")
    func linesFitTheTerminal() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 2))
        let subjects = [String(repeating: "long subject words ", count: 30), String(repeating: "会議の資料", count: 40),
                        String(repeating: "😀🎉", count: 60), String(repeating: "e\u{301}\u{302}", count: 200),
                        "zero\u{200B}width\u{FEFF}joiner\u{2060}" + String(repeating: "x", count: 200),
                        String(repeating: "\u{1B}[31m", count: 100) + String(repeating: "Ｗ", count: 100)]
        for (index, subject) in subjects.enumerated() {
            let from = Hostile.encodedWord(String(repeating: "名前", count: 30 + index)) + " <n\(index)@example.org>"
            try rig.insert(fake, Hostile.mail("From: \(from)\nTo: \(String(repeating: "x", count: 90))@example.org\nSubject: \(Hostile.encodedWord(subject))\nMessage-ID: <w\(index)@example.org>\nDate: Mon, 1 Dec 2025 10:0\(index):00 +0000\n\nbody\n"))
        }
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        for columns in [120, 80, 40] {
            for command in [["hd-ls", "-n", "0"], ["hd-search", "in:anywhere"], ["hd-search", "--messages", "in:anywhere"], ["hd-labels"], ["hd-pending"]] {
                let shown = try rig.runOnTerminal(command[0], Array(command.dropFirst()), columns: columns)
                for line in shown.lines {
                    #expect(terminalCells(line) <= columns, "\(command.joined(separator: " ")) on \(columns) columns: \(terminalCells(line)) cells: \(line)")
                }
            }
        }
    }
}
