/*!
 After `hd-mark` or `hd-undo` commits a change, one short attempt to send it (CONTRACT.md
 "Triage"), made by `hd-sync --push` in a child process. The two then link no network
 code and start as fast as the read commands: Foundation's networking (libcurl and the
 whole of Foundation, relocated at every start) cost 12 ms of every `hd-mark`, sending or
 not (docs/performance.md). Offline, without credentials, or failing, the change stays
 queued and the next `hd-sync` sends it: success with a note, not an error.
 */
import Glibc
import HudsonStore

extension Invocation {
    /// `pushQueuedChanges(accounts:)` for the accounts whose queues `deltas` changed.
    @discardableResult
    public func pushQueuedChanges(for deltas: [TriageDelta], in store: Store) -> Bool {
        let emails = Set(deltas.map(\.accountID)).compactMap { id in try? store.account(id: id)?.email }
        return pushQueuedChanges(accounts: emails.sorted())
    }

    /// Runs `hd-sync --push` for the store this command used (one account's queue, or
    /// every account's) and waits for it. Its output is not shown (`HUDSON_DEBUG=1` shows
    /// its standard error), but for one line: that the Gmail on this machine it was to
    /// reach is not running (the demo's fake, stopped: `StoppedLocalGmail`). When it could
    /// not send everything, or could not be run, this command notes that the change stays
    /// queued. Returns whether everything was sent.
    @discardableResult
    func pushQueuedChanges(accounts emails: [String]) -> Bool {
        guard !emails.isEmpty else { return true }
        var arguments = ["--push"]
        if let path = try? storePath() { arguments += ["--db", path] }
        if emails.count == 1 { arguments += ["--account", emails[0]] }
        let status: Int32?
        if debug {
            status = SiblingCommand.run("hd-sync", arguments: arguments, showingErrors: true)
        } else {
            let child = SiblingCommand.runCapturingErrors("hd-sync", arguments: arguments)
            status = child?.status
            if status != 0, let child, let stopped = StoppedLocalGmail.line(inErrorsOf: "hd-sync", child.errors) {
                warn(stopped)
            }
        }
        if status == 0 { return true }
        if debug { warn("hd-sync --push: \(status.map { "exit status \($0)" } ?? "could not run")") }
        // With HUDSON_DEBUG=1 the child's standard error is shown, and with it its note.
        if !(debug && status == 75) { warn("queued; the next hd-sync will send it") }
        return false
    }
}
