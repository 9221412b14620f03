/*!
 The single place that knows how to pull a `MessageSnapshot` off a Gmail message
 (sync-engine-reference.md, SnapshotMapping): ids, the history id it came from, the date,
 labels, snippet, and the headers Hudson keeps for display, search and threading.
 Backfill, history hydration and body hydration all route through it.
 */
import HudsonGmail
import HudsonMail
import HudsonStore

public enum SnapshotMapping {
    /// Why a message Gmail served cannot be stored.
    public struct Unmappable: Error, Equatable, CustomStringConvertible {
        public var messageID: String
        public var reason: String

        public var description: String { "Gmail's answer cannot be stored: \(reason)" }
    }

    /// The snapshot, or nil for a message that cannot be mapped (`mapped` says why).
    public static func snapshot(from message: GmailMessage) -> MessageSnapshot? {
        try? mapped(message)
    }

    /// The snapshot; throws `Unmappable` for a message without an id or a thread id, or
    /// whose history id is not a positive integer (it could not be version-guarded).
    public static func mapped(_ message: GmailMessage) throws -> MessageSnapshot {
        guard !message.id.isEmpty else { throw Unmappable(messageID: message.id, reason: "no message id") }
        guard let threadID = message.threadId, !threadID.isEmpty else {
            throw Unmappable(messageID: message.id, reason: "no thread id")
        }
        guard let historyID = message.historyIDValue, historyID > 0, historyID <= UInt64(Int64.max) else {
            throw Unmappable(messageID: message.id, reason: "no valid history id")
        }
        func header(_ name: String) -> String? {
            // Gmail usually decodes RFC 2047 words already; the decoder is idempotent (§8).
            message.header(named: name).map { EncodedWords.decode($0) }
        }
        /// An address field: decoded inside its names only, so a name cannot add an address.
        func addresses(_ name: String) -> String? {
            message.header(named: name).map(MailAddress.decodedField)
        }
        // internalDate is the ordering key; the Date header is the fallback (§8).
        let date = message.internalDateMilliseconds
            ?? message.header(named: "Date").flatMap(MailDate.parse).map { $0 * 1000 }
            ?? 0
        var headers = MessageHeaders(
            subject: header("Subject"), from: addresses("From"), to: addresses("To"), cc: addresses("Cc"),
            bcc: addresses("Bcc"), replyTo: addresses("Reply-To"), date: message.header(named: "Date"),
            messageID: message.header(named: "Message-ID"), inReplyTo: message.header(named: "In-Reply-To"),
            references: message.header(named: "References"), listID: header("List-Id"),
            contentType: message.payload?.mimeType ?? message.header(named: "Content-Type"))
        // Every instance, in order: a message may carry several DKIM-Signatures (issue 42).
        headers.list = ListHeaders(headers: (message.payload?.headers ?? []).map { (name: $0.name, value: $0.value) })
        return MessageSnapshot(
            id: message.id,
            threadID: threadID,
            historyID: Int64(historyID),
            internalDate: date,
            labelIDs: message.labelIds,
            // Snippets carry HTML character references (`&amp;`, `&#39;`): decode once here.
            snippet: HTMLText.decodeReferences(message.snippet ?? ""),
            sizeEstimate: Int64(message.sizeEstimate ?? 0),
            headers: headers)
    }
}

/// A format=full payload → the stored body (readable text, original HTML, attachments).
public enum BodyMapping {
    public static func body(from message: GmailMessage) -> MessageBody {
        guard let payload = message.payload else { return MessageBody(text: nil) }
        return body(of: mimePart(payload))
    }

    /// The body of a message's RFC 822 source (`format=raw`, base64url), parsed here;
    /// its attachments carry no attachment id, so their bytes come from the source again.
    public static func body(fromRaw raw: String) -> MessageBody {
        body(fromSource: Base64.decode(raw))
    }

    /// The body of a decoded RFC 822 source.
    public static func body(fromSource source: [UInt8]) -> MessageBody {
        body(of: RFC822.parse(bytes: source))
    }

    static func body(of root: MIMEPart) -> MessageBody {
        let content = MessageContent.extract(from: root)
        return MessageBody(
            text: content.text, html: content.html,
            attachments: content.attachments.map {
                AttachmentInfo(partID: $0.partID, filename: $0.filename, mimeType: $0.mimeType, size: $0.size,
                               attachmentID: $0.attachmentID, contentID: $0.contentID, isInline: $0.isInline)
            })
    }

    /// Gmail's JSON part → HudsonMail's part, field by field; `body.data` is base64url
    /// decoded once, leniently about padding and alphabet (gmail-api.md §8, §9.11).
    /// Depth is bounded: the decoder treats deeper parts as opaque anyway.
    static func mimePart(_ part: MessagePart, depth: Int = 0) -> MIMEPart {
        MIMEPart(
            partID: part.partId ?? "",
            mimeType: part.mimeType ?? "application/octet-stream",
            filename: part.filename ?? "",
            headers: part.headers.map { MIMEPart.Header(name: $0.name, value: $0.value) },
            bodyData: part.body?.data.map { Base64.decode($0) },
            attachmentID: part.body?.attachmentId,
            size: part.body?.size,
            parts: depth < 64 ? part.parts.map { mimePart($0, depth: depth + 1) } : [])
    }
}
