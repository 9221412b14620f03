/*!
 Header fields of outgoing mail, written so that every reader gets the text back exactly:
 printable ASCII stays as it is, anything else becomes RFC 2047 encoded words (UTF-8, "Q" or
 "B", whichever is shorter), and every field is folded at whitespace to lines of at most 76
 characters, the limit RFC 2047 §2 sets for lines that hold encoded words. Gmail turns raw
 non-ASCII header bytes into mojibake (gmail-api.md §2.7, §9.8), so nothing else is sent.

 Two rules of RFC 2047 shape the encoder. Whitespace between two adjacent encoded words is
 dropped by decoders (§6.2), so consecutive words that need encoding become one run whose
 spaces are encoded inside it; a plain word next to an encoded one keeps its literal space.
 In an address list only the display name may be encoded (§5 rule 3), never the address, and
 the "Q" alphabet used is the strict one of §5 rule 3, which is valid in every position.
 */

/// Header fields for the wire: `Name: value` with CRLF folds and a final CRLF.
public enum HeaderField {
    /// The longest line written (RFC 2047 §2: 76 for lines with encoded words; RFC 5322
    /// §2.1.1 recommends 78 for all).
    public static let lineLimit = 76

    /// An unstructured field such as Subject. Leading and trailing whitespace is not kept
    /// (readers trim it, RFC 5322 §3.2.2).
    public static func unstructured(_ name: String, _ text: String) -> String {
        var writer = FoldingWriter(name: name)
        let words = splitWords(text)
        var index = 0
        while index < words.count {
            // The first word's separator is the space after the colon.
            let separator = index == 0 ? " " : words[index].separator
            guard needsEncoding(words[index].word) else {
                writer.append(words[index].word, separator: separator)
                index += 1
                continue
            }
            // A run of consecutive words that need encoding, with the spaces between them.
            var run = words[index].word
            var end = index + 1
            while end < words.count, needsEncoding(words[end].word) {
                run += words[end].separator + words[end].word
                end += 1
            }
            writer.appendEncoded(run, separator: separator)
            index = end
        }
        return writer.finish()
    }

    /// An address list (From, To, Cc, Bcc): display names plain, quoted or encoded as they
    /// need, addresses as written, folded between addresses and between name and address.
    public static func addresses(_ name: String, _ list: [MailAddress]) -> String {
        var writer = FoldingWriter(name: name)
        for (index, address) in list.enumerated() {
            let comma = index == list.count - 1 ? "" : ","
            guard !address.name.isEmpty else {
                writer.append(address.address + comma, separator: " ")
                continue
            }
            if address.name.contains("=?") || address.name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E }) {
                writer.appendEncoded(address.name, separator: " ", keepWhole: true)
            } else if isAtomPhrase(address.name) {
                for word in address.name.split(separator: " ") { writer.append(String(word), separator: " ") }
            } else {
                writer.append(quoted(address.name), separator: " ")
            }
            writer.append("<\(address.address)>" + comma, separator: " ")
        }
        return writer.finish()
    }

    /// One address as `addresses` writes it in a list, unfolded: the quoted or encoded
    /// form a reader of the message finds, not the decoded name (`"Doe, John"` stays
    /// quoted; a name that reads as an encoded word stays encoded), for `hd-send --dry-run`.
    public static func written(_ address: MailAddress) -> String {
        let field = addresses("X", [address])
        // "X: " before it, CRLF after; CRLF inside is folding (one Character in Swift).
        return String(field.dropFirst(3).dropLast().filter { $0 != "\r\n" })
    }

    /// A structured field made of ASCII tokens (Date, Message-ID, References, Content-*):
    /// the tokens joined by spaces, folded between them, never encoded.
    public static func structured(_ name: String, _ tokens: [String]) -> String {
        var writer = FoldingWriter(name: name)
        for token in tokens { writer.append(token, separator: " ") }
        return writer.finish()
    }

    // MARK: - Words

    /// Words separated by runs of spaces, each with the run before it ("" for the first).
    static func splitWords(_ text: String) -> [(separator: String, word: String)] {
        var result: [(separator: String, word: String)] = []
        var separator = ""
        var word = ""
        for character in text {
            if character == " " {
                if !word.isEmpty {
                    result.append((result.isEmpty ? "" : separator, word))
                    word = ""
                    separator = ""
                }
                separator.append(" ")
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { result.append((result.isEmpty ? "" : separator, word)) }
        return result
    }

    /// A word must be encoded when it is not printable ASCII, when it could be read as an
    /// encoded word itself, or when it is too long for a line.
    static func needsEncoding(_ word: String) -> Bool {
        word.contains("=?") || word.contains("?=") || word.utf8.count > lineLimit - 10
            || word.unicodeScalars.contains { $0.value < 0x21 || $0.value > 0x7E }
    }

    /// RFC 5322 §3.2.3 atext, the characters a phrase may hold without quotes.
    static func isAtext(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": return true
        default: return "!#$%&'*+-/=?^_`{|}~".unicodeScalars.contains(scalar)
        }
    }

    /// Whether a display name is a phrase of atoms separated by single spaces.
    static func isAtomPhrase(_ name: String) -> Bool {
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        return words.allSatisfy { !$0.isEmpty && $0.unicodeScalars.allSatisfy(isAtext) }
    }

    /// A quoted-string (RFC 5322 §3.2.4) with `"` and `\` escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }
}

