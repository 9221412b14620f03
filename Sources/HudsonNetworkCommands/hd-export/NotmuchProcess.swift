// The notmuch program for hd-export --notmuch (HudsonExport's NotmuchProgram): found on
// PATH, run with the command's environment (NOTMUCH_CONFIG, NOTMUCH_PROFILE, HOME name its
// configuration, as notmuch-config(1) says).
import Foundation
import HudsonExport

struct NotmuchProcess: NotmuchProgram {
    let executable: String
    let environment: [String: String]

    /// The program on `PATH`, nil when there is none.
    init?(environment: [String: String]) {
        let directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let found = directories.map({ $0 + "/notmuch" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        executable = found
        self.environment = environment
    }

    func run(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        do {
            try process.run()
        } catch {
            throw NotmuchFailure(command: arguments.first ?? "", message: "cannot be started: \(error.localizedDescription)")
        }
        // Output is read while input is written, on another thread: neither pipe fills and blocks.
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        final class Box: @unchecked Sendable { var data = Data() }
        let errors = Box()
        let reader = Thread { errors.data = stderr.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting || !reader.isFinished { usleep(1_000) }
        guard process.terminationStatus == 0 else {
            let output = String(decoding: errors.data, as: UTF8.self)
            let message = output.split(separator: "\n").last.map(String.init) ?? "exit \(process.terminationStatus)"
            throw NotmuchFailure(command: arguments.first ?? "", message: message, output: output)
        }
        return Array(output)
    }
}
