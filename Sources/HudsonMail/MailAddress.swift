/*!
 RFC 5322 address lists (From, To, Cc, Bcc, Reply-To) parsed leniently: quoted
 display names, angle addresses, comments, groups and obsolete forms all come out as
 (name, address) pairs, and text that is not an address never makes the parser fail.
 Real headers are often malformed; losing one recipient is better than losing a message.
 */

public struct MailAddress: Hashable, Sendable, CustomStringConvertible {
    /// The display name with quotes and escapes removed; empty when there is none.
    public var name: String
    /// The addr-spec, as written (compare case-insensitively).
    public var address: String

    public init(name: String = "", address: String) {
        self.name = name
        self.address = address
    }

    /// The name when there is one, else the address: what a list view shows. A name
    /// that is itself an address (`"ceo@bank.example" <thief@evil.example>`) is not
    /// shown: it would pass for the sender's address, so the real address is shown.
    public var displayName: String {
        if name.isEmpty || name.contains("@") { return address }
        return name
    }

    public var description: String {
        if name.isEmpty { return address }
        return "\(name) <\(address)>"
    }

    /// The `displayName` of a header's first address (nil when it has none). The common
    /// forms, `Name Surname <user@host>` and a bare `user@host`, are read off the bytes:
    /// parsing a From header scalar by scalar was a twentieth of streaming a search.
    public static func firstDisplayName(_ header: String) -> String? {
        if let plain = plainDisplayName(header) { return plain }
        return parseList(header).first?.displayName
    }

