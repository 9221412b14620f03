// hd-sync's own input surfaces (issue 37, "Done when"): its arguments and its
// environment, generated at random from adversarial pieces (options in any order and
// number, numbers out of range or not numbers, paths that are devices, FIFOs,
// directories or nothing, URLs and quotas that are not, addresses with control
// characters), against a connected store and the fake Gmail. Each run must end by itself
// (a watch: on SIGINT, or at once on a second one, as hd-sync(1) says), never by a
// crash; fail with one line on standard error (two for a usage error: the line and the
// usage) and a status hd-sync(1) documents; let no control character reach the terminal;
// and write nothing outside the store's and the configuration's directories. The seed
// is fixed (HUDSON_TEST_SEED overrides it) and printed with every failure.
import Foundation
import HudsonTestSupport
import Testing

/// SplitMix64: the same runs for the same seed on every machine.
private struct SyncInputRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("hd-sync under generated arguments and environment", .serialized)
struct SyncGeneratedInputTests {
    /// hd-sync(1) EXIT STATUS: what hd-sync may end with.
    static let documented: Set<Int32> = [0, 64, 75, 77, 78]

    /// The pieces a run is made of, from the sandbox `dir` (the fixture's directory).
    struct Pieces {
        let store: String
        let config: String
        let email: String
        let dir: String

        var numbers: [String] {
            ["0", "1", "3", "10000", "10001", "36500", "36501", "-1", "-0", "+5", " 5", "5 ", "1e3", "0x10", "٣", "5.0",
             "99999999999999999999", "-99999999999999999999", "", "NaN", "\u{1B}[31m7"]
        }
        var paths: [String] {
            [store, "", "relative.sqlite3", dir + "/cwd", "/dev/null", dir + "/fifo", dir + "/plain", dir + "/nowhere/x.sqlite3",
             dir + "/esc\u{1B}]0;title\u{07}.sqlite3", dir + "/" + String(repeating: "d", count: 5000), store + "/", "-"]
        }
        var configs: [String] {
            [config, "", "cfg", "/dev/null", dir + "/plain", dir + "/fifo", dir + "/newconfig", dir + "/line\nbreak"]
        }
        var accounts: [String] {
            [email, email.uppercased(), "", "nobody@example.org", "a\u{1B}[2J@x", "a/../b@x", "@", "x",
             String(repeating: "a", count: 300) + "@x", "\u{202E}demo@hudson.test"]
        }
        var urls: [String] {
            ["", "not a url", "ftp://x/", "http://example.com", "http://127.0.0.1:1", "http://[::1", "https://\u{1B}[31m",
             "http://127.0.0.1:1/\u{0}", "file:///etc/passwd"]
        }
        var quotas: [String] { ["", "0", "-1", "abc", "1e3", "99999999999999999999", "6000", " 100"] }
        var hooks: [String] { ["true", "false", "exit 3", "", "cat >/dev/null"] }
        var fetches: [String] { ["x", "message:abc:\(email)", "body:!:\(email)", "::", "message:0123456789abcdef:nobody@x"] }
    }

