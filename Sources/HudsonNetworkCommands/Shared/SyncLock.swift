/*!
 One `hd-sync` per account at a time, across processes: a LockFile beside the store,
 taken without waiting. A second one-shot `hd-sync` finds it held and reports an all-zero
 pass (CONTRACT.md "Sync"); a watch asks again every pass (SyncWatch). The kernel drops
 the lock when the process dies, so a crash never leaves it stuck.
 */
import HudsonCLI

public final class SyncLock {
    private let file: LockFile

    /// Takes the lock for `email`, or returns nil when another process holds it.
    public init?(storePath: String, email: String) throws {
        guard let file = try LockFile(path: LockFile.path(storePath: storePath, email: email, purpose: "sync")) else { return nil }
        self.file = file
    }

    /// Whether this process still holds the account's lock: false once its file was
    /// removed or replaced, when another process may take the lock under the same name.
    var isCurrent: Bool { file.isCurrent }
}
