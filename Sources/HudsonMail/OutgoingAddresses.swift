/*!
 The one rule for where outgoing mail goes. `MailAddress.parseList` reads received mail
 and forgives everything; a recipient list Hudson is about to hand to Gmail must instead
 mean exactly one thing to every reader, or the message reaches someone the user never
 named (issue 37 §1: a line break turned `--to 'ada@…\r\nBcc: eve@…'` into a group, and
 the message went to eve only). So an outgoing list is read strictly, by this parser alone,
 and anything a reader could take two ways is refused rather than guessed:

 - RFC 5322 §3.4 `mailbox-list` syntax: `addr-spec`, `[phrase] <addr-spec>`, comments
   (a comment names a bare address, as `MailAddress` reads it), elements separated by
   commas. The obsolete phrase with periods (`J. R. Smith`, §4.1) is accepted.
 - No control character anywhere: CR, LF, NUL, the other C0 controls but TAB, DEL, the C1
   controls, and U+2028/U+2029 (which some readers take as line breaks).
 - A group (§3.4 `group`) with members is refused: it is how a stray `Bcc:` reads, and
   its name is not an address. An empty group (`undisclosed-recipients:;`, the way mail
   clients write "nobody in To") names nobody and is accepted.
 - An empty element (`a@x,,b@y`, a trailing comma), `<>`, a source route, a domain
   literal, a quoted or non-ASCII local part, a non-ASCII domain (write it as `xn--`;
   Hudson does not send SMTPUTF8) and blanks inside an address are refused.
 - Display names may be any text without controls, quoted or not, or RFC 2047 encoded
   words, which are decoded (§6.2); the decoded name must be free of controls too.

 `OutgoingHeaderBlock` (OutgoingMessage.swift) reads a whole message's To, Cc and Bcc with
 this parser; the composer, the sendmail mode, `--edit`, replies and `hd-drafts send` all
 decide recipients through it.
 */

/// Why an outgoing address list was refused. `text` is what was written, for the caller to
/// quote (HudsonMail does not print).
public enum OutgoingAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    /// CR, LF, NUL or another control character.
    case controlCharacter(Unicode.Scalar)
    /// `name: members;` with members.
    case group(name: String)
    /// `a@x,,b@y`, a leading or trailing comma.
    case emptyElement
    /// `<>`.
    case emptyAddress
    /// Text that is not an address where one was expected.
    case notAnAddress(String)
    /// An address outside the ASCII form Hudson sends.
    case notASCII(String)
    /// A quote, bracket or comment left open.
    case unterminated(String)
    /// A character out of place (`<` after an address, `;` outside a group, …).
    case unexpected(String)

    public var description: String {
        switch self {
        case .controlCharacter(let scalar):
            switch scalar {
            case "\r", "\n", "\u{2028}", "\u{2029}": return "contains a line break"
            case "\0": return "contains a NUL character"
            default: return "contains a control character"
            }
        case .group(let name):
            return "\"\(name):\" starts a group, which Hudson does not send to; give the addresses themselves"
        case .emptyElement: return "an empty element between commas"
        case .emptyAddress: return "<> is not an address"
        case .notAnAddress(let text): return "\"\(text)\" is not an email address"
        case .notASCII(let text):
            return "\"\(text)\" is not an ASCII address (Hudson sends none other; write an international domain as xn--)"
        case .unterminated(let what): return "\(what) is not closed"
        case .unexpected(let what): return "unexpected \(what)"
        }
    }
}

public enum OutgoingAddresses {
    /// The addresses `text` names, in order, or why it cannot be sent to. Text that holds
    /// only blanks (or an empty group) names nobody: `[]`.
    public static func parse(_ text: String) throws(OutgoingAddressError) -> [MailAddress] {
        try checkControls(text)
        var parser = StrictAddressParser(tokens: try StrictAddressTokenizer.tokens(text))
        return try parser.list()
    }

    /// Whether `address` (an addr-spec, without brackets) is one Hudson sends to: ASCII
    /// `local@domain`, a dot-atom local part of at most 64 octets, a domain of letters,
    /// digits and hyphens in two or more labels (RFC 5321 §4.1.2, §4.5.3.1).
    public static func isSendable(_ address: String) -> Bool {
        (try? checkAddress(address)) != nil
    }

