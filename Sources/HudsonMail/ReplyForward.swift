/*!
 What a reply, a reply to all and a forward take from the original message, as mail
 clients have long done it:

 - **Reply to all** (RFC 5322 §3.6.3, and every client since): To is the original's
   Reply-To, else its From; Cc is everyone else the original was addressed to (To and Cc),
   without the user's own addresses and without anyone named twice. Replying to one's own
   message goes to its recipients instead.
 - **Quote**: the original's readable text, each line prefixed `> ` (`>` alone on an empty
   line, and `>>` for text already quoted, as RFC 3676 §4.5 writes quote depth), under an
   attribution line "On DATE, SENDER wrote:".
 - **Forward inline**: the "---------- Forwarded message ---------" block Gmail's own web
   client writes (From, Date, Subject, To, Cc of the original), then its readable text; the
   original's attachments go along as attachments of the new message.
 - **Forward as attachment**: the original, exactly as Gmail stores it, as one
   `message/rfc822` part (RFC 2046 §5.2.1).
 */

/// The headers of an original message that replies and forwards use, decoded.
public struct OriginalHeaders: Sendable, Equatable {
    public var from: String
    public var to: String
    public var cc: String
    public var replyTo: String
    public var subject: String
    public var date: String

    public init(from: String = "", to: String = "", cc: String = "", replyTo: String = "", subject: String = "",
                date: String = "") {
        self.from = from
        self.to = to
        self.cc = cc
        self.replyTo = replyTo
        self.subject = subject
        self.date = date
    }
}

public enum ReplyForward {
    /// To and Cc of a reply to all. `own`: the user's addresses (any case). The original's
    /// headers are read with the strict outgoing parser (OutgoingAddresses): they come from
    /// whoever sent the mail, and a header it cannot read one way is refused, naming the
    /// field, rather than turned into recipients nobody chose.
    public static func replyAll(_ original: OriginalHeaders, own: [String]) throws(OutgoingMessageError)
        -> (to: [MailAddress], cc: [MailAddress]) {
        let mine = Set(own.map { $0.lowercased() })
        func isMine(_ address: MailAddress) -> Bool { mine.contains(address.address.lowercased()) }
        let replyTo = try recipients("Reply-To", original.replyTo)
        let sender = replyTo.isEmpty ? try recipients("From", original.from) : replyTo
        let to = try recipients("To", original.to)
        let cc = try recipients("Cc", original.cc)
        var seen = Set<String>()
        func once(_ list: [MailAddress]) -> [MailAddress] {
            list.filter { !isMine($0) && seen.insert($0.address.lowercased()).inserted }
        }
        if !sender.isEmpty && sender.allSatisfy(isMine) {
            // One's own message: to its recipients, as a reply (Composer.replyRecipients) does.
            return (once(to), once(cc))
        }
        let senders = once(sender)
        return (senders, once(to + cc))
    }

    /// The addresses of one of the original's address fields, read strictly.
    ///
    /// The store keeps address fields decoded (RFC 2047), so a display name that was one
    /// encoded word may now hold a comma and read as two elements:
    /// `=?UTF-8?Q?M=C3=BCller=2C_J=C3=BCrgen?= <j@example.de>` is stored as
    /// `Müller, Jürgen <j@example.de>`. When the strict reading fails, such fragments (text
    /// with no `@`, `<`, `:`, `;` or quote, before a name and address) are put back into the
    /// name they came from, quoted, and the field is read strictly again. Anything else that
    /// does not read one way (a group, a control, text that is no address) is still refused.
    public static func recipients(_ field: String, _ value: String) throws(OutgoingMessageError) -> [MailAddress] {
        do {
            return try OutgoingAddresses.parse(value)
        } catch {
            if let rejoined = rejoiningSplitNames(value), let addresses = try? OutgoingAddresses.parse(rejoined) {
                return addresses
            }
            throw .field(name: field, value: value, error)
        }
    }

    /// `value` with each run of name fragments joined to the `Name <address>` element that
    /// follows it, as one quoted name; nil when there is nothing to join or an element is
    /// not of that plain form.
    static func rejoiningSplitNames(_ value: String) -> String? {
        let elements = value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
        func isFragment(_ element: String) -> Bool {
            !element.isEmpty && !element.contains { "@<>:;\"\\()".contains($0) }
        }
        func isNameAndAddress(_ element: String) -> Bool {
            guard let open = element.firstIndex(of: "<"), element.last == ">" else { return false }
            return isFragment(String(element[..<open]).trimmingWhitespace()) || element[..<open].allSatisfy { $0 == " " }
        }
        var rebuilt: [String] = []
        var fragments: [String] = []
        for element in elements {
            if isNameAndAddress(element) && !fragments.isEmpty {
                let open = element.firstIndex(of: "<")!
                let name = (fragments + [String(element[..<open]).trimmingWhitespace()]).filter { !$0.isEmpty }
                    .joined(separator: ", ")
                rebuilt.append("\"\(name)\" \(element[open...])")
                fragments = []
            } else if isFragment(element) {
                fragments.append(element)
            } else {
                guard fragments.isEmpty else { return nil }
                rebuilt.append(element)
            }
        }
        guard fragments.isEmpty, rebuilt.count < elements.count else { return nil }
        return rebuilt.joined(separator: ", ")
    }

