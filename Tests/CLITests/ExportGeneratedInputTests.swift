// Generated input for every surface of hd-export (issue 37, "Done when"): its arguments,
// its targets, its state file, the store's contents and the answers Gmail gives when it
// fetches sources. Each run is bounded (a timeout), the seed is printed with every failure
// (HUDSON_TEST_SEED replays one), and each asserts: no crash, no hang, a documented exit
// status, one line on standard error for a refusal (and the usage line with 64), nothing
// that drives a terminal, nothing written outside the target, nothing sent to Gmail but
// source fetches, and every message not exported named.
import Foundation
import HudsonMail
import HudsonStore
import HudsonTestSupport
import Testing

/// SplitMix64: a small, fixed-seed generator, so a failure can be replayed.
private struct ExportRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 0x4855_4453_4F4E_3337
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// Text of `count` characters drawn from hostile alphabets: controls, ESC sequences,
    /// bidirectional overrides, line breaks, quotes, slashes, dots, commas, CJK, emoji.
    mutating func hostileText(_ count: Int) -> String {
        let pieces = ["a", "Z", "0", " ", "\t", "\n", "\r", "\u{0}", "\u{7}", "\u{1B}[31m", "\u{1B}]52;c;eA==\u{7}", "\u{202E}", "\u{2028}",
                      "\u{85}", "\u{7F}", "\"", "'", "\\", "/", "..", ".", ",", ":", ";", "%", "*", "From ", ">From ", "資料", "😀", "-",
                      "=?utf-8?q?x=0A?=", "<", ">", "@", "\u{FEFF}", "\u{200B}"]
        return (0..<count).map { _ in pick(pieces) }.joined()
    }
}

/// What changed in a file tree between two listings (`fileTree`): the names added, removed
/// or changed, each with the prefix "./".
private func changedPaths(_ before: [String], _ after: [String]) -> Set<String> {
    func byName(_ lines: [String]) -> [String: String] {
        var names: [String: String] = [:]
        for line in lines {
            // "./a/b KIND MODE": the name is up to the last two fields (names may hold spaces).
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            let kindStart = parts.firstIndex { ["d", "f", "l", "p", "s", "other"].contains(String($0)) } ?? parts.count - 1
            names[parts[..<kindStart].joined(separator: " ")] = line
        }
        return names
    }
    let old = byName(before)
    let new = byName(after)
    return Set(old.keys.filter { new[$0] != old[$0] }).union(new.keys.filter { old[$0] == nil })
}

/// Whether every changed path is inside one of `targets` (given as paths relative to the
/// workspace root, "./work/x"), one of the files an mbox export keeps beside it, or a
/// directory above a target (made when it was missing).
private func inside(_ changed: Set<String>, targets: [String]) -> Bool {
    changed.allSatisfy { path in
        path == "." || path == "./work" || targets.contains { target in
            path == target || path.hasPrefix(target + "/") || path.hasPrefix(target + ".hudson-export") || target.hasPrefix(path + "/")
        }
    }
}

/// No control character (C0 but TAB and LF, DEL, C1): what would break a line of a file.
private func hasNoControls(_ text: String) -> Bool {
    !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
}

/// No byte of standard error or output that drives a terminal (ESC, BEL, other C0 but
/// TAB and LF, DEL, C1, bidirectional overrides).
private func isTerminalSafe(_ text: String) -> Bool {
    !text.unicodeScalars.contains {
        ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)
            || (0x2066...0x2069).contains($0.value)
    }
}

@Suite("hd-export under generated input: arguments, targets, state files, store contents, Gmail's answers", .serialized)
struct ExportGeneratedInputTests {
    static let documented: Set<Int32> = [0, 2, 64, 75, 77, 78]

