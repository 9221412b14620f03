/*!
 What may reach a terminal. Mail is hostile input: a subject can carry ESC sequences
 (cursor moves, OSC 52 clipboard writes, title changes), BEL, C1 controls or
 bidirectional overrides that reorder what the user sees. Text output removes them;
 JSON escapes them (CONTRACT.md "Output").
 */

public enum TerminalSafety {
    /// Controls (C0 except nothing, DEL, C1), bidirectional embedding/override/isolate
    /// characters, and other invisible format characters that can disguise text.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidi marks and overrides
        case 0xFFF9...0xFFFB: return true  // interlinear annotation controls
        default: return false
        }
    }

    /// One field of a text record: unsafe characters removed, and TAB, newlines and
    /// other whitespace controls turned into single spaces so the record stays one line
    /// with its fields intact. An ESC sequence goes as a whole, not just its ESC.
    public static func field(_ text: String) -> String {
        if isPlainField(text) { return text }
        var output = String.UnicodeScalarView()
        var iterator = text.unicodeScalars.makeIterator()
        var pendingSpace = false
        while let scalar = iterator.next() {
            switch scalar.value {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D:
                pendingSpace = true
                continue
            case 0x1B:
                skipEscapeSequence(&iterator)
                continue
            case 0x9B:  // C1 CSI
                skipControlSequence(&iterator)
                continue
            default:
                if isUnsafe(scalar) { continue }
            }
            if pendingSpace {
                if let last = output.last, last != " " { output.append(" ") }
                pendingSpace = false
            }
            output.append(scalar)
        }
        return String(output)
    }

    /// Whether `field` would return `text` unchanged: nothing it removes or folds (C0,
    /// DEL, C1, the bidi marks and U+FFF9–U+FFFB, by their exact UTF-8 bytes). Most
    /// subjects, names and dates pass, and are printed without being rebuilt scalar by
    /// scalar, including text full of dashes and quotes that share lead bytes with them.
    public static func isPlainField(_ text: String) -> Bool {
        !containsUnsafe(text, countingWhitespace: true)
    }

    /// The text as a reader sees it: ESC sequences (as a whole) and every other unsafe
    /// character removed, TAB, LF and CR kept. The full-text index holds this, so the
    /// words shown are the words found: `Invoice ESC[5mURGENT` is shown, and indexed, as
    /// `Invoice URGENT`, not as the word `5murgent` (docs/reliability.md, "Hostile input").
    public static func shown(_ text: String) -> String {
        guard containsUnsafeBeyondWhitespace(text) else { return text }
        var output = String.UnicodeScalarView()
        // Line by line, as `text` shows a body: an escape sequence left open ends with its
        // line, so it cannot hide the lines after it from the index while they are shown.
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if index > 0 { output.append("\n") }
            var iterator = String.UnicodeScalarView(line).makeIterator()
            while let scalar = iterator.next() {
                switch scalar.value {
                case 0x09, 0x0D: output.append(scalar)
                case 0x1B: skipEscapeSequence(&iterator)
                case 0x9B: skipControlSequence(&iterator)
                default: if !isUnsafe(scalar) { output.append(scalar) }
                }
            }
        }
        return String(output)
    }

    /// Whether `text` holds an unsafe character other than TAB, LF and CR, from its UTF-8
    /// bytes exactly (C1 is C2 80–9F; the bidi marks E2 80 8E/8F, AA–AE and E2 81 A6–A9;
    /// U+061C D8 9C; U+FFF9–U+FFFB EF BF B9–BB): a body full of dashes and quotes, which
    /// share those lead bytes, is passed over without being rebuilt.
    static func containsUnsafeBeyondWhitespace(_ text: String) -> Bool {
        containsUnsafe(text, countingWhitespace: false)
    }

    /// The byte scan behind `isPlainField`, `shown` and `text`; TAB, LF and CR count as
    /// unsafe only when `countingWhitespace`.
    static func containsUnsafe(_ text: String, countingWhitespace: Bool) -> Bool {
        // The string's own bytes when it has them contiguous (always, for native and
        // small strings); `withUTF8` would move a small string to the heap first.
        if let answer = text.utf8.withContiguousStorageIfAvailable({ containsUnsafe($0, countingWhitespace: countingWhitespace) }) {
            return answer
        }
        var text = text
        return text.withUTF8 { containsUnsafe($0, countingWhitespace: countingWhitespace) }
    }

    static func containsUnsafe(_ bytes: UnsafeBufferPointer<UInt8>, countingWhitespace: Bool) -> Bool {
        let count = bytes.count
        var index = 0
        // Eight bytes at a time while every one is printable ASCII (0x20...0x7E), which
        // most names, subjects and dates are; the first word with any other byte, and
        // everything after it, is checked byte by byte below. Each test is exact when no
        // byte has its high bit set, which the first one makes sure of.
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let belowSpace = (word &- ones &* 0x20) & ~word & high
                let delete = word ^ (ones &* 0x7F)
                let isDelete = (delete &- ones) & ~delete & high
                if (word & high) | belowSpace | isDelete != 0 { break }
                index += 8
            }
        }
        while index < count {
            let byte = bytes[index]
            switch byte {
            case 0x09, 0x0A, 0x0D: if countingWhitespace { return true }
            case 0x00...0x1F, 0x7F: return true
            case 0xC2:
                if index + 1 < count, (0x80...0x9F).contains(bytes[index + 1]) { return true }
            case 0xD8:
                if index + 1 < count, bytes[index + 1] == 0x9C { return true }
            case 0xE2:
                if index + 2 < count {
                    let second = bytes[index + 1], third = bytes[index + 2]
                    if second == 0x80 && (third == 0x8E || third == 0x8F || (0xAA...0xAE).contains(third)) { return true }
                    if second == 0x81 && (0xA6...0xA9).contains(third) { return true }
                }
            case 0xEF:
                if index + 2 < count, bytes[index + 1] == 0xBF, (0xB9...0xBB).contains(bytes[index + 2]) { return true }
            default: break
            }
            index += 1
        }
        return false
    }

    /// Multi-line text (a message body): lines are kept, everything else as `field`.
    public static func text(_ text: String) -> String {
        // Most bodies hold nothing to remove, no CR and no TAB: returned as they are, after
        // one byte scan (rebuilding them line by line was most of hd-show's time).
        if !containsUnsafeBeyondWhitespace(text) && !text.utf8.contains(0x0D) && !text.utf8.contains(0x09) { return text }
        var lines: [String] = []
        // Split on LF scalars, not Characters: "\r\n" is one Character, and a source with
        // CRLF line ends (`hd-show --raw` on a terminal) would be one line.
        for scalars in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(String.UnicodeScalarView(scalars.last == "\r" ? scalars.dropLast() : scalars))
            var cleaned = field(line)
            if line.contains("\t") {
                // Keep tab stops readable in bodies: a field() would fold them to one space.
                cleaned = String(line).split(separator: "\t", omittingEmptySubsequences: false)
                    .map { field(String($0)) }.joined(separator: "    ")
            }
            lines.append(cleaned)
        }
        return lines.joined(separator: "\n")
    }

    /// Text the user or the mail gave, quoted in a diagnostic so the reader sees what was
    /// there: every unsafe character written as a visible escape (`\e`, `\a`, `\0`,
    /// `\u{202E}`), and a long text cut to `limit` characters with how much was left out.
    /// A reference of 1 MB gives an error line of a hundred characters, not of 1 MB.
    public static func quoted(_ text: String, limit: Int = 80) -> String {
        var output = String.UnicodeScalarView()
        var printed = 0  // the limit is on what is printed: an escape counts for all it takes
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if printed >= limit {
                var rest = 1
                while scalars.next() != nil { rest += 1 }
                return String(output) + "…(\(rest) more characters)"
            }
            let escape: String?
            switch scalar.value {
            case 0x1B: escape = "\\e"
            case 0x07: escape = "\\a"
            case 0x00: escape = "\\0"
            case 0x09: escape = "\\t"
            case 0x0A: escape = "\\n"
            case 0x0D: escape = "\\r"
            default: escape = isUnsafe(scalar) ? "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}" : nil
            }
            if let escape {
                output.append(contentsOf: escape.unicodeScalars)
                printed += escape.unicodeScalars.count
            } else {
                output.append(scalar)
                printed += 1
            }
        }
        return String(output)
    }

    /// Bytes the user gave that are not UTF-8 (an argument, an environment value), quoted
    /// like `quoted`, with each byte of an invalid sequence written `\xFF`: the reader sees
    /// the bytes that were refused, not the U+FFFD a repair would have put there.
    public static func quoted(bytes: [UInt8], limit: Int = 80) -> String {
        var output = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            if output.count >= limit {
                return String(output) + "…(\(bytes.count - index) more bytes)"
            }
            // One scalar (1 to 4 bytes) that is valid alone, quoted as `quoted` quotes it;
            // else one byte of an invalid sequence.
            var decoded: (text: String, length: Int)?
            for length in 1...4 where index + length <= bytes.count {
                if let text = String(validating: bytes[index..<index + length], as: UTF8.self) {
                    decoded = (text, length)
                    break
                }
            }
            if let decoded {
                output.append(contentsOf: quoted(decoded.text, limit: .max).unicodeScalars)
                index += decoded.length
            } else {
                output.append(contentsOf: ("\\x" + String(bytes[index], radix: 16, uppercase: true)).unicodeScalars)
                index += 1
            }
        }
        return String(output)
    }

    /// The longest diagnostic line, in characters: anything longer is cut. Quoted input
    /// is already short (`quoted`); this bounds whatever else an error may carry.
    public static let diagnosticLineLimit = 2_000

    /// A diagnostic for standard error: lines kept, unsafe characters removed as in
    /// `field`, each line cut to `diagnosticLineLimit`. Every line Hudson writes to
    /// standard error goes through here (CONTRACT.md "Output": nothing from mail or from
    /// the user may drive the terminal), whatever its source.
    public static func diagnostic(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var cleaned = field(String(line))
            if cleaned.unicodeScalars.count > diagnosticLineLimit {
                cleaned = String(String.UnicodeScalarView(cleaned.unicodeScalars.prefix(diagnosticLineLimit))) + "…"
            }
            lines.append(cleaned)
        }
        return lines.joined(separator: "\n")
    }

    /// HTML for a program reading a pipe (`hd-show --html`): C0 controls other than TAB,
    /// LF and CR, DEL and C1 controls removed, ESC sequences as a whole. The HTML standard
    /// makes them parse errors and no page needs them; bidirectional characters stay, as
    /// they are text a browser lays out. On a terminal the HTML goes through `text`.
    public static func htmlForPipe(_ html: String) -> String {
        var needsWork = false
        for scalar in html.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            if scalar.value != 0x09 && scalar.value != 0x0A && scalar.value != 0x0D { needsWork = true; break }
        }
        guard needsWork else { return html }
        var output = String.UnicodeScalarView()
        var iterator = html.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: output.append(scalar)
            case 0x1B: skipEscapeSequence(&iterator)
            case 0x9B: skipControlSequence(&iterator)
            case 0x00...0x1F, 0x7F...0x9F: continue
            default: output.append(scalar)
            }
        }
        return String(output)
    }

    /// ESC [ ... final, ESC ] ... BEL/ST, ESC P/X/^/_ ... ST, or ESC plus one character.
    private static func skipEscapeSequence(_ iterator: inout String.UnicodeScalarView.Iterator) {
        guard let next = iterator.next() else { return }
        switch next {
        case "[":
            skipControlSequence(&iterator)
        case "]", "P", "X", "^", "_":
            // A string terminated by BEL or ST (ESC \ or 0x9C).
            var previousWasEscape = false
            while let scalar = iterator.next() {
                if scalar.value == 0x07 || scalar.value == 0x9C { return }
                if previousWasEscape && scalar == "\\" { return }
                previousWasEscape = scalar.value == 0x1B
            }
        default:
            return
        }
    }

    private static func skipControlSequence(_ iterator: inout String.UnicodeScalarView.Iterator) {
        // Parameter and intermediate bytes 0x20–0x3F, then one final byte 0x40–0x7E.
        while let scalar = iterator.next() {
            if (0x40...0x7E).contains(scalar.value) { return }
            if !(0x20...0x3F).contains(scalar.value) { return }
        }
    }
}
