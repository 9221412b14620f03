/*!
 The files and the standard input `hd-send` reads (a body, attachments, the file the
 editor saved, a message on standard input), read so that none can hang it or fill its
 memory (issue 37, "Done when": every open bounded). A path must name a regular file —
 followed through symlinks, as every program opening a path does — and is opened
 non-blocking, so a FIFO with no writer, a terminal, a device or a directory is refused at
 once, not waited on or read for ever; a file larger than Gmail takes is refused before it
 is read; standard input is read up to that size and no further.
 */
import Glibc
import HudsonCLI
import HudsonOutput

enum BoundedInput {
    /// The most read from one file or from standard input: Gmail takes no message larger
    /// (Composer.maximumSize, gmail-api.md §2.7), so nothing larger can be sent.
    static var limit: Int { Composer.maximumSize }

    /// The bytes of the regular file at `path` (`what` names it in errors, quoted).
    static func file(_ path: String, what: String? = nil) throws -> [UInt8] {
        let shown = what ?? TerminalSafety.quoted(path)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason: String
            switch errno {
            case ENOENT: reason = "no such file"
            case EACCES, EPERM: reason = "permission denied"
            case ELOOP: reason = "too many symbolic links"
            case ENXIO: reason = "not a regular file"
            default: reason = "cannot be opened (\(String(cString: strerror(errno))))"
            }
            throw CommandFailure(.usage, "\(shown): \(reason)")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw CommandFailure(.usage, "\(shown): cannot be read") }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            throw CommandFailure(.usage, "\(shown): is a directory")
        default:
            throw CommandFailure(.usage, "\(shown): not a regular file (a FIFO, a device or a socket is not read)")
        }
        guard Int(status.st_size) <= limit else { throw tooLarge(shown) }
        // A regular file never blocks; the flag only kept the open from waiting.
        return try readAll(fd, shown: shown)
    }

    /// Standard input, whole, up to the limit.
    static func standardInput() throws -> [UInt8] {
        try readAll(0, shown: "standard input")
    }

    /// Reads `fd` to its end; more than the limit is an error (65), not a bigger buffer.
    static func readAll(_ fd: Int32, shown: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    // Standard input may be non-blocking (left so by another program): wait for it.
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&poller, 1, -1)
                    continue
                }
                throw CommandFailure(.temporaryFailure, "\(shown): cannot be read (\(String(cString: strerror(errno))))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= limit else { throw tooLarge(shown) }
        }
    }

    static func tooLarge(_ shown: String) -> CommandFailure {
        CommandFailure(.dataError, "\(shown): larger than \(limit / 1_048_576) MB, more than Gmail accepts for a whole message")
    }
}
