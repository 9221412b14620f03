/*!
 What `hd-pending` lists, in one place for the command and for hd-mcp's `pending` tool, so
 the agent sees every record the user sees: the label operations, the queued changes, the
 outbox and the scheduled sends (a held send is a scheduled send awaiting approval).
 */
import HudsonOutput
import HudsonStore

public enum PendingRecords {
    /// Everything waiting for Gmail, oldest kind first; with `heldOnly`, only what waits
    /// for the user's approval.
    public static func list(_ store: Store, accountID: Int64?, heldOnly: Bool, now: Int64) throws -> [Record] {
        if heldOnly {
            return try store.heldMutations(accountID: accountID).map { Records.queued($0, now: now) }
                + store.heldOutbox(accountID: accountID).map { Records.outbox($0, now: now) }
                + store.scheduledSends(accountID: accountID).filter(\.awaitsApproval).map { Records.scheduled($0) }
        }
        return try store.pendingLabelChanges(accountID: accountID).map { Records.labelChange($0, now: now) }
            + store.queuedMutations(accountID: accountID).map { Records.queued($0, now: now) }
            + store.pendingOutbox(accountID: accountID).map { Records.outbox($0, now: now) }
            + store.scheduledSends(accountID: accountID).map { Records.scheduled($0) }
    }

    /// The heading a terminal shows above the list: the columns every kind of record shares.
    public static let heading = ["REF", "CHANGE", "STATE", "AGE/TIME", "ATTEMPTS", "ACTION", "BY", "ACCOUNT", "DETAIL"]
}
