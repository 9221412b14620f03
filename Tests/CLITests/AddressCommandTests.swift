// hd-address (issue 42): ranked prefix matches from the store's address book, text, NDJSON
// and mutt's query_command format, checked with the real mutt; near-miss recipients.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

extension CLIFixture {
    /// Mail to and from a few people: Alice written to twice, Al read often, Alan recent,
    /// and a name that tries to add a field, a line and a terminal escape.
    @discardableResult
    func addressMailbox() throws -> Store {
        let store = try openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        func message(_ id: String, minute: Int64, labels: [String], from: String, to: String = "Ann <ann@example.com>") -> MessageSnapshot {
            MessageSnapshot(id: id, threadID: id, historyID: 1000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
                            labelIDs: labels, headers: MessageHeaders(subject: "s", from: from, to: to, messageID: "<\(id)@example.org>"))
        }
        _ = try store.applySnapshots([
            message("1", minute: 1, labels: ["INBOX"], from: "Al Often <al.often@example.org>"),
            message("2", minute: 2, labels: ["INBOX"], from: "Al Often <al.often@example.org>"),
            message("3", minute: 3, labels: ["SENT"], from: "Ann <ann@example.com>", to: "Alice Written <alice@example.net>"),
            message("4", minute: 4, labels: ["SENT"], from: "Ann <ann@example.com>", to: "alice@example.net"),
            message("5", minute: 5, labels: ["INBOX"], from: "Alan Recent <alan@example.com>"),
            message("6", minute: 6, labels: ["INBOX"], from: "\"Al\\\tx\u{1B}[2J\" <alx@example.org>"),
        ], accountID: account.id)
        return store
    }
}

/// mutt, when installed (scripts/lib.sh installs it for the suite).
enum Mutt {
    static let path = ["/usr/bin/mutt", "/usr/local/bin/mutt"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let script = ["/usr/bin/script"].first { FileManager.default.isExecutableFile(atPath: $0) }
}

@Suite("hd-address: ranked addresses for completion and mail clients")
struct AddressCommandTests {
    @Test("ranked by mail sent to, then received from, then recency; names match by word; exit 1 on none")
    func ranked() throws {
        let f = CLIFixture()
        try f.addressMailbox()
        let result = try f.run("hd-address", "al")
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.map { String($0.prefix { $0 != "\t" }) }
            == ["alice@example.net", "al.often@example.org", "alx@example.org", "alan@example.com"])
        #expect(try f.run("hd-address", "written").lines.count == 1)
        #expect(try f.run("hd-address", "AL", "-n", "1").lines.count == 1)
        let none = try f.run("hd-address", "zz")
        #expect(none.status == 1 && none.stdout.isEmpty && none.stderr.isEmpty)
        // A name's escape sequence never reaches the terminal.
        #expect(!result.stdout.contains("\u{1B}"))
    }

    @Test("--json: one address record per line")
    func json() throws {
        let f = CLIFixture()
        try f.addressMailbox()
        let result = try f.run("hd-address", "alice", "--json")
        #expect(result.status == 0)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(result.lines[0].utf8)) as? [String: Any])
        #expect(record["type"] as? String == "address" && record["id"] as? String == "alice@example.net")
        #expect(record["name"] as? String == "Alice Written" && record["sent"] as? Int == 2 && record["received"] as? Int == 0)
        #expect(record["last_seen"] as? String == "2026-01-01T00:04:00Z")
    }

    @Test("--format mutt: a first line, then address<TAB>name<TAB>info; a hostile name stays one field")
    func muttFormat() throws {
        let f = CLIFixture()
        try f.addressMailbox()
        let result = try f.run("hd-address", "--format", "mutt", "al")
        #expect(result.status == 0)
        #expect(result.lines.first == "hd-address: 4 matches")
        #expect(result.lines[1] == "alice@example.net\tAlice Written\tsent 2, received 0")
        for line in result.lines.dropFirst() {
            #expect(line.split(separator: "\t", omittingEmptySubsequences: false).count == 3, "\(line)")
            #expect(!line.contains("\u{1B}"))
        }
        #expect(try f.run("hd-address", "--format", "mutt", "--json", "al").status == 64)
    }

    @Test("the real mutt's query (Q) lists hd-address's matches",
          .enabled(if: Mutt.path != nil && Mutt.script != nil,
                   "mutt (or script from bsdutils) is not installed: apt-get install mutt (scripts/lib.sh installs it)"))
    func realMutt() throws {
        let f = CLIFixture()
        try f.addressMailbox()
        let mutt = try #require(Mutt.path)
        let command = BuiltProducts.executable("hd-address").path
        let rc = f.dir.path("muttrc")
        try "set query_command=\"HUDSON_DB='\(f.storePath)' '\(command)' --format mutt %s\"\nset quit=yes\nset folder='\(f.dir.path(""))'\n"
            .write(toFile: rc, atomically: true, encoding: .utf8)
        try "".write(toFile: f.dir.path("empty.mbox"), atomically: true, encoding: .utf8)
        // A home mutt needs not ask to create anything in: a prompt would eat the pushed keys.
        try FileManager.default.createDirectory(atPath: f.dir.path("home"), withIntermediateDirectories: true)
        let screen = f.dir.path("screen")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Mutt.script))
        process.arguments = ["-qfec", "\(mutt) -n -F '\(rc)' -f '\(f.dir.path("empty.mbox"))' -e 'push Qwritten<enter>'", screen]
        process.environment = ["TERM": "xterm", "HOME": f.dir.path("home"), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit() }
        // mutt draws its query menu and waits for a key: wait (bounded) for the match on its screen.
        var drawn = ""
        for _ in 0..<300 where !drawn.contains("alice@example.net") {
            Thread.sleep(forTimeInterval: 0.1)
            drawn = (try? String(contentsOfFile: screen, encoding: .utf8)) ?? ""
        }
        #expect(drawn.contains("alice@example.net"), "mutt's screen:\n\(drawn.suffix(2000))")
        #expect(drawn.contains("Alice Written"))
        #expect(!drawn.contains("al.often@example.org"))
    }

    @Test("generated prefixes and options: no crash, one line on stderr at most, a documented status",
          .timeLimit(.minutes(2)))
    func generatedInput() throws {
        let f = CLIFixture()
        try f.addressMailbox()
        var generator = AddressSeededGenerator(seed: 42)
        let pieces = ["al", "%", "_", "\\", "'", "\"", "\u{1B}[2J", "\u{0}", "é", "--", "-n", "--format", "mutt", "x", "--json",
                      "--limit", "-1", "99999999999999999999", "\t", " ", "--ids", "--null", "*", "?"]
        for round in 0..<60 {
            let arguments = (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .filter { !$0.contains("\u{0}") }
            let result = try CommandRunner.run(BuiltProducts.executable("hd-address"), arguments, environment: f.environment, timeout: 30)
            #expect([0, 1, 64].contains(result.status), "seed 42 round \(round): \(arguments) \(result)")
            // One line saying what is wrong (a usage error adds the usage line).
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count <= 1 || (errors.count == 2 && errors[1].hasPrefix("usage: ")),
                    "seed 42 round \(round): \(arguments) \(result)")
            #expect(errors.first.map { $0.hasPrefix("hd-address: ") } ?? true, "seed 42 round \(round): \(arguments) \(result)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failure names its seed.
struct AddressSeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
