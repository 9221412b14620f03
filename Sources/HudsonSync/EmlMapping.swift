/*!
 An RFC 822 file (`.eml`) as the snapshot and body sync would store for it, so
 `hd-filters rules test FILE` evaluates the rules with the one query translator on a
 scratch store: headers decoded as SnapshotMapping decodes Gmail's, the body and the
 attachments as BodyMapping extracts them. The file is taken as mail arriving now:
 labels INBOX and UNREAD, its size its length in bytes, its date the Date header's.
 */
import HudsonMail
import HudsonStore

public enum EmlMapping {
    public static func message(raw: [UInt8], id: String, now: Int64) -> (MessageSnapshot, MessageBody) {
        let root = RFC822.parse(bytes: raw)
        func header(_ name: String) -> String? { root.header(name).map { EncodedWords.decode($0) } }
        // An address field: decoded inside its names only (MailAddress.decodedField).
        func addresses(_ name: String) -> String? { root.header(name).map(MailAddress.decodedField) }
        let content = MessageContent.extract(from: root)
        let date = root.header("Date").flatMap(MailDate.parse).map { $0 * 1000 } ?? now
        let text = content.text ?? ""
        var snapshot = MessageSnapshot(
            id: id, threadID: id, historyID: 1, internalDate: date, labelIDs: ["INBOX", "UNREAD"],
            snippet: String(text.prefix(200)), sizeEstimate: Int64(raw.count),
            headers: MessageHeaders(
                subject: header("Subject"), from: addresses("From"), to: addresses("To"), cc: addresses("Cc"),
                bcc: addresses("Bcc"), replyTo: addresses("Reply-To"), date: root.header("Date"), messageID: root.header("Message-ID"),
                inReplyTo: root.header("In-Reply-To"), references: root.header("References"), listID: header("List-Id"),
                contentType: root.header("Content-Type")))
        snapshot.headers.list = ListHeaders(headers: root.headers.map { (name: $0.name, value: $0.value) })
        let body = MessageBody(
            text: content.text, html: content.html,
            attachments: content.attachments.map {
                AttachmentInfo(partID: $0.partID, filename: $0.filename, mimeType: $0.mimeType, size: $0.size,
                               contentID: $0.contentID, isInline: $0.isInline)
            })
        return (snapshot, body)
    }
}
