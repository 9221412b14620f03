/*!
 How threads, messages, labels and queue rows become records, in one place, so every
 command prints them the same way (docs/json.md is the contract for the JSON members).
 Label ids are shown by name.
 */
import HudsonOutput
import HudsonStore

/// Label names per account, loaded once per command. A class: every record's closures
/// capture it, and one reference is cheaper to capture than its three tables.
public final class LabelNames {
    /// Per account, each label's name and the key it sorts by (its name lowercased once
    /// here, not once per message printed: a tenth of streaming a search did it).
    private var names: [Int64: [String: (name: String, key: String)]] = [:]
    private var emails: [Int64: String] = [:]
    /// The sorted names of each label list already shown: a mailbox has few distinct
    /// lists, and a streamed search shows one per message.
    private var shown = BoundedMemo<ShownKey, [String]>()
    /// The same lists joined by commas, as a text line shows them.
    private var joined = BoundedMemo<ShownKey, String>()

    private struct ShownKey: Hashable {
        var account: Int64
        var ids: [String]
    }

    public init(store: Store) throws {
        for account in try store.accounts() {
            emails[account.id] = account.email
            var map: [String: (name: String, key: String)] = [:]
            for label in try store.labels(accountID: account.id) {
                map[label.id] = (label.displayName, label.displayName.lowercased())
            }
            names[account.id] = map
        }
    }

    public func name(_ id: String, account: Int64) -> String { names[account]?[id]?.name ?? id }

    /// Names for display, sorted case-insensitively (as notmuch sorts tags).
    public func names(_ ids: [String], account: Int64) -> [String] {
        let map = names[account]
        return shown.value(for: ShownKey(account: account, ids: ids)) {
            ids.map { id -> (name: String, key: String) in
                map?[id] ?? (id, id.lowercased())
            }.sorted { $0.key < $1.key }.map(\.name)
        }
    }

    /// `names` as a text list (`Records.labelList`: a message's last text column).
    public func joinedNames(_ ids: [String], account: Int64) -> String {
        joined.value(for: ShownKey(account: account, ids: ids)) { Records.labelList(names(ids, account: account)) }
    }

    public func email(_ account: Int64) -> String { emails[account] ?? "" }
}

public enum Records {
    /// One label name as one field of text output (issue 37 §3), the one rule for every
    /// list of labels a text line shows (hd-search, hd-ls, hd-show's Labels header,
    /// hd-pending, hd-filters, hd-import, hd-mark --dry-run): the name as it is, or, when it
    /// holds a comma, a double quote, a backslash, a space at either end, a character text
    /// cannot show (LabelNameRule), or (with `quotingSpaces`, where blanks separate the
    /// fields, as in `+LABEL` actions) any blank, the name in double quotes with `"` and `\`
    /// escaped by a backslash and the unshowable characters escaped visibly (`\e`,
    /// `\u{202E}`). `Work, Projects` stays one label: `"Work, Projects"`. JSON shows names
    /// as they are.
    public static func labelText(_ name: String, quotingSpaces: Bool = false) -> String {
        LabelNameRule.field(name, quotingSpaces: quotingSpaces)
    }

    /// Label names as one text field: each as `labelText` writes it, joined by `separator`.
    public static func labelList(_ names: [String], separator: String = ",") -> String {
        names.map { labelText($0) }.joined(separator: separator)
    }

    /// What text output shows for a message with no From or no Subject (as Gmail and
    /// mutt do), so a missing field is not an empty column that shifts the eye; JSON
    /// keeps null.
    public static let noSender = "(no sender)"
    public static let noSubject = "(no subject)"

    /// `text`, or `placeholder` when it is missing or shows as nothing.
    public static func orPlaceholder(_ text: String?, _ placeholder: String) -> String {
        guard let text else { return placeholder }
        // Text that starts with a visible ASCII character shows as something.
        if let first = text.utf8.first, first > 0x20, first < 0x7F { return text }
        guard !TerminalSafety.field(text).allSatisfy({ $0 == " " }) else { return placeholder }
        return text
    }

    /// The local zone's offset at a timestamp (the CLI looks it up; output cannot).
    static func localOffset(_ milliseconds: Int64) -> Int64 {
        LocalTime.offset(atEpochSeconds: milliseconds / 1000)
    }

    static func shortDate(_ milliseconds: Int64) -> String {
        DateText.short(milliseconds: milliseconds, offsetSeconds: localOffset(milliseconds))
    }

