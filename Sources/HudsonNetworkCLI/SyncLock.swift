/*!
 One `hd-sync` per account at a time, across processes: an exclusive `flock` on a lock
 file beside the store, taken without waiting. A second `hd-sync` finds it held and
 reports an all-zero pass (CONTRACT.md "Sync"). The kernel drops the lock when the
 process dies, so a crash never leaves it stuck. The store file itself is never
 opened for this (sqlite-notes.md: closing any descriptor of it drops SQLite's locks).
 */
import Glibc
import HudsonCLI

public final class SyncLock {
    private let fd: Int32

    /// Takes the lock for `email`, or returns nil when another process holds it.
    public init?(storePath: String, email: String) throws {
        let path = Self.path(storePath: storePath, email: email, purpose: "sync")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CommandFailure(.configuration, "\(path): cannot open lock file: \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// `<store>.<purpose>-<email>.lock`, beside the store, with the address made safe
    /// for a file name.
    static func path(storePath: String, email: String, purpose: String) -> String {
        let safe = email.lowercased().map { $0.isLetter || $0.isNumber || "@.-_+".contains($0) ? String($0) : "_" }.joined()
        return "\(storePath).\(purpose)-\(safe).lock"
    }
}

