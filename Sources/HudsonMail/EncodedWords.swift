/*!
 RFC 2047 encoded-words (`=?charset?B?...?=`, `=?charset?Q?...?=`) in header values. Gmail
 usually hands `format=full` headers back already decoded, but not always, and `format=raw`
 never does (gmail-api.md §8), so the decoder must be idempotent: text without a well-formed
 encoded word passes through unchanged. Malformed words are left as they are, since showing
 `=?x?y?z?=` beats dropping a subject.
 */

public enum EncodedWords {
    /// The longest encoded word looked for, in characters. RFC 2047 §2 allows 75; broken
    /// mailers write longer ones, but a bound keeps hostile headers linear.
    static let maximumWordLength = 2048

    /// Decodes every RFC 2047 encoded word in a header value.
    /// - `B` is base64 and `Q` is quoted-printable with `_` for a space (§4), in either case.
    /// - `charset*language` (RFC 2231 §5) is accepted; the language is ignored.
    /// - Whitespace between two adjacent encoded words is dropped (§6.2), and adjacent words in
    ///   the same charset are joined before decoding, so a character split across two words
    ///   (which §5 forbids and mailers do anyway) comes out whole.
    /// - Words that do not parse, or whose `B` text is not base64, stay as written.
    /// - Folding line breaks (CRLF followed by a blank, RFC 5322 §2.2.3) are unfolded.
    public static func decode(_ value: String) -> String {
        guard value.contains("=?") || value.utf8.contains(10) || value.utf8.contains(13) else { return value }
        let scalars = Array(value.unicodeScalars)
        var output = String.UnicodeScalarView()
        output.reserveCapacity(scalars.count)
        var pending = PendingWords()
        var gapStart = -1  // Start of the whitespace run after the last decoded word, or -1.
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "=", index + 1 < scalars.count, scalars[index + 1] == "?",
               let word = parseWord(scalars, at: index) {
                pending.add(word)
                index = word.end
                gapStart = index
                continue
            }
            if gapStart >= 0 {
                if isSpace(scalar) {
                    index += 1
                    continue
                }
                // Not another encoded word: the whitespace run is ordinary text again.
                output.append(contentsOf: pending.flush())
                appendUnfolded(scalars[gapStart..<index], to: &output)
                gapStart = -1
            }
            if scalar == "\r" || scalar == "\n" {
                appendUnfolded(scalars[index...index], to: &output)
            } else {
                output.append(scalar)
            }
            index += 1
        }
        output.append(contentsOf: pending.flush())
        if gapStart >= 0 { appendUnfolded(scalars[gapStart..<scalars.count], to: &output) }
        return String(output)
    }

    struct Word {
        var charset: String
        var bytes: [UInt8]
        var end: Int
    }

    /// Parses `=?charset?E?text?=` starting at `start`, or returns nil when it is not one.
    static func parseWord(_ scalars: [Unicode.Scalar], at start: Int) -> Word? {
        let limit = min(scalars.count, start + maximumWordLength)
        var cursor = start + 2
        let charsetStart = cursor
        while cursor < limit, scalars[cursor] != "?" {
            if isSpace(scalars[cursor]) || scalars[cursor] == "=" { return nil }
            cursor += 1
        }
        guard cursor + 2 < limit, cursor > charsetStart else { return nil }
        let charset = String(String.UnicodeScalarView(scalars[charsetStart..<cursor]))
        let encoding = scalars[cursor + 1]
        guard scalars[cursor + 2] == "?" else { return nil }
        let textStart = cursor + 3
        cursor = textStart
        while cursor + 1 < limit, !(scalars[cursor] == "?" && scalars[cursor + 1] == "=") {
            // Encoded text is ASCII and never holds "?" (§2); blanks are tolerated in Q text.
            if !scalars[cursor].isASCII || scalars[cursor] == "?" { return nil }
            cursor += 1
        }
        guard cursor + 1 < limit else { return nil }
        let text = scalars[textStart..<cursor].map { UInt8(truncatingIfNeeded: $0.value) }
        let bytes: [UInt8]
        switch encoding {
        case "B", "b":
            guard text.allSatisfy(isBase64Text) else { return nil }
            bytes = Base64.decode(bytes: text)
        case "Q", "q":
            bytes = QuotedPrintable.decodeQ(text)
        default:
            return nil
        }
        return Word(charset: charset, bytes: bytes, end: cursor + 2)
    }

    /// Adjacent words waiting to be decoded, grouped by charset.
    struct PendingWords {
        var charset: String?
        var bytes: [UInt8] = []
        var decoded = String.UnicodeScalarView()

        mutating func add(_ word: Word) {
            let label = Charset.normalize(word.charset) ?? ""
            if let charset, charset != label { decodeRun() }
            charset = label
            bytes.append(contentsOf: word.bytes)
        }

        mutating func flush() -> String.UnicodeScalarView {
            decodeRun()
            defer { decoded = String.UnicodeScalarView() }
            return decoded
        }

        private mutating func decodeRun() {
            guard let charset else { return }
            let text = Charset.decodeText(bytes: bytes, charset: charset.isEmpty ? nil : charset)
            decoded.append(contentsOf: text.unicodeScalars)
            bytes.removeAll()
            self.charset = nil
        }
    }

    /// Appends text with folding line breaks removed: CR and LF are dropped, the blanks kept.
    private static func appendUnfolded(_ slice: ArraySlice<Unicode.Scalar>, to output: inout String.UnicodeScalarView) {
        for scalar in slice where scalar != "\r" && scalar != "\n" { output.append(scalar) }
    }

    private static func isBase64Text(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
