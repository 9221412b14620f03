// Running a built hd-* command the way a user's shell does: arguments, environment,
// standard input, and its exit status, standard output and standard error.
import Foundation

public struct CommandResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// Standard output split into lines (without the final empty one).
    public var lines: [String] {
        if stdout.isEmpty { return [] }
        return stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stdout.hasSuffix("\n") ? 1 : 0).map(String.init)
    }
}

public enum CommandRunner {
    /// Runs `executable` with `arguments`, feeding `stdin` (or /dev/null) and returning
    /// when it exits. `environment` replaces the inherited one entirely, so tests see
    /// no stray HUDSON_* variables from the developer's shell.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String], stdin: String? = nil,
        timeout: TimeInterval = 60
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        let input = stdin == nil ? nil : Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let stdin, let input {
            _ = ignoreBrokenPipes
            let handle = input.fileHandleForWriting
            DispatchQueue.global().async {
                // A command may exit without reading its input (`hd-ls --version`): the
                // write then fails with EPIPE, which is not the test's business.
                try? handle.write(contentsOf: Data(stdin.utf8))
                try? handle.close()
            }
        }
        // Drain both pipes concurrently so a chatty command cannot block on a full pipe.
        let outData = DataBox()
        let errData = DataBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            outData.data = output.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            errData.data = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw CommandTimedOut(command: executable.lastPathComponent, arguments: arguments)
        }
        // Bounded too: the pipes can close before Foundation reports the exit, and a
        // grandchild that inherited the descriptor Foundation watches for it (hd-mark's
        // hd-sync --push, after hd-mark died) could delay that report.
        let exitDeadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            guard Date() < exitDeadline else {
                kill(process.processIdentifier, SIGKILL)
                throw CommandTimedOut(command: executable.lastPathComponent, arguments: arguments)
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        // Foundation's Process keeps itself, and so its pipes, alive through a run-loop
        // source until waitUntilExit() drops it; without this each run leaked its pipe
        // descriptors, and past about 1,300 open descriptors Process.run() itself crashes
        // (it copies a whole 256-byte d_name while scanning /proc/self/fd).
        process.waitUntilExit()
        try? output.fileHandleForReading.close()
        try? errors.fileHandleForReading.close()
        return CommandResult(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                             stderr: String(decoding: errData.data, as: UTF8.self))
    }
}

/// Writing to a child that has already exited raises SIGPIPE, whose default action
/// killed the whole test process (CI: "exited with unexpected signal code 13"). Ignored
/// once, the write fails with EPIPE instead. `swift test` starts the test process with
/// default signal actions, so an ignoring shell does not help.
private let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

public struct CommandTimedOut: Error, CustomStringConvertible {
    public var command: String
    public var arguments: [String]
    public var description: String { "\(command) \(arguments.joined(separator: " ")) did not finish" }
}

/// Written by one reader thread, read once that thread has signalled it is done.
final class DataBox: @unchecked Sendable {
    var data = Data()
}
