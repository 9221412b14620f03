// The reliability suite's test rig: a temporary home (store, configuration), the
// project's fake Gmail, and the built hd-* commands run the way a shell runs them —
// to completion, or started and killed with SIGKILL at a chosen moment. Every output
// of every command is kept, so each test can finally check that no token the fake
// ever issued reached an output, a log or a file (the secrets suite's criterion).
import Foundation
import HudsonTestSupport
import Testing

/// Sizes: the fast ones run in CI; `HUDSON_RELIABILITY_LONG=1` (scripts/reliability
/// --long) runs the nightly sizes.
enum Scale {
    static let long = ProcessInfo.processInfo.environment["HUDSON_RELIABILITY_LONG"] == "1"

    static func pick<T>(_ fast: T, long value: T) -> T { long ? value : fast }
}

/// Measurements worth keeping from a run (kills landed, sizes, times, peak memory):
/// appended to the file `HUDSON_RELIABILITY_REPORT` names (scripts/reliability sets it),
/// for docs/reliability.md's results.
enum Report {
    private static let lock = NSLock()

    static func note(_ line: String, test: String = #function) {
        guard let path = ProcessInfo.processInfo.environment["HUDSON_RELIABILITY_REPORT"], !path.isEmpty else { return }
        lock.withLock {
            let text = "\(test.split(separator: "(").first ?? ""): \(line)\n"
            if let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(Data(text.utf8))
                handle.closeFile()
            } else {
                _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            }
        }
    }
}

/// A run of a started command that may have been killed.
struct Exit: CustomStringConvertible {
    var status: Int32
    var killed: Bool
    var stdout: String
    var stderr: String

