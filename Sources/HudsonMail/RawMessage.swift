/*!
 A complete RFC 822 message given by the user (`hd-send --raw`), made ready to send: line
 ends become CRLF (RFC 5322 §2.3; `messages.send` wants CRLF, gmail-api.md §2.7) once the
 header is known to hold no bare CR (which would become a line break of its own), the
 fields the outbox needs are read (From, recipients, Subject, Message-ID), and a Message-ID
 and Date are added at the top when missing — the outbox cannot find a message it may have
 sent without its Message-ID. Everything else is sent exactly as given.
 */

/// A raw message and what the outbox needs to know about it.
public struct PreparedMessage: Sendable, Equatable {
    /// The message to send, CRLF line ends.
    public var raw: [UInt8]
    /// The Message-ID as written, angle brackets included.
    public var messageID: String
    public var from: MailAddress?
    public var to: [MailAddress]
    public var cc: [MailAddress]
    public var bcc: [MailAddress]
    /// The decoded Subject ("" when there is none).
    public var subject: String

    public init(raw: [UInt8], messageID: String, from: MailAddress?, to: [MailAddress], cc: [MailAddress] = [],
                bcc: [MailAddress] = [], subject: String) {
        self.raw = raw
        self.messageID = messageID
        self.from = from
        self.to = to
        self.cc = cc
        self.bcc = bcc
        self.subject = subject
    }

    public var recipients: [MailAddress] { to + cc + bcc }
}

public enum RawMessage {
    /// Prepares `bytes` for sending. `newMessageID` is called only when the message has no
    /// Message-ID; `date` is used only when it has no Date; `from` only when it has no From
    /// (a sendmail program adds one). `bcc`: recipients the message's headers do not name
    /// (a sendmail program's operands), added to its Bcc — Gmail delivers to the To, Cc and
    /// Bcc headers only and hides Bcc from the other recipients. A Bcc the message already
    /// has is rewritten to hold both (a second Bcc field would be read by some readers and
    /// not by others). The header is read strictly (OutgoingHeaderBlock) before and after:
    /// the recipients returned are the ones Gmail will find in the bytes returned.
    /// `judgingLineEnds`: a bare CR or a NUL in the header as given is refused
    /// (OutgoingHeaderBlock.checkLineEnds); false only for a message Gmail already holds.
    public static func prepare(_ bytes: [UInt8], date: String, from: MailAddress? = nil, bcc: [MailAddress] = [],
                               judgingLineEnds: Bool = true,
                               newMessageID: () -> String) throws(OutgoingMessageError) -> PreparedMessage {
        // Judged as given: made CRLF, a bare CR would be a line break (checkLineEnds).
        if judgingLineEnds { try OutgoingHeaderBlock.checkLineEnds(bytes) }
        var raw = crlf(bytes)
        let given = try OutgoingHeaderBlock.envelope(of: raw)
        let headers = RFC822.parseHeaders(raw)
        var added = ""
        if given.from == nil, let from {
            added += HeaderField.addresses("From", [from])
        }
        if !bcc.isEmpty {
            if headers.value(of: "Bcc") != nil { raw = removingField("Bcc", from: raw) }
            added += HeaderField.addresses("Bcc", given.bcc + bcc)
        }
        var messageID = headers.value(of: "Message-ID")?.trimmingWhitespace() ?? ""
        if messageID.isEmpty {
            messageID = newMessageID()
            added += HeaderField.structured("Message-ID", [messageID])
        }
        if (headers.value(of: "Date") ?? "").trimmingWhitespace().isEmpty {
            added += HeaderField.structured("Date", [date])
        }
        raw = Array(added.utf8) + raw
        // The one decision of where it goes: what Gmail will read in these bytes.
        let envelope = try OutgoingHeaderBlock.envelope(of: raw)
        return PreparedMessage(
            raw: raw, messageID: messageID, from: envelope.from, to: envelope.to, cc: envelope.cc, bcc: envelope.bcc,
            subject: EncodedWords.decode(headers.value(of: "Subject") ?? "").trimmingWhitespace())
    }

    /// The sender and recipients of a message as given (any line ends), read strictly.
    public static func envelope(_ bytes: [UInt8]) throws(OutgoingMessageError) -> OutgoingEnvelope {
        try OutgoingHeaderBlock.checkLineEnds(bytes)
        return try OutgoingHeaderBlock.envelope(of: crlf(bytes))
    }

    /// `raw` (CRLF line ends) without the header field `name` and its continuation lines.
    static func removingField(_ name: String, from raw: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var cursor = 0
        var dropping = false
        while cursor < raw.count {
            let (end, next) = RFC822.nextLine(raw[...], from: cursor)
            let line = raw[cursor..<end]
            if line.isEmpty {
                output += raw[cursor...]
                return output
            }
            if line.first == 32 || line.first == 9 {
                if !dropping { output += raw[cursor..<next] }
            } else {
                let fieldName = line.prefix(while: { $0 != UInt8(ascii: ":") })
                dropping = String(decoding: fieldName, as: UTF8.self).lowercased() == name.lowercased()
                if !dropping { output += raw[cursor..<next] }
            }
            cursor = next
        }
        return output
    }

    /// Bare LF and bare CR become CRLF; existing CRLF pairs stay.
    static func crlf(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 40)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 13 {
                output += [13, 10]
                index += index + 1 < bytes.count && bytes[index + 1] == 10 ? 2 : 1
            } else if byte == 10 {
                output += [13, 10]
                index += 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    /// Whether a Message-ID can be searched for with `rfc822msgid:` (gmail-api.md §6):
    /// `<left@right>` of printable ASCII without blanks, quotes or further brackets.
    public static func isSearchableMessageID(_ id: String) -> Bool {
        guard id.hasPrefix("<"), id.hasSuffix(">"), id.utf8.count <= 250 else { return false }
        let inner = id.dropFirst().dropLast()
        guard let at = inner.firstIndex(of: "@"), at != inner.startIndex, inner.index(after: at) != inner.endIndex else {
            return false
        }
        return inner.unicodeScalars.allSatisfy { $0.value > 32 && $0.value < 127 && !"<>\"\\()[],;:".unicodeScalars.contains($0) }
    }

    /// The messages a reply answers, nearest first: In-Reply-To's ids, then References'
    /// from the last (the parent) back to the first (the thread's root). What Gmail's
    /// threading looks at (gmail-api.md §2.7), and where Hudson looks for the thread.
    public static func parentMessageIDs(_ headers: [MIMEPart.Header]) -> [String] {
        var seen = Set<String>()
        let ids = headers.values(of: "In-Reply-To").flatMap(messageIDs(in:))
            + headers.values(of: "References").flatMap(messageIDs(in:)).reversed()
        return ids.filter { seen.insert($0).inserted }
    }

    /// The `<…>` ids of a References or In-Reply-To value, in order.
    public static func messageIDs(in text: String) -> [String] {
        var ids: [String] = []
        var current: String?
        for character in text {
            if character == "<" { current = "<" } else if character == ">", let open = current {
                ids.append(open + ">")
                current = nil
            } else if current != nil {
                if character.isWhitespace { current = nil } else { current?.append(character) }
            }
        }
        return ids
    }
}