    /// `thread:ID  date  [unread/total]  participants  subject  labels`
    public static func thread(_ thread: ThreadSummary, labels: LabelNames) -> Record {
        let labelNames = labels.names(thread.labels, account: thread.accountID)
        let count = thread.unreadCount > 0 ? "[\(thread.unreadCount)/\(thread.messageCount)]" : "[\(thread.messageCount)]"
        return Record(
            type: "thread", id: "thread:\(thread.threadID)",
            fields: [
                ("account", .string(labels.email(thread.accountID))),
                ("thread_id", .string(thread.threadID)),
                ("date", .string(DateText.rfc3339UTC(milliseconds: thread.lastMessageAt))),
                ("timestamp", .int(thread.lastMessageAt / 1000)),
                ("subject", .string(thread.subject ?? "")),
                ("snippet", .string(thread.snippet)),
                ("sender", .string(thread.sender)),
                ("participants", .array(thread.participants.map { .string($0) })),
                ("messages", .int(Int64(thread.messageCount))),
                ("unread_messages", .int(Int64(thread.unreadCount))),
                ("newest_message", .string("message:\(thread.newestMessageID)")),
                ("unread", .bool(thread.unread)),
                ("starred", .bool(thread.starred)),
                ("in_inbox", .bool(thread.inInbox)),
                ("has_attachment", .bool(thread.hasAttachment)),
                ("labels", .array(labelNames.map { .string($0) })),
                ("label_ids", .array(thread.labels.map { .string($0) })),
                ("held", .bool(thread.held)),
            ],
            columns: [
                shortDate(thread.lastMessageAt), count, orPlaceholder(thread.participants.joined(separator: ", "), noSender),
                orPlaceholder(thread.subject, noSubject), labelList(labelNames) + (thread.held ? heldMark : ""),
            ],
            emphasis: thread.unread ? .strong : .normal)
    }

    /// A message: its text line is `MessageLine`'s, its JSON members `messageMembers`.
    public static func message(_ message: MessageSummary, labels: LabelNames) -> Record {
        Record(
            type: "message", id: "message:" + message.messageID,
            fields: JSONMemberList.build { messageMembers(message, labels: labels, into: &$0) },
            columns: MessageLine(message, labels: labels).textColumns,
            emphasis: message.labels.contains("UNREAD") ? .strong : .normal)
    }

    /// A message's JSON members after `type` and `id` (docs/json.md), the one definition
    /// both the record and `MessageLine`'s NDJSON line write.
    static func messageMembers<Writer: JSONMemberWriter>(
        _ message: MessageSummary, labels: LabelNames, into writer: inout Writer
    ) {
        writer.member("account", labels.email(message.accountID))
        writer.member("message_id", message.messageID)
        writer.member("thread", "thread:" + message.threadID)
        writer.member("date", DateText.rfc3339UTC(milliseconds: message.internalDate))
        writer.member("timestamp", message.internalDate / 1000)
        writer.member("from", message.sender)
        writer.member("to", message.to)
        writer.member("subject", message.subject)
        writer.member("snippet", message.snippet)
        writer.member("size", message.sizeEstimate)
        writer.member("has_attachment", message.hasAttachment)
        writer.member("body_stored", message.hydrated)
        writer.member("attachment_known", message.attachmentKnown)
        writer.member("labels", strings: labels.names(message.labels, account: message.accountID))
        writer.member("label_ids", strings: message.labels)
        writer.member("held", message.held)
    }

    /// What a text line adds after the labels of a thread or message with a change held
    /// for the user's approval (issue 40): shown now, not sent until `hd-pending --approve`.
    public static let heldMark = " [held]"
}

/// A message of a search as text, `message:ID  date  from  subject  labels`, written
/// straight into the line (`TextLine`) without building the record.
public struct MessageLine: LineRecord {
    public var message: MessageSummary
    public var labels: LabelNames

    public init(_ message: MessageSummary, labels: LabelNames) {
        self.message = message
        self.labels = labels
    }

    public var record: Record { Records.message(message, labels: labels) }

    public func writeJSON(into bytes: inout [UInt8]) {
        JSONObjectWriter.write(type: "message", id: "message:" + message.messageID, into: &bytes) {
            Records.messageMembers(message, labels: labels, into: &$0)
        }
    }

    public func writeLine(_ line: inout TextLine) {
        line.field("message:", message.messageID)
        line.field(shortDateOf: message.internalDate, offsetSeconds: Records.localOffset(message.internalDate))
        line.field(Records.orPlaceholder(message.senderName, Records.noSender))
        line.field(Records.orPlaceholder(message.subject, Records.noSubject))
        let names = labels.joinedNames(message.labels, account: message.accountID)
        line.field(message.held ? names + Records.heldMark : names)
    }
}

/// A change of the change sequence as text, `message:ID  seq  thread:T  changed|deleted`,
/// written straight into the line.
public struct ChangeLine: LineRecord {
    public var change: MessageChange
    public var labels: LabelNames

    public init(_ change: MessageChange, labels: LabelNames) {
        self.change = change
        self.labels = labels
    }

    public var record: Record { Records.change(change, labels: labels) }

    public func writeLine(_ line: inout TextLine) {
        line.field("message:", change.messageID)
        line.field(change.seq)
        line.field("thread:", change.threadID)
        if change.deleted { line.field(literal: "deleted") } else { line.field(literal: "changed") }
    }
}

extension Records {
    /// A change of the change sequence: its text line is `ChangeLine`'s.
    public static func change(_ change: MessageChange, labels: LabelNames) -> Record {
        Record(
            type: "change", id: "message:" + change.messageID,
            fields: [
                ("account", .string(labels.email(change.accountID))),
                ("seq", .int(change.seq)),
                ("thread", .string("thread:" + change.threadID)),
                ("deleted", .bool(change.deleted)),
            ],
            columns: ChangeLine(change, labels: labels).textColumns)
    }

