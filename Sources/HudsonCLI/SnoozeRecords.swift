/*!
 The records of issue 41: a live snooze (`hd-snooze list`, `hd-ls --snoozed`), what a wake
 check did (`hd-snooze wake`), and a scheduled send (`hd-pending`).
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

extension Records {
    /// `outbox:N  send  scheduled|held-late|held  when  -  -  user|agent  account  recipients  subject  draft:ID`:
    /// a send-later (`hd-send --at`) waiting for its time, held for being late, or an
    /// agent's send held for approval; aligned with a queued change's columns up to the
    /// account (PendingRecords.heading).
    public static func scheduled(_ send: ScheduledSend) -> Record {
        let state = send.awaitsApproval ? "held" : send.state == .heldLate ? "held-late" : "scheduled"
        return Record(
            type: "scheduled", id: send.reference,
            fields: [
                ("account", .string(send.accountEmail)),
                ("state", .string(state)),
                ("send_at", send.awaitsApproval ? .null : .string(DateText.rfc3339UTC(milliseconds: send.sendAt))),
                ("if_late", .string(send.ifLate.rawValue)),
                ("draft", send.draftID.map { .string("draft:\($0)") } ?? .null),
                ("to", .array(send.recipients.map { .string($0) })),
                ("subject", .string(send.subject)),
                ("held", .bool(send.awaitsApproval)),
                ("origin", .string(send.origin?.rawValue ?? "user")),
                ("rfc822_message_id", .string(send.messageID)),
            ],
            columns: ["send", state, send.awaitsApproval ? "when approved" : WhenText.describe(send.sendAt / 1000), "-", "-",
                      send.origin?.rawValue ?? "user", send.accountEmail, send.recipients.joined(separator: ", "),
                      send.subject, send.draftID.map { "draft:\($0)" } ?? "(draft not saved yet)"])
    }
}
