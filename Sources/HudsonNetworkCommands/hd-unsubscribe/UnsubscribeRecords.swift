/*!
 Records of `hd-unsubscribe` (issue 42; docs/json.md `unsubscribe`): what was done, or
 would be, for one sender, and the recorded unsubscribes `--list` prints.
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

extension Records {
    /// `list:news.example.org  one-click  done  https://news.example.org/u/1  HTTP 200`
    public static func unsubscribe(sender: SenderSummary, method: String, state: String, target: String?,
                                   answer: String?) -> Record {
        Record(
            type: "unsubscribe", id: sender.queryTerm,
            fields: [
                ("method", .string(method)),
                ("state", .string(state)),
                ("target", target.map { .string($0) } ?? .null),
                ("answer", answer.map { .string($0) } ?? .null),
            ],
            columns: [method, state, target ?? "-", answer ?? ""])
    }

    /// `unsubscribe:12  list:news.example.org  one-click  done  2026-12-06  target  answer  account`
    public static func unsubscribeRecord(_ record: UnsubscribeRecord) -> Record {
        let sender = record.sender.hasPrefix("list:") ? record.sender : "from:" + record.sender
        return Record(
            type: "unsubscribe_record", id: "unsubscribe:\(record.id)",
            fields: [
                ("account", .string(record.accountEmail)),
                ("sender", .string(sender)),
                ("method", .string(record.method.rawValue)),
                ("state", .string(record.state.rawValue)),
                ("target", .string(record.target)),
                ("answer", record.answer.map { .string($0) } ?? .null),
                ("outbox", record.outboxID.flatMap { $0 > 0 ? .string("outbox:\($0)") : nil } ?? .null),
                ("created", .string(DateText.rfc3339UTC(milliseconds: record.createdAt))),
            ],
            columns: [sender, record.method.rawValue, record.state.rawValue,
                      String(DateText.rfc3339UTC(milliseconds: record.createdAt).prefix(10)), record.target,
                      record.answer ?? "", record.accountEmail])
    }
}
