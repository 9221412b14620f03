/*!
 Quoted-printable decoding (RFC 2045 §6.7) for bodies, and its header variant, the "Q"
 encoding of RFC 2047 §4.2, where `_` stands for a space. Real mail breaks the rules often
 (lower-case hex, `=` before a non-hex byte, trailing blanks added in transit), so the decoder
 never fails: a malformed escape is kept as literal text, as RFC 2045 §6.7 note (2) advises
 and as Python's `quopri` does.
 */

public enum QuotedPrintable {
    /// Decodes a quoted-printable body: `=XX` (either case) becomes the byte, `=` at the end
    /// of a line is a soft line break (also when transport padding follows it), trailing blanks
    /// on each line are removed (RFC 2045 §6.7 rule 3), and hard line breaks are kept as sent.
    public static func decode<Bytes: Collection>(_ bytes: Bytes) -> [UInt8]
    where Bytes.Element == UInt8, Bytes.Index == Int {
        decode(bytes, underscoreIsSpace: false)
    }

    /// Decodes the text of an RFC 2047 "Q" encoded word: as ``decode(_:)``, and `_` is a space.
    public static func decodeQ<Bytes: Collection>(_ bytes: Bytes) -> [UInt8]
    where Bytes.Element == UInt8, Bytes.Index == Int {
        decode(bytes, underscoreIsSpace: true)
    }

    private static func decode<Bytes: Collection>(_ bytes: Bytes, underscoreIsSpace: Bool) -> [UInt8]
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        // Blanks are held back until we know whether a line break follows them.
        var pendingBlanks: [UInt8] = []
        var index = bytes.startIndex
        let end = bytes.endIndex
        while index < end {
            let byte = bytes[index]
            switch byte {
            case 32, 9:
                pendingBlanks.append(byte)
                index += 1
            case 13, 10:
                pendingBlanks.removeAll(keepingCapacity: true)
                output.append(byte)
                index += 1
            case UInt8(ascii: "="):
                output.append(contentsOf: pendingBlanks)
                pendingBlanks.removeAll(keepingCapacity: true)
                if let lineEnd = softBreakEnd(bytes, after: index) {
                    index = lineEnd
                } else if index + 2 < end,
                          let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                    output.append(high << 4 | low)
                    index += 3
                } else {
                    output.append(byte)
                    index += 1
                }
            case UInt8(ascii: "_") where underscoreIsSpace:
                output.append(contentsOf: pendingBlanks)
                pendingBlanks.removeAll(keepingCapacity: true)
                output.append(32)
                index += 1
            default:
                output.append(contentsOf: pendingBlanks)
                pendingBlanks.removeAll(keepingCapacity: true)
                output.append(byte)
                index += 1
            }
        }
        // Blanks at the very end belong to the last line: RFC 2045 §6.7 rule 3 drops them.
        return output
    }

    /// When the `=` at `index` is followed only by blanks and then a line break (or the end of
    /// the data), returns the index just past that break: a soft line break.
    private static func softBreakEnd<Bytes: Collection>(_ bytes: Bytes, after index: Int) -> Int?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var cursor = index + 1
        let end = bytes.endIndex
        while cursor < end, bytes[cursor] == 32 || bytes[cursor] == 9 { cursor += 1 }
        if cursor == end { return end }
        if bytes[cursor] == 10 { return cursor + 1 }
        if bytes[cursor] == 13 {
            return cursor + 1 < end && bytes[cursor + 1] == 10 ? cursor + 2 : cursor + 1
        }
        return nil
    }

    /// The value of one hexadecimal digit, either case; nil for any other byte.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