    /// Refuses the characters no outgoing header value may hold: every C0 control but TAB,
    /// DEL, the C1 controls, and the Unicode line and paragraph separators.
    public static func checkControls(_ text: String) throws(OutgoingAddressError) {
        if let bad = text.unicodeScalars.first(where: isForbidden) { throw .controlCharacter(bad) }
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return false
        }
    }

    static func checkAddress(_ address: String) throws(OutgoingAddressError) {
        guard address.unicodeScalars.allSatisfy(\.isASCII) else { throw .notASCII(address) }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .notAnAddress(address) }
        let (local, domain) = (parts[0], parts[1])
        let localAtoms = local.split(separator: ".", omittingEmptySubsequences: false)
        guard !local.isEmpty, local.utf8.count <= 64, address.utf8.count <= 254,
              localAtoms.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(HeaderField.isAtext) }) else {
            throw .notAnAddress(address)
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, domain.utf8.count <= 253, labels.allSatisfy(isDomainLabel) else {
            throw .notAnAddress(address)
        }
    }

    static func isDomainLabel(_ label: Substring) -> Bool {
        guard let first = label.first, let last = label.last, label.utf8.count <= 63, first != "-", last != "-" else { return false }
        return label.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "-": return true
            default: return false
            }
        }
    }
}

/// A lexical token of an outgoing address list (RFC 5322 §3.2), with whether blanks or a
/// comment came before it.
struct StrictAddressToken: Equatable {
    enum Kind: Equatable {
        /// A run of characters that are not specials, blanks or quotes: atoms and
        /// dot-atoms (`ada`, `example.org`, `J.`), non-ASCII text of a name.
        case word(String)
        /// A quoted-string's content, unescaped.
        case quoted(String)
        /// One of `<>@,;:[]`.
        case special(Unicode.Scalar)
        /// A comment's content, for the name of a bare address.
        case comment(String)
    }
    var kind: Kind
    var spaceBefore: Bool
}

enum StrictAddressTokenizer {
    static func tokens(_ text: String) throws(OutgoingAddressError) -> [StrictAddressToken] {
        let scalars = Array(text.unicodeScalars)
        var tokens: [StrictAddressToken] = []
        var index = 0
        var space = false
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case " ", "\t":
                space = true
                index += 1
            case "\"":
                var content = String.UnicodeScalarView()
                index += 1
                var closed = false
                while index < scalars.count {
                    let inner = scalars[index]
                    if inner == "\\" {
                        guard index + 1 < scalars.count else { break }
                        content.append(scalars[index + 1])
                        index += 2
                        continue
                    }
                    index += 1
                    if inner == "\"" { closed = true; break }
                    content.append(inner)
                }
                guard closed else { throw .unterminated("a quoted name") }
                tokens.append(StrictAddressToken(kind: .quoted(String(content)), spaceBefore: space))
                space = false
            case "(":
                var content = String.UnicodeScalarView()
                var depth = 1
                index += 1
                while index < scalars.count, depth > 0 {
                    let inner = scalars[index]
                    index += 1
                    switch inner {
                    case "\\":
                        if index < scalars.count { content.append(scalars[index]); index += 1 }
                    case "(":
                        depth += 1
                        content.append(inner)
                    case ")":
                        depth -= 1
                        if depth > 0 { content.append(inner) }
                    default:
                        content.append(inner)
                    }
                }
                guard depth == 0 else { throw .unterminated("a comment") }
                tokens.append(StrictAddressToken(kind: .comment(String(content)), spaceBefore: space))
                space = true
            case ")":
                throw .unexpected("\")\"")
            case "\\":
                throw .unexpected("\"\\\" outside quotes")
            case "<", ">", "@", ",", ";", ":", "[", "]":
                tokens.append(StrictAddressToken(kind: .special(scalar), spaceBefore: space))
                space = false
                index += 1
            default:
                var word = String.UnicodeScalarView()
                while index < scalars.count, !isDelimiter(scalars[index]) {
                    word.append(scalars[index])
                    index += 1
                }
                tokens.append(StrictAddressToken(kind: .word(String(word)), spaceBefore: space))
                space = false
            }
        }
        return tokens
    }

    static func isDelimiter(_ scalar: Unicode.Scalar) -> Bool {
        " \t\"()<>@,;:[]\\".unicodeScalars.contains(scalar)
    }
}

struct StrictAddressParser {
    let tokens: [StrictAddressToken]
    var index = 0

    init(tokens: [StrictAddressToken]) { self.tokens = tokens }

    var current: StrictAddressToken.Kind? { index < tokens.count ? tokens[index].kind : nil }

    /// Comments are blanks except where one names a bare address; skips them.
    mutating func skipComments() {
        while case .comment? = current { index += 1 }
    }

    mutating func list() throws(OutgoingAddressError) -> [MailAddress] {
        var result: [MailAddress] = []
        skipComments()
        if current == nil { return [] }
        index = 0
        while true {
            // An element of only comments is empty; its comments belong to it otherwise.
            let start = index
            skipComments()
            switch current {
            case nil, .special(",")?:
                throw .emptyElement
            default:
                index = start
            }
            if let addresses = try element() { result += addresses }
            skipComments()
            switch current {
            case nil:
                return result
            case .special(",")?:
                index += 1
            case .special(let scalar)?:
                throw .unexpected("\"\(scalar)\"")
            default:
                throw .unexpected("text after an address")
            }
        }
    }

