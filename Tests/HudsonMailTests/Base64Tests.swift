// Base64 and quoted-printable: the lenient decoders of gmail-api.md §8 / §9.11 and RFC 2045 §6.
import Testing
@testable import HudsonMail

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("Base64: one lenient decoder for every Gmail field (gmail-api.md §9.11)")
struct Base64Tests {
    @Test("padded, unpadded and over-padded base64url decode alike")
    func paddingVariants() {
        // "Hi Ann?" has length 7 (4n+3) and "Hi" 2 (4n+2): the lengths that broke Python.
        #expect(text(Base64.decode("SGkgQW5uPw==")) == "Hi Ann?")
        #expect(text(Base64.decode("SGkgQW5uPw")) == "Hi Ann?")
        #expect(text(Base64.decode("SGk")) == "Hi")
        #expect(text(Base64.decode("SGk=")) == "Hi")
        #expect(text(Base64.decode("SGk===")) == "Hi")
    }

    @Test("URL-safe and standard alphabets are equivalent")
    func bothAlphabets() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0x3E]
        #expect(Base64.decode("-_-_Pg") == bytes)
        #expect(Base64.decode("+/+/Pg==") == bytes)
    }

    @Test("line breaks, spaces and garbage are skipped (RFC 2045 §6.8)")
    func garbageSkipped() {
        #expect(text(Base64.decode("SGVs\r\nbG8s\n IHdv*cmxk!")) == "Hello, world")
        #expect(Base64.decode("").isEmpty)
        #expect(Base64.decode("====").isEmpty)
        #expect(Base64.decode("A").isEmpty)  // six bits make no byte
        #expect(Base64.decode("€€€").isEmpty)
    }

    @Test("concatenated padded chunks decode in full")
    func concatenatedChunks() {
        #expect(text(Base64.decode("SGk=SGk=")) == "HiHi")
    }

    @Test("encoders round-trip, base64url unpadded by default, MIME lines at 76")
    func encoders() {
        let bytes = Array(0...255).map(UInt8.init)
        let url = Base64.encodeURL(bytes)
        #expect(!url.contains("=") && !url.contains("+") && !url.contains("/"))
        #expect(Base64.decode(url) == bytes)
        #expect(Base64.encodeURL([0x48, 0x69], padded: true) == "SGk=")
        #expect(Base64.encode([0x48, 0x69]) == "SGk=")
        let wrapped = Base64.encode(bytes, lineLength: 76)
        #expect(wrapped.split(separator: "\r\n").allSatisfy { $0.count <= 76 })
        #expect(Base64.decode(wrapped) == bytes)
        #expect(Base64.encodeURL([UInt8]()) == "")
    }
}

@Suite("Quoted-printable (RFC 2045 §6.7) and RFC 2047 Q")
struct QuotedPrintableTests {
    private func decode(_ string: String) -> String { text(QuotedPrintable.decode(Array(string.utf8))) }

    @Test("=XX in either case becomes the byte")
    func escapes() {
        #expect(decode("caf=C3=A9 =e2=82=ac") == "café €")
    }

    @Test("soft line breaks join lines, with CRLF, LF or transport padding after the =")
    func softBreaks() {
        #expect(decode("long=\r\nline") == "longline")
        #expect(decode("long=\nline") == "longline")
        #expect(decode("long= \t\r\nline") == "longline")
        #expect(decode("ends with=") == "ends with")
    }

    @Test("hard line breaks stay; trailing blanks on a line are transport padding")
    func hardBreaks() {
        #expect(decode("a  \r\nb\t\nc ") == "a\r\nb\nc")
        #expect(decode("a =20\r\nb") == "a  \r\nb")
    }

    @Test("malformed escapes stay literal")
    func malformed() {
        #expect(decode("100% =ZZ =4 =") == "100% =ZZ =4 ")
        #expect(decode("a=\u{00E9}") == "a=\u{00E9}")
        #expect(decode("x==41") == "x=A")
    }

    @Test("Q encoding: underscore is a space")
    func qEncoding() {
        #expect(text(QuotedPrintable.decodeQ(Array("Caf=C3=A9_au_lait".utf8))) == "Café au lait")
        #expect(decode("snake_case") == "snake_case")
    }
}
