/*!
 Outgoing messages as RFC 5322 bytes for `messages.send` (gmail-api.md §2.7): CRLF line
 ends, ASCII headers with RFC 2047 encoded words, a UTF-8 text body that is 7-bit,
 quoted-printable or base64 as it needs, and with attachments a multipart/mixed of the text
 and one base64 part per file, named with RFC 2231 parameters when the name is not plain
 ASCII. A reply carries In-Reply-To and References (RFC 5322 §3.6.4), which with the Gmail
 threadId and a matching subject put it in its thread. The Message-ID is fresh and random on
 the sender's domain: the outbox finds a message it may already have sent by this id
 (`rfc822msgid:`), so it must be unique.
 */

/// A file to attach.
public struct OutgoingAttachment: Sendable, Equatable {
    public var filename: String
    public var data: [UInt8]
    /// `type/subtype`; `MediaType.guess(filename:)` when not given.
    public var mimeType: String

    public init(filename: String, data: [UInt8], mimeType: String? = nil) {
        self.filename = filename
        self.data = data
        self.mimeType = mimeType ?? MediaType.guess(filename: filename)
    }
}

/// What the user wrote, before it is encoded.
public struct OutgoingMessage: Sendable, Equatable {
    public var from: MailAddress
    public var to: [MailAddress]
    public var cc: [MailAddress]
    public var bcc: [MailAddress]
    public var subject: String
    /// The body as text; any line-end convention.
    public var text: String
    public var attachments: [OutgoingAttachment]
    /// `<id@host>`, from `MessageBuilder.messageID`.
    public var messageID: String
    /// An RFC 5322 date-time, from `MailDate.format`.
    public var date: String
    /// The Message-ID of the message replied to.
    public var inReplyTo: String?
    /// The thread's ids, oldest first, ending with `inReplyTo`.
    public var references: [String]

    public init(from: MailAddress, to: [MailAddress] = [], cc: [MailAddress] = [], bcc: [MailAddress] = [],
                subject: String = "", text: String = "", attachments: [OutgoingAttachment] = [],
                messageID: String, date: String, inReplyTo: String? = nil, references: [String] = []) {
        self.from = from
        self.to = to
        self.cc = cc
        self.bcc = bcc
        self.subject = subject
        self.text = text
        self.attachments = attachments
        self.messageID = messageID
        self.date = date
        self.inReplyTo = inReplyTo
        self.references = references
    }

    /// Every recipient: To, Cc and Bcc (Gmail sends to all three, gmail-api.md §2.7).
    public var recipients: [MailAddress] { to + cc + bcc }
}

