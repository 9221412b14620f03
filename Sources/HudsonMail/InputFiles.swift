/*!
 The one way a file the user named is opened for reading (issue 37 §3): a rules file, an
 mbox, a Maildir file, an `.eml` file, a message `hd-filters rules test` judges. A file
 given by name is trusted to be a file and nothing else:

 - only a regular file is read. The open itself uses `O_NONBLOCK`, so a FIFO with no writer
   (or a device, whose open can wait for a carrier or a tape) cannot block it; `fstat` on the
   descriptor then decides, so a name swapped between a check and the open is judged by what
   was opened. A FIFO, socket, device or directory is refused in words.
 - a whole read is bounded: past `limit` bytes it is refused, not held.
 - inside a directory the user gave (`hd-import DIR`), a symbolic link is followed only when
   its target is inside that directory (`realpath`): `d/x.eml -> /etc/shadow` is refused,
   and a directory reached twice (a link back up the tree) is walked once.

 Standard input is not a named file: where a command documents `-`, it reads it as it is.
 This module does not print or exit; it throws `InputFileError` with the path and why.
 */
import Glibc

/// A named file that cannot be read as one: the path, and the reason in words.
public struct InputFileError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Nothing by that name (ENOENT).
        case missing
        /// The open or a read failed (errno's words).
        case unreadable
        /// A FIFO, socket, device or directory where a regular file was wanted.
        case notRegularFile
        /// Larger than the reader takes.
        case tooLarge
        /// A symbolic link whose target is outside the directory the user gave.
        case outsideTree
    }

    public var path: String
    public var kind: Kind
    public var reason: String

    public init(path: String, kind: Kind, reason: String) {
        self.path = path
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

public enum InputFiles {
    /// Opens `path` for reading: a regular file only, never blocking in `open`. The
    /// descriptor is blocking again when returned (reads of a regular file do not wait on
    /// a writer) and close-on-exec; the caller closes it.
    public static func openRegular(_ path: String) throws(InputFileError) -> Int32 {
        // Judged by name first, so a device is not even opened (an open can act on one)...
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw InputFileError(path: path, kind: errno == ENOENT ? .missing : .unreadable, reason: errnoText())
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw notRegular(path, mode: info.st_mode) }
        // ...then by what was opened: the name may have been swapped since.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw InputFileError(path: path, kind: .unreadable, reason: errnoText()) }
        var opened = stat()
        guard fstat(fd, &opened) == 0 else {
            let reason = errnoText()
            close(fd)
            throw InputFileError(path: path, kind: .unreadable, reason: reason)
        }
        guard (opened.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw notRegular(path, mode: opened.st_mode)
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    /// The whole of the regular file `path`, refused past `limit` bytes (`tooLarge`, with
    /// `what` naming the limit in words: "4 MiB", "Gmail's 150 MB limit for one message").
    public static func readRegular(_ path: String, limit: Int, what: String) throws(InputFileError) -> [UInt8] {
        let fd = try openRegular(path)
        defer { close(fd) }
        return try readAll(fd, path: path, limit: limit, what: what, prefix: [])
    }

    /// Everything left on `fd` after `prefix` (bytes already read from it), refused past
    /// `limit` bytes in all.
    public static func readAll(_ fd: Int32, path: String, limit: Int, what: String,
                               prefix: [UInt8]) throws(InputFileError) -> [UInt8] {
        var bytes = prefix
        if bytes.count > limit { throw InputFileError(path: path, kind: .tooLarge, reason: "larger than \(what)") }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    // Standard input may have been left non-blocking by another program.
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&poller, 1, -1)
                    continue
                }
                throw InputFileError(path: path, kind: .unreadable, reason: errnoText())
            }
            if got == 0 { return bytes }
            if bytes.count + got > limit { throw InputFileError(path: path, kind: .tooLarge, reason: "larger than \(what)") }
            bytes.append(contentsOf: chunk[0..<got])
        }
    }

    /// Up to `count` bytes from the start of `fd` (fewer only at its end).
    public static func readHead(_ fd: Int32, path: String, count: Int) throws(InputFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: count)
        while bytes.count < count {
            let want = count - bytes.count
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, want) }
            if got < 0 {
                if errno == EINTR { continue }
                throw InputFileError(path: path, kind: .unreadable, reason: errnoText())
            }
            if got == 0 { break }
            bytes.append(contentsOf: chunk[0..<got])
        }
        return bytes
    }

    /// The canonical path of `path` (symbolic links resolved), or nil when it cannot be
    /// resolved (a dangling link, a missing component).
    public static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Whether the canonical `path` is `root` or below it (both canonical).
    public static func isInside(_ path: String, root: String) -> Bool {
        path == root || path.hasPrefix(root == "/" ? "/" : root + "/")
    }

    static func notRegular(_ path: String, mode: mode_t) -> InputFileError {
        let what: String
        switch mode & S_IFMT {
        case S_IFDIR: what = "a directory"
        case S_IFIFO: what = "a FIFO"
        case S_IFSOCK: what = "a socket"
        case S_IFCHR: what = "a character device"
        case S_IFBLK: what = "a block device"
        default: what = "not a regular file"
        }
        return InputFileError(path: path, kind: .notRegularFile,
                              reason: what == "not a regular file" ? what : "\(what), not a regular file")
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
