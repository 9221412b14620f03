/*!
 One sender per account at a time, across processes: an exclusive `flock` on a lock file
 beside the store (LockFile: a regular file, no link followed), taken without waiting, by
 `hd-send` for its one attempt and by each `hd-sync` pass for its outbox step. Whoever holds
 it knows every other sender of the account is gone, so a claim left in the outbox belongs
 to a process that died mid-send and may be taken over at once (the entry is then probed
 before anything is sent again). The kernel drops the lock when its process dies, so a
 crash never leaves it stuck; like SyncLock, it never opens the store file itself
 (sqlite-notes.md).

 A `flock` belongs to the open file, not to its name: if the lock file is removed while a
 sender holds it (a clean-up of `*.lock`), the next process creates a new file and locks it
 too, while the first may be mid-upload. A claim is made only under the lock, so a claim
 made since the lock file now at that name came to be was made under it, by a sender now
 dead; an older one may belong to a sender still holding a removed file. So only claims
 made at or after the lock file's ctime are taken over at once; older ones wait for their
 expiry (Store.outboxClaimLifetimeMilliseconds) and are probed then, rather than sent a
 second time while their sender may still be at work. (Touching the file only makes this
 more careful.)
 */
import HudsonCLI

public final class SendLock {
    private let file: LockFile

    /// Takes the send lock of `email`, or returns nil when another process holds it.
    public init?(storePath: String, email: String) throws {
        guard let file = try LockFile(path: LockFile.path(storePath: storePath, email: email, purpose: "send")) else { return nil }
        self.file = file
    }

    /// The moment (epoch ms) from which claims other senders left may be taken over at
    /// once: when the lock file held came to be (its ctime).
    public var claimsTakeableSince: Int64 { file.changedAtMilliseconds }
}
