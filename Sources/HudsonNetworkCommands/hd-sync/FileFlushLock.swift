/*!
 The flush lock of one account across processes (HudsonSync's `FlushLock`): a LockFile
 beside the store, taken without waiting while a flusher claims and sends, and released
 right after. hd-sync and hd-mark's own flush take it, so a flusher that gets it knows
 every claim in the queue was left by one that died; the kernel drops the lock of a
 process that dies, so it never stays stuck. A lock file removed or replaced while a
 flusher held it is not taken a second time under the same name (LockFile).
 */
import HudsonSync
import Synchronization

public final class FileFlushLock: FlushLock {
    private let path: String
    /// The lock, while held.
    private let held = Mutex<LockFile?>(nil)

    public init(storePath: String, email: String) {
        path = LockFile.path(storePath: storePath, email: email, purpose: "flush")
    }

    public func tryLock() throws -> Bool {
        try held.withLock { held in
            if held != nil { return false }
            held = try LockFile(path: path)
            return held != nil
        }
    }

    public func unlock() {
        held.withLock { $0 = nil }
    }
}
