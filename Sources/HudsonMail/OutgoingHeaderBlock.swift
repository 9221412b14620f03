/*!
 What Gmail will take from a message Hudson is about to send: its From, and the To, Cc and
 Bcc it delivers to (`messages.send` has no envelope, gmail-api.md §2.7). Read from the
 exact bytes that are queued, with the strict `OutgoingAddresses` parser, so the recipients
 Hudson shows and records are the ones Gmail gets; `hd-send --dry-run` prints them.

 The header block itself must read one way only, or Gmail could find a recipient Hudson
 did not (RFC 5322 §2.2, §3.6): every line up to the empty line is a field or the
 continuation of one; a field name is printable ASCII directly followed by its colon
 (blanks before it are obsolete syntax, §4.5.3, that readers treat differently); no line of
 only blanks inside it (some readers end the header there); no NUL; and the fields that
 decide where the message goes and how Hudson finds it again (From, To, Cc, Bcc,
 Message-ID) at most once each (§3.6 allows no more).
 */

/// Why a message's header block cannot be sent as it is. Values are as written, for the
/// caller to quote.
public enum OutgoingMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A From, To, Cc or Bcc field that the strict parser refuses.
    case field(name: String, value: String, OutgoingAddressError)
    /// A field that may appear once appears again.
    case repeated(String)
    /// A NUL byte in the header block.
    case nul(line: Int)
    /// A CR not followed by LF in the header block, as given.
    case bareCR(line: Int)
    /// A line before the empty line that is not a field.
    case notAField(line: Int)
    /// A field name with blanks before its colon.
    case blankBeforeColon(line: Int)
    /// A line of only blanks inside the header block.
    case blankLine(line: Int)
    /// From names more than one mailbox.
    case severalSenders

    public var description: String {
        switch self {
        case .field(let name, _, let error): return "\(name): \(error)"
        case .repeated(let name): return "more than one \(name) field (RFC 5322 §3.6 allows one)"
        case .nul(let line): return "line \(line) of the header holds a NUL byte"
        case .bareCR(let line):
            return "line \(line) of the header holds a CR not followed by LF (some readers end the line there)"
        case .notAField(let line):
            return "line \(line) is not a header field (leave an empty line between the header and the body)"
        case .blankBeforeColon(let line): return "line \(line): blanks between a field name and its colon"
        case .blankLine(let line): return "line \(line) of the header holds only blanks (some readers end the header there)"
        case .severalSenders: return "From: more than one address"
        }
    }
}

/// A message's sender and recipients as Gmail will read them.
public struct OutgoingEnvelope: Equatable, Sendable {
    public var from: MailAddress?
    public var to: [MailAddress]
    public var cc: [MailAddress]
    public var bcc: [MailAddress]

    public init(from: MailAddress? = nil, to: [MailAddress] = [], cc: [MailAddress] = [], bcc: [MailAddress] = []) {
        self.from = from
        self.to = to
        self.cc = cc
        self.bcc = bcc
    }

    /// To, Cc and Bcc, in that order: everyone Gmail delivers to.
    public var recipients: [MailAddress] { to + cc + bcc }
}

public enum OutgoingHeaderBlock {
    /// The fields that may appear at most once in a message Hudson sends.
    static let singleFields = ["From", "To", "Cc", "Bcc", "Message-ID"]

    /// The envelope of `raw` (CRLF or LF line ends), or why its header cannot be sent.
    public static func envelope(of raw: [UInt8]) throws(OutgoingMessageError) -> OutgoingEnvelope {
        try checkStructure(raw)
        let headers = RFC822.parseHeaders(raw)
        for name in singleFields where headers.values(of: name).count > 1 { throw .repeated(name) }
        func list(_ name: String) throws(OutgoingMessageError) -> [MailAddress] {
            guard let value = headers.value(of: name) else { return [] }
            do { return try OutgoingAddresses.parse(value) } catch { throw .field(name: name, value: value, error) }
        }
        let from = try list("From")
        guard from.count <= 1 else { throw .severalSenders }
        return OutgoingEnvelope(from: from.first, to: try list("To"), cc: try list("Cc"), bcc: try list("Bcc"))
    }

    /// The header block of a message as the user gave it (any line ends), before its line
    /// ends are made CRLF: a CR not followed by LF, or a NUL, is refused. Made CRLF, a bare
    /// CR inside a field would start a field of its own (`Subject: hi\rBcc: eve@…` sent to
    /// eve), and RFC 5322 §2.2 allows CR in a header only as part of CRLF. The header ends
    /// at the first empty line (LF or CR LF alone); the body's line ends are not judged.
    public static func checkLineEnds(_ bytes: [UInt8]) throws(OutgoingMessageError) {
        var cursor = 0
        var number = 0
        while cursor < bytes.count {
            let newline = bytes[cursor...].firstIndex(of: 10) ?? bytes.count
            number += 1
            var line = bytes[cursor..<newline]
            if newline < bytes.count, line.last == 13 { line = line.dropLast() }
            if line.isEmpty { return }
            if line.contains(0) { throw .nul(line: number) }
            if line.contains(13) { throw .bareCR(line: number) }
            cursor = newline + 1
        }
    }

    /// The header block's lines, checked (see the file comment).
    static func checkStructure(_ raw: [UInt8]) throws(OutgoingMessageError) {
        var cursor = 0
        var number = 0
        while cursor < raw.count {
            let (end, next) = RFC822.nextLine(raw[...], from: cursor)
            number += 1
            let line = raw[cursor..<end]
            if line.isEmpty { return }
            if line.contains(0) { throw .nul(line: number) }
            if line.first == 32 || line.first == 9 {
                if number == 1 { throw .notAField(line: number) }
                if line.allSatisfy({ $0 == 32 || $0 == 9 }) { throw .blankLine(line: number) }
            } else {
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                    throw .notAField(line: number)
                }
                let name = line[line.startIndex..<colon]
                if let last = name.last, last == 32 || last == 9 {
                    let trimmed = name.reversed().drop(while: { $0 == 32 || $0 == 9 })
                    if !trimmed.isEmpty && trimmed.allSatisfy({ $0 >= 33 && $0 <= 126 }) { throw .blankBeforeColon(line: number) }
                    throw .notAField(line: number)
                }
                guard name.allSatisfy({ $0 >= 33 && $0 <= 126 }) else { throw .notAField(line: number) }
            }
            cursor = next
        }
    }

    /// Refuses the characters no header value a user sets (a Subject, a sender's name) may
    /// hold: a line break would start a header of its own (issue 37 §1).
    public static func checkText(_ text: String) throws(OutgoingAddressError) {
        try OutgoingAddresses.checkControls(text)
    }
}
