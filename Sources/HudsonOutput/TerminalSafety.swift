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

    /// Whether `field` would return `text` unchanged: no byte that starts anything it
    /// removes or folds (C0, DEL, and the UTF-8 lead bytes of C1 controls U+0080–U+009F,
    /// U+061C, the U+2000 block's bidi marks and U+FFF9–U+FFFB). Most subjects, names and
    /// dates pass, and are printed without being rebuilt scalar by scalar.
    static func isPlainField(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes {
                switch byte {
                case 0x00...0x1F, 0x7F, 0xC2, 0xD8, 0xE2, 0xEF: return false
                default: continue
                }
            }
            return true
        }
    }

    /// Multi-line text (a message body): lines are kept, everything else as `field`.
    public static func text(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var cleaned = field(String(line.hasSuffix("\r") ? line.dropLast() : line[...]))
            if line.contains("\t") {
                // Keep tab stops readable in bodies: a field() would fold them to one space.
                cleaned = String(line).split(separator: "\t", omittingEmptySubsequences: false)
                    .map { field(String($0)) }.joined(separator: "    ")
            }
            lines.append(cleaned)
        }
        return lines.joined(separator: "\n")
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
