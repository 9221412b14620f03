// hd-export --two-way under generated input (issue 39): what a Maildir client (or anything
// else) does to the export's files, and hostile two-way lines in the state file. Each run
// is bounded (a timeout); the seed is printed with every failure (HUDSON_TEST_SEED replays).
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-export --two-way under generated input: client renames and removals, hostile state lines", .serialized)
struct ExportTwoWayGeneratedInputTests {
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        static var seed: UInt64 { ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 0x3939_0001 }
    }

    static let documented: Set<Int32> = [0, 2, 64, 75, 78]

    func run(_ w: ExportWorkspace, _ arguments: String...) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-export"), arguments, environment: w.f.environment, timeout: 60)
    }

    func check(_ result: CommandResult, _ context: String) {
        #expect(Self.documented.contains(result.status), "undocumented exit: \(context)\n\(result)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.hasPrefix("hd-export: ") || $0.hasPrefix("usage: ") }, "stderr: \(context)\n\(result)")
        #expect(!result.stderr.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) },
                "terminal control: \(context)\n\(result)")
        if result.status != 0 && result.status != 2 {
            #expect(lines.count == (result.status == 64 ? 2 : 1), "one line (and usage for 64): \(context)\n\(result)")
        }
    }

    /// Every name outside `target` (and the store), for "nothing written outside".
    func outside(_ w: ExportWorkspace, _ target: String) -> [String] {
        fileTree(w.f.dir.url.path).filter { !$0.hasPrefix("./work/out") }
    }

    @Test("random client operations on a two-way Maildir: a documented status, nothing outside, one action a run at most, nothing read back twice")
    func clientOperations() throws {
        let seed = Random.seed
        var random = Random(state: seed)
        for iteration in 0..<10 {
            let w = try ExportWorkspace()
            let target = w.path("out")
            let first = try run(w, "--two-way", "--no-fetch", target)
            #expect(first.status == 0, "\(first)")
            try "precious\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
            let cur = target + "/cur"
            var operations: [String] = []
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let names = try FileManager.default.contentsOfDirectory(atPath: cur).sorted()
                guard let name = names.isEmpty ? nil : names[Int.random(in: 0..<names.count, using: &random)] else { break }
                let path = cur + "/" + name
                let base = String(name.split(separator: ":")[0])
                let operation = Int.random(in: 0..<13, using: &random)
                let unique = "\(1_733_500_000 + iteration).M\(operations.count)P\(Int.random(in: 1...99_999, using: &random)).client,U=\(operations.count)"
                operations.append("\(operation) \(name)")
                switch operation {
                case 0:
                    let flags = String((0..<Int.random(in: 0...6, using: &random)).map { _ in "SFTRPDabz".randomElement(using: &random)! })
                    try? FileManager.default.moveItem(atPath: path, toPath: cur + "/" + base + ":2," + flags)
                case 1: try? FileManager.default.moveItem(atPath: path, toPath: cur + "/" + base + ":2,S\n\u{1B}[2J")
                case 2: try? FileManager.default.removeItem(atPath: path)
                case 3:
                    try? FileManager.default.removeItem(atPath: path)
                    try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "../../victim")
                case 4:
                    try? FileManager.default.removeItem(atPath: path)
                    _ = mkfifo(path, 0o600)
                case 5:
                    try? FileManager.default.removeItem(atPath: path)
                    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                case 6: try? FileManager.default.moveItem(atPath: path, toPath: target + "/new/" + base)
                case 7: try? FileManager.default.moveItem(atPath: path, toPath: cur + "/" + base.replacingOccurrences(of: ".hudson-", with: ".hudson-zz") + ":2,S")
                case 8: try? FileManager.default.copyItem(atPath: path, toPath: cur + "/" + base + ":2,FS")
                // Clients that give the file a new unique name (mu4e, mbsync's ,U=), and files that are not the export's.
                case 9:
                    let flags = String((0..<Int.random(in: 0...4, using: &random)).map { _ in "SFTRab".randomElement(using: &random)! })
                    try? FileManager.default.moveItem(atPath: path, toPath: cur + "/" + unique + ":2," + flags)
                case 10: try? FileManager.default.moveItem(atPath: path, toPath: target + "/new/" + unique)
                case 11:
                    let forged = ["X-Hudson-Id: \(base.components(separatedBy: ".hudson-").last ?? "x") \(String(repeating: "0", count: 32))",
                                  "X-Hudson-Id: ../../victim", "Message-ID: <\(unique)@example.com>", "X-Hudson-Id:"]
                    try? (forged[Int.random(in: 0..<forged.count, using: &random)] + "\nSubject: x\n\nbody\n")
                        .write(toFile: cur + "/" + unique + ":2,S", atomically: false, encoding: .utf8)
                default:
                    let hostile = [".hidden:2,S", unique + "\u{1B}[2J:2,S", String(repeating: "x", count: 250) + ":2,S"]
                    try? FileManager.default.moveItem(atPath: path, toPath: cur + "/" + hostile[Int.random(in: 0..<hostile.count, using: &random)])
                }
            }
            let context = "seed \(seed) iteration \(iteration): \(operations)"
            let before = outside(w, target)
            let second = try run(w, "--no-fetch", target)
            check(second, context)
            let third = try run(w, "--no-fetch", target)
            check(third, context)
            if second.status == 0 && third.status == 0 {
                #expect(!third.stderr.contains("read back"), "read back twice: \(context)\n\(second)\n\(third)")
            }
            #expect(outside(w, target) == before, "wrote outside the export: \(context)")
            #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n", "\(context)")
            let actions = try w.f.run("hd-undo", "--list", "--json", "-n", "1000")
            #expect(actions.lines.count <= 1, "one action at most for one run's read-back: \(context)\n\(actions)")
        }
    }

    @Test("hostile two-way lines in the state file: refused without writing (64), or accepted and kept inside the export")
    func stateLines() throws {
        let seed = Random.seed ^ 0x5354
        var random = Random(state: seed)
        let hostile = ["B a1 ../../victim", "B a1 -", "P a1 /etc/passwd", "P a1 cur/../../victim", "G ../victim", "R ", "H a1 zz",
                       "two-way sideways", "two-way maildir", "two-way notmuch", "export-id 123", "export-id " + String(repeating: "a", count: 32),
                       "intake -1", "intake-pending 7", "intake-pending 1", "scanned 1", "scanned -1 -1", "notmuch x", "notmuch uuid -3",
                       "intake-revision x", "B a1 cur/1.hudson-a1:2,S\u{1B}", "H a1 " + String(repeating: "f", count: 40),
                       "M a1 cur/client,U=1:2,S", "M a1 new/client", "M a1 cur/.hidden", "M a1 cur/", "B a1 new/client:2,S",
                       "W a1 inbox unread", "W a1", "W a1  x", "W ../x inbox", "W a1 %zz"]
        for iteration in 0..<20 {
            let w = try ExportWorkspace()
            let target = w.path("out")
            #expect(try run(w, "--two-way", "--no-fetch", target).status == 0)
            try "precious\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
            var lines = try exportStateText(target + "/.hudson-export").split(separator: "\n").map(String.init)
            var added: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let line = hostile[Int.random(in: 0..<hostile.count, using: &random)]
                added.append(line)
                lines.insert(line, at: Int.random(in: 1...lines.count, using: &random))
            }
            try (lines.joined(separator: "\n") + "\n").write(toFile: target + "/.hudson-export", atomically: false, encoding: .utf8)
            let context = "seed \(seed) iteration \(iteration): \(added)"
            let before = fileTree(w.f.dir.url.path)
            let result = try run(w, "--no-fetch", target)
            check(result, context)
            if result.status == 64 { #expect(fileTree(w.f.dir.url.path) == before, "a refused state changed files: \(context)") }
            #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n", "\(context)")
        }
    }
}
