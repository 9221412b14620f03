/*!
 The file operations of an export, on Glibc: whole files written to a temporary name and
 renamed into place (Maildir's tmp/ → cur/ rule, and the same for `.eml` files and the
 state), so a kill at any moment leaves either the old file or the new one.

 Every operation inside an export goes through an `ExportDirectory`, a directory held
 open: files are opened, created, renamed and removed relative to its descriptor, and no
 component below it is followed if it is a symbolic link (`O_NOFOLLOW` at each step,
 openat(2)). A link planted in an export (`cur -> /etc`, `.hudson-export -> ~/.bashrc`)
 therefore fails the operation instead of sending it outside (issue 37 §3); a FIFO or a
 device is never opened for reading or writing (`O_NONBLOCK`, then `fstat` must say a
 regular file), so nothing waits for a writer that never comes.
 */
import Glibc
import DirectoryListing

/// A file operation that failed: the path and `strerror` of errno.
public struct ExportFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }

    init(_ path: String, errno code: Int32 = errno) {
        self.path = path
        self.reason = code == ELOOP ? "a symbolic link, which an export does not follow" : String(cString: strerror(code))
    }

    init(_ path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// syncfs(2): glibc has it, Swift's Glibc module does not declare it (_GNU_SOURCE).
@_silgen_name("syncfs") private func hudson_syncfs(_ fd: Int32) -> Int32

/// What kind of file a name is, as lstat(2) says (a link is not followed).
enum FileKind: Equatable {
    case regular, directory, symbolicLink, fifo, socket, device, other

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR, S_IFBLK: self = .device
        default: self = .other
        }
    }

    /// "a FIFO", "a directory": for messages.
    var phrase: String {
        switch self {
        case .regular: return "a file"
        case .directory: return "a directory"
        case .symbolicLink: return "a symbolic link"
        case .fifo: return "a FIFO"
        case .socket: return "a socket"
        case .device: return "a device"
        case .other: return "not a regular file"
        }
    }

    /// The kind of what `path` names (a link itself, not what it points to); nil when
    /// nothing is there, throws for any other failure (permission, a name too long).
    static func of(_ path: String) throws -> FileKind? {
        var info = stat()
        if lstat(path, &info) == 0 { return FileKind(mode: info.st_mode) }
        if errno == ENOENT { return nil }
        throw ExportFileError(path)
    }
}

