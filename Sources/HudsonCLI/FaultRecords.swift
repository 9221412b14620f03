/*!
 Records of what Gmail refused or would not serve (issue 17): a parked message (`hd-pending
 --parked`, and in `hd-sync --json`'s report) and a rejected label change (`hd-pending`).
 docs/json.md is the contract for their members.
 */
import HudsonOutput
import HudsonStore

extension Records {
    /// `message:ID  parked  STAGE  attempts  next-attempt  account  error`; a dropped one
    /// (`hd-pending --parked --drop`) says `dropped` where the next attempt goes, and has
    /// no `next_attempt` (JSON null) since there is none.
    public static func parked(_ entry: ParkedMessage, now: Int64) -> Record {
        let wait = max(0, entry.nextAttemptAt - now)
        let next = entry.isDropped ? "dropped" : wait == 0 ? "due" : "in " + age(milliseconds: wait)
        return Record(
            type: "parked", id: "message:\(entry.gmailID)",
            fields: [
                ("account", .string(entry.accountEmail)),
                ("stage", .string(entry.stage.rawValue)),
                ("error", .string(entry.error)),
                ("attempts", .int(Int64(entry.attempts))),
                ("first_failed", .string(DateText.rfc3339UTC(milliseconds: entry.firstFailedAt))),
                ("last_failed", .string(DateText.rfc3339UTC(milliseconds: entry.lastFailedAt))),
                ("next_attempt", entry.isDropped ? .null : .string(DateText.rfc3339UTC(milliseconds: entry.nextAttemptAt))),
                ("dropped", .bool(entry.isDropped)),
            ],
            columns: ["parked", entry.stage.rawValue, String(entry.attempts), next, entry.accountEmail, entry.error])
    }

    /// `message:ID  -LABEL  rejected  age  action:N  account  reason`
    public static func rejected(_ change: Store.RejectedChange, now: Int64) -> Record {
        let name = change.labelName ?? change.label
        return Record(
            type: "rejected", id: "message:\(change.messageID)",
            fields: [
                ("account", .string(change.accountEmail)),
                ("thread", .string("thread:\(change.threadID)")),
                ("label", .string(name)),
                ("label_id", .string(change.label)),
                ("op", .string(change.op.rawValue)),
                ("state", .string("rejected")),
                ("rejected", .string(DateText.rfc3339UTC(milliseconds: change.rejectedAt))),
                ("action", change.actionID.map { .int($0) } ?? .null),
                ("reason", .string(change.reason)),
            ],
            columns: [(change.op == .add ? "+" : "-") + labelText(name), "rejected", age(milliseconds: now - change.rejectedAt), "-",
                      change.actionID.map { "action:\($0)" } ?? "-", change.accountEmail, change.reason],
            emphasis: .dim)
    }
}
