// RFC 2047 encoded words and RFC 2045/2231 parameters: the header decoders extraction relies on.
import Testing
@testable import HudsonMail

@Suite("RFC 2047 encoded words")
struct EncodedWordsTests {
    @Test("B and Q words decode in their charset, in either case")
    func basicWords() {
        #expect(EncodedWords.decode("=?UTF-8?B?R3LDvMOfZQ==?=") == "Grüße")
        #expect(EncodedWords.decode("=?iso-8859-1?q?Gr=FC=DFe_aus_Bonn?=") == "Grüße aus Bonn")
        #expect(EncodedWords.decode("=?koi8-r?B?8NLJ18XU?=") == "Привет")
        #expect(EncodedWords.decode("=?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=") == "こんにちは")
    }

    @Test("whitespace between adjacent encoded words is dropped (§6.2), kept next to plain text")
    func adjacentWords() {
        #expect(EncodedWords.decode("=?UTF-8?Q?a?= =?UTF-8?Q?b?=") == "ab")
        #expect(EncodedWords.decode("=?UTF-8?Q?a?=\r\n\t=?UTF-8?Q?b?=") == "ab")
        #expect(EncodedWords.decode("Re: =?UTF-8?Q?caf=C3=A9?= time") == "Re: café time")
        #expect(EncodedWords.decode("=?UTF-8?Q?a?= b =?UTF-8?Q?c?=") == "a b c")
    }

    @Test("a character split across two words comes out whole")
    func splitCharacter() {
        // "€" is E2 82 AC; the first word carries E2 82, the second AC.
        #expect(EncodedWords.decode("=?UTF-8?B?4oI=?= =?UTF-8?B?rA==?=") == "€")
        #expect(EncodedWords.decode("=?UTF-8?Q?caf=C3=A9?= =?ISO-8859-1?Q?_=E9t=E9?=") == "café été")
    }

    @Test("RFC 2231 §5 charset*language is accepted")
    func languageSuffix() {
        #expect(EncodedWords.decode("=?US-ASCII*EN?Q?Keith_Moore?=") == "Keith Moore")
    }

    @Test("malformed words stay as written", arguments: [
        "=?UTF-8?X?abc?=", "=?UTF-8?B?not base64!?=", "=??Q?abc?=", "=?UTF-8?Q?unterminated", "=?UTF-8?Q", "a =? b ?= c",
    ])
    func malformed(value: String) {
        #expect(EncodedWords.decode(value) == value)
    }

    @Test("decoding is idempotent on decoded text")
    func idempotent() {
        for value in ["Grüße aus Bonn", "Re: [list] 50% off = great?", "=?UTF-8?Q?caf=C3=A9?="] {
            let once = EncodedWords.decode(value)
            #expect(EncodedWords.decode(once) == once)
        }
    }

    @Test("folded header values are unfolded")
    func unfolding() {
        #expect(EncodedWords.decode("a long\r\n subject") == "a long subject")
    }

    @Test("a hostile run of =? stays linear and unchanged")
    func hostile() {
        let value = String(repeating: "=?a?q?", count: 20_000)
        #expect(EncodedWords.decode(value) == value)
    }
}

@Suite("Content-Type and Content-Disposition parameters (RFC 2045 §5.1, RFC 2231)")
struct MIMEHeaderValueTests {
    @Test("value is lower-cased; names are case-insensitive; quoted values unescaped")
    func basics() {
        let value = MIMEHeaderValue.parse("Text/Plain; CHARSET=\"UTF-8\"; format=flowed; name=\"a \\\"b\\\";c.txt\"")
        #expect(value.value == "text/plain")
        #expect(value.mediaType == "text/plain")
        #expect(value[parameter: "charset"] == "UTF-8")
        #expect(value[parameter: "Format"] == "flowed")
        #expect(value[parameter: "name"] == "a \"b\";c.txt")
    }

    @Test("comments after values are dropped; parentheses inside words are kept")
    func comments() {
        let value = MIMEHeaderValue.parse("text/plain; charset=us-ascii (Plain text); name=report(1).pdf")
        #expect(value[parameter: "charset"] == "us-ascii")
        #expect(value[parameter: "name"] == "report(1).pdf")
    }

    @Test("RFC 2231 extended value with charset and percent-encoding")
    func extendedValue() {
        let value = MIMEHeaderValue.parse("attachment; filename*=UTF-8''%E2%82%AC%20rates.pdf")
        #expect(value.value == "attachment")
        #expect(value[parameter: "filename"] == "€ rates.pdf")
        #expect(MIMEHeaderValue.parse("attachment; filename*=iso-8859-1'de'Gr%FC%DFe.txt")[parameter: "filename"]
                == "Grüße.txt")
    }

    @Test("RFC 2231 continuations join in order, mixing encoded and plain sections")
    func continuations() {
        let header = "attachment; filename*1*=%C3%9F; filename*0*=UTF-8''Gr%C3%BC; filename*2=e.txt"
        #expect(MIMEHeaderValue.parse(header)[parameter: "filename"] == "Grüße.txt")
        let plain = "message/external-body; access-type=URL; URL*0=\"ftp://\"; URL*1=\"cs.utk.edu/pub/x\""
        #expect(MIMEHeaderValue.parse(plain)[parameter: "url"] == "ftp://cs.utk.edu/pub/x")
    }

    @Test("the RFC 2231 form wins over the plain one (RFC 6266 §4.3)")
    func extendedWins() {
        let header = "attachment; filename=\"EURO rates.pdf\"; filename*=UTF-8''%E2%82%AC%20rates.pdf"
        #expect(MIMEHeaderValue.parse(header)[parameter: "filename"] == "€ rates.pdf")
    }

    @Test("RFC 2047 words in a quoted filename are decoded, as mailers expect")
    func encodedWordFilename() {
        let header = "attachment; filename=\"=?UTF-8?B?0J/RgNC40LLQtdGCLnR4dA==?=\""
        #expect(MIMEHeaderValue.parse(header)[parameter: "filename"] == "Привет.txt")
    }

    @Test("garbage never fails", arguments: ["", ";;;", "=", "text/plain; =x; y=", "a; b=\"unterminated", "(c) x/y"])
    func garbage(header: String) {
        _ = MIMEHeaderValue.parse(header)
    }

    @Test("an invalid media type is not one (RFC 2045 §5.2)")
    func invalidMediaType() {
        #expect(MIMEHeaderValue.parse("text; charset=us-ascii").mediaType == nil)
        #expect(MIMEHeaderValue.parse("").mediaType == nil)
        #expect(MIMEHeaderValue.parse("multipart/mixed; boundary=\"x\"")[parameter: "boundary"] == "x")
    }

    @Test("first occurrence of a parameter wins")
    func duplicates() {
        #expect(MIMEHeaderValue.parse("text/plain; charset=utf-8; charset=latin1")[parameter: "charset"] == "utf-8")
    }
}
