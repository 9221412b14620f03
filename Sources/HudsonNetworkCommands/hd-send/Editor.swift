/*!
 `hd-send --edit`: the user's editor ($VISUAL, else $EDITOR, else vi) on a file, run through
 the shell as git and mutt run it (so `EDITOR="emacs -nw"` works), on the terminal the
 command was started from. The file is private (0600) and removed afterwards.
 */
import Foundation
import HudsonCLI
import HudsonOutput

@MainActor
enum Editor {
    /// Opens `text` in the editor and returns what was saved.
    static func edit(_ text: String, invocation: Invocation) throws -> String {
        guard Input.stdinIsTerminal else {
            throw UsageError("--edit needs a terminal: standard input is not one (give the body on standard input instead)")
        }
        let environment = invocation.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let directory = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array("\(directory)/hd-send-XXXXXX.eml".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else { throw CommandFailure(.configuration, "\(directory): cannot create a file to edit") }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        let written = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == text.utf8.count else { throw CommandFailure(.temporaryFailure, "\(path): cannot write the file to edit") }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$1\"", "hd-send-editor", path]
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw CommandFailure(.dataError, "the editor \(TerminalSafety.quoted(editor)) failed (status \(process.terminationStatus)); nothing sent")
        }
        // Whatever the editor left there: a regular file of a bounded size, or nothing is sent
        // (an editor that replaced it with a FIFO must not hang the command).
        let data: [UInt8]
        do { data = try BoundedInput.file(path, what: "the edited message") } catch let failure as CommandFailure {
            throw CommandFailure(.dataError, failure.message + "; nothing sent")
        }
        guard let saved = String(validating: data, as: UTF8.self) else {
            throw CommandFailure(.dataError, "the edited message is not UTF-8 text; nothing sent")
        }
        return saved
    }
}