    var description: String { "\(killed ? "killed by signal" : "exit") \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

/// A command started in the background, its output going to files.
final class Started: @unchecked Sendable {
    let process = Process()
    let outPath: String
    let errPath: String

    init(_ executable: URL, _ arguments: [String], environment: [String: String], outPath: String, errPath: String) throws {
        self.outPath = outPath
        self.errPath = errPath
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = FileHandle(forWritingAtPath: outPath)
        let errors = FileHandle(forWritingAtPath: errPath)
        process.standardOutput = output
        process.standardError = errors
        // The child has its own copies once started; ours would stay open as long as the
        // Process object lives.
        defer {
            try? output?.close()
            try? errors?.close()
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for the process, up to `timeout` seconds (then kills it and says so).
    @discardableResult
    func wait(timeout: TimeInterval = 120) -> Exit {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            Issue.record("\(process.executableURL?.lastPathComponent ?? "?") did not finish in \(Int(timeout)) s")
        }
        process.waitUntilExit()
        return Exit(status: process.terminationStatus, killed: process.terminationReason == .uncaughtSignal,
                    stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                    stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    /// SIGKILL, as `kill -9`, and the reaped result.
    @discardableResult
    func kill9() -> Exit {
        signal(SIGKILL)
        return wait()
    }
}

final class Rig: @unchecked Sendable {
    let dir = TemporaryDirectory()
    var environment: [String: String]
    private(set) var fake: FakeGmail?
    /// Every output of every command this rig ran, for the secrets check.
    private var transcripts: [String] = []
    private var started = 0
    private let lock = NSLock()

    var storePath: String { environment["HUDSON_DB"]! }
    var configDirectory: String { environment["HUDSON_CONFIG_DIR"]! }
    var email: String { fake?.email ?? "demo@hudson.test" }
    var credentialsPath: String { configDirectory + "/credentials/\(email).json" }

    init(store: String? = nil) {
        environment = [
            "HOME": dir.path("home"),
            "HUDSON_DB": store ?? dir.path("data/hudson.sqlite3"),
            "HUDSON_CONFIG_DIR": dir.path("config"),
            "TZ": "UTC",
            "NO_COLOR": "1",
            "PATH": "/usr/bin:/bin",
        ]
        try? FileManager.default.createDirectory(atPath: dir.path("data"), withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(atPath: dir.path("logs"), withIntermediateDirectories: true)
    }

    /// Starts a fake Gmail with `arguments` (the demo mailbox by default) and points the
    /// commands at it.
    @discardableResult
    func startFake(_ arguments: [String] = ["--demo"]) throws -> FakeGmail {
        let fake = try FakeGmail(arguments)
        self.fake = fake
        environment.merge(fake.environment) { $1 }
        return fake
    }

    /// Another rig (its own store and configuration) on this rig's fake Gmail.
    func sibling() throws -> Rig {
        let other = Rig()
        other.fake = fake
        if let fake { other.environment.merge(fake.environment) { $1 } }
        return other
    }

    /// `hd-auth add` for the fake's account with the whole mailbox as the window.
    func connect(lookbackDays: Int = 0) throws {
        let fake = try #require(fake)
        try fake.clientSecretJSON.write(toFile: dir.path("client_secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: dir.path("refresh_token"), atomically: true, encoding: .utf8)
        let result = try run("hd-auth", "add", fake.email, "--client-secret", dir.path("client_secret.json"),
                             "--refresh-token-file", dir.path("refresh_token"), "--lookback-days", String(lookbackDays))
        #expect(result.status == 0, "\(result)")
    }

    // MARK: - Running commands

    /// Runs a built command to completion.
    @discardableResult
    func run(_ command: String, _ arguments: String..., stdin: String? = nil, environment extra: [String: String] = [:],
             timeout: TimeInterval = 120) throws -> CommandResult {
        try run(command, arguments, stdin: stdin, environment: extra, timeout: timeout)
    }

    @discardableResult
    func run(_ command: String, _ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
             timeout: TimeInterval = 120) throws -> CommandResult {
        let url = command.hasPrefix("/") ? URL(fileURLWithPath: command) : BuiltProducts.executable(command)
        let result = try CommandRunner.run(url, arguments, environment: environment.merging(extra) { $1 }, stdin: stdin,
                                           timeout: timeout)
        record(result.stdout + result.stderr)
        return result
    }

    /// Runs a built command through `/bin/sh -c PREFIX`, e.g. `umask 000` or `ulimit -f 64`.
    @discardableResult
    func run(after prefix: String, _ command: String, _ arguments: [String], environment extra: [String: String] = [:],
             timeout: TimeInterval = 120) throws -> CommandResult {
        try run("/bin/sh", ["-c", prefix + "; exec \"$0\" \"$@\"", BuiltProducts.executable(command).path] + arguments,
                environment: extra, timeout: timeout)
    }

    /// Runs a built command as another user (setpriv, as root).
    @discardableResult
    func run(asUser uid: Int, _ command: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> CommandResult {
        try run("/usr/bin/setpriv", ["--reuid", String(uid), "--regid", String(uid), "--clear-groups",
                                     BuiltProducts.executable(command).path] + arguments, environment: extra)
    }

    /// Starts a built command in the background; `finish` or `kill9` it.
    func start(_ command: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Started {
        lock.lock()
        started += 1
        let number = started
        lock.unlock()
        let url = command.hasPrefix("/") ? URL(fileURLWithPath: command) : BuiltProducts.executable(command)
        return try Started(url, arguments, environment: environment.merging(extra) { $1 },
                           outPath: dir.path("logs/\(number).out"), errPath: dir.path("logs/\(number).err"))
    }

    /// Waits for a started command and keeps its output for the secrets check.
    @discardableResult
    func finish(_ started: Started, timeout: TimeInterval = 120) -> Exit {
        let exit = started.wait(timeout: timeout)
        record(exit.stdout + exit.stderr)
        return exit
    }

    /// Kills a started command with SIGKILL and keeps its output.
    @discardableResult
    func kill9(_ started: Started) -> Exit {
        let exit = started.kill9()
        record(exit.stdout + exit.stderr)
        return exit
    }

    func record(_ text: String) {
        lock.lock()
        transcripts.append(text)
        lock.unlock()
    }

    // MARK: - Secrets

    /// No token the fake issued (refresh or access, valid or not) and not the client
    /// secret in any output of this rig, in the store or its WAL, or in any log file
    /// (CONTRACT.md: "Access tokens are never printed, logged, or stored in the SQLite
    /// file"). Credentials files are where tokens belong and are not searched.
    func expectNoSecretsLeaked(sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let fake else { return }
        var secrets = (try fake.admin("GET", "tokens") as? [String: Any])?["tokens"] as? [String] ?? []
        secrets.append(fake.clientSecret)
        #expect(secrets.contains(fake.refreshToken), sourceLocation: sourceLocation)
        lock.lock()
        let texts = transcripts
        lock.unlock()
        for text in texts {
            for secret in secrets where text.contains(secret) {
                Issue.record("a secret (\(secret.prefix(12))…) is in a command's output", sourceLocation: sourceLocation)
            }
        }
        var files: [String] = []
        for directory in [(storePath as NSString).deletingLastPathComponent, dir.path("logs")] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                files.append(directory + "/" + name)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            for secret in secrets where data.range(of: Data(secret.utf8)) != nil {
                Issue.record("a secret (\(secret.prefix(12))…) is in \(file)", sourceLocation: sourceLocation)
            }
        }
    }
}
