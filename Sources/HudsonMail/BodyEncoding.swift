/*!
 Content-Transfer-Encoding for outgoing bodies (RFC 2045 §6), so that every part is 7-bit
 text with CRLF line ends and lines of at most 76 characters: text stays as it is when it
 already is that, otherwise it becomes quoted-printable or base64, whichever is shorter
 (Python's `email` chooses the same way); binary attachments are always base64. The
 quoted-printable encoder is the inverse of `QuotedPrintable.decode`.
 */

/// A part's content encoded for the wire.
public struct EncodedBody: Sendable, Equatable {
    /// `7bit`, `quoted-printable` or `base64`.
    public var transferEncoding: String
    /// The encoded text, CRLF line ends, with no final line break.
    public var text: String
}

public enum BodyEncoding {
    /// The longest line written (RFC 2045 §6.7 rule 5, §6.8).
    static let lineLimit = 76

    /// Text in any line-end convention, as UTF-8 bytes with CRLF line ends (RFC 5322 §2.3:
    /// CR and LF appear only together).
    public static func canonicalLines(_ text: String) -> [UInt8] {
        RawMessage.crlf(Array(text.utf8))
    }

    /// Encodes text (already with CRLF line ends): as it is when it is 7-bit with short lines
    /// and no trailing blanks (which transport may strip), else the shorter of
    /// quoted-printable and base64.
    public static func text(_ bytes: [UInt8]) -> EncodedBody {
        if isPlainSevenBit(bytes) {
            return EncodedBody(transferEncoding: "7bit", text: String(decoding: bytes, as: UTF8.self))
        }
        let quoted = QuotedPrintable.encode(bytes)
        if quoted.utf8.count <= base64Length(bytes.count) {
            return EncodedBody(transferEncoding: "quoted-printable", text: quoted)
        }
        return binary(bytes)
    }

    /// Base64 in lines of 76 (RFC 2045 §6.8).
    public static func binary(_ bytes: [UInt8]) -> EncodedBody {
        EncodedBody(transferEncoding: "base64", text: Base64.encode(bytes, lineLength: lineLimit))
    }

    static func base64Length(_ count: Int) -> Int {
        let characters = (count + 2) / 3 * 4
        return characters + max(0, (characters - 1) / lineLimit) * 2
    }

    static func isPlainSevenBit(_ bytes: [UInt8]) -> Bool {
        var column = 0
        var previous: UInt8 = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case 13:
                guard index + 1 < bytes.count, bytes[index + 1] == 10, previous != 32, previous != 9 else { return false }
            case 10:
                column = 0
            case 9, 32...126:
                column += 1
                if column > lineLimit { return false }
            default:
                return false
            }
            previous = byte
        }
        return previous != 32 && previous != 9
    }
}

extension QuotedPrintable {
    /// Encodes bytes with CRLF line ends as quoted-printable (RFC 2045 §6.7): CRLF stays a
    /// hard line break; `=`, controls and 8-bit bytes become `=XX`; a blank at the end of a
    /// line is encoded (rule 3); lines are broken with soft breaks to at most 76 characters
    /// (rule 5). `From ` at a line start is written `=46rom ` so mbox tools cannot mangle it.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 8)
        var column = 0
        var index = 0
        func emit(_ token: [UInt8]) {
            // Leave room for the "=" of a soft break.
            if column + token.count > 75 {
                output += [UInt8(ascii: "="), 13, 10]
                column = 0
            }
            output += token
            column += token.count
        }
        func escaped(_ byte: UInt8) -> [UInt8] {
            Array(("=" + EncodedWordEncoder.hex(byte)).utf8)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 13, index + 1 < bytes.count, bytes[index + 1] == 10 {
                output += [13, 10]
                column = 0
                index += 2
                continue
            }
            let atLineEnd = index + 1 == bytes.count || (bytes[index + 1] == 13 && index + 2 < bytes.count && bytes[index + 2] == 10)
            let startsFrom = column == 0 && byte == UInt8(ascii: "F") && bytes[index...].starts(with: "From ".utf8)
            switch byte {
            case 32, 9:
                emit(atLineEnd ? escaped(byte) : [byte])
            case UInt8(ascii: "="):
                emit(escaped(byte))
            case 33...126:
                emit(startsFrom ? escaped(byte) : [byte])
            default:
                emit(escaped(byte))
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}
