/*!
 A file a command reads because the user named it (issue 37 §3): the rules file, the `.eml`
 files of `hd-filters rules test`, and through HudsonMail's MailSourceReader every source of
 `hd-import`. The rule itself lives in HudsonMail's `InputFiles` (the lowest module that
 reads such files): a regular file only, opened without blocking so a FIFO with no writer
 or a device is refused, never waited on; a read bounded in size. Here its refusal
 becomes the command's one-line error with the exit status the caller names.
 */
import HudsonMail
import HudsonOutput

public enum InputFile {
    /// The whole regular file `path`, at most `limit` bytes (`what` says the limit in
    /// words); nil when nothing has that name. Any other refusal (a FIFO, a device, a
    /// directory, too large, unreadable) throws `CommandFailure(failing, "PATH: why")`.
    public static func read(_ path: String, limit: Int, what: String, failing: ExitStatus) throws -> [UInt8]? {
        do {
            return try InputFiles.readRegular(path, limit: limit, what: what)
        } catch {
            if error.kind == .missing { return nil }
            throw CommandFailure(failing, "\(TerminalSafety.quoted(error.path)): \(error.reason)")
        }
    }
}
