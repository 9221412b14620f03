/*!
 The records of `hd-snooze` (issue 41): a live snooze, and what a wake check did.
 */
import HudsonOutput
import HudsonStore

extension Records {
    /// `thread:ID  wakes  kind  sender  subject  account`
    public static func snoozed(_ snooze: SnoozedThread, labels: LabelNames) -> Record {
        Record(
            type: "snoozed", id: "thread:\(snooze.threadID)",
            fields: [
                ("account", .string(labels.email(snooze.accountID))),
                ("kind", .string(snooze.kind.rawValue)),
                ("wake", .string(DateText.rfc3339UTC(milliseconds: snooze.wakeAt))),
                ("wake_timestamp", .int(snooze.wakeAt / 1000)),
                ("sender", .string(snooze.sender)),
                ("subject", .string(snooze.subject ?? "")),
            ],
            columns: [WhenText.describe(snooze.wakeAt / 1000), snooze.kind.rawValue, orPlaceholder(snooze.sender, noSender),
                      orPlaceholder(snooze.subject, noSubject), labels.email(snooze.accountID)])
    }

    /// `thread:ID  outcome  account`: one thread a wake check changed (`woke`, `woke-early`,
    /// `answered`: a reminder a reply made needless, `cancelled`: ended elsewhere).
    public static func wake(threadID: String, outcome: String, accountEmail: String, actionID: Int64?) -> Record {
        Record(
            type: "wake", id: "thread:\(threadID)",
            fields: [("account", .string(accountEmail)), ("outcome", .string(outcome)),
                     ("action", actionID.map { .int($0) } ?? .null)],
            columns: [outcome, actionID.map { "action:\($0)" } ?? "-", accountEmail])
    }
}

extension WakeReport {
    /// Each thread the check changed, with its outcome's name, in a stable order.
    public var outcomes: [(threadID: String, outcome: String)] {
        woke.map { ($0, "woke") } + wokeEarly.map { ($0, "woke-early") } + answered.map { ($0, "answered") }
            + cancelled.map { ($0, "cancelled") }
    }
}
