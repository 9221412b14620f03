/*!
 Saving attachments where the user asked and nowhere else: only the last component of
 the sender's filename is used (`../../.bashrc` becomes `.bashrc` inside DIR), whatever a
 terminal must not be shown is dropped (controls and every bidirectional mark, override
 and isolate, TerminalSafety's set: `invoice<U+2066>gpj.exe<U+2069>.pdf` would list as a
 PDF), a file is never overwritten (a numbered name instead) and never written through a
 symlink (`O_EXCL | O_NOFOLLOW`). The directory is checked before anything is fetched
 and made only when the first file is written, so a refused or failed run leaves the file
 system as it was (issue 37).
 */
import HudsonCLI
import Glibc
import HudsonOutput

public enum AttachmentSaver {
    /// A safe file name from an attachment's name (docs/reliability.md, "Attachment
    /// names"): its last path component; ESC sequences and other unsafe characters
    /// removed; the characters Windows and Samba refuse (`<>:"|?*`, so no `file:stream`)
    /// made `_`; no leading dot or space (a mail cannot plant `.bashrc` or `.profile`) and
    /// no trailing dot or space; a Windows device name (`CON`, `aux.txt`, `LPT1`) prefixed
    /// with `_`; at most `maximumNameBytes` bytes with the extension kept. Never empty,
    /// "." or "..": the fallback then.
    public static func safeName(_ name: String, fallback: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in TerminalSafety.shown(last).unicodeScalars {
            switch scalar {
            case "\t", "\n", "\r": scalars.append(" ")
            case "<", ">", ":", "\"", "|", "?", "*": scalars.append("_")
            default: scalars.append(scalar)
            }
        }
        var cleaned = Substring(String(scalars))
        while let first = cleaned.first, first == "." || first == " " { cleaned = cleaned.dropFirst() }
        while let last = cleaned.last, last == "." || last == " " { cleaned = cleaned.dropLast() }
        guard !cleaned.isEmpty else { return fallback }
        var result = String(cleaned)
        let stem = result.split(separator: ".", maxSplits: 1).first.map { $0.lowercased().trimmingCharacters(in: " ") } ?? ""
        if windowsDeviceNames.contains(stem) { result = "_" + result }
        return fitted(result, bytes: maximumNameBytes)
    }

    /// Room below NAME_MAX (255 bytes) for the " (12)" `save` adds to a taken name.
    static let maximumNameBytes = 200

    /// Names Windows reserves for devices, with or without an extension.
    static let windowsDeviceNames: Set<String> = Set(["con", "prn", "aux", "nul", "conin$", "conout$"]
        + (0...9).flatMap { ["com\($0)", "lpt\($0)"] })

    /// `name` cut to at most `bytes` UTF-8 bytes at a character boundary, the extension
    /// (a last dot and up to 16 bytes after it) kept.
    static func fitted(_ name: String, bytes: Int) -> String {
        guard name.utf8.count > bytes else { return name }
        var (stem, ext) = split(name)
        if ext.utf8.count > 17 { (stem, ext) = (name, "") }
        var kept = ""
        var used = ext.utf8.count
        for character in stem {
            let size = character.utf8.count
            if used + size > bytes { break }
            kept.append(character)
            used += size
        }
        return kept + ext
    }

    /// Whether files can be saved in `directory`, checked before anything is fetched or
    /// made: a name (an empty one would be the root, "" + "/" + name); each part of it that
    /// exists a directory (a device, a FIFO, a socket or a file is refused, not written
    /// through); the deepest existing one writable. What is missing is made by the first
    /// save. A refusal is a configuration error (78), as for hd-export's targets.
    public static func checkDirectory(_ directory: String) throws {
        guard !directory.isEmpty else { throw UsageError("--save-attachments: an empty directory name") }
        var path = directory
        while true {
            var info = stat()
            if stat(path, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw CommandFailure(.configuration, "\(TerminalSafety.quoted(path)): \(kind(info.st_mode)), not a directory")
                }
                guard access(path, W_OK | X_OK) == 0 else {
                    let reason = String(cString: strerror(errno))
                    throw CommandFailure(.configuration, "\(TerminalSafety.quoted(path)): cannot save files there: \(reason)")
                }
                return
            }
            guard errno == ENOENT else {
                let reason = String(cString: strerror(errno))
                throw CommandFailure(.configuration, "\(TerminalSafety.quoted(path)): \(reason)")
            }
            let parent = Paths.directory(of: path)
            guard parent != path else {
                throw CommandFailure(.configuration, "\(TerminalSafety.quoted(directory)): no directory above it exists")
            }
            path = parent
        }
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a pipe"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "a file"
        }
    }

    /// The status of a failed open or write: what the user must change (permissions, a
    /// read-only file system, a name too long) is configuration (78); what may pass (a
    /// full disk, an I/O error) temporary (75).
    static func status(errno code: Int32) -> ExitStatus {
        [EACCES, EPERM, EROFS, ENOTDIR, ELOOP, EISDIR, ENAMETOOLONG, ENOENT].contains(code) ? .configuration : .temporaryFailure
    }

    /// Writes `bytes` to a new file in `directory` named after `name`, adding " (1)",
    /// " (2)"... before the extension when the name is taken, making `directory` (0700)
    /// when it is missing. Returns the path. A file that could not be written whole is
    /// removed: a cut attachment under its own name would pass for the whole one.
    public static func save(_ bytes: [UInt8], name: String, in directory: String) throws -> String {
        try Paths.makeDirectories(directory)
        let (stem, ext) = split(name)
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? name : "\(stem) (\(attempt))\(ext)"
            let path = directory.hasSuffix("/") ? directory + candidate : directory + "/" + candidate
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                let code = errno
                if code == EEXIST { continue }
                throw CommandFailure(status(errno: code), "\(TerminalSafety.quoted(path, limit: 200)): \(String(cString: strerror(code)))")
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    close(fd)
                    unlink(path)
                    throw CommandFailure(status(errno: code), "\(TerminalSafety.quoted(path, limit: 200)): \(String(cString: strerror(code)))")
                }
                offset += written
            }
            close(fd)
            return path
        }
        throw CommandFailure(.temporaryFailure, "\(directory): too many files named \(name)")
    }

    static func split(_ name: String) -> (String, String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}
