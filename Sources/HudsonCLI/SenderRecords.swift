/*!
 Records of `hd-senders` (issue 42; docs/json.md `sender`): one list or sender address
 with its volume, what was done with its mail, and the unsubscribe methods it offers.
 The id is the query term that selects its mail (`from:ADDRESS`, `list:ID`), so a line
 can be handed to `hd-search`, `hd-mark` or `hd-unsubscribe` as it is.
 */
import HudsonOutput
import HudsonStore

extension Records {
    /// The methods a group offers, as words: `one-click`, `https`, `mailto`, `none`, or
    /// `unknown` when none is known to be offered and some of its messages' headers are unknown.
    public static func unsubscribeMethods(_ sender: SenderSummary, allowLoopbackHTTP: Bool = false) -> [String] {
        let methods = UnsubscribeOffer(sender.listHeaders, from: sender.offeringFrom, allowLoopbackHTTP: allowLoopbackHTTP).methods.map(\.rawValue)
        if !methods.isEmpty { return methods }
        return [sender.headersUnknown > 0 ? "unknown" : "none"]
    }

    /// `from:news@example.org  120  98  12%  80%  0%  2026-11-30  one-click,mailto  Example News`
    public static func sender(_ sender: SenderSummary) -> Record {
        func share(_ part: Int) -> Double { sender.messages == 0 ? 0 : Double(part) / Double(sender.messages) }
        func percent(_ part: Int) -> String { "\(Int((share(part) * 100).rounded()))%" }
        func rounded(_ value: Double) -> JSONValue { .double((value * 1000).rounded() / 1000) }
        let methods = unsubscribeMethods(sender)
        var fields: [(String, JSONValue)] = [
            ("kind", .string(sender.kind.rawValue)),
            (sender.kind == .list ? "list" : "address", .string(sender.key)),
            ("name", sender.name.map { .string($0) } ?? .null),
            ("messages", .int(Int64(sender.messages))),
            ("threads", .int(Int64(sender.threads))),
            ("read_share", rounded(share(sender.read))),
            ("archived_unread_share", rounded(share(sender.archivedUnread))),
            ("starred_or_replied_share", rounded(share(sender.starredOrReplied))),
            ("last_seen", .string(DateText.rfc3339UTC(milliseconds: sender.lastSeen))),
            ("unsubscribe", .array(methods.map { .string($0) })),
        ]
        var columns = [String(sender.messages), String(sender.threads), percent(sender.read), percent(sender.archivedUnread),
                       percent(sender.starredOrReplied), String(DateText.rfc3339UTC(milliseconds: sender.lastSeen).prefix(10)),
                       methods.joined(separator: ",")]
        if let at = sender.unsubscribedAt {
            fields.append(("unsubscribed", .string(DateText.rfc3339UTC(milliseconds: at))))
            columns.append("unsubscribed " + String(DateText.rfc3339UTC(milliseconds: at).prefix(10)))
        }
        columns.append(sender.name ?? "")
        return Record(type: "sender", id: sender.queryTerm, fields: fields, columns: columns)
    }
}
