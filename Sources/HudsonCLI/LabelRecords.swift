/*!
 Records of label operations (issue 21 §2): those waiting for Gmail (`hd-pending`) and
 those Gmail refused (`hd-pending --rejected`). docs/json.md is the contract.
 */
import HudsonOutput
import HudsonStore

extension Records {
    /// The query term that finds a label's mail: `label:NAME`, or `label:"NAME"` when the
    /// name holds a space, a quote or a parenthesis (quotes inside become spaces). A name
    /// text cannot show as it is (LabelNameRule) is written in its escaped spelling, which
    /// names it too (`label:"Work\e[8m"`).
    public static func labelTerm(_ name: String) -> String {
        let name = LabelNameRule.isShownAsIs(name) ? name : LabelNameRule.escaped(name)
        return name.contains(where: { $0 == " " || $0 == "\"" || $0 == "(" || $0 == ")" || $0 == "\\" })
            ? "label:\"\(name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: " "))\""
            : "label:\(name)"
    }

    /// What a label operation asks, in words: `create Receipts`, `rename Work → Jobs`,
    /// `delete Old` (each name as `labelText` writes it).
    static func labelChangeText(op: LabelChangeOp, name: String?, previousName: String?, labelID: String) -> String {
        switch op {
        case .create: return "create \(labelText(name ?? labelID))"
        case .rename: return "rename \(labelText(previousName ?? labelID)) → \(labelText(name ?? labelID))"
        case .delete: return "delete \(labelText(previousName ?? labelID))"
        }
    }

    /// `label:NAME  create NAME  state  age  attempts  -  user  account  last error`: a label
    /// operation is always the user's (hd-labels, hd-mark --create; an agent cannot make one).
    public static func labelChange(_ change: PendingLabelChange, now: Int64) -> Record {
        Record(
            type: "label_change", id: labelTerm(change.name ?? change.previousName ?? change.labelID),
            fields: [
                ("account", .string(change.accountEmail)),
                ("label_id", .string(change.labelID)),
                ("op", .string(change.op.rawValue)),
                ("name", change.name.map { .string($0) } ?? .null),
                ("previous_name", change.previousName.map { .string($0) } ?? .null),
                ("state", .string(change.state.rawValue)),
                ("created", .string(DateText.rfc3339UTC(milliseconds: change.createdAt))),
                ("age_seconds", .int(max(0, now - change.createdAt) / 1000)),
                ("attempts", .int(Int64(change.attempts))),
                ("last_error", change.lastError.map { .string($0) } ?? .null),
                ("attempted", change.attemptedAt.map { .string(DateText.rfc3339UTC(milliseconds: $0)) } ?? .null),
            ],
            columns: [labelChangeText(op: change.op, name: change.name, previousName: change.previousName, labelID: change.labelID),
                      change.state.rawValue, age(milliseconds: now - change.createdAt), String(change.attempts), "-", "user",
                      change.accountEmail, change.lastError ?? ""])
    }

    /// `label:NAME  rename OLD → NEW  rejected  age  -  -  account  reason`
    public static func rejectedLabelChange(_ change: RejectedLabelChange, now: Int64) -> Record {
        Record(
            type: "rejected_label_change", id: labelTerm(change.name ?? change.previousName ?? change.labelID),
            fields: [
                ("account", .string(change.accountEmail)),
                ("label_id", .string(change.labelID)),
                ("op", .string(change.op.rawValue)),
                ("name", change.name.map { .string($0) } ?? .null),
                ("previous_name", change.previousName.map { .string($0) } ?? .null),
                ("state", .string("rejected")),
                ("rejected", .string(DateText.rfc3339UTC(milliseconds: change.rejectedAt))),
                ("reason", .string(change.reason)),
            ],
            columns: [labelChangeText(op: change.op, name: change.name, previousName: change.previousName, labelID: change.labelID),
                      "rejected", age(milliseconds: now - change.rejectedAt), "-", "-", change.accountEmail, change.reason],
            emphasis: .dim)
    }
}