    /// "On DATE, SENDER wrote:" and the text quoted with "> ".
    public static func quote(_ text: String, original: OriginalHeaders) -> String {
        let sender = MailAddress.parseList(original.from).first.map { $0.name.isEmpty ? $0.address : $0.description }
            ?? original.from
        let date = original.date.trimmingWhitespace()
        let attribution = date.isEmpty ? "\(sender) wrote:" : "On \(date), \(sender) wrote:"
        return attribution + "\n" + quoteLines(text)
    }

    /// Each line prefixed: `> text`, `>` for an empty line, `>>` before text already quoted.
    public static func quoteLines(_ text: String) -> String {
        var lines = text.replacingLineEnds().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while let last = lines.last, last.trimmingWhitespace().isEmpty { lines.removeLast() }
        return lines.map { line in
            line.isEmpty ? ">" : line.hasPrefix(">") ? ">" + line : "> " + line
        }.joined(separator: "\n") + "\n"
    }

    /// The block an inline forward ends with.
    public static func forwardedBlock(_ text: String, original: OriginalHeaders) -> String {
        var block = "---------- Forwarded message ---------\n"
        block += "From: \(original.from)\n"
        if !original.date.isEmpty { block += "Date: \(original.date)\n" }
        block += "Subject: \(original.subject)\n"
        if !original.to.isEmpty { block += "To: \(original.to)\n" }
        if !original.cc.isEmpty { block += "Cc: \(original.cc)\n" }
        return block + "\n" + text.replacingLineEnds()
    }

    /// `Fwd: ` before a subject that does not have it.
    public static func forwardSubject(_ subject: String) -> String {
        let trimmed = subject.trimmingWhitespace()
        let lower = trimmed.lowercased()
        if lower.hasPrefix("fwd:") || lower.hasPrefix("fw:") { return trimmed }
        return trimmed.isEmpty ? "Fwd:" : "Fwd: " + trimmed
    }

    /// The original's headers, decoded, from its raw source.
    public static func headers(ofRaw raw: [UInt8]) -> OriginalHeaders {
        let headers = RFC822.parseHeaders(raw)
        func value(_ name: String) -> String {
            EncodedWords.decode(headers.value(of: name) ?? "").trimmingWhitespace()
        }
        return OriginalHeaders(from: value("From"), to: value("To"), cc: value("Cc"), replyTo: value("Reply-To"),
                               subject: value("Subject"), date: value("Date"))
    }

    /// The original's readable text, from its raw source ("" when it has none).
    public static func readableText(ofRaw raw: [UInt8]) -> String {
        MessageContent.extract(from: RFC822.parse(bytes: raw)).text ?? ""
    }

    /// The original's attachments with their bytes, for an inline forward: every part
    /// `MessageContent` lists as an attachment (inline images included, so nothing the
    /// original showed is lost).
    public static func attachments(ofRaw raw: [UInt8]) -> [OutgoingAttachment] {
        let root = RFC822.parse(bytes: raw)
        return MessageContent.extract(from: root).attachments.enumerated().compactMap { index, attachment in
            guard let part = find(root, id: attachment.partID), let data = part.decodedBody else { return nil }
            let name = attachment.filename.isEmpty ? "attachment-\(index + 1)" : attachment.filename
            return OutgoingAttachment(filename: name, data: data, mimeType: attachment.mimeType)
        }
    }

    /// The original as one message/rfc822 attachment, named after its subject.
    public static func asAttachment(_ raw: [UInt8], subject: String) -> OutgoingAttachment {
        let safe = subject.unicodeScalars.map { "/\\:*?\"<>|".unicodeScalars.contains($0) || $0.value < 32 ? "_" : String($0) }
            .joined().trimmingWhitespace()
        let name = String((safe.isEmpty ? "forwarded message" : safe).prefix(100)) + ".eml"
        return OutgoingAttachment(filename: name, data: RawMessage.crlf(raw), mimeType: "message/rfc822")
    }

    static func find(_ part: MIMEPart, id: String) -> MIMEPart? {
        if part.partID == id { return part }
        for child in part.parts {
            if let found = find(child, id: id) { return found }
        }
        return nil
    }
}

extension String {
    /// CRLF and CR become LF.
    func replacingLineEnds() -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        var previousCR = false
        for scalar in unicodeScalars {
            if scalar == "\r" {
                result.unicodeScalars.append("\n")
                previousCR = true
                continue
            }
            if scalar == "\n" && previousCR {
                previousCR = false
                continue
            }
            previousCR = false
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
