/*!
 Saving attachments where the user asked and nowhere else: only the last component of
 the sender's filename is used (`../../.bashrc` becomes `.bashrc` inside DIR), whatever a
 terminal must not be shown is dropped (controls and every bidirectional mark, override
 and isolate, TerminalSafety's set: `invoice<U+2066>gpj.exe<U+2069>.pdf` would list as a
 PDF), a file is never overwritten (a numbered name instead) and never written through a
 symlink (`O_EXCL | O_NOFOLLOW`).
 */
import Glibc
import HudsonOutput

public enum AttachmentSaver {
    /// A safe file name from an attachment's name: its last path component, without
    /// controls, never empty, "." or "..".
    public static func safeName(_ name: String, fallback: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var cleaned = String(String.UnicodeScalarView(last.unicodeScalars.filter { !TerminalSafety.isUnsafe($0) }))
            .trimmingCharacters(in: " ")
        if cleaned.utf8.count > 200 { cleaned = String(cleaned.prefix(120)) }
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." { return fallback }
        return cleaned
    }

    /// Writes `bytes` to a new file in `directory` named after `name`, adding " (1)",
    /// " (2)"... before the extension when the name is taken. Returns the path.
    public static func save(_ bytes: [UInt8], name: String, in directory: String) throws -> String {
        let (stem, ext) = split(name)
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? name : "\(stem) (\(attempt))\(ext)"
            let path = directory.hasSuffix("/") ? directory + candidate : directory + "/" + candidate
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw CommandFailure(.temporaryFailure, "\(path): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CommandFailure(.temporaryFailure, "\(path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
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