    /// Runs hd-export in the workspace directory (so a relative target lands there, never in
    /// the test's own directory), bounded by a timeout.
    func run(_ w: ExportWorkspace, _ arguments: [String], environment extra: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                              ["-C", w.work, BuiltProducts.executable("hd-export").path] + arguments,
                              environment: w.f.environment.merging(extra) { $1 }, timeout: 60)
    }

    /// The checks every run owes, whatever its input.
    func check(_ result: CommandResult, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Self.documented.contains(result.status), "undocumented exit: \(context)\n\(result)", sourceLocation: sourceLocation)
        #expect(isTerminalSafe(result.stderr) && isTerminalSafe(result.stdout), "terminal control: \(context)\n\(result)",
                sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.allSatisfy { $0.hasPrefix("hd-export: ") || $0.hasPrefix("usage: ") }, "stderr: \(context)\n\(result)",
                sourceLocation: sourceLocation)
        if result.status != 0 && result.status != 2 {
            #expect(result.stdout.isEmpty, "\(context)\n\(result)", sourceLocation: sourceLocation)
            #expect(lines.count == (result.status == 64 ? 2 : 1), "one line (and usage for 64): \(context)\n\(result)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("random and adversarial arguments: a documented status, one line, nothing written outside what was named")
    func arguments() throws {
        let seed = ExportRandom.seed
        var random = ExportRandom(state: seed)
        let w = try ExportWorkspace()
        // Things to name: an export, a foreign directory, a file, a FIFO, a link, nothing.
        #expect(try w.export(w.path("made")).status == 0)
        try FileManager.default.createDirectory(atPath: w.path("foreign"), withIntermediateDirectories: true)
        try "mine".write(toFile: w.path("foreign/x"), atomically: false, encoding: .utf8)
        try "text".write(toFile: w.path("file"), atomically: false, encoding: .utf8)
        #expect(mkfifo(w.path("fifo"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: w.path("link"), withDestinationPath: "made")
        let targets = [w.path("made"), w.path("foreign"), w.path("file"), w.path("fifo"), w.path("link"), "made", "fresh",
                       w.path("fresh2"), "", "-", "--", "-x", ".", "..", "/", "/dev/null", "/dev/stdout", "/proc/self/fd/1",
                       w.path("no/such/dir"), String(repeating: "n", count: 5_000), "a\nb", "\u{1B}[2J", "x\u{202E}y", w.f.dir.path("data")]
        let values = ["maildir", "mbox", "eml", "MBOX", "", "json", "maildir,mbox", "\u{1B}[31m", "--mirror"]
        for iteration in 0..<60 {
            var arguments: [String] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                switch Int.random(in: 0..<12, using: &random) {
                case 0: arguments += ["--format", random.pick(values)]
                case 1: arguments.append("--format=" + random.pick(values))
                case 2: arguments.append("--mirror")
                case 3: arguments.append("--no-fetch")
                case 4: arguments.append(random.pick(["-v", "--verbose", "-vv"]))
                case 5: arguments += ["--account", random.pick(["ann@example.com", "eve@example.net", "", random.hostileText(5)])]
                case 6: arguments += ["--db", random.pick([w.path("nodb.sqlite3"), w.path("file"), w.path("foreign"), w.f.storePath])]
                case 7: arguments.append(random.pick(["--bogus", "-x", "--format", "--", "-", "--help=1", "--version=x"]))
                case 8: arguments.append(random.pick(targets))
                case 9: arguments.append(random.hostileText(Int.random(in: 1...12, using: &random)))
                default: arguments.append(random.pick(targets))
                }
            }
            if random.chance(70) { arguments.append("--no-fetch") }  // no Gmail here: the sources are stored
            let context = "seed \(seed) iteration \(iteration): \(arguments.map { TerminalSafeQuote.quote($0) })"
            let before = fileTree(w.f.dir.url.path)
            let result = try run(w, arguments)
            check(result, context)
            let changed = changedPaths(before, fileTree(w.f.dir.url.path))
            // Whatever ran, only what the arguments named (relative names live in the workspace).
            let root = w.f.dir.url.path
            // What the command received: an argument ends at its first NUL (argv holds C strings).
            let named = arguments.map { String($0.unicodeScalars.prefix { $0 != "\0" }) }.compactMap { argument -> String? in
                if argument.hasPrefix(root + "/") { return "." + argument.dropFirst(root.count) }
                return argument.hasPrefix("/") ? nil : "./work/" + argument
            }
            #expect(inside(changed, targets: named), "wrote outside what was named: \(context)\n\(changed.sorted())\n\(result)")
            if result.status != 0 && result.status != 2 {
                #expect(changed.isEmpty, "a refused run changed the tree: \(context)\n\(changed.sorted())\n\(result)")
            }
        }
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).allSatisfy { !$0.contains("hudson") })
    }

    @Test("the state file as hostile input: refused without hanging or writing, or accepted and kept inside the export",
          arguments: ["maildir", "mbox", "eml"])
    func stateFiles(format: String) throws {
        let seed = ExportRandom.seed ^ UInt64(format.utf8.count)
        var random = ExportRandom(state: seed)
        let w = try ExportWorkspace()
        let target = w.path(format == "mbox" ? "all.mbox" : "out")
        let statePath = format == "mbox" ? target + ".hudson-export" : target + "/.hudson-export"
        #expect(try w.export("--format", format, target).status == 0)
        try "precious\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
        // The pristine export, restored before each iteration.
        let pristine = w.path("pristine")
        try FileManager.default.createDirectory(atPath: pristine, withIntermediateDirectories: true)
        let saved = format == "mbox" ? [target, statePath] : [target]
        for path in saved { try FileManager.default.copyItem(atPath: path, toPath: pristine + "/" + (path as NSString).lastPathComponent) }
        // The text form (a run reads it as it read earlier versions' states; the database is fuzzed in ExportStateDatabaseTests).
        let original = Data(try exportStateText(statePath).utf8)
        let hostileLines = ["K 18a0000000000001 ../../victim", "M 18a0000000000001 /etc/passwd", "M 18a0000000000001 cur/../../victim",
                            "M ../x cur/1.hudson-x:2,S", "F ../victim", "F ", "seq -1", "seq 99999999999999999999999", "mbox-size -5",
                            "mbox-size 999999999999", "format mbox", "format maildir", "format eml", "format json", "account eve@example.net",
                            "account \u{1B}[2J", "M 18a0000000000001 2026/01/18a0000000000001.eml", "M 18a0000000000001 -",
                            "K a1 cur/1767226200.hudson-a1:2,S\u{0}", "hudson-export 2", "", "x", "M", "K a1", "seq 3\r"]
        for iteration in 0..<25 {
            for path in saved {
                try? FileManager.default.removeItem(atPath: path)
                try FileManager.default.copyItem(atPath: pristine + "/" + (path as NSString).lastPathComponent, toPath: path)
            }
            var bytes = [UInt8](original)
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                switch Int.random(in: 0..<7, using: &random) {
                case 0 where !lines.isEmpty: lines.remove(at: Int.random(in: 0..<lines.count, using: &random))
                case 1: lines.insert(Array(random.pick(hostileLines).utf8), at: Int.random(in: 0...lines.count, using: &random))
                case 2 where !lines.isEmpty:
                    let index = Int.random(in: 0..<lines.count, using: &random)
                    if !lines[index].isEmpty { lines[index][Int.random(in: 0..<lines[index].count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
                case 3: lines.append(Array(random.hostileText(Int.random(in: 1...30, using: &random)).utf8))
                case 4 where !lines.isEmpty: lines.append(lines[Int.random(in: 0..<lines.count, using: &random)])
                case 5: lines = [Array("hudson-export 1".utf8)] + lines.dropFirst().shuffled(using: &random)
                default: lines = Array(lines.prefix(Int.random(in: 0...lines.count, using: &random)))
                }
            }
            bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            if random.chance(10) { bytes = (0..<Int.random(in: 0...100_000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
            try Data(bytes).write(to: URL(fileURLWithPath: statePath))
            let mirror = format != "mbox" && random.chance(50)
            let context = "seed \(seed) \(format) iteration \(iteration) mirror \(mirror): \(String(decoding: bytes.prefix(400), as: UTF8.self).debugDescription)"
            let before = fileTree(w.f.dir.url.path)
            let result = try run(w, ["--format", format, "--no-fetch"] + (mirror ? ["--mirror"] : []) + [target])
            check(result, context)
            #expect([0, 2, 64, 78].contains(result.status), "\(context)\n\(result)")
            let changed = changedPaths(before, fileTree(w.f.dir.url.path))
            let relative = "." + target.dropFirst(w.f.dir.url.path.count)
            #expect(inside(changed, targets: [relative]), "wrote outside the export: \(context)\n\(changed.sorted())")
            if result.status == 64 || result.status == 78 { #expect(changed.isEmpty, "\(context)\n\(changed.sorted())") }
            #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n", "\(context)")
        }
    }

    @Test("hostile store contents (ids, labels, senders, Message-IDs, dates, sources) in every format: files only inside the target, valid names, every message written or named",
          arguments: ["maildir", "mbox", "eml"])
    func storeContents(format: String) throws {
        let seed = ExportRandom.seed ^ 0x5354_4F52_45 ^ UInt64(format.utf8.count)
        var random = ExportRandom(state: seed)
        let f = CLIFixture()
        let store = try f.openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        var labels = [LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "UNREAD", name: "UNREAD", kind: .system)]
        for index in 0..<6 {
            let length = Int.random(in: 1...20, using: &random)
            labels.append(LabelInfo(id: "Label_\(index)", name: random.hostileText(length), kind: .user))
        }
        try store.replaceLabels(accountID: account.id, with: labels)
        var snapshots: [MessageSnapshot] = []
        var sources: [(gmailID: String, source: [UInt8])] = []
        var usable = 0
        var unusable = 0
        for index in 0..<40 {
            let hostileID = random.chance(15)
            let id = hostileID ? random.pick(["../x\(index)", "a/b\(index)", "x y\(index)", "\(index)\n", "資料\(index)", String(repeating: "f", count: 200) + "\(index)"])
                               : String(format: "19%014x", index)
            if hostileID { unusable += 1 } else { usable += 1 }
            let date: Int64 = random.pick([-86_400_000_000, 0, 1_767_225_600_000 + Int64(index) * 3_600_000, Int64.max / 2_000_000,
                                           253_402_300_800_000 * 3])
            var messageLabels: [String] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) { messageLabels.append(random.pick(labels).id) }
            let sender: String = random.pick(["\(random.hostileText(6)) <a\(index)@example.org>", "\"a b\"@example.org", "x\n@y", "From x", ""])
            let messageID: String = random.pick(["<m\(index)@x>", "<\(random.hostileText(6))>", "", "\"q\"\"@x", "<a\nb>"])
            let subject = random.hostileText(10)
            let snippet = random.hostileText(8)
            snapshots.append(MessageSnapshot(
                id: id, threadID: "t\(index % 7)", historyID: 1000 + Int64(index), internalDate: date, labelIDs: messageLabels,
                snippet: snippet, sizeEstimate: 1000, headers: MessageHeaders(subject: subject, from: sender, messageID: messageID)))
            var source = [UInt8]()
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                let hostile = random.hostileText(5)
                let line: String = random.pick(["From: a@x\r\n", "Subject: s\r\n", "\r\n", "From the start\n", ">From quoted\n", "\u{0}\u{1B}", "\r",
                                                "body\n", hostile])
                source += Array(line.utf8)
            }
            if random.chance(70) { sources.append((id, source)) }
        }
        let report = try store.applySnapshots(snapshots, accountID: account.id)
        #expect(report.failures.isEmpty, "\(report)")
        try store.saveSources(sources, accountID: account.id)
        let w = (f: f, work: f.dir.path("work"))
        try FileManager.default.createDirectory(atPath: w.work, withIntermediateDirectories: true)
        let target = w.work + (format == "mbox" ? "/all.mbox" : "/out")
        let before = fileTree(f.dir.url.path)
        let result = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--format", format, "--no-fetch", target],
                                           environment: f.environment, timeout: 60)
        let context = "seed \(seed) \(format)"
        check(result, context)
        #expect(result.status == 2, "some sources are not stored, some ids cannot name a file: \(context)\n\(result)")
        let changed = changedPaths(before, fileTree(f.dir.url.path))
        #expect(inside(changed, targets: ["./work/" + (format == "mbox" ? "all.mbox" : "out")]), "\(context)\n\(changed.sorted())")
        // Every message is written or named (the first ten, then how many more).
        let written = Int(result.stdout.split(separator: " ").dropFirst().first ?? "") ?? -1
        let failedLine = result.stdout.split(separator: ",").last { $0.hasSuffix(" failed\n") || $0.hasSuffix(" failed") }
        let failed = Int(failedLine?.split(separator: " ").first ?? "") ?? 0
        #expect(written + failed == usable + unusable, "\(context)\n\(result)")
        let named = result.stderr.split(separator: "\n").filter { $0.contains(": not exported: ") }.count
        let more = result.stderr.split(separator: "\n").first { $0.contains("more not exported") }
            .flatMap { Int($0.split(separator: " ").dropFirst(3).first ?? "") } ?? 0
        #expect(named + more == failed, "\(context)\n\(result)")
        switch format {
        case "maildir":
            let names = (try? FileManager.default.contentsOfDirectory(atPath: target + "/cur")) ?? []
            #expect(names.count == written)
            #expect(names.allSatisfy { $0.range(of: #"^[0-9]+\.hudson-[A-Za-z0-9_-]+:2,D?F?S?T?$"#, options: .regularExpression) != nil }, "\(names)")
            try checkMaildirFiles(target, names: names, sources: sources, context: context)
            let tags = (try? String(contentsOfFile: target + "/notmuch-tags", encoding: .utf8)) ?? ""
            let badLines = tags.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
                .filter { !$0.contains(" -- id:\"") || !hasNoControls($0) }
            #expect(badLines.isEmpty, "\(context): \(badLines.map(\.debugDescription))")
        case "eml":
            let files = FileManager.default.enumerator(atPath: target)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".eml") } ?? []
            #expect(files.count == written)
            #expect(files.allSatisfy { $0.range(of: #"^[0-9]{4}/[0-9]{2}/[A-Za-z0-9_-]+\.eml$"#, options: .regularExpression) != nil }, "\(files)")
        default:
            // Every message is one "From " separator: after the start or a blank line, a
            // line of "From ADDRESS DATE" whose address is one word.
            let data = (try? Data(contentsOf: URL(fileURLWithPath: target))) ?? Data()
            let lines = [UInt8](data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            var separators = 0
            for (index, line) in lines.enumerated() where line.starts(with: Array("From ".utf8)) && (index == 0 || lines[index - 1].isEmpty) {
                separators += 1
                let fields = String(decoding: line, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: true)
                #expect(fields.count >= 6, "\(String(decoding: line, as: UTF8.self))")
            }
            #expect(separators == written, "\(context)")
        }
        // A second run writes nothing new and says the same about the rest.
        let again = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--format", format, "--no-fetch", target],
                                          environment: f.environment, timeout: 60)
        check(again, context + " again")
        #expect(again.stdout.contains(": 0 written"), "\(context)\n\(again)")
        guard format == "maildir" else { return }
        // Every label changed (newer snapshots): each file is written again from the one
        // there, and still holds its source exactly below the new header.
        _ = try store.applySnapshots(snapshots.map { var newer = $0; newer.historyID += 1000; newer.labelIDs = ["Label_1", "STARRED"]; return newer },
                                     accountID: account.id)
        let relabel = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--format", format, "--no-fetch", target],
                                            environment: f.environment, timeout: 60)
        check(relabel, context + " relabel")
        #expect(relabel.stdout.contains(": 0 written, \(written) relabelled"), "\(context)\n\(relabel)")
        try checkMaildirFiles(target, names: (try? FileManager.default.contentsOfDirectory(atPath: target + "/cur")) ?? [],
                              sources: sources, context: context + " relabel")
    }

    /// Each Maildir file is an X-Keywords header (one line and its folds, no control
    /// character) above the message's stored source, byte for byte but for its line ends
    /// (CR LF becomes LF).
    func checkMaildirFiles(_ target: String, names: [String], sources: [(gmailID: String, source: [UInt8])], context: String,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let byID = Dictionary(sources.map { ($0.gmailID, $0.source) }, uniquingKeysWith: { $1 })
        for name in names {
            let id = String(name.split(separator: ":")[0].split(separator: "-", maxSplits: 1).last ?? "")
            let file = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: target + "/cur/" + name))) ?? Data())
            guard let stored = byID[id] else {
                Issue.record("\(name): no stored source", sourceLocation: sourceLocation)
                continue
            }
            // The source with its lines ending in LF, as Unix mail tools write a Maildir file.
            let source = UnixLines.from(stored)
            #expect(file.count >= source.count && Array(file.suffix(source.count)) == source, "\(context): \(name) lost its source",
                    sourceLocation: sourceLocation)
            let header = String(decoding: file.prefix(max(0, file.count - source.count)), as: UTF8.self)
            let lines = header.unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }
            #expect(header.hasPrefix("X-Keywords:") && lines.dropFirst().allSatisfy { $0.hasPrefix(" ") }
                    && lines.allSatisfy { hasNoControls($0.replacingOccurrences(of: "\r", with: "")) },
                    "\(context): \(name): \(header.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    @Test("Gmail's answers to source fetches: wrong types, wrong shapes, lost answers, 5xx forever on some; the rest exports, the run names the others, a clean rerun finishes")
    func serverAnswers() throws {
        let seed = ExportRandom.seed ^ 0x4741_4D45
        var random = ExportRandom(state: seed)
        let f = CLIFixture()
        let fake = try fixedFake()
        defer { withExtendedLifetime(fake) {} }
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let ids = try f.run("hd-search", "--messages", "--ids", "-n", "0", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) }.sorted()
        #expect(ids.count > 20)
        let target = f.dir.path("work/Mail")
        try FileManager.default.createDirectory(atPath: f.dir.path("work"), withIntermediateDirectories: true)
        let modes: [[String: Any]] = [
            ["status": 500, "times": -1], ["status": 404, "times": -1], ["status": 400, "times": -1],
            ["mode": "wrong_type", "times": -1], ["mode": "wrong_shape", "times": -1], ["mode": "invalid_json", "times": -1],
            ["mode": "oversized", "size": 200_000, "times": -1], ["status": 503, "times": 1], ["mode": "delay", "delay_ms": 200, "times": 1],
        ]
        var rules: [[String: Any]] = []
        var broken: Set<String> = []
        for id in ids.shuffled(using: &random).prefix(5) {
            var rule = random.pick(modes)
            rule["path"] = "messages/\(id)$"
            rules.append(rule)
            if (rule["times"] as? Int) == -1 { broken.insert(id) }
        }
        try fake.faults(rules)
        try fake.clearRequests()
        let before = fileTree(f.dir.url.path)
        let result = try CommandRunner.run(BuiltProducts.executable("hd-export"), [target], environment: f.environment, timeout: 180)
        let context = "seed \(seed): rules \(rules)"
        check(result, context)
        #expect(result.status == (broken.isEmpty ? 0 : 2), "\(context)\n\(result)")
        for id in broken { #expect(result.stderr.contains("message:\(id): not exported: "), "\(id) not named: \(context)\n\(result)") }
        // Foundation's URLSession makes an empty cache directory per program in ~/.cache
        // (HudsonGmail's sessions use no cache: nothing is written there).
        let foundationCache = "./home/.cache"
        let after = fileTree(f.dir.url.path)
        #expect(!after.contains { $0.hasPrefix(foundationCache + "/") && $0.split(separator: " ").dropFirst().first == "f" }, "\(after)")
        let changed = changedPaths(before, after).filter { $0 != "./home" && !$0.hasPrefix(foundationCache) }
        #expect(inside(changed, targets: ["./work/Mail"]), "\(context)\n\(changed.sorted())")
        let exported = Set(((try? FileManager.default.contentsOfDirectory(atPath: target + "/cur")) ?? []).map {
            String($0.split(separator: ":")[0].split(separator: "-").last ?? "")
        })
        #expect(exported == Set(ids).subtracting(broken), "\(context)")
        // Nothing but source fetches (and the token) went to Gmail.
        let requests = try fake.requests()
        #expect(requests.allSatisfy { $0.method == "GET" || $0.path.hasSuffix("/token") || $0.path.hasPrefix("/batch") }, "\(requests)")
        // Gmail heals: the next run exports what failed, each message once.
        try fake.admin("DELETE", "faults")
        let rerun = try CommandRunner.run(BuiltProducts.executable("hd-export"), [target], environment: f.environment, timeout: 180)
        check(rerun, context + " rerun")
        #expect(rerun.status == 0 && rerun.stdout.contains(": \(broken.count) written"), "\(context)\n\(rerun)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: target + "/cur")) ?? []).count == ids.count)
    }
}

/// Arguments quoted for a failure message (the test's own output must not drive a terminal either).
private enum TerminalSafeQuote {
    static func quote(_ text: String) -> String { text.debugDescription }
}
