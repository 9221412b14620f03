/*!
 One sender per account at a time, across processes: an exclusive `flock` on a lock file
 beside the store, taken without waiting, by `hd-send` for its one attempt and by each
 `hd-sync` pass for its outbox step. Whoever holds it knows every other sender of the
 account is gone, so a claim left in the outbox belongs to a process that died mid-send and
 may be taken over at once (the entry is then probed before anything is sent again). The
 kernel drops the lock when its process dies, so a crash never leaves it stuck; like
 SyncLock, it never opens the store file itself (sqlite-notes.md).
 */
import Glibc
import HudsonCLI

public final class SendLock {
    private let fd: Int32

    /// Takes the send lock of `email`, or returns nil when another process holds it.
    public init?(storePath: String, email: String) throws {
        let safe = email.lowercased().map { $0.isLetter || $0.isNumber || "@.-_+".contains($0) ? String($0) : "_" }.joined()
        let path = "\(storePath).send-\(safe).lock"
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
}