    /// `firstDisplayName` for a header made only of ASCII words of letters, digits, `.`,
    /// `-` and `'` with single spaces between them, then `<address>`; or of one bare
    /// address. Nil for anything else (quotes, comments, encoded words, several
    /// addresses, stray spaces), which the parser reads.
    static func plainDisplayName(_ header: String) -> String? {
        let bytes = header.utf8
        func isAddressByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-/=?^_`{|}~.@".utf8.contains(byte)
            }
        }
        func isPlainAddress(_ part: Substring.UTF8View) -> Bool {
            guard let first = part.first, first != UInt8(ascii: "@"),
                  part.count(where: { $0 == UInt8(ascii: "@") }) == 1 else { return false }
            return part.allSatisfy(isAddressByte)
        }
        guard let last = bytes.last else { return nil }
        if last != UInt8(ascii: ">") {
            return isPlainAddress(header[...].utf8) ? header : nil
        }
        guard let open = bytes.firstIndex(of: UInt8(ascii: "<")) else { return nil }
        let name = header[..<open].utf8.dropLast()  // the space before `<`
        let address = header[header.utf8.index(after: open)..<header.utf8.index(before: header.endIndex)].utf8
        guard header[..<open].utf8.last == UInt8(ascii: " "), isPlainAddress(Substring(address).utf8),
              let nameFirst = name.first, let nameLast = name.last,
              nameFirst != UInt8(ascii: " "), nameLast != UInt8(ascii: " ") else { return nil }
        var previous: UInt8 = 0
        for byte in name {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "'"):
                break
            case UInt8(ascii: " ") where previous != UInt8(ascii: " "):
                break
            default:
                return nil
            }
            previous = byte
        }
        return String(Substring(name))
    }

    /// An address field (From, To, Cc, Bcc, Reply-To) as the store keeps it: RFC 2047
    /// encoded words decoded inside the display names they are in, after the field's
    /// structure was read, and each name that then holds a character with a meaning in an
    /// address list quoted. Decoding the whole field first would let a name change what it
    /// names: `=?UTF-8?Q?eve=40evil.example=2C?= <boss@corp.example>` would read as two
    /// addresses, eve's among them, where it is one, boss's (issue 37 §1). A field without
    /// encoded words is kept as it is.
    public static func decodedField(_ raw: String) -> String {
        guard raw.contains("=?") else { return raw }
        let list = parseList(raw)
        guard !list.isEmpty else { return EncodedWords.decode(raw) }
        return list.map(\.fieldText).joined(separator: ", ")
    }

    /// `name <address>` with the name quoted (RFC 5322 §3.2.4) when it holds a special, a
    /// quote or a backslash, or blanks at its ends; the bare address without a name.
    public var fieldText: String {
        guard !name.isEmpty else { return address }
        let specials = Set("()<>[]:;@\\,.\"")
        let plain = !name.contains(where: { specials.contains($0) }) && name.first != " " && name.last != " "
        if plain { return "\(name) <\(address)>" }
        let escaped = name.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
        return "\"\(escaped)\" <\(address)>"
    }

    /// Every address in a header value. Group names are dropped, their members kept.
    public static func parseList(_ header: String) -> [MailAddress] {
        var parser = AddressListParser(Array(header.unicodeScalars))
        return parser.parse()
    }
}

private struct AddressListParser {
    let scalars: [Unicode.Scalar]
    var index = 0

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    mutating func parse() -> [MailAddress] {
        var result: [MailAddress] = []
        for element in splitTopLevel() {
            if let address = Self.mailbox(from: element) {
                result.append(address)
            }
        }
        return result
    }

    /// Splits on commas (and group punctuation) that are outside quotes, angle brackets
    /// and comments. A group "name: a, b;" contributes its members.
    mutating func splitTopLevel() -> [[Unicode.Scalar]] {
        var elements: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        var inQuote = false
        var angleDepth = 0
        var commentDepth = 0
        var escaped = false
        for scalar in scalars {
            if escaped {
                current.append(scalar)
                escaped = false
                continue
            }
            switch scalar {
            case "\\" where inQuote || commentDepth > 0:
                current.append(scalar)
                escaped = true
            case "\"" where commentDepth == 0:
                inQuote.toggle()
                current.append(scalar)
            case "(" where !inQuote:
                commentDepth += 1
                current.append(scalar)
            case ")" where !inQuote && commentDepth > 0:
                commentDepth -= 1
                current.append(scalar)
            case "<" where !inQuote && commentDepth == 0:
                angleDepth += 1
                current.append(scalar)
            case ">" where !inQuote && commentDepth == 0 && angleDepth > 0:
                angleDepth -= 1
                current.append(scalar)
            case "," where !inQuote && commentDepth == 0 && angleDepth == 0,
                 ";" where !inQuote && commentDepth == 0 && angleDepth == 0:
                elements.append(current)
                current = []
            case ":" where !inQuote && commentDepth == 0 && angleDepth == 0:
                // "Group name:" — a route or group prefix; the members follow.
                current = []
            default:
                current.append(scalar)
            }
        }
        elements.append(current)
        return elements
    }

    /// One mailbox: `name <addr>`, `addr (comment)`, or a bare `addr`.
    static func mailbox(from element: [Unicode.Scalar]) -> MailAddress? {
        var nameScalars: [Unicode.Scalar] = []
        var angle: [Unicode.Scalar]? = nil
        var bare: [Unicode.Scalar] = []
        var comment: [Unicode.Scalar] = []
        var inQuote = false
        var inAngle = false
        var commentDepth = 0
        var escaped = false
        for scalar in element {
            if escaped {
                if commentDepth > 0 { comment.append(scalar) } else if inAngle { angle?.append(scalar) } else { nameScalars.append(scalar); bare.append(scalar) }
                escaped = false
                continue
            }
            if commentDepth > 0 {
                switch scalar {
                case "\\": escaped = true
                case "(": commentDepth += 1; comment.append(scalar)
                case ")":
                    commentDepth -= 1
                    if commentDepth > 0 { comment.append(scalar) }
                default: comment.append(scalar)
                }
                continue
            }
            if inQuote {
                switch scalar {
                case "\\": escaped = true
                case "\"": inQuote = false
                default: nameScalars.append(scalar); bare.append(scalar)
                }
                continue
            }
            if inAngle {
                if scalar == ">" { inAngle = false } else { angle?.append(scalar) }
                continue
            }
            switch scalar {
            case "\"": inQuote = true
            case "(": commentDepth = 1
            case "<": inAngle = true; angle = []
            default: nameScalars.append(scalar); bare.append(scalar)
            }
        }
        let commentText = trimmed(comment)
        if let angle {
            // Strip an obsolete source route ("@a,@b:user@host").
            var address = trimmed(angle)
            if address.hasPrefix("@"), let colon = address.lastIndex(of: ":") {
                address = String(address[address.index(after: colon)...])
            }
            let name = collapse(trimmed(nameScalars))
            guard !address.isEmpty else { return name.isEmpty ? nil : MailAddress(name: "", address: name) }
            return MailAddress(name: decodeWords(name.isEmpty ? commentText : name), address: address)
        }
        let address = trimmed(bare).split(whereSeparator: { $0 == " " || $0 == "\t" }).joined()
        guard !address.isEmpty else { return nil }
        return MailAddress(name: decodeWords(collapse(commentText)), address: address)
    }

    static func trimmed(_ scalars: [Unicode.Scalar]) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view).trimmingWhitespace()
    }

    /// Display names in raw headers may be RFC 2047 encoded words (§5 rule 3); Gmail's
    /// format=full usually decodes them already, and decoding is idempotent.
    static func decodeWords(_ name: String) -> String {
        name.contains("=?") ? collapse(EncodedWords.decode(name)) : name
    }

    static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }).joined(separator: " ")
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}

extension String {
    /// The string with every `target` replaced by `replacement` (Foundation-free).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
