/*!
 The files and the standard input `hd-send` reads (a body, attachments, the file the
 editor saved, a message on standard input), read through HudsonMail's `InputFiles`, the
 one rule for a file the user names (issue 37, "Done when": every open bounded): a regular
 file only, opened without blocking, so a FIFO with no writer, a terminal, a device or a
 directory is refused at once, not waited on or read for ever; nothing read past what
 Gmail takes for a whole message. Here its refusals become hd-send's errors: a file that
 cannot be used is a usage error (64), input that is too large is bad data (65).
 */
import Glibc
import HudsonCLI
import HudsonMail
import HudsonOutput

enum BoundedInput {
    /// The most read from one file or from standard input: Gmail takes no message larger
    /// (Composer.maximumSize, gmail-api.md §2.7), so nothing larger can be sent.
    static var limit: Int { Composer.maximumSize }
    static let limitInWords = "\(Composer.maximumSize / 1_048_576) MB, more than Gmail accepts for a whole message"

    /// The bytes of the regular file at `path` (`what` names it in errors, quoted).
    static func file(_ path: String, what: String? = nil) throws -> [UInt8] {
        let shown = what ?? TerminalSafety.quoted(path)
        do {
            return try InputFiles.readRegular(path, limit: limit, what: limitInWords)
        } catch {
            switch error.kind {
            case .tooLarge: throw tooLarge(shown)
            case .missing: throw CommandFailure(.usage, "\(shown): no such file")
            case .unreadable, .notRegularFile, .outsideTree:
                throw CommandFailure(.usage, "\(shown): \(error.reason.prefix(1).lowercased() + error.reason.dropFirst())")
            }
        }
    }

    /// Standard input, whole, up to the limit.
    static func standardInput() throws -> [UInt8] {
        do {
            return try InputFiles.readAll(0, path: "standard input", limit: limit, what: limitInWords, prefix: [])
        } catch {
            if error.kind == .tooLarge { throw tooLarge("standard input") }
            // An I/O error may pass; anything else (a directory as standard input) will not,
            // and a sendmail caller must not read it as "deferred, try again" (75).
            let passing = error.reason == String(cString: strerror(EIO))
            throw CommandFailure(passing ? .temporaryFailure : .dataError, "standard input: cannot be read (\(error.reason))")
        }
    }

    static func tooLarge(_ shown: String) -> CommandFailure {
        CommandFailure(.dataError, "\(shown): larger than \(limitInWords)")
    }
}
