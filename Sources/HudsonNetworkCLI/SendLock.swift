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
 too, while the first may be mid-upload. Hudson never removes its lock files, so a holder
 that had to create the file does not take over other senders' claims: they are left until
 their claim expires (Store.outboxClaimLifetimeMilliseconds), and then probed, rather than
 sent a second time while their sender may still be at work.
 */
import HudsonCLI

public final class SendLock {
    private let file: LockFile

    /// Takes the send lock of `email`, or returns nil when another process holds it.
    public init?(storePath: String, email: String) throws {
        let safe = email.lowercased().map { $0.isLetter || $0.isNumber || "@.-_+".contains($0) ? String($0) : "_" }.joined()
        guard let file = try LockFile(path: "\(storePath).send-\(safe).lock") else { return nil }
        self.file = file
    }

    /// Whether claims other senders left may be taken over at once: only when the lock file
    /// was there already, so no sender can be holding a removed one.
    public var mayTakeOverClaims: Bool { !file.created }
}
