// Charset conversion: every charset the brief lists, with real text, plus the fallbacks of
// gmail-api.md §8 for missing, unknown and lying labels.
import Testing
@testable import HudsonMail

@Suite("Charset.decodeText")
struct CharsetTests {
    @Test("each supported charset decodes real text", arguments: [
        ("KOI8-R", [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4], "Привет"),
        ("windows-1251", [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2], "Привет"),
        ("Shift_JIS", [0x82, 0xB1, 0x82, 0xF1, 0x82, 0xC9, 0x82, 0xBF, 0x82, 0xCD], "こんにちは"),
        ("x-sjis", [0x82, 0xB1, 0x87, 0x40, 0xB1], "こ①ｱ"),
        ("EUC-JP", [0xA4, 0xB3, 0xA4, 0xF3, 0xA4, 0xCB, 0xA4, 0xC1, 0xA4, 0xCF], "こんにちは"),
        ("ISO-2022-JP", [0x1B, 0x24, 0x42, 0x24, 0x33, 0x24, 0x73, 0x24, 0x4B, 0x24, 0x41, 0x24, 0x4F, 0x1B, 0x28, 0x42],
         "こんにちは"),
        ("GB2312", [0xC4, 0xE3, 0xBA, 0xC3], "你好"),
        ("gb_2312-80", [0xC4, 0xE3, 0xBA, 0xC3], "你好"),
        ("GBK", [0xC4, 0xE3, 0xBA, 0xC3], "你好"),
        ("GB18030", [0xC4, 0xE3, 0xBA, 0xC3, 0x94, 0x39, 0xFC, 0x36], "你好😀"),
        ("Big5", [0xA7, 0x41, 0xA6, 0x6E], "你好"),
        ("EUC-KR", [0xBE, 0xC8, 0xB3, 0xE7], "안녕"),
        ("ks_c_5601-1987", [0xBE, 0xC8, 0xB3, 0xE7], "안녕"),
        ("ISO-8859-1", [0x47, 0x72, 0xFC, 0xDF, 0x65], "Grüße"),
        ("latin1", [0x47, 0x72, 0xFC, 0xDF, 0x65], "Grüße"),
        ("ISO-8859-15", [0x47, 0x72, 0xFC, 0xDF, 0x65, 0x20, 0xA4], "Grüße €"),
        ("latin9", [0xA4], "€"),
        ("windows-1252", [0x47, 0x72, 0xFC, 0xDF, 0x65, 0x20, 0x80, 0x20, 0x93, 0x71, 0x94], "Grüße € “q”"),
        ("cp1252", [0x80], "€"),
        ("ISO-8859-2", [0x5A, 0x61, 0xBF, 0xF3, 0xB3, 0xE6], "Zażółć"),
        ("windows-1250", [0x5A, 0x61, 0xBF, 0xF3, 0xB3, 0xE6], "Zażółć"),
        ("utf8", [0x47, 0x72, 0xC3, 0xBC, 0xC3, 0x9F, 0x65], "Grüße"),
        ("\"UTF-8\"", [0xE2, 0x82, 0xAC], "€"),
        ("US-ASCII", [0x68, 0x69], "hi"),
        ("utf-8*en", [0x68, 0x69], "hi"),
    ] as [(String, [UInt8], String)])
    func decodesSamples(charset: String, bytes: [UInt8], expected: String) {
        #expect(Charset.decodeText(bytes: bytes, charset: charset) == expected)
    }

    @Test("ISO-8859-1 is read as Windows-1252, so mislabelled smart quotes survive (WHATWG)")
    func latin1IsWindows1252() {
        #expect(Charset.decodeText(bytes: [0x93, 0x68, 0x69, 0x94], charset: "iso-8859-1") == "“hi”")
        // The five bytes Windows-1252 leaves undefined keep their C1 code points.
        #expect(Charset.decodeText(bytes: [0x81], charset: "windows-1252") == "\u{81}")
    }

