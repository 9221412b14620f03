/*!
 Base64 in both alphabets (RFC 4648 §4 standard, §5 URL-safe), decoded leniently and encoded
 on request. Gmail's `body.data`, attachment `data` and `raw` are base64url whose padding varies
 from field to field (gmail-api.md §8 and §9.11: padded `raw` broke Go's RawURLEncoding, unpadded
 `data` broke Python's urlsafe_b64decode, the standard alphabet broke Ruby). MIME bodies with
 `Content-Transfer-Encoding: base64` are standard base64 wrapped at 76 columns, sometimes with
 junk (RFC 2045 §6.8: "any characters outside of the base64 alphabet are to be ignored"). One
 decoder serves all of them: it accepts both alphabets, any padding, whitespace and garbage.
 */

public enum Base64 {
    /// Decodes base64 or base64url text leniently: `-`/`+` and `_`/`/` are equivalent, padding is
    /// optional, and every byte outside the two alphabets (line breaks, spaces, junk) is skipped.
    /// A `=` ends the current 4-character group, so concatenated padded chunks decode in full.
    /// Never fails: a trailing single character (6 bits, less than a byte) is dropped.
    public static func decode(_ text: String) -> [UInt8] {
        decode(bytes: text.utf8)
    }

    /// Decodes base64 or base64url bytes leniently; see ``decode(_:)``.
    public static func decode<Bytes: Sequence>(bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount / 4 * 3 + 3)
        var group: UInt32 = 0
        var count = 0
        for byte in bytes {
            let value = sextet(byte)
            if value < 64 {
                group = group << 6 | UInt32(value)
                count += 1
                if count == 4 {
                    output.append(UInt8(truncatingIfNeeded: group >> 16))
                    output.append(UInt8(truncatingIfNeeded: group >> 8))
                    output.append(UInt8(truncatingIfNeeded: group))
                    group = 0
                    count = 0
                }
            } else if byte == UInt8(ascii: "=") {
                flush(&group, &count, into: &output)
            }
        }
        flush(&group, &count, into: &output)
        return output
    }

    /// Encodes as base64url (RFC 4648 §5), the form Gmail's `raw` takes when sending.
    /// Google accepts it padded or not (gmail-api.md §8); the default leaves padding off.
    public static func encodeURL<Bytes: Collection>(_ bytes: Bytes, padded: Bool = false) -> String
    where Bytes.Element == UInt8 {
        encode(bytes, alphabet: urlAlphabet, padded: padded, lineLength: nil)
    }

    /// Encodes as standard base64 (RFC 4648 §4), padded. With `lineLength` (MIME uses 76,
    /// RFC 2045 §6.8) lines are separated by CRLF.
    public static func encode<Bytes: Collection>(_ bytes: Bytes, lineLength: Int? = nil) -> String
    where Bytes.Element == UInt8 {
        encode(bytes, alphabet: standardAlphabet, padded: true, lineLength: lineLength)
    }

    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The 6-bit value of a character of either alphabet, or 64 for anything else.
    private static func sextet(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): return 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): return 63
        default: return 64
        }
    }

    /// Emits the whole bytes of a partial group, as if it had been padded to 4 characters.
    private static func flush(_ group: inout UInt32, _ count: inout Int, into output: inout [UInt8]) {
        switch count {
        case 2:
            output.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            break
        }
        group = 0
        count = 0
    }

    private static func encode<Bytes: Collection>(
        _ bytes: Bytes, alphabet: [UInt8], padded: Bool, lineLength: Int?
    ) -> String where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var lineCount = 0
        func emit(_ character: UInt8) {
            if let lineLength, lineLength > 0, lineCount == lineLength {
                output.append(13)
                output.append(10)
                lineCount = 0
            }
            output.append(character)
            lineCount += 1
        }
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            emit(alphabet[Int(group >> 18 & 63)])
            emit(alphabet[Int(group >> 12 & 63)])
            if second != nil { emit(alphabet[Int(group >> 6 & 63)]) } else if padded { emit(UInt8(ascii: "=")) }
            if third != nil { emit(alphabet[Int(group & 63)]) } else if padded { emit(UInt8(ascii: "=")) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
