/*!
 The cross-process lock SyncLock, FileFlushLock, SendLock and ImportLock share, and the one
 rule for its file's name (`path`): an exclusive `flock` on a lock file beside the store,
 taken without waiting. The kernel drops it when its process dies (kill -9 included), so a
 crash never leaves it stuck.

 A `flock` belongs to the open file, not to its name. A lock file removed or replaced
 (by hand, by a clean-up of `*.lock`) while a process holds it would let the next process
 create a new file and lock that one too: two holders. So a lock counts as taken only when
 the name still leads to the very file locked (the same device and inode, checked after
 `flock`), and a holder can ask again later whether it still does (`isCurrent`): one whose
 file was removed or replaced no longer holds the lock under that name. The name must be
 a regular file, opened without following a symbolic link, so a lock file never writes or
 blocks anywhere else (a FIFO, a device, a link out of the directory). The store file
 itself is never opened for this (sqlite-notes.md: closing any descriptor of it drops
 SQLite's locks).
 */
import Glibc
import HudsonCLI

final class LockFile: Sendable {
    let path: String
    private let fd: Int32
    /// The lock file's ctime (epoch ms) when it was locked: no later than its creation, so
    /// what was done under the lock since then was done under this very file
    /// (SendLock.claimsTakeableSince).
    let changedAtMilliseconds: Int64

    /// Takes the lock at `path`, or returns nil when another process holds it.
    /// Throws (78) when the lock file cannot be opened or is not a regular file.
    init?(path: String) throws {
        // A file removed or replaced between our open and our flock is opened again: a few
        // times at most, since each round means another process is changing it right now.
        for _ in 0..<8 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            guard fd >= 0 else { throw Self.failure(path, String(cString: strerror(errno))) }
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw Self.failure(path, "not a regular file")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return nil
            }
            if Self.names(fd: fd, path: path) {
                self.path = path
                self.fd = fd
                self.changedAtMilliseconds = Int64(status.st_ctim.tv_sec) * 1000 + Int64(status.st_ctim.tv_nsec) / 1_000_000
                return
            }
            close(fd)
        }
        return nil
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// `<store>.<purpose>-<email>.lock`, beside the store, with the address made safe
    /// for a file name: the one name of every account lock (SyncLock's "sync", SendLock's
    /// "send", ImportLock's "import", FileFlushLock's "flush").
    static func path(storePath: String, email: String, purpose: String) -> String {
        "\(storePath).\(purpose)-\(fileName(email)).lock"
    }

    /// An account's address as part of a file name: lowercased, and every character but
    /// letters, digits and `@.-_+` as `_` (the quota ledger's file is named so too).
    static func fileName(_ email: String) -> String {
        email.lowercased().map { $0.isLetter || $0.isNumber || "@.-_+".contains($0) ? String($0) : "_" }.joined()
    }

    /// Whether `path` still names the file this lock holds (it was not removed or replaced).
    var isCurrent: Bool { Self.names(fd: fd, path: path) }

    private static func names(fd: Int32, path: String) -> Bool {
        var held = stat(), named = stat()
        guard fstat(fd, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    private static func failure(_ path: String, _ why: String) -> CommandFailure {
        CommandFailure(.configuration, "\(path): cannot open lock file: \(why)")
    }
}
