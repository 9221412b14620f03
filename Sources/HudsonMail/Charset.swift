/*!
 Bytes in a declared charset to a Swift String. UTF-8 and Windows-1252 (which stands in for
 ISO-8859-1 and US-ASCII, as the WHATWG Encoding Standard maps them) are decoded here in pure
 Swift; everything else goes through glibc's iconv, which knows KOI8-R, the CJK encodings and
 hundreds more (swift-linux-notes.md "Charsets"). Mail lies about its charset often, so this
 never fails: a missing, unknown or unusable label means "UTF-8 if the bytes are valid UTF-8,
 else Windows-1252" (gmail-api.md §8), and bytes a decoder rejects become U+FFFD.
 */

import Glibc

public enum Charset {
    /// Decodes `bytes` written in `charset` (a MIME charset label, in any case, quoted or not,
    /// with an RFC 2231 `*language` suffix or not) and never fails:
    /// - no label, `us-ascii`, or a label iconv does not know: UTF-8 when the bytes are valid
    ///   UTF-8, else Windows-1252 (gmail-api.md §8: "A missing charset means US-ASCII per
    ///   RFC 2045, but treat it as UTF-8", with the ISO-8859-1/Windows-1252 fallback);
    /// - `utf-8`: invalid sequences become U+FFFD, except that bytes with no valid multi-byte
    ///   sequence at all (Latin-1 text labelled UTF-8) are read as Windows-1252;
    /// - `iso-8859-1` is read as Windows-1252, its superset for 0x80–0x9F (WHATWG), so
    ///   "smart quotes" from mislabelled Windows mail survive;
    /// - anything else through iconv, with U+FFFD for each byte it rejects.
    /// A leading UTF-8 byte-order mark is dropped.
    public static func decodeText(bytes: [UInt8], charset: String?) -> String {
        decode(bytes: bytes, charset: charset).text
    }

    /// `decodeText`, and the charset name when the part named one Hudson cannot decode
    /// (so the reader is told the text is a guess, not shown mojibake without a word).
    public static func decode(bytes: [UInt8], charset: String?) -> (text: String, unknownCharset: String?) {
        if bytes.isEmpty { return ("", nil) }
        guard let label = normalize(charset) else {
            // An implausible name (`x/y`) is named all the same; an empty one is no name.
            let named = charset.map { $0.contains(where: { $0 != " " && $0 != "\"" && $0 != "'" }) } ?? false
            return (decodeUnlabelled(bytes), named ? charset : nil)
        }
        switch label {
        case "utf-8", "us-ascii", "iso-8859-1", "windows-1252": return (decodeKnown(bytes, label: label), nil)
        default:
            if let text = decodeWithIconv(bytes, from: iconvName(for: label)) { return (text, nil) }
            return (decodeUnlabelled(bytes), charset)
        }
    }

    private static func decodeKnown(_ bytes: [UInt8], label: String) -> String {
        switch label {
        case "utf-8": return decodeDeclaredUTF8(bytes)
        case "iso-8859-1", "windows-1252": return decodeWindows1252(bytes)
        default: return decodeUnlabelled(bytes)  // us-ascii: often 8-bit in practice
        }
    }

    /// The canonical lower-case label for a charset name, resolving common aliases
    /// (`latin1` → `iso-8859-1`, `x-sjis` → `shift_jis`, `cp1252` → `windows-1252`,
    /// `gb_2312-80` → `gb18030`, `ks_c_5601-1987` → `euc-kr`, ...). Returns nil for an empty or
    /// implausible name (one with characters no charset name has, such as `/`); unknown but
    /// plausible names come back lower-cased.
    public static func normalize(_ name: String?) -> String? {
        guard let name else { return nil }
        var key = ""
        for scalar in name.unicodeScalars {
            if scalar == "*" { break }  // RFC 2231 §5 "charset*language": the language is not ours.
            switch scalar {
            case "\"", "'", " ", "\t", "\r", "\n": continue
            case "_": key.append("-")
            case "A"..."Z": key.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
            case "a"..."z", "0"..."9", "-", ".", ":", "+": key.unicodeScalars.append(scalar)
            default: return nil
            }
        }
        guard !key.isEmpty, key.utf8.count <= 40 else { return nil }
        if let alias = aliases[key] { return alias }
        if let family = isoOrWindowsFamily(key) { return family }
        return key
    }

    // MARK: - Pure-Swift decoders

    /// Text with no usable label: UTF-8 if it validates, else Windows-1252.
    static func decodeUnlabelled(_ bytes: [UInt8]) -> String {
        let check = validateUTF8(bytes)
        return check.valid ? utf8String(bytes) : decodeWindows1252(bytes)
    }

