/*!
 The flush lock of one account across processes (HudsonSync's `FlushLock`): an
 exclusive `flock` on a file beside the store, taken without waiting while a flusher
 claims and sends, and released right after. hd-sync and hd-mark's own flush take it,
 so a flusher that gets it knows every claim in the queue was left by one that died;
 the kernel drops the lock of a process that dies, so it never stays stuck. As with
 SyncLock, the store file itself is never opened for this (sqlite-notes.md).
 */
import Glibc
import HudsonCLI
import HudsonSync
import Synchronization

public final class FileFlushLock: FlushLock {
    private let path: String
    /// The descriptor holding the lock, while held.
    private let held = Mutex<Int32?>(nil)

    public init(storePath: String, email: String) {
        path = SyncLock.path(storePath: storePath, email: email, purpose: "flush")
    }

    public func tryLock() throws -> Bool {
        try held.withLock { held in
            if held != nil { return false }
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw CommandFailure(.configuration, "\(path): cannot open lock file: \(String(cString: strerror(errno)))")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return false
            }
            held = fd
            return true
        }
    }

    public func unlock() {
        held.withLock { held in
            guard let fd = held else { return }
            flock(fd, LOCK_UN)
            close(fd)
            held = nil
        }
    }
}
