// The old doors, tried the way the new ones were (issue 37): generated and adversarial
// input through every surface of the commands that link no network code (hd-ls,
// hd-search, hd-show, hd-labels, hd-pending, hd-mark, hd-undo) and of hd-auth: arguments
// (invalid UTF-8 included, which only a raw exec can pass), references, queries, standard
// input, files and directories, the environment every command reads, the state of
// standard output, hd-show's fetch child and hd-auth's loopback listener. Every run is
// bounded by a timeout and seeded (the seed is in every failure; HUDSON_TEST_SEED replays
// one). Each run must: not die by a signal, not hang, exit with a status its man page
// documents, write to standard error only lines `hd-<cmd>: ...` (one for a refusal, two
// with the usage line for 64) with nothing that drives a terminal, leave the store as it
// was when it refused (a dump of what readers see, and PRAGMA integrity_check), lose no
// queued change, and write nothing outside where the command writes.
import Foundation
import Glibc
import HudsonTestSupport
import SQLite
import Testing

/// SplitMix64 with a printed, replayable seed.
struct DoorRandom: RandomNumberGenerator {
    var state: UInt64

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 0x4F4C_4444_4F4F_5253
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }
    mutating func count(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func count(_ range: Range<Int>) -> Int { Int.random(in: range, using: &self) }

    /// Bytes from hostile alphabets: controls, ESC sequences, bidi, line breaks, quotes,
    /// query syntax, invalid UTF-8 (lone continuation bytes, overlong forms, surrogates),
    /// CJK and emoji. Never NUL: an argument or a variable ends at its first NUL.
    mutating func hostileBytes(_ pieces: Int) -> [UInt8] {
        let alphabet: [[UInt8]] = ["a", "Z", "0", "9", " ", "\t", "\n", "\r", "\u{7}", "\u{1B}[31m", "\u{1B}]52;c;ZXZpbA==\u{7}",
                                   "\u{202E}", "\u{2066}", "\u{85}", "\u{9B}2J", "\u{7F}", "\"", "'", "\\", "/", "..", ".", ",", ":",
                                   "%2e", "*", "(", ")", "{", "}", "-", "+", "=", "@", "OR", "AND", "資料", "😀", "\u{FEFF}"].map { Array($0.utf8) }
            + [[0xFF], [0xFE], [0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xC3], [0xF4, 0x90, 0x80, 0x80]]
        return (0..<pieces).flatMap { _ in pick(alphabet) }
    }
}

/// The statuses each command's man page documents (man/hd-*.1, EXIT STATUS: the shared
/// table, narrowed by each page's own paragraph; 75 is the busy store every command may meet).
enum DocumentedStatus {
    static let table: [String: Set<Int32>] = [
        "hd-ls": [0, 1, 64, 65, 75, 77, 78],
        "hd-search": [0, 1, 64, 65, 75, 77, 78],
        "hd-show": [0, 2, 64, 65, 75, 77, 78],
        "hd-labels": [0, 64, 65, 75, 77, 78],
        "hd-pending": [0, 64, 75, 77, 78],
        "hd-mark": [0, 2, 64, 65, 75, 77, 78],
        "hd-undo": [0, 1, 64, 65, 75, 77, 78],
        "hd-auth": [0, 64, 75, 77, 78],
    ]
}

/// A synced store in a temporary home, the commands' working directory beside it, and
/// things to name: a FIFO, a socket, a directory, a file, a symbolic-link loop.
final class DoorWorld: @unchecked Sendable {
    let rig = Rig()
    let fake: FakeGmail
    let work: String
    var threads: [String] = []
    var messages: [String] = []
    /// Messages with attachments.
    var attachmentMessages: [String] = []
    /// A message whose body is not stored (hd-show must fetch it).
    var bodilessMessage = ""
    /// A label action, its target and the action id of a queued, unsent change.
    var queuedAction = ""

    init(count: Int = 30, prefetch: Bool = false) throws {
        fake = try rig.startFake(pinnedMailbox(count: count))
        try rig.connect()
        #expect(try rig.run("hd-sync", prefetch ? catchUp : ["--catch-up"]).status == 0)
        work = rig.dir.path("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        threads = try rig.run("hd-search", "--ids", "in:anywhere").lines
        messages = try rig.run("hd-search", "--messages", "--ids", "in:anywhere").lines
        attachmentMessages = try rig.run("hd-search", "--messages", "--ids", "has:attachment").lines
        let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readOnly))
        bodilessMessage = try db.map("""
            SELECT 'message:' || gmail_id FROM messages AS m
             WHERE NOT EXISTS (SELECT 1 FROM message_bodies AS b WHERE b.message_id = m.id) ORDER BY gmail_id LIMIT 1
            """) { $0.string(0) }.first ?? ""
        // Things to name.
        #expect(mkfifo(path("fifo"), 0o600) == 0)
        try FileManager.default.createDirectory(atPath: path("dir"), withIntermediateDirectories: true)
        try "plain\n".write(toFile: path("file"), atomically: false, encoding: .utf8)
        try "".write(toFile: path("empty"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: path("loop1"), withDestinationPath: "loop2")
        try FileManager.default.createSymbolicLink(atPath: path("loop2"), withDestinationPath: "loop1")
        try FileManager.default.createDirectory(atPath: path("readonly"), withIntermediateDirectories: true)
        chmod(path("readonly"), 0o555)
        bindSocket(path("socket"))
        // A change queued and not sent: no run may lose it.
        let marked = try rig.run("hd-mark", "--no-flush", "--verbose", "star", messages[0])
        #expect(marked.status == 0, "\(marked)")
        queuedAction = marked.stderr
    }

    func path(_ name: String) -> String { work + "/" + name }

    /// The environment every run starts from (Rig's), as bytes.
    var baseEnvironment: [String: [UInt8]] { rig.environment.mapValues { Array($0.utf8) } }

    /// Runs a built command in `work` with `arguments` and the base environment changed
    /// by `environment` (nil removes a variable).
    func run(_ command: String, _ arguments: [[UInt8]], environment changes: [String: [UInt8]?] = [:],
             stdin: RawInput = .null, stdout: RawOutput = .pipe, timeout: TimeInterval = 60) -> RawResult {
        var environment = baseEnvironment
        for (name, value) in changes { environment[name] = value }
        let pairs = environment.sorted { $0.key < $1.key }.map { Array($0.key.utf8) + [UInt8(ascii: "=")] + $0.value }
        let result = RawCommand.run(BuiltProducts.executable(command).path, arguments, environment: pairs, directory: work,
                                    stdin: stdin, stdout: stdout, timeout: timeout)
        rig.record(result.stdoutText + result.stderrText)
        return result
    }

    func run(_ command: String, _ arguments: [String], environment: [String: [UInt8]?] = [:], stdin: RawInput = .null,
             stdout: RawOutput = .pipe, timeout: TimeInterval = 60) -> RawResult {
        run(command, arguments.map { Array($0.utf8) }, environment: environment, stdin: stdin, stdout: stdout, timeout: timeout)
    }

    /// What readers see of the store (StoreDump), or the error reading it.
    func dump() -> String {
        (try? StoreDump.dump(rig.storePath)) ?? "unreadable"
    }

    /// The home's file tree, without the store's own files (compared through `dump`) and
    /// the rig's logs.
    func tree() -> [String: String] {
        RawTree.listing(rig.dir.url.path) { relative in
            relative.hasPrefix("./data/hudson.sqlite3") || relative.hasPrefix("./logs")
        }
    }

    /// The names at the top of the file system: a path built from an empty name lands there.
    static func rootNames() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "/")) ?? [])
    }

    /// Names new at the top of the file system since `before`; those that are attachments
    /// of `message` saved there (the bug this checks for) are removed again.
    func rootLitter(since before: Set<String>, message: String) -> Set<String> {
        let created = Self.rootNames().subtracting(before)
        let json = (try? rig.run("hd-show", "--json", "--no-fetch", message).stdout) ?? ""
        let names = ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?["attachments"] as? [[String: Any]] ?? []
        let stems = names.compactMap { ($0["filename"] as? String)?.split(separator: ".").first.map(String.init) }
        for name in created where stems.contains(where: { name.hasPrefix($0) }) { unlink("/" + name) }
        return created
    }
}