    /// A part that says it is UTF-8 is read as UTF-8, each invalid byte a U+FFFD, as
    /// Gmail shows it: guessing Windows-1252 for it turned a broken sequence into
    /// mojibake that looked like text (issue 18). Unlabelled text still gets the guess.
    private static func decodeDeclaredUTF8(_ bytes: [UInt8]) -> String {
        utf8String(bytes)
    }

    private static func utf8String(_ bytes: [UInt8]) -> String {
        let hasBOM = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        return String(decoding: hasBOM ? bytes[3...] : bytes[...], as: UTF8.self)
    }

    /// Checks UTF-8 well-formedness (RFC 3629: no overlongs, surrogates or values past
    /// U+10FFFF) and reports whether any well-formed multi-byte sequence occurred.
    static func validateUTF8(_ bytes: [UInt8]) -> (valid: Bool, sawMultibyte: Bool) {
        var valid = true
        var sawMultibyte = false
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            var length = 0
            var lowerBound: UInt8 = 0x80
            var upperBound: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lowerBound = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upperBound = 0x9F
            case 0xF0: length = 4; lowerBound = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upperBound = 0x8F
            default: length = 0
            }
            var good = length > 0 && index + length <= count
            if good {
                for offset in 1..<length {
                    let byte = bytes[index + offset]
                    let low: UInt8 = offset == 1 ? lowerBound : 0x80
                    let high: UInt8 = offset == 1 ? upperBound : 0xBF
                    if byte < low || byte > high { good = false; break }
                }
            }
            if good {
                sawMultibyte = true
                index += length
            } else {
                valid = false
                index += 1
            }
        }
        return (valid, sawMultibyte)
    }

    /// Windows-1252 (WHATWG flavour: the five bytes Microsoft left undefined map to the C1
    /// code points with the same value, so nothing is lost).
    static func decodeWindows1252(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(bytes.count)
        for byte in bytes { scalars.append(windows1252Scalar(byte)) }
        return String(scalars)
    }

    /// The Unicode scalar for one Windows-1252 byte. Also used for HTML numeric references
    /// in 0x80–0x9F, which HTML5 §13.2.5.80 maps the same way.
    static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
        guard byte >= 0x80 && byte <= 0x9F else { return Unicode.Scalar(byte) }
        return Unicode.Scalar(windows1252High[Int(byte - 0x80)]) ?? Unicode.Scalar(byte)
    }

    private static let windows1252High: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]

    // MARK: - iconv

    /// Converts through glibc iconv, or returns nil when iconv does not know the charset.
    /// A descriptor is opened and closed per call: an `iconv_t` carries shift state and must
    /// not be shared between threads, and glibc caches the loaded tables itself. Each turn of
    /// the loop consumes input or skips a rejected byte, so it ends on any input.
    static func decodeWithIconv(_ bytes: [UInt8], from charset: String) -> String? {
        guard let descriptor = iconv_open("UTF-8", charset),
              descriptor != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(descriptor) }
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var input = bytes
        input.withUnsafeMutableBufferPointer { inputBuffer in
            chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                let chunkStart = UnsafeMutableRawPointer(chunkBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var inPointer: UnsafeMutablePointer<CChar>? =
                    UnsafeMutableRawPointer(inputBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                var inLeft = inputBuffer.count
                var finished = false
                while !finished {
                    var outPointer: UnsafeMutablePointer<CChar>? = chunkStart
                    var outLeft = chunkBuffer.count
                    let consumedBefore = inLeft
                    let result: Int
                    if inLeft > 0 {
                        result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    } else {
                        // Reset to the initial shift state, emitting anything still pending.
                        result = iconv(descriptor, nil, nil, &outPointer, &outLeft)
                        finished = true
                    }
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: chunkBuffer[0..<(chunkBuffer.count - outLeft)])
                    guard result == -1, !finished else { continue }
                    switch failure {
                    case E2BIG where inLeft < consumedBefore || outLeft < chunkBuffer.count:
                        continue
                    case EINVAL:
                        // An incomplete sequence at the very end of the input.
                        output.append(contentsOf: replacement)
                        inLeft = 0
                    default:
                        // EILSEQ (or a no-progress E2BIG): replace one byte and go on.
                        output.append(contentsOf: replacement)
                        inPointer = inPointer.map { $0 + 1 }
                        inLeft -= 1
                    }
                }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The glibc name for a canonical label. Where a label is commonly sent for text in a
    /// superset (Shift_JIS for Windows-31J, GB2312 for GBK/GB18030, EUC-KR for UHC), the
    /// superset decodes it, as the WHATWG Encoding Standard does.
    private static func iconvName(for label: String) -> String {
        switch label {
        case "shift_jis": return "CP932"
        case "euc-jp": return "EUC-JP-MS"
        case "iso-2022-jp": return "ISO-2022-JP-2"
        case "gb18030": return "GB18030"
        case "big5": return "BIG5-HKSCS"
        case "euc-kr": return "CP949"
        default: return label.uppercased()
        }
    }

    // MARK: - Aliases

    /// `iso8859-2`, `iso-8859-2`, `iso88592`, `latin2`, `l2`, `cp1250`, `win-1250`, `x-cp1250`.
    private static func isoOrWindowsFamily(_ key: String) -> String? {
        for prefix in ["iso-8859-", "iso8859-", "iso-8859", "iso8859"] where key.hasPrefix(prefix) {
            let number = key.dropFirst(prefix.count).prefix(while: { $0.isASCII && $0.isNumber })
            guard let value = Int(number), (1...16).contains(value), value != 12 else { return nil }
            return value == 1 ? "iso-8859-1" : "iso-8859-\(value)"
        }
        let latin: [String: Int] = ["2": 2, "3": 3, "4": 4, "5": 9, "6": 10, "7": 13, "8": 14, "9": 15, "10": 16]
        for prefix in ["latin-", "latin", "l"] where key.hasPrefix(prefix) {
            if let value = latin[String(key.dropFirst(prefix.count))] { return "iso-8859-\(value)" }
        }
        for prefix in ["windows-", "x-cp", "cp", "win-", "win"] where key.hasPrefix(prefix) {
            let rest = key.dropFirst(prefix.count)
            if rest.count == 4, rest.hasPrefix("125"), let digit = rest.last, ("0"..."8").contains(digit) {
                return "windows-\(rest)"
            }
        }
        return nil
    }

    private static let aliases: [String: String] = {
        let groups: [(String, [String])] = [
            ("utf-8", ["utf8", "utf-8", "unicode-1-1-utf-8", "unicode-2-0-utf-8", "x-unicode20utf8"]),
            ("us-ascii", ["ascii", "us-ascii", "us", "ansi-x3.4-1968", "ansi-x3.4-1986", "iso646-us", "iso-ir-6",
                          "cp367", "ibm367", "csascii", "646", "default", "unknown-8bit", "x-unknown", "unknown"]),
            ("iso-8859-1", ["latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819", "csisolatin1",
                            "iso-8859-1:1987", "8859-1", "iso88591"]),
            ("windows-1252", ["cp1252", "windows-1252", "x-cp1252", "win-1252", "ms-ansi"]),
            ("koi8-r", ["koi8-r", "koi8r", "koi8", "cskoi8r"]),
            ("koi8-u", ["koi8-u", "koi8u", "koi8-ru"]),
            ("shift_jis", ["shift-jis", "shiftjis", "sjis", "x-sjis", "ms-kanji", "csshiftjis", "windows-31j",
                           "cp932", "ms932", "x-ms-cp932", "x-shift-jis"]),
            ("euc-jp", ["euc-jp", "eucjp", "x-euc-jp", "cseucpkdfmtjapanese", "x-eucjp", "euc-jp-ms"]),
            ("iso-2022-jp", ["iso-2022-jp", "csiso2022jp", "iso-2022-jp-1", "iso-2022-jp-2", "jis", "x-jis"]),
            ("gb18030", ["gb2312", "gb-2312", "gb-2312-80", "csgb2312", "euc-cn", "euccn", "x-euc-cn", "gbk",
                         "x-gbk", "cp936", "ms936", "windows-936", "chinese", "iso-ir-58", "csiso58gb231280",
                         "gb18030"]),
            ("big5", ["big5", "big-5", "cn-big5", "x-x-big5", "csbig5", "big5-hkscs", "cp950", "x-big5"]),
            ("euc-kr", ["euc-kr", "euckr", "ks-c-5601-1987", "ks-c-5601-1989", "ks-c-5601", "ksc5601",
                        "ksc-5601", "korean", "csksc56011987", "iso-ir-149", "windows-949", "cp949",
                        "x-windows-949", "uhc", "cseuckr"]),
            ("utf-7", ["utf-7", "utf7", "unicode-1-1-utf-7", "csunicode11utf7"]),
            ("macintosh", ["mac", "macintosh", "x-mac-roman", "macroman", "csmacintosh"]),
        ]
        var table: [String: String] = [:]
        for (canonical, names) in groups {
            for name in names { table[name] = canonical }
        }
        return table
    }()
}
