// Running the built executables from tests: SwiftPM puts them beside the test bundle.
import Foundation

public enum BuiltProducts {
    /// The directory holding the built executables (`.build/<triple>/debug`).
    public static var directory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public static func executable(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }
}

/// A started child process with its standard output readable line by line.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private var buffered = Data()
    private var bufferedErrors = Data()

    /// Starts `executable`. `environment` is added to the inherited one, or replaces it
    /// when `replaceEnvironment` is true. A child still running after `limit` seconds is
    /// killed, so a command that never ends fails its test (its output ends, its status
    /// is SIGKILL's) instead of hanging the whole run.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                replaceEnvironment: Bool = false, limit: TimeInterval = 120) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment {
            process.environment = replaceEnvironment
                ? environment : ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // Never the test process's own input: under CI that may be a pipe that never
        // closes, and a command that reads it would wait for ever.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        try process.run()
        let process = self.process
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Reads standard output until a full line arrives; nil at end of file.
    public func readLine() -> String? {
        Self.readLine(from: stdoutPipe, buffer: &buffered)
    }

    /// Reads standard error until a full line arrives; nil at end of file.
    public func readErrorLine() -> String? {
        Self.readLine(from: stderrPipe, buffer: &bufferedErrors)
    }

    private static func readLine(from pipe: Pipe, buffer: inout Data) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty {
                defer { buffer.removeAll() }
                return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }

    /// Closes this end of the child's standard output, as a reader that stops early
    /// (`| head -1`) does.
    public func closeOutput() {
        try? stdoutPipe.fileHandleForReading.close()
    }

    /// Waits for exit and returns (status, remaining stdout, stderr).
    @discardableResult
    public func finish() -> (status: Int32, stdout: String, stderr: String) {
        // Standard error is drained at the same time: a child that filled its pipe while
        // this read standard output would wait on it for ever, and so would this.
        let errors = DataBox(), drained = DispatchSemaphore(value: 0)
        let stderrHandle = stderrPipe.fileHandleForReading
        DispatchQueue.global().async {
            errors.data = stderrHandle.readDataToEndOfFile()
            drained.signal()
        }
        let out = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        let err = errors.data
        process.waitUntilExit()
        try? stdoutPipe.fileHandleForReading.close()
        try? stderrPipe.fileHandleForReading.close()
        buffered.append(out)
        bufferedErrors.append(err)
        return (process.terminationStatus, String(decoding: buffered, as: UTF8.self), String(decoding: bufferedErrors, as: UTF8.self))
    }
}