private func bindSocket(_ path: String) {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8.prefix(raw.count - 1))
        raw.copyBytes(from: bytes)
    }
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    close(fd)
}

/// Whether any scalar would drive a terminal (the set TerminalSafety removes).
private func drivesTerminal(_ text: String) -> Bool {
    text.unicodeScalars.contains(where: isUnsafeForTerminal)
}

/// Warnings a run may print before its one error line: one per reference it could not
/// use, the notes a search owes, the time zone it could not read. Anything else before a
/// refusal is a second error line.
private func isItemWarning(_ line: String) -> Bool {
    line.hasSuffix(": not a reference") || line.contains(": no such thread") || line.contains(": no such message")
        || line.contains("have no stored body") || line.contains("rest on a guess") || line.contains("may match:")
        || line.contains("not a time zone file; times are shown in UTC") || line.contains("body not stored and not fetched")
        || line.contains("source not stored") || line.hasSuffix("was already undone") || line.contains("queued; the next hd-sync")
        || line.hasSuffix("(the demo's starts again with scripts/demo --serve)")  // why it stays queued: the fake is stopped
}

/// The checks every run owes, whatever its input.
func checkDoor(_ result: RawResult, _ command: String, _ context: @autoclosure () -> String, knownLongLine: String? = nil,
               sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!result.timedOut, "hang: \(context())\n\(result)", sourceLocation: sourceLocation)
    #expect(result.signal == nil, "crash (signal \(result.signal ?? 0)): \(context())\n\(result)", sourceLocation: sourceLocation)
    guard let status = result.status, !result.timedOut else { return }
    let documented = DocumentedStatus.table[command] ?? []
    #expect(documented.contains(status), "undocumented exit \(status): \(context())\n\(result)", sourceLocation: sourceLocation)
    let lines = result.stderrLines
    #expect(!drivesTerminal(result.stderrText), "terminal controls on standard error: \(context())\n\(result)", sourceLocation: sourceLocation)
    // hd-ls --changed-since prints the newest point of the change sequence there (hd-ls(1)).
    let changedSince = context().contains("--changed-since")
    let sequencePoint = { (line: String) in changedSince && !line.isEmpty && line.allSatisfy(\.isNumber) }
    // By bytes: a quoted argument may begin with a combining mark, which joins the
    // prefix's space into one Character (and so defeats String.hasPrefix).
    let prefixed = { (line: String) in line.utf8.starts(with: (command + ": ").utf8) }
    #expect(lines.allSatisfy { prefixed($0) || (status == 64 && $0.hasPrefix("usage: ")) || sequencePoint($0) },
            "a line that is not \(command): ...: \(context())\n\(lines.filter { !prefixed($0) }.map(\.debugDescription))\n\(result)",
            sourceLocation: sourceLocation)
    if ![0, 1, 2].contains(status) {
        // The error is the last line (with the usage line after it for 64); what comes
        // before may only be warnings about single items.
        let owed = status == 64 ? 2 : 1
        #expect(lines.count >= owed && lines.dropLast(owed).allSatisfy(isItemWarning)
                    && (status != 64 || lines.last?.hasPrefix("usage: ") == true),
                "a refusal owes one line (and the usage line for 64): \(context())\n\(result)", sourceLocation: sourceLocation)
    }
    // A diagnostic quotes what it was given cut short (TerminalSafety.quoted): a 10 KB
    // argument gives a line of a hundred characters or so, never of 10 KB.
    for line in lines where line.unicodeScalars.count > 500 {
        let known = knownLongLine
        if let known {
            withKnownIssue(Comment(rawValue: known), isIntermittent: true) {
                Issue.record("a \(line.unicodeScalars.count)-character diagnostic: \(context())", sourceLocation: sourceLocation)
            }
        } else {
            Issue.record("a \(line.unicodeScalars.count)-character diagnostic: \(context())\n\(result)", sourceLocation: sourceLocation)
        }
    }
}

private func describe(_ arguments: [[UInt8]]) -> String {
    "[" + arguments.map { argument in
        argument.count > 60 ? TerminalQuote.bytes(Array(argument.prefix(40))) + "…(\(argument.count) bytes)" : TerminalQuote.bytes(argument)
    }.joined(separator: ", ") + "]"
}

@Suite("The old doors under generated input: arguments, references, queries, standard input, files, environment, outputs", .serialized)
struct OldDoorsTests {
    static let iterations = Scale.pick(24, long: 200)

    /// Commands that never change the store: their every run leaves the dump as it was.
    static let readers: Set<String> = ["hd-ls", "hd-search", "hd-show", "hd-pending"]

    /// Values an option or operand may be given: numbers at and past every bound, empty,
    /// controls, bidi, invalid UTF-8, 10 KB, paths to things that are not files.
    static func hostileValues(_ world: DoorWorld, _ random: inout DoorRandom) -> [[UInt8]] {
        let texts = ["", "-", "--", "0", "-1", "1", "NaN", "inf", "-inf", "1e999", "0x10", "+5", " 5", "5 ", "99999999999999999999999",
                     "9223372036854775807", "-9223372036854775808", "18446744073709551616", "\u{1B}[31m", "\u{1B}]52;c;ZXZpbA==\u{7}",
                     "\u{202E}evil", "a\nb", "a\r\nBcc: x", "\t", "thread:..", "thread:.", "message:%2e", "message:.", "thread:",
                     "message:", "action:0", "action:-1", "action:99999999999999999999", "outbox:0", "outbox:1", "outbox:x",
                     "/dev/full", "/dev/null", "/dev/zero", "/dev/stdin", world.path("fifo"), world.path("socket"), world.path("dir"),
                     world.path("file"), world.path("loop1"), world.path("loop1/below"), world.path("file/below"), "sub/dir", "",
                     "Work", "INBOX", "Travel/2026", "+Work", "-INBOX", "star", "archive", "demo@hudson.test", "eve@example.net",
                     String(repeating: "a", count: 10_000), "thread:" + String(repeating: "f", count: 10_000)]
        return texts.map { Array($0.utf8) } + [random.hostileBytes(6), random.hostileBytes(40), [0xFF, 0xFE], Array("thread:".utf8) + [0xC0, 0x80],
                                               world.threads.first.map { Array($0.utf8) } ?? [], world.messages.first.map { Array($0.utf8) } ?? []]
    }

    /// Operands of the shape each command takes, valid and not.
    static func operands(_ command: String, _ world: DoorWorld, _ random: inout DoorRandom) -> [[UInt8]] {
        let references = (world.threads.prefix(3) + world.messages.prefix(3)).map { Array($0.utf8) }
            + [Array(world.messages[0].dropFirst("message:".count).utf8)]
        switch command {
        case "hd-mark":
            return [Array(random.pick(["archive", "unarchive", "read", "unread", "star", "unstar", "trash", "untrash", "spam", "unspam",
                                       "important", "unimportant", "+Work", "-Work", "+NoSuchLabel", "+\u{1B}[2J", "-INBOX", "+"]).utf8),
                    random.pick(references)]
        case "hd-show": return [random.pick(references)]
        case "hd-search", "hd-ls":
            return [Array(random.pick(["in:anywhere", "from:(", "after:9223372036854775807", "before:1/1/1", "larger:99999999999M",
                                       "label:Work", "has:attachment", "is:unread OR is:starred", "\"unterminated", "{a b", "-from:x",
                                       "older_than:100000y", "newer_than:0d", "subject:\u{202E}x", "(((((((((("]).utf8)]
        case "hd-undo": return [Array(random.pick(["1", "action:1", "outbox:1", "action:x", "2"]).utf8)]
        case "hd-labels": return [Array(random.pick(["create", "rename", "delete", "Work", "New", "Work/Sub"]).utf8)]
        case "hd-auth": return [Array(random.pick(["list", "status", "add", "remove", "set", "login", "demo@hudson.test", "keep-raw", "on"]).utf8)]
        default: return []
        }
    }