    fileprivate func generate(_ random: inout SyncInputRandom, _ p: Pieces, base: [String: String]) -> ([String], [String: String]) {
        func pick(_ list: [String]) -> String { list.randomElement(using: &random)! }
        var arguments: [String] = []
        // Mostly what a user would type, so that runs get past the parser; then the odd one out.
        let mode = pick(["", "", "--catch-up", "--watch", "--watch", "--push"])
        if !mode.isEmpty { arguments.append(mode) }
        for flag in ["--verbose", "--json", "--retry-parked"] where Int.random(in: 0..<4, using: &random) == 0 {
            arguments.append(flag)
        }
        func number(_ valid: [String]) -> String {
            Int.random(in: 0..<3, using: &random) == 0 ? pick(p.numbers) : pick(valid)
        }
        let odd = ["--catch-up", "--watch", "--push", "-v", "-h", "--version", "--bogus", "-x", "-", "--", "operand",
                   "--watch=yes", "-vv", "---", "--json=1"]
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            switch Int.random(in: 0..<9, using: &random) {
            case 0: arguments.append(pick(odd))
            case 1: arguments += ["--max-pages", number(["1", "2", "5"])]
            case 2: arguments += ["--prefetch-days", number(["0", "1", "90"])]
            case 3: arguments += ["--lookback-days", number(["90", "365", "0"])]
            case 4: arguments += ["--db", pick(p.paths)]
            case 5: arguments += ["--account", pick(p.accounts)]
            case 6: arguments += ["--exec", pick(p.hooks)]
            case 7: arguments += ["--fetch", pick(p.fetches)]
            default: arguments.append("--max-pages=" + number(["3"]))
            }
        }
        var environment = base
        for _ in 0..<Int.random(in: 0...1, using: &random) + Int.random(in: 0...1, using: &random) {
            switch Int.random(in: 0..<9, using: &random) {
            case 0: environment["HUDSON_DB"] = pick(p.paths)
            case 1: environment["HUDSON_CONFIG_DIR"] = pick(p.configs)
            case 2: environment["HUDSON_ACCOUNT"] = pick(p.accounts)
            case 3: environment["HUDSON_GMAIL_URL"] = pick(p.urls)
            case 4: environment["HUDSON_OAUTH_TOKEN_URL"] = pick(p.urls)
            case 5: environment["HUDSON_QUOTA_PER_MINUTE"] = pick(p.quotas)
            case 6: environment["HUDSON_DEBUG"] = pick(["1", "0", "yes", "\u{1B}"])
            case 7:
                environment["HUDSON_DB"] = nil
                environment["XDG_DATA_HOME"] = pick(["", "rel", p.dir + "/xdg", "/dev/null"])
            default:
                environment["HUDSON_DB"] = nil
                environment["HOME"] = pick(["", "/nonexistent", p.dir + "/home", "/dev/null"])
            }
        }
        return (arguments, environment)
    }

    /// Every file and directory under `root`, with what identifies its content (size and
    /// modification time), except under `allowed`.
    func tree(_ root: String, except allowed: [String]) -> [String: String] {
        var found: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return found }
        while let relative = walker.nextObject() as? String {
            let path = root + "/" + relative
            if allowed.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                walker.skipDescendants()
                continue
            }
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            found[relative] = "\(status.st_mode) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
        }
        return found
    }

    @Test("generated options, numbers, paths and HUDSON_* values: no crash or hang, one line and a documented status on failure, nothing written outside the store and configuration")
    func generatedArgumentsAndEnvironment() throws {
        let seed = ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 37
        var random = SyncInputRandom(state: seed)
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "20", "--demo-span-days", "30"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let root = URL(fileURLWithPath: f.dir.path("data")).deletingLastPathComponent().path
        try Paths.ensure(f.dir.path("cwd"))
        #expect(mkfifo(f.dir.path("fifo"), 0o600) == 0)
        try "not a store\n".write(toFile: f.dir.path("plain"), atomically: true, encoding: .utf8)
        let pieces = Pieces(store: f.storePath, config: f.dir.path("config"), email: fake.email, dir: root)
        var base = f.environment
        base["HUDSON_TEST_WATCH_PAUSE"] = "1"
        // The store's directory and the configuration are hd-sync's to write; nothing else is.
        let allowed = [f.dir.path("data"), f.dir.path("config")]
        var before = tree(root, except: allowed)
        #expect(before["fifo"] != nil && before["plain"] != nil && before["cwd"] != nil, "\(before)")
        var statuses: [Int32: Int] = [:]
        let runs = 64
        // First one run per status hd-sync documents, then the generated ones.
        var unreachable = base
        unreachable["HUDSON_GMAIL_URL"] = "http://127.0.0.1:1"
        let anchors: [([String], [String: String])] = [
            ([], base), (["--bogus"], base), ([], unreachable), (["--account", "nobody@example.org"], base),
            (["--db", pieces.dir + "/fifo"], base),
        ]
        for run in 0..<(anchors.count + runs) {
            let (arguments, environment) = run < anchors.count ? anchors[run] : generate(&random, pieces, base: base)
            let label = "seed \(seed), run \(run): hd-sync \(arguments.map { TerminalText.visible($0) }.joined(separator: " ")) "
                + "env \(environment.filter { base[$0.key] != $0.value }.mapValues(TerminalText.visible))"
            // Run from a directory of its own, so a relative path lands where it can be seen.
            let child = try ChildProcess(URL(fileURLWithPath: "/bin/sh"),
                                         ["-c", "cd \"$0\" && exec \"$@\"", f.dir.path("cwd"),
                                          BuiltProducts.executable("hd-sync").path] + arguments,
                                         environment: environment, replaceEnvironment: true, limit: 150)
            let watching = arguments.contains("--watch")
            var interrupts = 0
            let started = Date()
            while child.process.isRunning {
                let elapsed = Date().timeIntervalSince(started)
                // A watch runs until interrupted: once after a moment, then again (hd-sync(1):
                // "the first interrupt stops it after the current pass, a second one at once").
                if watching && (elapsed > 2 && interrupts == 0 || elapsed > 12 && interrupts == 1) {
                    kill(child.process.processIdentifier, SIGINT)
                    interrupts += 1
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let result = child.finish()
            statuses[result.status, default: 0] += 1
            let signalled = child.process.terminationReason == .uncaughtSignal
            if signalled {
                // Only the second interrupt may end it by a signal.
                #expect(interrupts == 2 && result.status == SIGINT, "\(label): killed by signal \(result.status)\n\(result.stderr)")
            } else {
                #expect(Self.documented.contains(result.status), "\(label): exit \(result.status)\n\(result.stderr)")
            }
            let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if !signalled && result.status != 0 && !watching {
                let expected = result.status == 64 ? 2 : 1
                #expect(lines.count == expected && lines.first?.hasPrefix("hd-sync: ") == true,
                        "\(label): exit \(result.status), \(lines.count) lines\n\(result.stderr)")
                if result.status == 64 { #expect(lines.last?.hasPrefix("usage: hd-sync") == true, "\(label)\n\(result.stderr)") }
            }
            // Nothing can drive the terminal: no control character but newline and tab.
            let controls = (result.stderr + result.stdout).unicodeScalars.filter {
                ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value)
            }
            #expect(controls.isEmpty, "\(label): control characters \(controls.map { String($0.value, radix: 16) })")
            let after = tree(root, except: allowed)
            let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
            #expect(changed.isEmpty, "\(label): wrote outside the store and configuration: \(changed)")
            before = after
        }
        // Every outcome reached, or the generator is too narrow to mean much.
        #expect(Set(statuses.keys).isSuperset(of: [0, 64, 75, 77, 78]), "seed \(seed): statuses \(statuses)")
        withExtendedLifetime(fake) {}
    }
}

/// Arguments shown in a failure message without driving the terminal.
private enum TerminalText {
    static func visible(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}"
            ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined().prefix(120))
    }
}
