/*!
 The timers of issue 41 in each `hd-sync` pass. Before the outbox is sent, scheduled sends
 whose time came become sends of their Gmail drafts (Store.releaseDueScheduledSends), so
 this pass sends them. After the poll and retirement, so that a reply the poll brought
 wakes a snoozed thread early (or cancels a reminder), the reminders of sent messages
 whose threads are stored now are set (Store.settleSendReminders) and the wake check runs
 (Store.wakeSnoozes): one action for hd-undo, sent to Gmail in the same pass. A failure is
 told and left for the next pass, as the rules' is: nothing is lost until a step commits.
 Each step first reads whether it has work (Store.timerWork) and writes only then. The
 drafts of sends cancelled while Gmail could not be reached are deleted too.
 */
import HudsonCLI
import HudsonGmail
import HudsonStore

extension AccountWorker {
    /// Returns how many schedules it released (now outbox entries to send).
    @discardableResult
    func releaseScheduledSendsReporting() -> Int {
        let email = self.email
        let now = timerNow() * 1000
        do {
            guard try database.read({ store in try store.timerWork(accountID: try store.requireAccount(email: email).id, now: now) }).sends
            else { return 0 }
            let release = try database.write { store in
                try store.releaseDueScheduledSends(accountID: try store.requireAccount(email: email).id, now: now)
            }
            for id in release.heldLate {
                progress.finish()
                warn("outbox:\(id): over an hour late, held (--if-late hold): hd-snooze release outbox:\(id) sends it, hd-undo outbox:\(id) drops it")
            }
            for id in release.dropped {
                progress.finish()
                warn("outbox:\(id): not sent at its time: its draft could not be saved (hd-pending)")
            }
            return release.released.count
        } catch {
            progress.finish()
            warn("\(email): scheduled sends: \(Exit.classify(error, debug: false).message); tried again next pass")
            return 0
        }
    }

    /// Deletes the Gmail drafts of cancelled schedules still there (Store.cancelledScheduledDrafts):
    /// an `hd-undo outbox:N` made offline leaves its draft to this. A draft already gone
    /// counts as deleted; a failure is told and tried again next pass.
    func deleteCancelledDraftsReporting() async {
        let email = self.email
        do {
            let ids = try database.read { store in
                try store.cancelledScheduledDrafts(accountID: try store.requireAccount(email: email).id)
            }
            for id in ids {
                do { try await drafts.deleteDraft(id: id) } catch GmailError.notFound {}
                try database.write { store in
                    try store.forgetCancelledDraft(id: id, accountID: try store.requireAccount(email: email).id)
                }
            }
        } catch {
            progress.finish()
            warn("\(email): drafts of cancelled scheduled sends: \(Exit.classify(error, debug: false).message); tried again next pass")
        }
    }

    func wakeSnoozesReporting(_ totals: inout PassTotals) {
        let email = self.email
        let now = timerNow() * 1000
        do {
            guard try database.read({ store in try store.timerWork(accountID: try store.requireAccount(email: email).id, now: now) }).wake
            else { return }
            let report = try database.write { store in
                let accountID = try store.requireAccount(email: email).id
                try store.settleSendReminders(accountID: accountID) { WhenText.describe($0 / 1000) }
                return try store.wakeSnoozes(accountID: accountID, now: now)
            }
            guard let actionID = report.actionID else { return }
            totals.wakeActions.append(actionID)
            progress.finish()
            var parts: [String] = []
            if !report.woke.isEmpty { parts.append("\(report.woke.count) woke") }
            if !report.wokeEarly.isEmpty { parts.append("\(report.wokeEarly.count) woke early by a reply") }
            if !report.answered.isEmpty { parts.append("\(report.answered.count) reminder(s) answered") }
            if !report.cancelled.isEmpty { parts.append("\(report.cancelled.count) ended elsewhere") }
            warn("\(email): snoozed threads: action \(actionID): \(parts.joined(separator: ", ")); hd-undo \(actionID) takes it back")
        } catch {
            progress.finish()
            warn("\(email): snooze wake: \(Exit.classify(error, debug: false).message); tried again next pass")
        }
    }
}