public enum MessageBuilder {
    /// The message as bytes. `random` supplies the multipart boundary.
    public static func render(_ message: OutgoingMessage, using random: inout some RandomNumberGenerator) -> [UInt8] {
        var head = HeaderField.structured("Date", [message.date])
        head += HeaderField.addresses("From", [message.from])
        if !message.to.isEmpty { head += HeaderField.addresses("To", message.to) }
        if !message.cc.isEmpty { head += HeaderField.addresses("Cc", message.cc) }
        if !message.bcc.isEmpty { head += HeaderField.addresses("Bcc", message.bcc) }
        if !message.subject.isEmpty { head += HeaderField.unstructured("Subject", message.subject) }
        head += HeaderField.structured("Message-ID", [message.messageID])
        if let inReplyTo = message.inReplyTo { head += HeaderField.structured("In-Reply-To", [inReplyTo]) }
        if !message.references.isEmpty { head += HeaderField.structured("References", message.references) }
        head += "MIME-Version: 1.0\r\n"

        let text = BodyEncoding.text(BodyEncoding.canonicalLines(message.text))
        let textHeaders = HeaderField.structured("Content-Type", ["text/plain;", "charset=UTF-8"])
            + "Content-Transfer-Encoding: \(text.transferEncoding)\r\n"
        guard !message.attachments.isEmpty else {
            return Array((head + textHeaders + "\r\n" + text.text).utf8)
        }
        var parts: [[UInt8]] = [Array((textHeaders + "\r\n" + text.text).utf8)]
        for attachment in message.attachments {
            let disposition = HeaderField.structured("Content-Disposition", ["attachment;"] + parameter("filename", attachment.filename))
            if attachment.mimeType == "message/rfc822" {
                // A message is attached as it is: RFC 2046 §5.2.1 allows no base64 here.
                let eightBit = attachment.data.contains { $0 >= 0x80 }
                var bytes = attachment.data
                if bytes.last != 10 { bytes += [13, 10] }
                parts.append(Array((HeaderField.structured("Content-Type", ["message/rfc822"]) + disposition
                    + "Content-Transfer-Encoding: \(eightBit ? "8bit" : "7bit")\r\n\r\n").utf8) + bytes)
                continue
            }
            let encoded = BodyEncoding.binary(attachment.data)
            parts.append(Array((HeaderField.structured("Content-Type", [attachment.mimeType]) + disposition
                + "Content-Transfer-Encoding: base64\r\n\r\n" + encoded.text).utf8))
        }
        var boundary = newBoundary(using: &random)
        while parts.contains(where: { contains($0, Array(boundary.utf8)) }) { boundary = newBoundary(using: &random) }
        var body = Array((head + HeaderField.structured("Content-Type", ["multipart/mixed;", "boundary=\"\(boundary)\""]) + "\r\n").utf8)
        for part in parts { body += Array("--\(boundary)\r\n".utf8) + part + [13, 10] }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// A fresh `<random@domain>`: 128 random bits in base 32, so ids never collide.
    public static func messageID(domain: String, using random: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var local = "hd."
        for _ in 0..<26 { local.append(alphabet[Int(random.next() % 32)]) }
        let host = domain.isEmpty || !domain.unicodeScalars.allSatisfy({ $0.isASCII && HeaderField.isAtext($0) || $0 == "." })
            ? "hudson.invalid" : domain
        return "<\(local)@\(host)>"
    }

    /// `=_hudson_` and random hex: `=_` cannot occur in quoted-printable or base64 text, so
    /// the boundary is safe whatever the parts hold (RFC 2046 §5.1.1 asks for exactly that).
    static func newBoundary(using random: inout some RandomNumberGenerator) -> String {
        "=_hudson_" + (0..<3).map { _ in String(random.next(), radix: 16) }.joined()
    }

    /// A parameter for a structured field: `name="value";`-style tokens. Plain ASCII names
    /// that fit stay quoted-strings; anything else is RFC 2231 `name*=UTF-8''%XX…`, split
    /// into numbered sections (§3) when long, so no line passes the limit.
    static func parameter(_ name: String, _ value: String) -> [String] {
        let plain = value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }
        if plain && name.utf8.count + value.utf8.count + 4 <= 60 {
            return ["\(name)=\"\(value)\""]
        }
        var escaped: [String] = []
        for byte in value.utf8 {
            if isAttributeChar(byte) {
                escaped.append(String(UnicodeScalar(byte)))
            } else {
                escaped.append("%" + EncodedWordEncoder.hex(byte))
            }
        }
        let whole = escaped.joined()
        if name.utf8.count + whole.utf8.count + 10 <= 60 {
            return ["\(name)*=UTF-8''\(whole)"]
        }
        var sections: [String] = []
        var current = ""
        for piece in escaped {
            if current.utf8.count + piece.utf8.count > 45 {
                sections.append(current)
                current = ""
            }
            current += piece
        }
        if !current.isEmpty { sections.append(current) }
        return sections.enumerated().map { index, text in
            let prefix = index == 0 ? "UTF-8''" : ""
            let separator = index == sections.count - 1 ? "" : ";"
            return "\(name)*\(index)*=\(prefix)\(text)\(separator)"
        }
    }

    /// RFC 2231 §7 attribute-char: printable ASCII except space, `*'%` and the tspecials.
    static func isAttributeChar(_ byte: UInt8) -> Bool {
        guard byte > 32 && byte < 127 else { return false }
        return !"*'%()<>@,;:\\\"/[]?=".utf8.contains(byte)
    }
}
