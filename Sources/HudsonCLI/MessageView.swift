/*!
 How `hd-show` presents a message: a header block and the readable body on a terminal
 or in a pipe (every value made terminal-safe), or one NDJSON object per message.
 */
import HudsonOutput
import HudsonStore

public enum MessageView {
    /// The text form: a first line with the references, the headers that matter for
    /// reading, labels, attachments, a blank line, the body.
    public static func text(_ message: MessageDetail, labels: LabelNames, bodyNote: String? = nil) -> String {
        var lines = ["message:\(message.messageID)\tthread:\(message.threadID)"]
        func header(_ name: String, _ value: String?) {
            if let value, !value.isEmpty { lines.append("\(name): \(TerminalSafety.field(value))") }
        }
        header("From", Records.orPlaceholder(message.headers.from, Records.noSender))
        header("To", message.headers.to)
        header("Cc", message.headers.cc)
        header("Bcc", message.headers.bcc)
        header("Reply-To", message.headers.replyTo)
        header("Date", message.headers.date ?? DateText.rfc3339UTC(milliseconds: message.internalDate))
        header("Subject", Records.orPlaceholder(message.headers.subject, Records.noSubject))
        header("Labels", Records.labelList(labels.names(message.labels, account: message.accountID), separator: ", ")
                         + (message.held ? Records.heldMark : ""))
        for attachment in message.body?.attachments ?? [] where !attachment.isInline || !attachment.filename.isEmpty {
            let name = attachment.filename.isEmpty ? "(no name)" : attachment.filename
            lines.append("Attachment: \(TerminalSafety.field(attachment.partID)) \(TerminalSafety.field(name)) "
                         + "(\(TerminalSafety.field(attachment.mimeType)), \(size(Int64(attachment.size))))")
        }
        lines.append("")
        if let text = message.body?.text {
            lines.append(TerminalSafety.text(text.trimmingTrailingNewlines()))
        } else {
            lines.append("[\(bodyNote ?? "body not stored yet"); snippet:] \(TerminalSafety.field(message.snippet))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    public static func record(_ message: MessageDetail, labels: LabelNames) -> Record {
        let headers = message.headers
        func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        let attachments: [JSONValue] = (message.body?.attachments ?? []).map {
            .object([("part_id", .string($0.partID)), ("filename", .string($0.filename)), ("mime_type", .string($0.mimeType)),
                     ("size", .int(Int64($0.size))), ("inline", .bool($0.isInline))])
        }
        return Record(
            type: "message", id: "message:\(message.messageID)",
            fields: [
                ("account", .string(labels.email(message.accountID))),
                ("message_id", .string(message.messageID)),
                ("thread", .string("thread:\(message.threadID)")),
                ("date", .string(DateText.rfc3339UTC(milliseconds: message.internalDate))),
                ("timestamp", .int(message.internalDate / 1000)),
                ("from", optional(headers.from)), ("to", optional(headers.to)), ("cc", optional(headers.cc)),
                ("bcc", optional(headers.bcc)), ("reply_to", optional(headers.replyTo)),
                ("subject", optional(headers.subject)), ("date_header", optional(headers.date)),
                ("rfc822_message_id", optional(headers.messageID)), ("in_reply_to", optional(headers.inReplyTo)),
                ("references", optional(headers.references)), ("list_id", optional(headers.listID)),
                ("labels", .array(labels.names(message.labels, account: message.accountID).map { .string($0) })),
                ("label_ids", .array(message.labels.map { .string($0) })),
                ("held", .bool(message.held)),
                ("snippet", .string(message.snippet)),
                ("size", .int(message.sizeEstimate)),
                ("body_stored", .bool(message.body != nil)),
                ("body", optional(message.body?.text)),
                ("has_html", .bool(message.body?.html != nil)),
                ("attachments", .array(attachments)),
            ],
            columns: [])
    }

    /// `--html`: to a pipe the HTML as sent but for control characters (no page needs
    /// them); on a terminal also without bidirectional controls, as every text shown there
    /// (docs/reliability.md, "Hostile input").
    public static func html(_ html: String, onTerminal: Bool) -> String {
        let safe = onTerminal ? TerminalSafety.text(html) : TerminalSafety.htmlForPipe(html)
        return safe.hasSuffix("\n") ? safe : safe + "\n"
    }

    /// `--raw` and `--mbox`: byte for byte to a pipe (a program may need the exact
    /// source); on a terminal, as text made safe like a body, so the source of a hostile
    /// message cannot drive the terminal a user reads it on.
    public static func source(_ bytes: [UInt8], onTerminal: Bool) -> [UInt8] {
        guard onTerminal else { return bytes }
        let text = TerminalSafety.text(String(decoding: bytes, as: UTF8.self))
        return Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    }

    /// 312 B, 40 KB, 3.1 MB.
    static func size(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return "\((bytes + 512) / 1024) KB" }
        let tenths = (bytes * 10 + 512 * 1024) / (1024 * 1024)
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }
}