/// Builds one folded field, line by line.
struct FoldingWriter {
    private var output: String
    private var column: Int
    /// Whether the current line holds a token after the field name (folding before the
    /// first token would leave the name alone on its line).
    private var lineHasToken = false

    init(name: String) {
        output = name + ":"
        column = name.utf8.count + 1
    }

    /// Appends a token after `separator` (spaces), folding at the separator's first space
    /// when the token would pass the line limit.
    mutating func append(_ token: String, separator: String) {
        let width = token.utf8.count
        if !separator.isEmpty && lineHasToken && column + separator.utf8.count + width > HeaderField.lineLimit {
            output += "\r\n"
            column = 0
        }
        output += separator + token
        column += separator.utf8.count + width
        lineHasToken = true
    }

    /// Appends `text` as RFC 2047 encoded words of at most 75 characters that fit their
    /// lines, split only between characters (a grapheme larger than a word is split between
    /// scalars, never inside one). `keepWhole`: text that fits one word is written as one,
    /// on a line of its own if need be — a display name split into several words reads
    /// with blanks inside it to readers that miss RFC 2047 §6.2 (Python's email does).
    mutating func appendEncoded(_ text: String, separator: String, keepWhole: Bool = false) {
        let useQ = EncodedWordEncoder.qLength(Array(text.utf8)) <= EncodedWordEncoder.bLength(text.utf8.count)
        if keepWhole, EncodedWordEncoder.length(Array(text.utf8), q: useQ) <= 75 {
            append(EncodedWordEncoder.word(Array(text.utf8), q: useQ), separator: separator)
            return
        }
        var units: [[UInt8]] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if EncodedWordEncoder.length(bytes, q: useQ) <= 40 {
                units.append(bytes)
            } else {
                units += character.unicodeScalars.map { Array(String($0).utf8) }
            }
        }
        var pendingSeparator = separator
        var word: [UInt8] = []
        func capacity(_ separator: String) -> Int {
            let room = HeaderField.lineLimit - column - (separator.isEmpty ? 0 : separator.utf8.count)
            // Too little room on this line for a useful word: the next one starts a new line.
            return lineHasToken && room < 24 ? 75 : min(75, max(room, 24))
        }
        for unit in units {
            if !word.isEmpty && EncodedWordEncoder.length(word + unit, q: useQ) > capacity(pendingSeparator) {
                append(EncodedWordEncoder.word(word, q: useQ), separator: pendingSeparator)
                pendingSeparator = " "
                word = []
            }
            word += unit
        }
        if !word.isEmpty { append(EncodedWordEncoder.word(word, q: useQ), separator: pendingSeparator) }
    }

    func finish() -> String { output + "\r\n" }
}

/// RFC 2047 encoded words in UTF-8.
enum EncodedWordEncoder {
    /// `=?UTF-8?Q?` and `?=`.
    static let overhead = 12

    static func word(_ bytes: [UInt8], q: Bool) -> String {
        q ? "=?UTF-8?Q?" + qText(bytes) + "?=" : "=?UTF-8?B?" + Base64.encode(bytes) + "?="
    }

    static func length(_ bytes: [UInt8], q: Bool) -> Int {
        overhead + (q ? qLength(bytes) : bLength(bytes.count))
    }

    static func bLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    static func qLength(_ bytes: [UInt8]) -> Int {
        bytes.reduce(0) { $0 + (isLiteral($1) || $1 == 32 ? 1 : 3) }
    }

    /// RFC 2047 §5 rule 3: in a phrase only letters, digits and `!*+-/` may appear
    /// literally; the same strict set is used everywhere. A space is `_` (§4.2).
    static func isLiteral(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "*"),
             UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    static func qText(_ bytes: [UInt8]) -> String {
        var output = ""
        for byte in bytes {
            if isLiteral(byte) {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == 32 {
                output += "_"
            } else {
                output += "=" + hex(byte)
            }
        }
        return output
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        var text = ""
        text.unicodeScalars.append(digits[Int(byte >> 4)])
        text.unicodeScalars.append(digits[Int(byte & 15)])
        return text
    }
}
