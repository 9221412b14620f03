/*!
 How an outbox entry becomes a record, for `hd-pending` (beside the label changes) and
 `hd-send`. The text state says what the user needs to know: `queued` (waiting, perhaps for
 its undo window or a backoff), `sending` (a request is out now), `unknown` (a request went
 out and its answer never came: the next sync looks for it before sending again), `sent`
 (Gmail has it; the next sync brings it into the store), `failed` (refused for good, with
 the reason).
 */
import HudsonOutput
import HudsonStore

extension Records {
    /// `outbox:N  send|draft|draft-send  state  age  attempts  -  user|agent  account  recipients  subject  last error`:
    /// the columns of a queued change up to the account (PendingRecords.heading), `-` where
    /// a queued change names its action.
    public static func outbox(_ entry: OutboxEntry, now: Int64) -> Record {
        let state = entry.outcomeUnknown ? "unknown" : entry.held && entry.state == .queued ? "held" : entry.state.rawValue
        return Record(
            type: "outbox", id: entry.reference,
            fields: [
                ("account", .string(entry.accountEmail)),
                ("kind", .string(entry.kind.rawValue)),
                ("draft", entry.draftID.map { .string("draft:\($0)") } ?? .null),
                ("state", .string(entry.state.rawValue)),
                ("outcome_unknown", .bool(entry.outcomeUnknown)),
                ("held", .bool(entry.held)),
                ("origin", .string(entry.origin?.rawValue ?? "user")),
                ("to", .array(entry.recipients.map { .string($0) })),
                ("subject", .string(entry.subject)),
                ("rfc822_message_id", .string(entry.messageID)),
                ("thread", entry.threadID.map { .string("thread:\($0)") } ?? .null),
                ("message", entry.gmailID.map { .string("message:\($0)") } ?? .null),
                ("size", .int(Int64(entry.size))),
                ("created", .string(DateText.rfc3339UTC(milliseconds: entry.createdAt))),
                ("age_seconds", .int(max(0, now - entry.createdAt) / 1000)),
                ("not_before", .string(DateText.rfc3339UTC(milliseconds: entry.notBefore))),
                ("attempts", .int(Int64(entry.attempts))),
                ("last_error", entry.lastError.map { .string($0) } ?? .null),
                ("kept_beside", entry.keptBesideDraftID.map { .string("draft:\($0)") } ?? .null),
                ("note", entry.keptNote.map { .string($0) } ?? .null),
            ],
            columns: [entry.kind.rawValue, state, age(milliseconds: now - entry.createdAt), String(entry.attempts), "-",
                      entry.origin?.rawValue ?? "user", entry.accountEmail,
                      entry.recipients.joined(separator: ", "), entry.subject, entry.lastError ?? entry.keptNote ?? ""])
    }

    /// `draft:ID  date  to  subject  note`: a draft Gmail keeps, as `hd-drafts list` prints
    /// it; the note says when it is a version kept beside a draft changed elsewhere.
    public static func draft(_ draft: DraftSummary, account: String) -> Record {
        let date = draft.internalDate.map { DateText.rfc3339UTC(milliseconds: $0) }
        return Record(
            type: "draft", id: draft.reference,
            fields: [
                ("account", .string(account)),
                ("message", .string("message:\(draft.gmailID)")),
                ("thread", draft.threadID.map { .string("thread:\($0)") } ?? .null),
                ("date", date.map { .string($0) } ?? .null),
                ("to", draft.to.map { .string($0) } ?? .null),
                ("subject", draft.subject.map { .string($0) } ?? .null),
                ("kept_beside", draft.keptBesideDraftID.map { .string("draft:\($0)") } ?? .null),
                ("note", draft.keptNote.map { .string($0) } ?? .null),
            ],
            columns: [date ?? "-", draft.to ?? "", draft.subject ?? "", draft.keptNote ?? ""])
    }

    /// A draft saved while offline, on its way to Gmail: the `outbox` record, listed by
    /// `hd-drafts list` as `outbox:N  state  recipients  subject`.
    public static func outboxDraft(_ entry: OutboxEntry, now: Int64) -> Record {
        let record = outbox(entry, now: now)
        return Record(type: record.type, id: record.id, fields: record.fields,
                      columns: [entry.state.rawValue, entry.recipients.joined(separator: ", "), entry.subject])
    }
}