    /// One element: a mailbox, or an empty group (nil: it names nobody).
    mutating func element() throws(OutgoingAddressError) -> [MailAddress]? {
        let start = index
        // The phrase: words, quoted strings and comments, up to `<`, `@` or `:`.
        var phrase: [StrictAddressToken.Kind] = []
        var firstComment: String?
        loop: while let kind = current {
            switch kind {
            case .word, .quoted: phrase.append(kind)
            case .comment(let text): if firstComment == nil { firstComment = text }
            case .special: break loop
            }
            index += 1
        }
        switch current {
        case .special(":")?:
            index += 1
            let name = Self.phraseText(phrase)
            skipComments()
            guard case .special(";")? = current else { throw .group(name: name) }
            index += 1
            return nil
        case .special("<")?:
            index += 1
            skipComments()
            let address = try addrSpec()
            skipComments()
            guard case .special(">")? = current else {
                throw current == nil ? .unterminated("\"<\"") : .unexpected("text inside <…> after the address")
            }
            index += 1
            let name = try Self.name(phrase.isEmpty ? firstComment ?? "" : Self.phraseText(phrase))
            return [MailAddress(name: name, address: address)]
        case .special("@")?:
            // A bare addr-spec: the phrase read so far must be exactly its local part.
            index = start
            skipComments()
            let address = try addrSpec()
            // A comment after a bare address names it (as MailAddress reads it).
            var comment: String?
            while case .comment(let text)? = current {
                if comment == nil { comment = text }
                index += 1
            }
            return [MailAddress(name: try Self.name(comment ?? firstComment ?? ""), address: address)]
        case .special(let scalar)? where scalar != ",":
            throw .unexpected("\"\(scalar)\"")
        default:
            // The element ended (`,` or the end) without an address.
            throw .notAnAddress(phrase.isEmpty ? "(\(firstComment ?? ""))" : Self.phraseText(phrase))
        }
    }

    /// A phrase as a reader shows it (RFC 2047 §6.2): runs of words decoded together, so
    /// the blanks between adjacent encoded words go; quoted strings as written.
    static func phraseText(_ phrase: [StrictAddressToken.Kind]) -> String {
        var parts: [String] = []
        var words: [String] = []
        func flush() {
            if !words.isEmpty { parts.append(EncodedWords.decode(words.joined(separator: " "))) }
            words = []
        }
        for kind in phrase {
            switch kind {
            case .word(let word): words.append(word)
            case .quoted(let text): flush(); parts.append(text)
            default: break
            }
        }
        flush()
        return parts.joined(separator: " ")
    }

    /// `local@domain` with nothing between its parts: blanks or comments inside an
    /// address are refused (readers disagree on them).
    mutating func addrSpec() throws(OutgoingAddressError) -> String {
        switch current {
        case .special(">")?:
            throw .emptyAddress
        case .special("@")?:
            throw .unexpected("source route (\"<@host:…>\")")
        case .quoted?:
            throw .notAnAddress("a quoted local part")
        case .word(let local)?:
            index += 1
            guard case .special("@")? = current, !tokens[index].spaceBefore else {
                if case .special("@")? = current { throw .notAnAddress(local + " @") }
                throw .notAnAddress(local)
            }
            index += 1
            guard case .word(let domain)? = current, !tokens[index].spaceBefore else {
                if case .special("[")? = current { throw .notAnAddress(local + "@[…] (a domain literal)") }
                throw .notAnAddress(local + "@")
            }
            index += 1
            if index < tokens.count, !tokens[index].spaceBefore, case .special(let next) = tokens[index].kind, next == "@" || next == ":" {
                throw .notAnAddress(local + "@" + domain + String(next))
            }
            let address = local + "@" + domain
            try OutgoingAddresses.checkAddress(address)
            return address
        case nil:
            throw .unterminated("\"<\"")
        default:
            throw .notAnAddress(Self.text(current!))
        }
    }

    static func text(_ kind: StrictAddressToken.Kind) -> String {
        switch kind {
        case .word(let word): return word
        case .quoted(let text): return "\"\(text)\""
        case .special(let scalar): return String(scalar)
        case .comment(let text): return "(\(text))"
        }
    }

    /// A display name, blanks collapsed; controls (from encoded words or escapes) are
    /// refused.
    static func name(_ text: String) throws(OutgoingAddressError) -> String {
        try OutgoingAddresses.checkControls(text)
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }
}
