/*!
 What the local commands of issue 41 ask of the network commands, as child processes
 (they link no network code, as `hd-mark`'s push does): `hd-undo outbox:N` of a
 scheduled send deletes its Gmail draft, and `hd-snooze wake`/`release` send what is due
 with one `hd-sync` pass.
 */
import HudsonStore

extension Invocation {
    /// Deletes the Gmail draft of a cancelled send-later through `hd-drafts delete` (this
    /// command holds no network code); true when it is gone.
    public func deleteScheduledDraft(_ draftID: String, in store: Store, entry: Int64) -> Bool {
        var arguments = ["delete", "draft:\(draftID)"]
        if let path = try? storePath() { arguments += ["--db", path] }
        if let email = try? store.outboxEntry(id: entry)?.accountEmail { arguments += ["--account", email] }
        return SiblingCommand.run("hd-drafts", arguments: arguments, showingErrors: debug) == 0
    }

    /// Runs one `hd-sync` pass for the account (it sends what is due), quietly; true when
    /// it ran to the end.
    public func runSyncPass(accountEmail: String) -> Bool {
        var arguments = ["--account", accountEmail]
        if let path = try? storePath() { arguments += ["--db", path] }
        return SiblingCommand.run("hd-sync", arguments: arguments, showingErrors: debug) == 0
    }
}
