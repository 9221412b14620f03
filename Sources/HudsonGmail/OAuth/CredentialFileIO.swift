/*!
 The POSIX file handling behind `CredentialStore`, kept apart so the rules of CONTRACT.md "Files" are
 visible in one place: private directories are created 0700 and files 0600 *regardless of umask* (an
 explicit chmod/fchmod after creation, since creation modes are only masked); a file is replaced
 atomically (a temporary file made with O_CREAT|O_EXCL in the same directory, written, fsynced, renamed
 over the target, then the directory fsynced, so a crash leaves the old file or the new one, never a
 partial one); and a file is read only through a descriptor opened with O_NOFOLLOW and checked with
 fstat (regular file, owned by us, no group/other permission bits), so the check and the read concern
 the same inode, as ssh does for private keys.
 */
import Foundation
import Glibc
import DirectoryListing

/// POSIX helpers for private files (credentials). Errors are `CredentialStoreError`.
enum CredentialFileIO {
    /// Creates `path` (and missing parents) with mode 0700. An existing directory is left as it is.
    static func makeDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw CredentialStoreError.io(operation: "use directory", path: path, errno: ENOTDIR) }
            return
        }
        guard errno == ENOENT else { throw CredentialStoreError.io(operation: "stat", path: path, errno: errno) }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        if mkdir(path, 0o700) != 0 {
            if errno == EEXIST { return }
            throw CredentialStoreError.io(operation: "create directory", path: path, errno: errno)
        }
        // mkdir's mode is masked by the umask; set it exactly.
        guard chmod(path, 0o700) == 0 else { throw CredentialStoreError.io(operation: "chmod", path: path, errno: errno) }
    }

    /// Throws unless `path` is a directory owned by us that group and others cannot write.
    /// Returns false when it does not exist.
    @discardableResult
    static func checkPrivateDirectory(_ path: String) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw CredentialStoreError.io(operation: "stat", path: path, errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw CredentialStoreError.io(operation: "use directory", path: path, errno: ENOTDIR) }
        guard info.st_uid == geteuid() else { throw CredentialStoreError.wrongOwner(path: path, owner: info.st_uid, user: geteuid()) }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 == 0 else { throw CredentialStoreError.directoryTooOpen(path: path, mode: mode) }
        return true
    }

    /// Reads a private file: not a symlink, a regular file, ours, mode without group/other bits.
    /// Returns nil when it does not exist.
    static func readPrivateFile(_ path: String, limit: Int = 1 << 20) throws -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw CredentialStoreError.symlink(path: path)
            default: throw CredentialStoreError.io(operation: "open", path: path, errno: errno)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CredentialStoreError.io(operation: "fstat", path: path, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw CredentialStoreError.notRegularFile(path: path) }
        guard info.st_uid == geteuid() else { throw CredentialStoreError.wrongOwner(path: path, owner: info.st_uid, user: geteuid()) }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else { throw CredentialStoreError.tooOpen(path: path, mode: mode) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CredentialStoreError.io(operation: "read", path: path, errno: errno) }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
            guard data.count <= limit else { throw CredentialStoreError.malformed(path: path, detail: "larger than \(limit) bytes") }
        }
    }

    /// Replaces `directory/name` with `data` atomically, mode 0600.
    static func writeAtomically(_ data: Data, directory: String, name: String) throws {
        let target = directory + "/" + name
        var suffix = SystemRandomNumberGenerator()
        let temporary = directory + "/." + name + ".tmp-" + String(suffix.next() as UInt64, radix: 16)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CredentialStoreError.io(operation: "create", path: temporary, errno: errno) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            // open's mode is masked by the umask; set it exactly.
            guard fchmod(fd, 0o600) == 0 else { throw CredentialStoreError.io(operation: "chmod", path: temporary, errno: errno) }
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw CredentialStoreError.io(operation: "write", path: temporary, errno: errno) }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw CredentialStoreError.io(operation: "fsync", path: temporary, errno: errno) }
        }
        guard rename(temporary, target) == 0 else { throw CredentialStoreError.io(operation: "rename", path: target, errno: errno) }
        renamed = true
        try syncDirectory(directory)
    }

    /// Deletes `directory/name`; false when it did not exist.
    static func remove(directory: String, name: String) throws -> Bool {
        let path = directory + "/" + name
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw CredentialStoreError.io(operation: "remove", path: path, errno: errno)
        }
        try syncDirectory(directory)
        return true
    }

    /// The entry names of `directory` (without `.` and `..`); nil when it does not exist.
    static func names(in directory: String) throws -> [String]? {
        guard let stream = opendir(directory) else {
            if errno == ENOENT { return nil }
            throw CredentialStoreError.io(operation: "list", path: directory, errno: errno)
        }
        defer { closedir(stream) }
        return DirectoryListing.names(in: stream)
    }

    /// fsync on the directory makes a rename or unlink durable (rename(2) alone is atomic, not durable).
    private static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw CredentialStoreError.io(operation: "open directory", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw CredentialStoreError.io(operation: "fsync directory", path: path, errno: errno) }
    }
}