/// A directory of an export, held open (see the file's comment).
final class ExportDirectory {
    let fd: Int32
    /// Its path, for messages.
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// Opens the directory at `path`. `followingLink` is for a directory the user named
    /// above the export (the mbox's); an export's own directory must not be a link.
    static func open(_ path: String, followingLink: Bool = false) throws -> ExportDirectory {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw ExportFileError(path) }
        return ExportDirectory(fd: fd, path: path)
    }

    func child(_ name: String) -> String { path == "/" ? "/" + name : path + "/" + name }

    /// `name` here, by the path the directory has now, with no link in it: for a library
    /// that opens files by path (SQLite, refusing links), the directory this one is.
    func resolvedChild(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(fd)", &buffer, Int(PATH_MAX))
        guard length > 0, buffer[0] == CChar(UInt8(ascii: "/")) else { return child(name) }
        let directory = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return directory == "/" ? "/" + name : directory + "/" + name
    }

    /// This directory's inode: the same after a rename, another in a copy.
    var inode: UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return UInt64(info.st_ino)
    }

    /// Whether the user owns this directory and nobody else may write it.
    var isPrivate: Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o022 == 0
    }

    /// Syncs this directory (the names in it) to the disk.
    func sync() {
        _ = fsync(fd)
    }

    /// The subdirectory `name` (one component), not followed if a link; created (0700)
    /// when missing and `create`, nil when missing otherwise.
    func subdirectory(_ name: String, create: Bool) throws -> ExportDirectory? {
        if create && mkdirat(fd, name, 0o700) != 0 && errno != EEXIST { throw ExportFileError(child(name)) }
        let sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard sub >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw errno == ENOTDIR ? ExportFileError(child(name), "not a directory") : ExportFileError(child(name))
        }
        return ExportDirectory(fd: sub, path: child(name))
    }

    /// The directory holding `relative` (components separated by `/`), and the last
    /// component; nil when a directory on the way is missing and not `create`.
    func resolve(_ relative: String, create: Bool) throws -> (ExportDirectory, String)? {
        let parts = relative.split(separator: "/").map(String.init)
        guard let name = parts.last, !parts.contains(where: { $0 == "." || $0 == ".." }) else {
            throw ExportFileError(child(relative), "not a name inside the export")
        }
        var directory = self
        for part in parts.dropLast() {
            guard let next = try directory.subdirectory(part, create: create) else { return nil }
            directory = next
        }
        return (directory, name)
    }

    func kind(_ name: String) throws -> FileKind? {
        var info = stat()
        if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return FileKind(mode: info.st_mode) }
        if errno == ENOENT { return nil }
        throw ExportFileError(child(name))
    }

    func exists(_ name: String) -> Bool { ((try? kind(name)) ?? nil) != nil }

    /// What identifies a file's version (device, inode, size, modification and change
    /// times): a state file read once is not parsed again while its stamp is the same.
    func stamp(_ name: String) -> [Int64]? {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return [Int64(info.st_dev), Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
                Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec)]
    }

    /// The size of a regular file, nil when there is none.
    func size(_ name: String) -> Int64? {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Opens `name`, which must be a regular file (not a link, FIFO or device; a FIFO is
    /// opened without waiting for a writer, then refused).
    func openRegular(_ name: String, flags: Int32, mode: mode_t = 0o600) throws -> Int32 {
        let descriptor = openat(fd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw ExportFileError(child(name)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw ExportFileError(child(name), "\(FileKind(mode: info.st_mode).phrase), not a regular file")
        }
        // Back to blocking writes: O_NONBLOCK was only for the open.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// The whole of a regular file, refused when longer than `limit` bytes.
    func read(_ name: String, limit: Int64 = .max) throws -> [UInt8] {
        let descriptor = try openRegular(name, flags: O_RDONLY)
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, Int64(info.st_size) > limit {
            throw ExportFileError(child(name), "larger than \(limit) bytes")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { if errno == EINTR { continue }; throw ExportFileError(child(name)) }
            if count == 0 { return output }
            output += buffer[0..<count]
            if Int64(output.count) > limit { throw ExportFileError(child(name), "larger than \(limit) bytes") }
        }
    }

    /// Writes `bytes` to `temporary` in `temporaryDirectory` (created, 0600) and renames
    /// it to `name` here; `durable`: the file synced before, and this directory after.
    func writeAtomically(_ bytes: [UInt8], to name: String, temporary: String, in temporaryDirectory: ExportDirectory,
                         durable: Bool = false) throws {
        let descriptor = try temporaryDirectory.openRegular(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try ExportFiles.writeAll(descriptor, bytes, path: temporaryDirectory.child(temporary))
            if durable && fsync(descriptor) != 0 { throw ExportFileError(temporaryDirectory.child(temporary)) }
        } catch {
            close(descriptor)
            unlinkat(temporaryDirectory.fd, temporary, 0)
            throw error
        }
        guard close(descriptor) == 0 else {
            unlinkat(temporaryDirectory.fd, temporary, 0)
            throw ExportFileError(temporaryDirectory.child(temporary))
        }
        guard renameat(temporaryDirectory.fd, temporary, fd, name) == 0 else {
            let code = errno
            unlinkat(temporaryDirectory.fd, temporary, 0)
            throw ExportFileError(child(name), errno: code)
        }
        if durable && fsync(fd) != 0 { throw ExportFileError(path) }
    }

    /// Renames `name` to `newName` here, replacing what is there.
    func rename(_ name: String, to newName: String) throws {
        guard renameat(fd, name, fd, newName) == 0 else { throw ExportFileError(child(newName)) }
    }

    /// Removes `name` (a link itself, never what it points to); nothing there is fine.
    func remove(_ name: String) throws {
        if unlinkat(fd, name, 0) != 0 && errno != ENOENT { throw ExportFileError(child(name)) }
    }

    /// Removes the empty directory `name`; true when it was removed.
    @discardableResult
    func removeDirectory(_ name: String) -> Bool { unlinkat(fd, name, AT_REMOVEDIR) == 0 }

    /// The names in this directory (no `.` or `..`).
    func names() throws -> [String] {
        var names: [String] = []
        try forEachName { names.append(String(decoding: $0, as: UTF8.self)) }
        return names
    }

    /// Calls `body` with each name in this directory (no `.` or `..`), as bytes valid only
    /// during the call: a listing of any size, held one name at a time.
    func forEachName(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        let copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0, let dir = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw ExportFileError(path)
        }
        defer { closedir(dir) }
        try DirectoryListing.forEachName(in: dir, body)
    }

    /// Flushes what was written to the file system holding this directory to the disk,
    /// before the state that records it is saved (one call a batch, not an fsync a file).
    func flush() {
        _ = hudson_syncfs(fd)
    }

    /// An exclusive lock on `name` (a regular file, created), held while the descriptor
    /// stays open; nil when another process holds it.
    func lock(_ name: String) throws -> Int32? {
        let descriptor = try openRegular(name, flags: O_RDWR | O_CREAT)
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}

enum ExportFiles {
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 { if errno == EINTR { continue }; throw ExportFileError(path) }
            offset += count
        }
    }
}