    /// `label:NAME  messages  threads  unread-threads  account`: the first field is the
    /// query term that finds the label's mail, so `hd-labels | cut -f1` feeds hd-search.
    public static func label(_ count: LabelCount, labels: LabelNames) -> Record {
        let name = count.label.displayName
        return Record(
            type: "label", id: labelTerm(name),
            fields: [
                ("account", .string(labels.email(count.accountID))),
                ("label_id", .string(count.label.id)),
                ("name", .string(name)),
                ("kind", .string(count.label.kind?.rawValue ?? "user")),
                ("messages", .int(Int64(count.messages))),
                ("threads", .int(Int64(count.threads))),
                ("unread_threads", .int(Int64(count.unreadThreads))),
                ("local_change", count.label.localChange.map { .string($0.rawValue) } ?? .null),
            ],
            columns: [String(count.messages), String(count.threads), String(count.unreadThreads), labels.email(count.accountID)],
            emphasis: count.unreadThreads > 0 ? .strong : .normal)
    }
}

extension Records {
    /// `message:ID  +LABEL  state  age  attempts  action:N  account  last error`
    public static func queued(_ row: QueuedMutation, now: Int64) -> Record {
        let change = (row.op == .add ? "+" : "-") + labelText(row.labelName ?? row.label)
        // A held row is pending to the flusher's state machine, but waits for the user.
        let state = row.held ? "held" : row.state.rawValue
        // Text says what the user needs to know of an in_flight row: Gmail has it (issue 38
        // §4); only the history that retires it is awaited. JSON keeps the state's name.
        let shownState = row.state == .inFlight && !row.held ? "sent" : state
        return Record(
            type: "pending", id: "message:\(row.messageID)",
            fields: [
                ("account", .string(row.accountEmail)),
                ("thread", .string("thread:\(row.threadID)")),
                ("label", .string(row.labelName ?? row.label)),
                ("label_id", .string(row.label)),
                ("op", .string(row.op.rawValue)),
                ("state", .string(state)),
                ("held", .bool(row.held)),
                ("origin", .string(row.origin?.rawValue ?? "user")),
                ("created", .string(DateText.rfc3339UTC(milliseconds: row.createdAt))),
                ("age_seconds", .int(max(0, now - row.createdAt) / 1000)),
                ("attempts", .int(Int64(row.attempts))),
                ("action", row.actionID.map { .int($0) } ?? .null),
                ("last_error", row.lastError.map { .string($0) } ?? .null),
                // When a request carrying it first went out: it may be at Gmail since.
                ("attempted", row.attemptedAt.map { .string(DateText.rfc3339UTC(milliseconds: $0)) } ?? .null),
            ],
            columns: [change, shownState, age(milliseconds: now - row.createdAt), String(row.attempts),
                      row.actionID.map { "action:\($0)" } ?? "-", row.origin?.rawValue ?? "user", row.accountEmail,
                      row.lastError ?? ""])
    }

    /// `message:ID  +LABEL  outcome` for a dry run.
    public static func delta(_ delta: TriageDelta, labels: LabelNames) -> Record {
        let name = labels.name(delta.label, account: delta.accountID)
        return Record(
            type: "planned_change", id: "message:\(delta.messageID)",
            fields: [("thread", .string("thread:\(delta.threadID)")), ("label", .string(name)),
                     ("op", .string(delta.op.rawValue))],
            columns: [(delta.op == .add ? "+" : "-") + labelText(name), "thread:\(delta.threadID)"])
    }

    /// 42s, 7m, 3h, 2d.
    static func age(milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        if seconds < 86_400 { return "\(seconds / 3600)h" }
        return "\(seconds / 86_400)d"
    }
}

extension Records {
    /// `action:N  date  description  changes  undone-by|undoes`
    public static func action(_ action: Store.ActionSummary) -> Record {
        let relation = action.undoneBy.map { "undone by action:\($0)" } ?? action.undoes.map { "undoes action:\($0)" } ?? ""
        return Record(
            type: "action", id: "action:\(action.id)",
            fields: [
                ("date", .string(DateText.rfc3339UTC(milliseconds: action.createdAt))),
                ("description", .string(action.description)),
                ("changes", .int(Int64(action.changes))),
                ("undoes", action.undoes.map { .string("action:\($0)") } ?? .null),
                ("undone_by", action.undoneBy.map { .string("action:\($0)") } ?? .null),
                ("rejected", .int(Int64(action.rejected))),
                ("rejection", action.rejection.map { .string($0) } ?? .null),
                ("origin", .string(action.origin?.rawValue ?? "user")),
                ("held", .int(Int64(action.held))),
            ],
            columns: [shortDate(action.createdAt), action.origin?.rawValue ?? "user", action.description,
                      "\(action.changes) change(s)" + (action.held > 0 ? ", \(action.held) held" : ""), relation]
                + (action.rejected > 0 ? ["\(action.rejected) rejected: \(action.rejection ?? "")"] : []),
            emphasis: action.undoneBy == nil ? .normal : .dim)
    }
}
