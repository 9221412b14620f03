/*!
 The file operations of an export, on Glibc: whole files written to a temporary name and
 renamed into place (Maildir's tmp/ → cur/ rule, and the same for `.eml` files and the
 state), so a kill at any moment leaves either the old file or the new one.
 */
import Glibc

/// A file operation that failed: the path and `strerror` of errno.
public struct ExportFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }

    init(_ path: String, errno code: Int32 = errno) {
        self.path = path
        self.reason = String(cString: strerror(code))
    }

    init(_ path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// syncfs(2): glibc has it, Swift's Glibc module does not declare it (_GNU_SOURCE).
@_silgen_name("syncfs") private func hudson_syncfs(_ fd: Int32) -> Int32

enum ExportFiles {
    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw ExportFileError(path) }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { throw ExportFileError(path, "not a directory") }
    }

    static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            try makeDirectory(prefix)
            prefix += "/"
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ExportFileError(path) }
        defer { close(fd) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue }; throw ExportFileError(path) }
            if count == 0 { return output }
            output += buffer[0..<count]
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 { if errno == EINTR { continue }; throw ExportFileError(path) }
            offset += count
        }
    }

    /// Writes `bytes` to `temporary` (created, 0600) and renames it to `path`.
    static func writeAtomically(_ bytes: [UInt8], to path: String, temporary: String) throws {
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExportFileError(temporary) }
        do {
            try writeAll(fd, bytes, path: temporary)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard close(fd) == 0 else { unlink(temporary); throw ExportFileError(temporary) }
        guard rename(temporary, path) == 0 else { let code = errno; unlink(temporary); throw ExportFileError(path, errno: code) }
    }

    static func remove(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw ExportFileError(path) }
    }

    /// The names in a directory (no `.` or `..`); empty when it does not exist.
    static func names(in path: String) throws -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return [] }
            throw ExportFileError(path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Flushes what was written to the file system holding `path` to the disk, before the
    /// state that records it is saved (one call a batch, not an fsync a file).
    static func flush(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = hudson_syncfs(fd)
        close(fd)
    }

    /// An exclusive lock on `path` (created), held while the descriptor stays open; nil
    /// when another process holds it.
    static func lock(_ path: String) throws -> Int32? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExportFileError(path) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        return fd
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}