    /// The options a command declares (`--declaration`), with their short names and
    /// whether they take a value, for each of its subcommands too.
    static func declaredOptions(_ command: String) throws -> [(long: String, short: String?, takesValue: Bool)] {
        let result = try CommandRunner.run(BuiltProducts.executable(command), ["--declaration"], environment: [:])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        var found: [(String, String?, Bool)] = []
        func collect(_ spec: [String: Any]) {
            for option in spec["options"] as? [[String: Any]] ?? [] {
                guard let long = option["long"] as? String, long != "declaration", long != "generate-completion" else { continue }
                found.append((long, option["short"] as? String, option["value_name"] is String))
            }
            for sub in spec["subcommands"] as? [[String: Any]] ?? [] { collect(sub) }
        }
        collect(json)
        return found
    }

    // MARK: - Arguments

    @Test("random and adversarial arguments, invalid UTF-8 included, to every option and operand of every old command",
          arguments: ["hd-ls", "hd-search", "hd-show", "hd-labels", "hd-pending", "hd-mark", "hd-undo", "hd-auth"])
    func arguments(command: String) throws {
        let seed = DoorRandom.seed ^ UInt64(command.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) })
        var random = DoorRandom(state: seed)
        let world = try DoorWorld()
        world.fake.stop()  // offline: pushes and fetches fail at once, as on a train
        let options = try Self.declaredOptions(command)
        var values = Self.hostileValues(world, &random)
        try world.fake.clientSecretJSON.write(toFile: world.path("client_secret.json"), atomically: true, encoding: .utf8)
        try world.fake.refreshToken.write(toFile: world.path("refresh_token"), atomically: true, encoding: .utf8)
        values += [Array(world.path("client_secret.json").utf8), Array(world.path("refresh_token").utf8)]
        let rootBefore = DoorWorld.rootNames()
        for iteration in 0..<Self.iterations {
            var arguments: [[UInt8]] = []
            if command == "hd-labels" && random.chance(60) { arguments.append(Array(random.pick(["create", "rename", "delete"]).utf8)) }
            if command == "hd-auth" { arguments.append(Array(random.pick(["list", "status", "add", "remove", "set", "bogus"]).utf8)) }
            for _ in 0..<random.count(0...5) {
                let option = random.pick(options)
                switch random.count(0..<10) {
                case 0...3:
                    let name = Array("--\(option.long)".utf8)
                    if option.takesValue {
                        if random.chance(50) { arguments += [name, random.pick(values)] } else { arguments.append(name + [UInt8(ascii: "=")] + random.pick(values)) }
                    } else {
                        arguments.append(random.chance(85) ? name : name + Array("=x".utf8))
                    }
                case 4 where option.short != nil:
                    arguments.append(Array("-\(option.short!)".utf8) + (option.takesValue && random.chance(50) ? random.pick(values) : []))
                case 5...7: arguments += Self.operands(command, world, &random)
                case 8: arguments.append(random.pick(values))
                default: arguments.append(random.hostileBytes(random.count(1...8)))
                }
            }
            if ["hd-mark", "hd-undo", "hd-labels"].contains(command) && random.chance(70) { arguments.insert(Array("--no-flush".utf8), at: 0) }
            let context = "seed \(seed) \(command) iteration \(iteration): \(describe(arguments))"
            let dumpBefore = world.dump()
            let treeBefore = world.tree()
            let result = world.run(command, arguments, timeout: 60)
            checkDoor(result, command, context)
            let refused = ![0, 1, 2].contains(result.status ?? -1)
            let dumpAfter = world.dump()
            if Self.readers.contains(command) || refused || (command == "hd-undo" && arguments.contains(Array("--list".utf8))) {
                #expect(dumpAfter == dumpBefore, "the store changed: \(context)\n\(result)")
            }
            // Whatever ran, nothing outside the store but what an argument named (a path
            // relative to the working directory, or inside the home), and nothing on refusal.
            let changed = RawTree.changes(treeBefore, world.tree())
            let named = arguments.compactMap { String(validating: $0, as: UTF8.self) }.flatMap { argument -> [String] in
                let value = argument.split(separator: "=", maxSplits: 1).last.map(String.init) ?? argument
                let root = world.rig.dir.url.path
                if value.hasPrefix(root + "/") { return ["." + value.dropFirst(root.count)] }
                return value.hasPrefix("/") ? [] : ["./work/" + value]
            }
            let allowed = changed.filter { path in
                path == "./work" || path.hasPrefix("./config") || path.hasPrefix("./home/.cache")
                    || named.contains { path == $0 || path.hasPrefix($0 + "/") || path.hasPrefix($0 + "-") || path.hasPrefix($0 + ".") || $0.hasPrefix(path + "/") }
            }
            #expect(changed == allowed, "wrote outside what was named: \(context)\n\(changed)\n\(result)")
            if refused && command != "hd-auth" {
                // The quota ledger counts a request that was tried (hd-show's fetch child).
                #expect(changed.allSatisfy { $0 == "./work" || $0.hasPrefix("./config/quota") },
                        "a refused run changed files: \(context)\n\(changed)\n\(result)")
            }
        }
        #expect(DoorWorld.rootNames() == rootBefore, "wrote at the top of the file system: \(DoorWorld.rootNames().subtracting(rootBefore))")
        if Self.readers.contains(command) {
            #expect(try world.rig.run("hd-pending", "--count").stdout != "0\n", "the queued change was lost")
        }
        try StoreDump.expectSound(world.rig.storePath)
    }

    @Test("an argument that is not UTF-8 is refused with 64, naming its bytes, before any file is named or made")
    func invalidUTF8Arguments() throws {
        let world = try DoorWorld(count: 10)
        world.fake.stop()
        let target = Array(world.path("saved").utf8) + [0xFF]
        let cases: [(String, [[UInt8]])] = [
            ("hd-show", [Array("--save-attachments".utf8), target, Array((world.attachmentMessages.first ?? "").utf8)]),
            ("hd-ls", [Array("--db".utf8), Array(world.path("new").utf8) + [0xFE, 0x2F] + Array("x.sqlite3".utf8)]),
            ("hd-auth", [Array("add".utf8), Array("demo@hudson.test".utf8), Array("--db".utf8), Array(world.path("s").utf8) + [0xC0, 0x80],
                         Array("--client-secret".utf8), Array(world.path("client_secret.json").utf8), Array("--refresh-token-file".utf8),
                         Array(world.path("refresh_token").utf8)]),
            ("hd-search", [[0x63, 0x61, 0x66, 0xE9]]),  // "café" in Latin-1
            ("hd-mark", [Array("--no-flush".utf8), Array("+Work".utf8) + [0xFF], Array(world.messages[0].utf8)]),
        ]
        for (command, arguments) in cases {
            let before = world.tree()
            let dump = world.dump()
            let result = world.run(command, arguments)
            checkDoor(result, command, "\(command) \(describe(arguments))")
            #expect(result.status == 64 && result.stderrText.contains("not valid UTF-8") && result.stderrText.contains("\\x"), "\(result)")
            #expect(RawTree.changes(before, world.tree()).allSatisfy { $0 == "./work" }, "\(command): \(RawTree.changes(before, world.tree()))")
            #expect(world.dump() == dump)
        }
    }

    // MARK: - References and standard input

    @Test("references through operands and standard input: malformed ids, 10 KB ids, binary lines, NDJSON of every wrong type, no final newline")
    func references() throws {
        let seed = DoorRandom.seed ^ 0x5245_4653
        var random = DoorRandom(state: seed)
        let world = try DoorWorld()
        world.fake.stop()
        let valid = world.threads.prefix(2) + world.messages.prefix(2)
        func reference() -> [UInt8] {
            switch random.count(0..<12) {
            case 0: return Array(random.pick(Array(valid)).utf8)
            case 1: return Array(random.pick(["thread:..", "thread:.", "message:%2e", "message:%2F..%2F", "thread:", "message:", "thread:/",
                                             "message:a b", "thread:?x", "thread:#", "message:\u{202E}1"]).utf8)
            case 2: return Array("thread:".utf8) + Array(repeating: UInt8(ascii: "f"), count: 10_240)
            case 3: return (0..<random.count(1...64)).map { _ in UInt8.random(in: 1...255, using: &random) }.filter { $0 != 10 }
            case 4: return Array("{\"id\":\(random.pick(["5", "null", "[1]", "{}", "true", "\"\"", "\"thread:..\"", "\"\\u0000\"", "\"\\ud800\"", "1e999"]))}".utf8)
            case 5: return Array("{\"id\":\"\(random.pick(Array(valid)))\"".utf8)  // unterminated object
            case 6: return Array(String(repeating: "[", count: random.count(1...5000)).utf8)
            case 7: return Array("{\"id\":\"\(random.pick(Array(valid)))\",\"x\":\(String(repeating: "[", count: 3000))".utf8)
            case 8: return Array("\(random.pick(Array(valid)))\textra\tfields".utf8)
            case 9: return random.hostileBytes(random.count(1...20))
            case 10: return Array("  \t ".utf8)
            default: return Array(random.pick(Array(valid)).utf8) + [0x0D]
            }
        }
        let commands: [(String, [String])] = [
            ("hd-show", ["--no-fetch"]), ("hd-show", ["--no-fetch", "--json"]), ("hd-show", ["--raw", "--no-fetch"]), ("hd-show", []),
            ("hd-mark", ["--dry-run", "archive"]), ("hd-mark", ["--no-flush", "star"]), ("hd-mark", ["--no-flush", "+Work", "-INBOX"]),
            ("hd-mark", ["read"]),
        ]
        for iteration in 0..<(Self.iterations * 2) {
            let (command, fixed) = random.pick(commands)
            let references = (0..<random.count(1...6)).map { _ in reference() }
            let throughInput = random.chance(60)
            var arguments = fixed.map { Array($0.utf8) }
            var input: RawInput = .null
            if throughInput {
                var bytes: [UInt8] = references.flatMap { $0 + [UInt8(10)] }
                if random.chance(30) { bytes.removeLast() }  // no final newline
                if random.chance(10) { bytes = (0..<random.count(1...200_000)).map { _ in UInt8.random(in: 0...255, using: &random) } }
                input = .bytes(bytes)
                if random.chance(30) { arguments.append(Array("-".utf8)) }
            } else {
                arguments += references.filter { !$0.contains(0) }
            }
            let context = "seed \(seed) iteration \(iteration): \(command) \(describe(arguments)) \(throughInput ? "stdin \(describe(references))" : "")"
            let before = world.dump()
            let result = world.run(command, arguments, stdin: input)
            checkDoor(result, command, context)
            if command == "hd-show" || arguments.contains(Array("--dry-run".utf8)) || ![0, 2].contains(result.status ?? -1) {
                #expect(world.dump() == before, "the store changed: \(context)\n\(result)")
            }
        }
        // Standard input that is not a pipe: a FIFO with no writer, a directory, a device, closed.
        for input: RawInput in [.path(world.path("fifo")), .path(world.path("dir")), .path("/dev/zero"), .path("/dev/null"), .closed] {
            for command in ["hd-show", "hd-mark"] {
                let arguments = command == "hd-mark" ? ["--no-flush", "archive"] : ["--no-fetch"]
                let result = world.run(command, arguments, stdin: input)
                checkDoor(result, command, "\(command) with standard input \(input)")
            }
        }
        #expect(try world.rig.run("hd-pending", "--count").stdout != "0\n", "the queued change was lost")
        try StoreDump.expectSound(world.rig.storePath)
    }

    // MARK: - Queries

    @Test("queries: unbalanced, 5,000 deep, 100,000 characters, every operator with numbers past its bounds")
    func queries() throws {
        let seed = DoorRandom.seed ^ 0x5155_4552
        var random = DoorRandom(state: seed)
        let world = try DoorWorld()
        world.fake.stop()
        let operators = ["after", "before", "older", "newer", "older_than", "newer_than", "larger", "smaller", "size", "is", "in", "label",
                         "has", "category", "filename", "from", "to", "cc", "bcc", "subject", "list", "deliveredto", "rfc822msgid", "around"]
        let values = ["9223372036854775807", "9223372036854776", "99999999999999999999", "-9223372036854775808", "0", "-1", "1e999",
                      "NaN", "9223372036854775807K", "9223372036854775807M", "99999999y", "100001d", "1/1/1", "9999/12/31", "0000/00/00",
                      "2026/02/30", "12/31/9999", "\"\"", "\"", "(", ")", "{", "}", "me", "*", "anywhere", "attachment", "\u{1B}[31m",
                      "\u{202E}", "資料", "a\u{0}b"]
        func term() -> String {
            switch random.count(0..<8) {
            case 0..<3: return random.pick(operators) + ":" + random.pick(values)
            case 3: return String(repeating: "(", count: random.count(1...5000)) + "a" + String(repeating: ")", count: random.count(0...5000))
            case 4: return Array(repeating: "a", count: random.count(1...3000)).joined(separator: random.pick([" OR ", " AND ", " -", " AROUND 5 "]))
            case 5: return String(repeating: "x", count: random.count(1...100_000))
            case 6: return random.pick(["-", "--", "OR", "AND", "NOT", "\"", "{", "}", "(", ")", "AROUND", "+", "*", "^", "NEAR/3"])
            default: return String(decoding: random.hostileBytes(random.count(1...10)), as: UTF8.self)
            }
        }
        let dump = world.dump()
        for iteration in 0..<(Self.iterations * 2) {
            let query = (0..<random.count(1...4)).map { _ in term() }
            let command = random.chance(60) ? "hd-search" : "hd-ls"
            var arguments = query
            if command == "hd-search" && random.chance(40) { arguments.insert(random.pick(["-c", "-m", "--explain", "--json", "--sort=relevance"]), at: 0) }
            if random.chance(20) { arguments.insert("--", at: 0) }
            let context = "seed \(seed) iteration \(iteration): \(command) \(arguments.map { $0.count > 60 ? "\($0.prefix(40).debugDescription)…(\($0.count))" : $0.debugDescription })"
            let result = world.run(command, arguments.map { argument in Array(argument.utf8.prefix { $0 != 0 }) })
            checkDoor(result, command, context)
            #expect([0, 1, 64, 65].contains(result.status ?? -1), "\(context)\n\(result)")
        }
        #expect(world.dump() == dump)
    }

    @Test("r37_epoch_seconds_past_int64_milliseconds_are_refused_not_a_crash: after:, before:, older:, newer: with 9.2e15 s and more")
    func r37_epoch_seconds_past_int64_milliseconds_are_refused_not_a_crash() throws {
        let world = try DoorWorld(count: 5)
        world.fake.stop()
        for query in ["after:9223372036854775807", "before:9223372036854776", "older:99999999999999999", "newer:9223372036854775",
                      "after:3162240000001"] {
            for command in ["hd-search", "hd-ls"] {
                let result = world.run(command, command == "hd-ls" ? [query] : ["-c", query])
                checkDoor(result, command, "\(command) \(query)")
                #expect(result.status == 65 && result.stderrText.contains("date out of range"), "\(command) \(query): \(result)")
            }
        }
        // The bound itself, 100,000 years of seconds, still reads.
        #expect(world.run("hd-search", ["-c", "after:3162240000000"]).status == 1)
    }

    // MARK: - Files and directories

    @Test("--save-attachments DIR: empty, a device, a FIFO, a socket, a file, below a file, a link loop, read-only: refused before anything is fetched or made")
    func saveAttachmentTargets() throws {
        let world = try DoorWorld(count: 40)
        let message = try #require(world.attachmentMessages.first)
        let rootBefore = DoorWorld.rootNames()
        let refused: [(String, Int32)] = [
            ("", 64), ("/dev/full", 78), ("/dev/null", 78), (world.path("fifo"), 78), (world.path("socket"), 78), (world.path("file"), 78),
            (world.path("file/below/deeper"), 78), (world.path("loop1"), 78), (world.path("loop1/x"), 78), ("/proc/self/fd/1", 78),
        ]
        for (target, status) in refused {
            try world.fake.clearRequests()
            let before = world.tree()
            let result = world.run("hd-show", ["--save-attachments", target, message])
            checkDoor(result, "hd-show", "--save-attachments \(target.debugDescription)")
            #expect(result.status == status, "--save-attachments \(target.debugDescription): \(result)")
            #expect(RawTree.changes(before, world.tree()).allSatisfy { $0 == "./work" }, "\(target): \(RawTree.changes(before, world.tree()))")
            #expect(try world.fake.requests().filter { !$0.path.hasSuffix("/token") }.isEmpty, "\(target): fetched before refusing")
        }
        let litter = world.rootLitter(since: rootBefore, message: message)
        #expect(litter.isEmpty, "saved at the top of the file system: \(litter)")
        if Privileges.isRoot {
            // Read-only to its owner: run as uid 65534 against a copy of the store it can read.
            let store = world.rig.dir.path("shared/hudson.sqlite3")
            try FileManager.default.createDirectory(atPath: world.rig.dir.path("shared"), withIntermediateDirectories: true)
            #expect(try world.rig.run("/usr/bin/sqlite3", [world.rig.storePath, ".backup '\(store)'"]).status == 0)
            chmod(world.rig.dir.url.path, 0o755)
            chmod(world.rig.dir.path("shared"), 0o755)
            chmod(store, 0o644)
            chmod(world.work, 0o755)
            try world.fake.clearRequests()
            let pairs = world.baseEnvironment.sorted { $0.key < $1.key }.map { Array($0.key.utf8) + [UInt8(ascii: "=")] + $0.value }
            let result = RawCommand.run("/usr/bin/setpriv", ["--reuid", "65534", "--regid", "65534", "--clear-groups",
                                                             BuiltProducts.executable("hd-show").path, "--db", store,
                                                             "--save-attachments", world.path("readonly/x"), message].map { Array($0.utf8) },
                                        environment: pairs, directory: "/", timeout: 60)
            checkDoor(result, "hd-show", "--save-attachments readonly/x as uid 65534")
            #expect(result.status == 78 && result.stderrText.contains("cannot save files there"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: world.path("readonly/x")))
            #expect(try world.fake.requests().filter { !$0.path.hasSuffix("/token") }.isEmpty, "readonly: fetched before refusing")
        }
        // And a directory that is missing is made, 0700, only once there is a file to save.
        let fresh = world.path("new/deeper")
        let saved = world.run("hd-show", ["--save-attachments", fresh, message])
        checkDoor(saved, "hd-show", "--save-attachments new/deeper")
        #expect(saved.status == 0 && FileManager.default.fileExists(atPath: fresh), "\(saved)")
        world.fake.stop()
        #expect(world.attachmentMessages.count > 1)
        let offline = world.run("hd-show", ["--save-attachments", world.path("offline/dir"), message])
        checkDoor(offline, "hd-show", "--save-attachments offline")
        #expect(offline.status == 75 && !FileManager.default.fileExists(atPath: world.path("offline")), "\(offline)")
    }

    @Test("r37_save_attachments_into_an_empty_name_writes_nothing_at_the_root")
    func r37_save_attachments_into_an_empty_name_writes_nothing_at_the_root() throws {
        let world = try DoorWorld(count: 40)
        let message = try #require(world.attachmentMessages.first)
        #expect(try world.rig.run("hd-show", message).status == 0)  // its body, and so its attachments, stored
        let rootBefore = DoorWorld.rootNames()
        let result = world.run("hd-show", ["--save-attachments", "", message])
        let created = world.rootLitter(since: rootBefore, message: message)
        #expect(created.isEmpty, "wrote \(created) at the top of the file system")
        #expect(result.status == 64 && result.stderrText.contains("an empty directory name"), "\(result)")
    }

    @Test("r37_save_attachments_into_a_device_is_refused_before_fetching: /dev/full and a FIFO give 78, nothing fetched, nothing made")
    func r37_save_attachments_into_a_device_is_refused_before_fetching() throws {
        let world = try DoorWorld(count: 40)
        let message = try #require(world.attachmentMessages.first)
        for target in ["/dev/full", world.path("fifo")] {
            try world.fake.clearRequests()
            let result = world.run("hd-show", ["--save-attachments", target, message])
            #expect(result.status == 78 && result.stderrLines.count == 1 && result.stderrText.contains("not a directory"), "\(target): \(result)")
            #expect(try world.fake.requests().filter { !$0.path.hasSuffix("/token") }.isEmpty, "\(target): fetched before refusing")
        }
        // Offline, a directory that did not exist is not left behind: with the body stored
        // (its attachments known) and without (Gmail cannot say what they are).
        #expect(world.run("hd-show", [message]).status == 0)
        world.fake.stop()
        let unknown = world.run("hd-show", ["--save-attachments", world.path("made/here"), try #require(world.attachmentMessages.last)])
        #expect(unknown.status == 75 && !FileManager.default.fileExists(atPath: world.path("made")), "\(unknown)")
        let offline = world.run("hd-show", ["--save-attachments", world.path("made/here"), message])
        #expect(offline.status == 75 && !FileManager.default.fileExists(atPath: world.path("made")), "\(offline)")
    }

    @Test("--db and the credentials files: a directory, a FIFO, a device, a socket, a link loop, an empty or huge file")
    func fileOperands() throws {
        let world = try DoorWorld(count: 10)
        try world.fake.clientSecretJSON.write(toFile: world.path("client_secret.json"), atomically: true, encoding: .utf8)
        try world.fake.refreshToken.write(toFile: world.path("refresh_token"), atomically: true, encoding: .utf8)
        try Data(repeating: 0x7B, count: 3 << 20).write(to: URL(fileURLWithPath: world.path("huge")))
        let things = [world.path("dir"), world.path("fifo"), "/dev/null", "/dev/zero", "/dev/full", world.path("socket"), world.path("loop1"),
                      world.path("empty"), world.path("file"), world.path("huge"), world.path("file/below")]
        let commands: [(String, [String])] = [("hd-ls", []), ("hd-search", ["x"]), ("hd-show", [world.messages[0]]), ("hd-labels", []),
                                              ("hd-pending", []), ("hd-mark", ["--no-flush", "star", world.messages[1]]), ("hd-undo", ["--list"]),
                                              ("hd-undo", ["--no-flush"]), ("hd-labels", ["create", "--no-flush", "X"])]
        let dump = world.dump()
        for thing in things {
            for (command, arguments) in commands {
                let before = world.tree()
                let result = world.run(command, ["--db", thing] + arguments)
                checkDoor(result, command, "\(command) --db \(thing)")
                #expect(result.status == 78, "\(command) --db \(thing): \(result)")
                #expect(RawTree.changes(before, world.tree()).allSatisfy { $0 == "./work" }, "\(command) --db \(thing)")
            }
            for (option, other) in [("--client-secret", "--refresh-token-file"), ("--refresh-token-file", "--client-secret")] {
                let otherFile = other == "--client-secret" ? world.path("client_secret.json") : world.path("refresh_token")
                let result = world.run("hd-auth", ["add", world.fake.email, option, thing, other, otherFile])
                checkDoor(result, "hd-auth", "hd-auth add \(option) \(thing)")
                // A readable text file is a refresh token to try: Google refuses it (77).
                let token = option == "--refresh-token-file" && [world.path("file"), world.path("huge")].contains(thing)
                #expect(token ? [77, 78].contains(result.status ?? -1) : result.status == 78, "hd-auth add \(option) \(thing): \(result)")
            }
        }
        #expect(world.dump() == dump)
        try StoreDump.expectSound(world.rig.storePath)
    }

    @Test("known, in others' files: --before REF quoted whole; a refresh-token file of 3 MB or with spaces sent to Google as a token")
    func knownIssuesInOthersFiles() throws {
        let world = try DoorWorld(count: 5)
        let long = "thread:" + String(repeating: "\u{1B}[2J", count: 2_500)
        for command in ["hd-ls", "hd-search"] {
            let result = world.run(command, ["--before", long] + (command == "hd-search" ? ["x"] : []))
            #expect(result.status == 64)
            #expect(result.stderrLines.first.map { $0.unicodeScalars.count <= 500 && $0.contains(#"\e[2J"#) } == true, "\(result)")
        }
        try world.fake.clientSecretJSON.write(toFile: world.path("client_secret.json"), atomically: true, encoding: .utf8)
        for (name, token) in [("huge", String(repeating: "a", count: 3 << 20)), ("spaced", "not a token\u{1}at all")] {
            try token.write(toFile: world.path(name), atomically: false, encoding: .utf8)
            try world.fake.clearRequests()
            let result = world.run("hd-auth", ["add", world.fake.email, "--client-secret", world.path("client_secret.json"),
                                               "--refresh-token-file", world.path(name)])
            checkDoor(result, "hd-auth", "hd-auth add --refresh-token-file \(name)")
            let requests = try world.fake.requests()
            #expect(result.status == 78, "\(name): \(result)")
            #expect(requests.isEmpty, "\(name): sent to the token endpoint")
        }
    }

    // MARK: - Environment

    @Test("the environment every command reads: store and configuration paths that are not files, control characters, invalid UTF-8; HOME, TZ, COLUMNS, NO_COLOR, LANG and the HUDSON_* tunables")
    func environment() throws {
        let seed = DoorRandom.seed ^ 0x454E_5649
        var random = DoorRandom(state: seed)
        let world = try DoorWorld()
        world.fake.stop()
        func texts(_ values: [String], _ extra: [[UInt8]?] = [nil]) -> [[UInt8]?] { values.map { Optional(Array($0.utf8)) } + extra }
        let paths: [[UInt8]] = [world.path("dir"), world.path("fifo"), "/dev/null", "/dev/full", "/dev/zero", world.path("socket"),
                                world.path("loop1"), world.path("file"), world.path("empty"), "", "relative/store.sqlite3",
                                world.path("missing/\u{1B}[31m\n\u{202E}.sqlite3"), String(repeating: "p/", count: 3000)].map { Array($0.utf8) }
            + [Array(world.path("bad").utf8) + [0xFF, 0xFE], Array(world.rig.storePath.utf8)]
        let choices: [String: [[UInt8]?]] = [
            "HUDSON_DB": paths.map { Optional($0) } + [nil],
            "HUDSON_CONFIG_DIR": paths.map { Optional($0) } + [nil],
            "HUDSON_ACCOUNT": texts(["", "\u{1B}[2J", "demo@hudson.test", "eve@example.net", " ", "\u{202E}x"], [[0xFF], nil]),
            "HOME": texts(["", "/dev/null", "relative", world.path("fifo")], [[0x2F, 0xFF], nil]),
            "XDG_DATA_HOME": texts(["relative", world.path("dir"), ""], [[0x2F, 0xFF], nil]),
            "XDG_CONFIG_HOME": texts(["relative", "/dev/null"]),
            "TZ": texts(["garbage", "", ":", ":/dev/zero", ":" + world.path("fifo"), world.path("fifo"), "fifo", ":/dev/stdin", world.path("dir"),
                         String(repeating: "A", count: 5000), "UTC+99999", "EST5EDT,M99.9.9", "Europe/Paris", "Pacific/Kiritimati"], [[0x3A, 0xFF], nil]),
            "TZDIR": texts([world.work, "/nonexistent", ""]),
            "COLUMNS": texts(["-1", "0", "1", "1000000000000", "99999999999999999999", "abc", ""]),
            "NO_COLOR": texts(["", "1", "\u{1B}[31m"]),
            "TERM": texts(["dumb", "xterm", "\u{1B}[31m", ""]),
            "LANG": texts(["C", "POSIX", "tr_TR.UTF-8", "xx_YY.garbage", ""], [[0xFF], nil]),
            "LC_ALL": texts(["C", "xx.garbage"], [[0xFF], nil]),
            "LC_CTYPE": texts(["C.UTF-8", "ja_JP.SJIS"]),
            "HUDSON_QUOTA_PER_MINUTE": texts(["-1", "0", "abc", "99999999999999999999", ""]),
            "HUDSON_DEBUG": texts(["1", "", "yes"]),
            "HUDSON_GMAIL_URL": texts(["garbage", "file:///etc/passwd", "http://\u{1B}[31m", "http://127.0.0.1:1"]),
            "HUDSON_OAUTH_TOKEN_URL": texts(["garbage", "http://127.0.0.1:1/token"]),
            "HUDSON_OAUTH_AUTH_URL": texts(["garbage", "javascript:alert(1)", "http://\u{202E}x"]),
        ]
        let commands: [(String, [String])] = [
            ("hd-ls", []), ("hd-ls", ["-n", "3", "after:2025/1/1"]), ("hd-search", ["in:anywhere"]), ("hd-search", ["--explain", "x"]),
            ("hd-show", [world.messages[1]]), ("hd-show", ["--no-fetch", world.threads[0]]), ("hd-labels", []), ("hd-pending", ["--json"]),
            ("hd-mark", ["--no-flush", "unread", world.messages[2]]), ("hd-undo", ["--list"]), ("hd-auth", ["list"]), ("hd-auth", ["status"]),
        ]
        let rootBefore = DoorWorld.rootNames()
        for iteration in 0..<(Self.iterations * 2) {
            var changes: [String: [UInt8]?] = [:]
            for name in choices.keys.sorted() where random.chance(25) { changes[name] = random.pick(choices[name]!) }
            let (command, arguments) = random.pick(commands)
            let context = "seed \(seed) iteration \(iteration): \(command) \(arguments) with "
                + changes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.map { describe([$0]) } ?? "(unset)")" }.joined(separator: " ")
            let dump = world.dump()
            let before = world.tree()
            let result = world.run(command, arguments, environment: changes)
            checkDoor(result, command, context)
            let refused = ![0, 1, 2].contains(result.status ?? -1)
            if Self.readers.contains(command) || refused || arguments.contains("--list") || command == "hd-auth" {
                #expect(world.dump() == dump, "the store changed: \(context)\n\(result)")
            }
            // Nothing written but the store (compared above): no store made at a repaired
            // name, no configuration made anywhere, no file read from a FIFO.
            // Foundation, which only hd-auth links here, makes ~/.cache/org.swift.foundation.URLCache
            // and ~/.local/share/debug wherever HOME points; the quota ledger counts tried requests.
            let home = changes["HOME"].map { value -> String in
                let text = String(decoding: value ?? [], as: UTF8.self)
                return text.hasPrefix("/") ? "/nowhere" : "./work/" + text
            } ?? "./home"
            let changed = RawTree.changes(before, world.tree()).filter { path in
                path != "./work" && !path.hasPrefix("./config/quota")
                    && !(command == "hd-auth" && [home + "/.cache", home + "/.local", home].contains { path == $0 || path.hasPrefix($0 + "/") })
            }
            #expect(changed.isEmpty, "wrote files: \(context)\n\(changed)\n\(result)")
        }
        #expect(DoorWorld.rootNames() == rootBefore)
        #expect(try world.rig.run("hd-pending", "--count").stdout != "0\n", "the queued change was lost")
        try StoreDump.expectSound(world.rig.storePath)
    }

    @Test("r37_tz_naming_a_fifo_does_not_hold_a_command: TZ=:FIFO, TZ=FIFO, TZ=name under TZDIR; times are UTC and it says so once")
    func r37_tz_naming_a_fifo_does_not_hold_a_command() throws {
        let world = try DoorWorld(count: 5)
        world.fake.stop()
        // A command that prints a date, so the C library reads the zone.
        let arguments = ["-n", "3", "in:anywhere"]
        let utc = world.run("hd-search", arguments).stdoutText
        #expect(!utc.isEmpty)
        for (tz, tzdir) in [(":" + world.path("fifo"), nil), (world.path("fifo"), nil), ("fifo", world.work), (":/dev/stdin", nil)] as [(String, String?)] {
            var environment: [String: [UInt8]?] = ["TZ": Array(tz.utf8)]
            if let tzdir { environment["TZDIR"] = Array(tzdir.utf8) }
            // Standard input is the FIFO too, for TZ=:/dev/stdin.
            let result = world.run("hd-search", arguments, environment: environment, stdin: .path(world.path("fifo")), timeout: 20)
            checkDoor(result, "hd-search", "TZ=\(tz)")
            #expect(result.status == 0 && result.stdoutText == utc, "TZ=\(tz): \(result)")
            #expect(result.stderrLines.count == 1 && result.stderrText.contains("not a time zone file; times are shown in UTC"), "\(result)")
        }
    }

    @Test("r37_an_environment_path_that_is_not_utf8_is_refused_not_repaired: HUDSON_DB, HUDSON_CONFIG_DIR, HOME")
    func r37_an_environment_path_that_is_not_utf8_is_refused_not_repaired() throws {
        let world = try DoorWorld(count: 5)
        try world.fake.clientSecretJSON.write(toFile: world.path("client_secret.json"), atomically: true, encoding: .utf8)
        try world.fake.refreshToken.write(toFile: world.path("refresh_token"), atomically: true, encoding: .utf8)
        let bad = Array(world.path("store").utf8) + [0xFF] + Array(".sqlite3".utf8)
        let add = ["add", world.fake.email, "--lookback-days", "0", "--client-secret", world.path("client_secret.json"),
                   "--refresh-token-file", world.path("refresh_token")]
        for (name, command, arguments) in [("HUDSON_DB", "hd-auth", add), ("HUDSON_DB", "hd-ls", []), ("HUDSON_CONFIG_DIR", "hd-auth", add)] {
            let before = world.tree()
            let result = world.run(command, arguments, environment: [name: bad])
            checkDoor(result, command, "\(name) not UTF-8")
            #expect(result.status == 78 && result.stderrText.contains("\(name) is not valid UTF-8"), "\(name): \(result)")
            let made = RawTree.changes(before, world.tree()).filter { $0 != "./work" }
            if name == "HUDSON_DB" && command == "hd-auth" {
                #expect(made.isEmpty, "\(name): made \(made)")
                #expect(made.allSatisfy { $0.hasPrefix("./config") }, "\(name): made \(made)")
            } else {
                #expect(made.isEmpty, "\(name): made \(made)")
            }
        }
        // HOME is read only when nothing before it names the store.
        let home = world.run("hd-ls", [] as [String], environment: ["HUDSON_DB": nil, "HOME": [0x2F, 0xFF]])
        #expect(home.status == 78 && home.stderrText.contains("HOME is not valid UTF-8"), "\(home)")
        #expect(world.run("hd-ls", ["-n", "1"], environment: ["HOME": [0x2F, 0xFF]]).status == 0, "HOME is not read when HUDSON_DB names the store")
    }

    @Test("on a terminal of 0 or 1 columns, COLUMNS past every bound: no crash, no hang, nothing that drives the terminal")
    func terminalWidths() throws {
        let world = try DoorWorld(count: 20)
        world.fake.stop()
        let commands = [["hd-ls"], ["hd-search", "-m", "in:anywhere"], ["hd-show", "--no-fetch", world.threads[0]], ["hd-labels"],
                        ["hd-pending"], ["hd-undo", "--list"], ["hd-auth", "list"]]
        for columns in ["-1", "0", "1", "1000000000000", "9223372036854775807", "99999999999999999999", "abc"] {
            for size in ["0", "1"] {
                for command in commands {
                    let line = ([BuiltProducts.executable(command[0]).path] + command.dropFirst()).map { "'\($0)'" }.joined(separator: " ")
                    var environment = world.baseEnvironment
                    environment["COLUMNS"] = Array(columns.utf8)
                    environment["TERM"] = Array("xterm".utf8)
                    let pairs = environment.sorted { $0.key < $1.key }.map { Array($0.key.utf8) + [UInt8(ascii: "=")] + $0.value }
                    // script(1) gives the command a terminal of the size stty sets (0 columns: COLUMNS decides).
                    let result = RawCommand.run("/usr/bin/script", ["-qec", "stty cols \(size) rows 50; exec \(line)", "/dev/null"].map { Array($0.utf8) },
                                                environment: pairs, directory: world.work, timeout: 30)
                    let context = "\(command) on a terminal of \(size) columns, COLUMNS=\(columns)"
                    #expect(!result.timedOut && result.signal == nil && result.status == 0, "\(context): \(result)")
                    // Colour is allowed here (TERM=xterm, no NO_COLOR): only SGR sequences may pass.
                    let text = result.stdoutText.replacingOccurrences(of: #"\u{1B}\[[0-9;]*m"#, with: "", options: .regularExpression)
                        .replacingOccurrences(of: "\r\n", with: "\n")
                    #expect(!drivesTerminal(text), "\(context): \(text.prefix(300).debugDescription)")
                }
            }
        }
    }

    // MARK: - Standard output

    @Test("standard output closed, /dev/full, or a pipe nobody reads until it is closed", arguments: ["closed", "full", "stalled"])
    func outputs(state: String) throws {
        let world = try DoorWorld(count: 40)
        let output: RawOutput = state == "closed" ? .closed : state == "full" ? .path("/dev/full") : .stalled(1.5)
        let many = Array(repeating: world.messages, count: 20).flatMap { $0 }
        let commands: [(String, [String])] = [
            ("hd-ls", []), ("hd-ls", ["--version"]), ("hd-search", ["--help"]), ("hd-search", ["-m", "in:anywhere"]), ("hd-search", ["-c", "in:anywhere"]),
            ("hd-show", ["--no-fetch"] + many), ("hd-show", ["--raw", world.messages[0]]), ("hd-show", ["--mbox"] + world.messages.prefix(10)), ("hd-show", ["--json", "--no-fetch"] + many),
            ("hd-labels", []), ("hd-pending", []), ("hd-undo", ["--list"]), ("hd-mark", ["--dry-run", "archive"] + world.threads),
            ("hd-mark", ["--no-flush", "read", world.messages[3]]), ("hd-ls", ["--changed-since", "0"]), ("hd-auth", ["list"]),
        ]
        for (command, arguments) in commands {
            let context = "\(command) \(arguments.prefix(4)) > \(output.name)"
            let before = world.dump()
            let result = world.run(command, arguments, stdout: output)
            checkDoor(result, command, context)
            if state == "stalled" {
                // A reader that goes away is a quiet success (the contract's 0).
                #expect(result.status == 0, "\(context): \(result)")
            } else if command == "hd-mark" && !arguments.contains("--dry-run") {
                #expect(result.status == 0, "prints nothing on its output: \(context): \(result)")
            } else {
                // Output that cannot be written is a failure said once, 75 as the table has it.
                #expect(result.status == 75 && result.stderrLines.last?.contains("cannot write output") == true, "\(context): \(result)")
            }
            if command != "hd-mark" || arguments.contains("--dry-run") { #expect(world.dump() == before, "\(context): the store changed") }
        }
        // The change made with its output closed is there and queued.
        let pending = try world.rig.run("hd-pending", "--json").stdout
        #expect(pending.contains(String(world.messages[3].dropFirst("message:".count))), "\(pending)")
        try StoreDump.expectSound(world.rig.storePath)
    }

    @Test("r37_help_and_version_into_a_full_disk_exit_75_not_64")
    func r37_help_and_version_into_a_full_disk_exit_75_not_64() throws {
        let world = try DoorWorld(count: 5)
        world.fake.stop()
        for (command, arguments) in [("hd-ls", ["--help"]), ("hd-show", ["--version"]), ("hd-mark", ["--help"])] {
            let result = world.run(command, arguments, stdout: .path("/dev/full"))
            #expect(result.status == 75 && result.stderrLines == ["\(command): cannot write output: No space left on device"], "\(command): \(result)")
        }
    }

    // MARK: - hd-show's fetch child

    /// hd-show, copied beside a stand-in for hd-sync that answers `script`: what hd-show
    /// does with every answer its fetch child may give, whatever the child.
    func showWithChild(_ world: DoorWorld, _ script: String, _ arguments: [String]) throws -> RawResult {
        let directory = world.rig.dir.path("child")
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let show = directory + "/hd-show"
        if !FileManager.default.fileExists(atPath: show) {
            try FileManager.default.copyItem(atPath: BuiltProducts.executable("hd-show").path, toPath: show)
        }
        try ("#!/bin/sh\n" + script + "\n").write(toFile: directory + "/hd-sync", atomically: false, encoding: .utf8)
        chmod(directory + "/hd-sync", 0o755)
        var environment = world.baseEnvironment
        environment["PATH"] = Array("/usr/bin:/bin".utf8)
        let pairs = environment.sorted { $0.key < $1.key }.map { Array($0.key.utf8) + [UInt8(ascii: "=")] + $0.value }
        return RawCommand.run(show, arguments.map { Array($0.utf8) }, environment: pairs, directory: world.work, timeout: 30)
    }

    @Test("hd-show's fetch child answering garbage, huge counts, a signal, nothing, a flood: one line, a documented status, nothing shown as fetched")
    func fetchChild() throws {
        let world = try DoorWorld(count: 20)
        world.fake.stop()
        let message = world.bodilessMessage
        let answers = [
            "echo 'bytes 99999999999999999999'", "echo 'bytes -5'", "printf 'bytes 3\\nab'", "printf 'failed 78\\t\\033[31mevil\\ttext\\n'",
            "printf 'failed 75\\t%s\\tt\\n' \"$(head -c 100000 /dev/zero | tr '\\0' x)\"", "kill -9 $$", "exit 0", "exit 3",
            "head -c 1000000 /dev/urandom", "printf 'stored\\nstored\\nstored\\n'", "printf 'deleted\\n'", "printf '\\n\\n'",
        ]
        for answer in answers {
            for arguments in [[message], ["--raw", message], ["--json", message]] {
                let result = try showWithChild(world, answer, arguments)
                checkDoor(result, "hd-show", "child \(answer.prefix(60).debugDescription) for \(arguments)")
                if arguments.contains("--raw") {
                    #expect(result.status != 0, "a source never fetched, exit 0: \(answer): \(result)")
                }
            }
        }
        // Answers a real hd-sync never gives, which hd-show must still not take at their word.
        for (answer, name) in [("printf 'failed 0\\tok\\tx\\n'", "a failure answered with status 0"),
                               ("printf 'failed 64\\tm\\tt\\n'", "the child's usage error")] {
            let result = try showWithChild(world, answer, ["--raw", message])
            #expect(result.status != 0 && result.status != 64, "\(name), \(answer): \(result)")
        }
        try StoreDump.expectSound(world.rig.storePath)
    }

    @Test("hd-show's real fetch child against Gmail failing: 500, 404, 400, wrong types and shapes, not JSON, 50 MB, dropped; sources, bodies and attachments")
    func fetchChildAgainstGmailFaults() throws {
        let seed = DoorRandom.seed ^ 0x4641_554C
        var random = DoorRandom(state: seed)
        let world = try DoorWorld(count: 40)
        let modes: [[String: Any]] = [
            ["status": 500, "times": -1], ["status": 404, "times": -1], ["status": 400, "times": -1], ["status": 403, "times": -1],
            ["mode": "wrong_type", "times": -1], ["mode": "wrong_shape", "times": -1], ["mode": "invalid_json", "times": -1],
            ["mode": "oversized", "size": 50_000_000, "times": -1], ["mode": "drop", "times": -1], ["mode": "truncate", "times": -1],
            ["status": 503, "times": 1], ["mode": "delay", "delay_ms": 300, "times": 1],
        ]
        let candidates = Array(world.attachmentMessages.prefix(4)) + [world.bodilessMessage]
        for iteration in 0..<Scale.pick(16, long: 80) {
            let message = random.pick(candidates)
            let id = String(message.dropFirst("message:".count))
            var rule = random.pick(modes)
            rule["path"] = random.pick(["messages/\(id)$", "messages/\(id)/attachments/", "messages/\(id)"])
            try world.fake.faults([rule])
            let arguments = random.pick([[message], ["--raw", message], ["--mbox", message], ["--json", message],
                                         ["--save-attachments", "saved-\(iteration)", message]])
            let context = "seed \(seed) iteration \(iteration): hd-show \(arguments) with \(rule)"
            let before = world.tree()
            let result = world.run("hd-show", arguments, timeout: 120)
            checkDoor(result, "hd-show", context)
            try world.fake.admin("DELETE", "faults")
            // Nothing saved that is not whole: a failed save leaves its directory as it was.
            let changed = RawTree.changes(before, world.tree()).filter { $0 != "./work" && !$0.hasPrefix("./config/quota") }
            if result.status != 0 {
                #expect(changed.allSatisfy { !$0.hasPrefix("./work/saved") }, "\(context)\n\(changed)\n\(result)")
                #expect(result.stdout.isEmpty || !arguments.contains("--raw"), "a partial source printed: \(context)\n\(result)")
            }
        }
        try StoreDump.expectSound(world.rig.storePath)
    }

    // MARK: - hd-auth's loopback listener

    @Test("hd-auth login's loopback listener: garbage, 20 KB heads, idle and half-open connections, other paths and methods; then the real redirect completes the login")
    func loopbackListener() throws {
        let seed = DoorRandom.seed ^ 0x4C4F_4F50
        var random = DoorRandom(state: seed)
        let world = try DoorWorld(count: 5)
        try world.fake.clientSecretJSON.write(toFile: world.rig.configDirectory + "/client_secret.json", atomically: true, encoding: .utf8)
        let login = try world.rig.start("hd-auth", ["login", "--no-browser", "--lookback-days", "0"])
        defer { if login.isRunning { world.rig.kill9(login) } }
        // The consent URL, from standard error.
        var consent: URL?
        let deadline = Date().addingTimeInterval(30)
        while consent == nil && Date() < deadline {
            let text = (try? String(contentsOfFile: login.errPath, encoding: .utf8)) ?? ""
            consent = text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http") }.flatMap { URL(string: String($0)) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let url = try #require(consent)
        let redirect = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
        let port = try #require(URLComponents(string: redirect)?.port)
        // Hostile clients, several at once.
        var idle: [Int32] = []
        for _ in 0..<20 {
            let fd = connectLoopback(port)
            guard fd >= 0 else { continue }
            switch random.count(0..<8) {
            case 0: idle.append(fd)  // says nothing
            case 1: send(fd, Array(repeating: UInt8(ascii: "A"), count: 20_000)); close(fd)
            case 2: send(fd, Array("GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n".utf8)); close(fd)
            case 3: send(fd, Array("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".utf8)); close(fd)
            case 4: send(fd, (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }); close(fd)
            case 5: send(fd, Array("GET /?x=\u{1B}[31m HTTP/1.1\r\n".utf8)); idle.append(fd)  // half a head
            case 6: send(fd, Array("GET / HTTP/1.1\r\n\r\n".utf8)); close(fd)  // no query: ignored
            default: send(fd, Array("GET /?%zz=%%% HTTP/1.1\r\n\r\n".utf8)); close(fd)
            }
        }
        #expect(login.isRunning, "a hostile client ended the login")
        // The browser: consent at the fake, then its redirect to the listener.
        let location = try followConsent(url)
        let answer = try loopbackGet(port, location)
        for fd in idle { close(fd) }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        let exit = world.rig.finish(login, timeout: 60)
        #expect(exit.status == 0 && !exit.killed, "\(exit)")
        #expect(exit.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("hd-auth: ") || $0.hasPrefix("  http") || $0.isEmpty }, "\(exit)")
        #expect(!drivesTerminal(exit.stderr))
        try StoreDump.expectSound(world.rig.storePath)
        try world.rig.expectNoSecretsLeaked()
    }
}

private func connectLoopback(_ port: Int) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if connected != 0 { close(fd); return -1 }
    return fd
}

private func send(_ fd: Int32, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
}

/// The fake's consent page answers with a redirect; its Location, not followed.
private func followConsent(_ url: URL) throws -> String {
    let result = try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-o", "/dev/null", "-w", "%{redirect_url}", url.absoluteString],
                                       environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
    return result.stdout
}

/// A GET of `location` sent to the listener by hand, and its whole answer.
private func loopbackGet(_ port: Int, _ location: String) throws -> String {
    let components = try #require(URLComponents(string: location))
    let target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
    let fd = connectLoopback(port)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    send(fd, Array("GET \(target)\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    while true {
        let count = recv(fd, &chunk, chunk.count, 0)
        if count <= 0 { break }
        answer += chunk[0..<count]
    }
    return String(decoding: answer, as: UTF8.self)
}
