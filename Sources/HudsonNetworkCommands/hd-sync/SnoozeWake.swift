/*!
 The snooze wake check in each `hd-sync` pass (issue 41), after the poll so that a reply
 it brought wakes a snoozed thread early (or cancels a reminder): Store.wakeSnoozes, one
 action for hd-undo, sent to Gmail in the same pass. A failure is told and left for the
 next pass, as the rules' is: the snooze rows stay until a wake commits.
 */
import HudsonCLI
import HudsonStore

extension AccountWorker {
    func wakeSnoozesReporting(_ totals: inout PassTotals) {
        let email = self.email
        let now = timerNow() * 1000
        do {
            let report = try database.write { store in
                try store.wakeSnoozes(accountID: try store.requireAccount(email: email).id, now: now)
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