    @Test("missing charset: UTF-8 when valid, else Windows-1252 (gmail-api.md §8)")
    func missingCharset() {
        #expect(Charset.decodeText(bytes: [0xC3, 0xA9], charset: nil) == "é")
        #expect(Charset.decodeText(bytes: [0xE9, 0x74, 0xE9], charset: nil) == "été")
        #expect(Charset.decodeText(bytes: [0xE9], charset: "") == "é")
        #expect(Charset.decodeText(bytes: [0xE9], charset: "us-ascii") == "é")
    }

    @Test("declared UTF-8 holding invalid bytes shows U+FFFD for each, never Windows-1252 mojibake")
    func lyingUTF8() {
        #expect(Charset.decodeText(bytes: [0x47, 0x72, 0xFC, 0xDF, 0x65], charset: "utf-8") == "Gr\u{FFFD}\u{FFFD}e")
        #expect(Charset.decodeText(bytes: [0xC3, 0x28, 0x20, 0xE9, 0x74], charset: "UTF-8") == "\u{FFFD}( \u{FFFD}t")
    }

    @Test("declared UTF-8 with a few bad bytes keeps the good text and marks the bad with U+FFFD")
    func mostlyUTF8() {
        #expect(Charset.decodeText(bytes: [0xE2, 0x82, 0xAC, 0xFF, 0x41], charset: "utf-8") == "€\u{FFFD}A")
        // Overlong encodings and surrogates are not UTF-8.
        #expect(!Charset.validateUTF8([0xC0, 0xAF]).valid)
        #expect(!Charset.validateUTF8([0xED, 0xA0, 0x80]).valid)
        #expect(Charset.validateUTF8([0xF0, 0x9F, 0x98, 0x80]).valid)
    }

    @Test("unknown and implausible charset names fall back instead of failing")
    func unknownCharset() {
        #expect(Charset.decodeText(bytes: [0x68, 0xC3, 0xA9], charset: "x-no-such-charset") == "hé")
        #expect(Charset.decodeText(bytes: [0x68, 0xE9], charset: "x-no-such-charset") == "hé")
        #expect(Charset.decodeText(bytes: [0x68, 0x69], charset: "UTF-8//IGNORE") == "hi")
        #expect(Charset.decodeText(bytes: [0x68, 0x69], charset: "../../etc/passwd") == "hi")
    }

    @Test("bytes iconv rejects become U+FFFD and decoding goes on")
    func invalidMultibyte() {
        // 0xFF is never valid in Shift_JIS; 0x82 at the end is an incomplete character.
        #expect(Charset.decodeText(bytes: [0x82, 0xB1, 0xFF, 0x41, 0x82], charset: "shift_jis") == "こ\u{FFFD}A\u{FFFD}")
        #expect(Charset.decodeText(bytes: [0xA4], charset: "euc-kr") == "\u{FFFD}")
        #expect(Charset.decodeText(bytes: [], charset: "koi8-r") == "")
    }

    @Test("long input crosses the iconv output chunk without loss")
    func longInput() {
        let bytes = Array([[UInt8]](repeating: [0xC4, 0xE3, 0xBA, 0xC3], count: 10_000).joined())
        let decoded = Charset.decodeText(bytes: bytes, charset: "gbk")
        #expect(decoded.count == 20_000)
        #expect(decoded.allSatisfy { $0 == "你" || $0 == "好" })
    }

    @Test("charset names normalise case, quotes, underscores and aliases")
    func normalisation() {
        #expect(Charset.normalize("  \"UTF8\" ") == "utf-8")
        #expect(Charset.normalize("Latin-1") == "iso-8859-1")
        #expect(Charset.normalize("x-sjis") == "shift_jis")
        #expect(Charset.normalize("CP1252") == "windows-1252")
        #expect(Charset.normalize("win-1250") == "windows-1250")
        #expect(Charset.normalize("GB_2312-80") == "gb18030")
        #expect(Charset.normalize("KS_C_5601-1987") == "euc-kr")
        #expect(Charset.normalize("iso8859-15") == "iso-8859-15")
        #expect(Charset.normalize("ISO_8859-2:1987") == "iso-8859-2")
        #expect(Charset.normalize("ansi_x3.4-1968") == "us-ascii")
        #expect(Charset.normalize("") == nil)
        #expect(Charset.normalize(nil) == nil)
        #expect(Charset.normalize("a/b") == nil)
    }
}
